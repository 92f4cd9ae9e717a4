"""Kill -9 soak: `dbt run` processes SIGKILLed at random moments, round after round, on one
Spark Connect server (scripts/connect_server.py; every dbt process a light client). Each
round refreshes the model to a new day with small chunks, kills the run after a random
delay or a random progress line, runs again (which resumes or restarts the cycle), and
compares main with that day's snapshot by content. Zero divergences allowed.

Not part of `make test`: it runs with `make soak` (REFRESHABLE_SOAK_ROUNDS rounds, default
30 there; REFRESHABLE_SOAK_SEED picks the kill moments).
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.connect_server import ConnectServer, started_server
from tests.support.dbt_projects import (
    refreshable_model,
    run_dbt,
    start_dbt,
    write_project,
)
from tests.support.faults import FAULT_ENV
from tests.support.profiles import subprocess_env

ROUNDS = int(os.environ.get("REFRESHABLE_SOAK_ROUNDS", "0"))
SEED = int(os.environ.get("REFRESHABLE_SOAK_SEED", "1"))
SCHEMA = "soak_tests"
MODEL = "soaked"
RUN_TIMEOUT = 600  # seconds any one dbt process may take

pytestmark = [
    pytest.mark.subprocess,
    pytest.mark.skipif(not ROUNDS, reason="the kill -9 soak runs with `make soak`"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[ConnectServer]:
    with started_server(tmp_path_factory.mktemp("soak-server")) as server:
        yield server


# The day's snapshot: ids 0-119, a fifth of them absent (another fifth each day: deletes and
# inserts), and a third of the values changed each day, spread over the whole key range, so
# that every day's changes fill all eight range vnodes that day 1 cut (the shared macro's
# window of ids slides up by 20 a day: from day 6 every change was in the last vnode, merged
# in one chunk, and no kill fell between two chunks).
SOAK_MACRO = """
{% macro snapshot_rows(day) %}
  select cast(id as int) as id,
         concat('v', cast(case when (id + {{ day }}) % 3 = 0 then {{ day }} else 1 end as string))
           as value
  from range(0, 120) as r(id)
  where (id * 7 + {{ day }}) % 5 <> 0
{% endmacro %}
"""


def soak_rows(day: int) -> set[tuple[int, str]]:
    """`snapshot_rows(day)` of SOAK_MACRO, in Python: (id, value) each."""
    return {(i, f"v{day if (i + day) % 3 == 0 else 1}") for i in range(120) if (i * 7 + day) % 5}


@pytest.fixture(scope="module")
def project(tmp_path_factory, server) -> tuple[Path, dict[str, str]]:
    """The model (72-96 changed rows a day, about 8 chunks: one vnode each), built on day 1."""
    root = write_project(
        tmp_path_factory.mktemp("soak-project"),
        "soak",
        {MODEL: refreshable_model(vnodes=8, merge_chunk_rows=8)},
        snapshot_macro=SOAK_MACRO,
    )
    env = subprocess_env(tmp_path_factory.mktemp("soak-client"))
    env.update(
        DBT_TARGET="connect",
        DBT_REFRESHABLE_SCHEMA=SCHEMA,
        REFRESHABLE_CONNECT_PORT=server.port,
    )
    env.pop(FAULT_ENV, None)
    built = run_dbt(root, env, "run", "--vars", "day: 1", timeout=RUN_TIMEOUT)
    assert built.returncode == 0, built.stdout[-3000:]
    return root, env


def kill_at_random(project, day: int, rng: random.Random) -> str:
    """Start the day's run and SIGKILL it after a random delay or a random progress line.
    Returns what happened and the run's last progress line."""
    root, env = project
    running = start_dbt(root, env, "run", "--select", MODEL, "--vars", f"day: {day}")
    process = running.process
    if rng.random() < 0.5:
        delay = rng.uniform(0, 25)
        moment = f"after {delay:.1f}s"
        time.sleep(delay)
    else:
        nth = rng.randint(1, 9)
        moment = f"after merged chunk line {nth}"
        deadline = time.monotonic() + RUN_TIMEOUT
        while (
            sum("merged chunk" in line for line in list(running.lines)) < nth
            and process.poll() is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.2)
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
        outcome = f"killed {moment}"
    else:
        outcome = f"finished before the kill ({moment}), exit {process.returncode}"
    running.wait(timeout=60)  # fails the test with the output's tail if it does not end
    progress = [
        line.strip() for line in running.output.splitlines() if "Refreshable adapter" in line
    ]
    failed = f"\n{running.output[-3000:]}" if process.returncode not in (0, -signal.SIGKILL) else ""
    return f"{outcome}; last progress: {progress[-1] if progress else '(none)'}{failed}"


def test_runs_killed_at_random_moments_lose_nothing(project, server):
    rng = random.Random(SEED)
    divergences = []
    for round_ in range(1, ROUNDS + 1):
        day = round_ + 1
        what = kill_at_random(project, day, rng)
        rerun = run_dbt(
            project[0],
            project[1],
            "run",
            "--select",
            MODEL,
            "--vars",
            f"day: {day}",
            timeout=RUN_TIMEOUT,
        )
        assert rerun.returncode == 0, f"round {round_} ({what}): {rerun.stdout[-3000:]}"
        got = server.rows(f"{SCHEMA}.{MODEL}")
        want = soak_rows(day)
        ok = len(got) == len(want) and set(got) == want
        print(f"[soak] round {round_}/{ROUNDS} day {day}: {what}; main matches: {ok}", flush=True)
        if not ok:
            divergences.append(
                f"round {round_} day {day} ({what}): missing {sorted(want - set(got))[:10]}, "
                f"unexpected {sorted(set(got) - want)[:10]}, rows {len(got)}/{len(want)}"
            )
    assert not divergences, f"seed {SEED}:\n" + "\n".join(divergences)
