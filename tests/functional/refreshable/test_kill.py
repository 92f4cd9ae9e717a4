"""Real crashes: `dbt run` processes killed with SIGKILL mid-merge, at a named crash point
(a chunk committed to main, its checkpoint not written) and once from outside, and one
stopped with Ctrl-C (SIGINT). The next `dbt run`, another process, recovers as the design
says, and `dbt test` proves every main
table equals the snapshot it should: no lost row, no extra row, no spurious delete. Crashes
in the other phases leave the same state as an exception there, and are tried in-process
(test_recovery.py), which costs a fraction of a `dbt` process each.

These run dbt as subprocesses on a warehouse and metastore of their own (embedded Derby
allows one process at a time, and this pytest process holds its own)."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest

from tests.support.dbt_projects import (
    DBT_TIMEOUT,
    refreshable_model,
    run_dbt,
    start_dbt,
    write_project,
)
from tests.support.faults import FAULT_ENV
from tests.support.profiles import subprocess_env

pytestmark = pytest.mark.subprocess

MODELS = ["killed_mid_merge", "killed_from_outside", "interrupted"]
# day 1 builds each model in one chunk; day 2's 63 changed rows merge in three
DAY_2_IN_CHUNKS = "{day: 2, small_chunks: true}"


@pytest.fixture(scope="module")
def dbt_project(tmp_path_factory):
    root = write_project(
        tmp_path_factory.mktemp("kill-project"),
        "kill_tests",
        {name: refreshable_model(vnodes=8, small_chunks=30) for name in MODELS},
    )
    env = subprocess_env(tmp_path_factory.mktemp("kill-data"))
    env["DBT_REFRESHABLE_SCHEMA"] = "kill_tests"
    return root, env


def dbt(project, *args: str, fault: str | None = None) -> subprocess.CompletedProcess:
    root, env = project
    env = {**env, FAULT_ENV: fault} if fault else {k: v for k, v in env.items() if k != FAULT_ENV}
    return run_dbt(root, env, *args)


def signal_mid_merge(project, model: str, signum: int) -> tuple[int, str]:
    """Start a refresh and send it ``signum`` as soon as its first chunk is merged; its exit
    code and output."""
    root, env = project
    running = start_dbt(root, env, "run", "--select", model, "--vars", DAY_2_IN_CHUNKS)
    running.wait_for_line("merged chunk 1/", timeout=DBT_TIMEOUT)
    running.process.send_signal(signum)
    return running.wait(timeout=120), running.output


def test_killed_runs_are_recovered_by_the_next_run(dbt_project):
    first = dbt(dbt_project, "run", "--vars", "day: 1")
    assert first.returncode == 0, first.stdout[-3000:]

    crashed = dbt(
        dbt_project,
        *("run", "--select", "killed_mid_merge", "--vars", DAY_2_IN_CHUNKS),
        fault="chunk_committed@2:kill",
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stdout[-3000:]
    code, output = signal_mid_merge(dbt_project, "killed_from_outside", signal.SIGKILL)
    assert code == -signal.SIGKILL, f"the run finished before it was killed: {output[-3000:]}"
    # Ctrl-C: dbt cancels the refresh (its Spark jobs too) and exits without finishing it
    code, output = signal_mid_merge(dbt_project, "interrupted", signal.SIGINT)
    assert code not in (0, -signal.SIGKILL), f"not stopped by SIGINT ({code}): {output[-3000:]}"
    assert "merged chunk 3/3" not in output, output[-3000:]

    # One `dbt build`: each model recovers and refreshes, then `matches_expected` (which
    # reads them all) and each model's refreshable_matches_snapshot check the tables. A
    # killed merge is resumed and completes day 2 without running the model again.
    expect = dict.fromkeys(MODELS, 2)
    recovered = dbt(dbt_project, "build", "--vars", f"{{day: 3, expect: {expect}}}")
    assert recovered.returncode == 0, recovered.stdout[-3000:]
    log = recovered.stdout
    assert log.count("resuming the merge of cycle") == len(MODELS), log[-3000:]
    # killed_mid_merge: its first two chunks committed, neither recorded in progress yet
    assert "chunk(s) 0, 1 committed to main before the run stopped" in log

    results = json.loads((dbt_project[0] / "target" / "run_results.json").read_text())
    statuses = {r["unique_id"].split(".")[2]: r["status"] for r in results["results"]}
    assert len(results["results"]) == 2 * len(MODELS) + 1, statuses
    assert set(statuses.values()) == {"success", "pass"}, statuses
