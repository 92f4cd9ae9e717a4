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

from dbt.adapters.spark_refreshable.engine.faults import FAULT_ENV
from tests.support.connect_server import ConnectServer, started_server
from tests.support.dbt_projects import (
    expected_rows,
    refreshable_model,
    run_dbt,
    start_dbt,
    write_project,
)
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


@pytest.fixture(scope="module")
def project(tmp_path_factory, server) -> tuple[Path, dict[str, str]]:
    """The model (about 70 changed rows a day, in chunks of 8), built on day 1."""
    root = write_project(
        tmp_path_factory.mktemp("soak-project"),
        "soak",
        {MODEL: refreshable_model(vnodes=8, merge_chunk_rows=8)},
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
    return f"{outcome}; last progress: {progress[-1] if progress else '(none)'}"


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
        want = expected_rows(day)
        ok = len(got) == len(want) and set(got) == want
        print(f"[soak] round {round_}/{ROUNDS} day {day}: {what}; main matches: {ok}", flush=True)
        if not ok:
            divergences.append(
                f"round {round_} day {day} ({what}): missing {sorted(want - set(got))[:10]}, "
                f"unexpected {sorted(set(got) - want)[:10]}, rows {len(got)}/{len(want)}"
            )
    assert not divergences, f"seed {SEED}:\n" + "\n".join(divergences)
