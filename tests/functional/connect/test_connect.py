"""Many dbt processes on one Spark Connect server: the `connect` target, with a real server
(scripts/connect_server.py, on a free loopback port, with a warehouse and metastore of its
own) and every dbt run a real process.

The lock between processes: of two runs of one model started together exactly one
refreshes; runs of different models do not wait for each other. Recovery across
processes: a run killed with SIGKILL mid-merge, a server restarted mid-merge; each time the
next run, another process, finishes the cycle and the table holds exactly that day's rows
(read by a Connect client of this process); one `dbt test` at the end runs every model's
proof test. Fencing: a run stopped (SIGSTOP) past its lease writes nothing when it goes on."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pandas as pd
import pytest

from dbt.adapters.spark_refreshable.engine.errors import ConfigError
from dbt.adapters.spark_refreshable.engine.python_results import as_spark_frame
from tests.support.connect_server import ConnectServer, started_server
from tests.support.dbt_projects import (
    DBT_TIMEOUT,
    expected_rows,
    refreshable_model,
    run_dbt,
    start_dbt,
    write_project,
)
from tests.support.faults import FAULT_ENV
from tests.support.profiles import subprocess_env

pytestmark = pytest.mark.subprocess

SCHEMA = "connect_tests"
LOCK_HELD = "is being refreshed by"
TAKEN_OVER_LOCK_TIMEOUT = 15
# Day 1 builds every model in one chunk. Run with SMALL_CHUNKS, a model refreshes in four or
# five chunks of ~16 rows (day 2 changes 63): it stays mid-merge long enough to be raced or
# interrupted, and its resumption has a few chunks left.
SMALL_CHUNKS = "small_chunks: true"
MODELS = {
    "raced": refreshable_model(vnodes=8, small_chunks=16),
    "left": refreshable_model(vnodes=8),
    "right": refreshable_model(vnodes=8),
    "killed": refreshable_model(vnodes=8, small_chunks=16),
    "restarted": refreshable_model(vnodes=16, small_chunks=16),
    "taken_over": refreshable_model(
        vnodes=16, small_chunks=16, lock_timeout=TAKEN_OVER_LOCK_TIMEOUT
    ),
}
# The models each test refreshes: day 1 builds only those of the tests that run (the gate
# leaves the `extended` ones out), since every model a `dbt` process builds on the server
# adds to the module's time.
MODELS_OF_TEST = {
    "test_of_two_processes_refreshing_one_model_exactly_one_refreshes": ("raced",),
    "test_processes_refreshing_different_models_do_not_wait_for_each_other": ("left", "right"),
    "test_a_process_killed_mid_merge_is_resumed_by_the_next": ("killed",),
    "test_a_server_restarted_mid_merge_loses_nothing": ("restarted",),
    "test_a_process_paused_past_its_lease_writes_nothing_when_it_goes_on": ("taken_over",),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[ConnectServer]:
    with started_server(tmp_path_factory.mktemp("connect-server")) as server:
        yield server


@pytest.fixture(scope="module")
def project(request, tmp_path_factory, server) -> tuple[Path, dict[str, str]]:
    """The project, its models of the tests that run built on day 1."""
    root = write_project(tmp_path_factory.mktemp("connect-project"), SCHEMA, MODELS)
    env = subprocess_env(tmp_path_factory.mktemp("connect-client"))
    env.update(
        DBT_TARGET="connect",
        DBT_REFRESHABLE_SCHEMA=SCHEMA,
        REFRESHABLE_CONNECT_PORT=server.port,
    )
    env.pop(FAULT_ENV, None)
    running = {i.originalname for i in request.session.items if i.module is request.module}
    models = sorted({m for test in running for m in MODELS_OF_TEST.get(test, ())})
    if models:
        built = run_dbt(root, env, "run", "--select", *models, "--vars", "day: 1")
        assert built.returncode == 0, built.stdout[-3000:]
    return root, env


def dbt(project, *args: str, fault: str | None = None) -> subprocess.CompletedProcess:
    root, env = project
    return run_dbt(root, {**env, FAULT_ENV: fault} if fault else env, *args)


@pytest.fixture(scope="module")
def proved() -> dict[str, int]:
    """The day each model was found to hold by the tests so far, for the proof at the end."""
    return {}


def assert_holds(server: ConnectServer, proved: dict[str, int], model: str, day: int) -> None:
    """``model``'s table holds exactly ``day``'s rows, read by this process's own client;
    the module's last test runs `dbt test` (the models' proof tests) once for them all."""
    rows = server.rows(f"{SCHEMA}.{model}")
    want = expected_rows(day)
    assert len(rows) == len(want) and set(rows) == want, (
        f"{model} is not day {day}: missing {sorted(want - set(rows))[:10]}, "
        f"unexpected {sorted(set(rows) - want)[:10]}, {len(rows)} rows of {len(want)}"
    )
    proved[model] = day


def run_together(project, runs: list[tuple[str, ...]]) -> list[tuple[int, str, Path]]:
    """Start `dbt` processes at the same moment; (exit code, output, target folder) each."""
    root, env = project
    start = threading.Barrier(len(runs))
    outcomes: list[tuple[int, str, Path]] = [(0, "", root)] * len(runs)

    failures: list[BaseException] = []

    def run(index: int, args: tuple[str, ...]) -> None:
        target = root / f"target_{index}"
        start.wait()
        try:
            done = run_dbt(
                root, env, *args, "--target-path", str(target), "--log-path", str(target)
            )
        except BaseException as failure:  # a timeout's pytest.fail, raised again below
            failures.append(failure)
            return
        outcomes[index] = (done.returncode, done.stdout, target)

    threads = [threading.Thread(target=run, args=(i, args)) for i, args in enumerate(runs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return outcomes


def interrupt_mid_merge(project, model: str, interrupt) -> tuple[int, str]:
    """Refresh `model` to day 2 in small chunks and call `interrupt()` once the first is
    merged; the run's exit code and output."""
    root, env = project
    vars_ = f"{{day: 2, {SMALL_CHUNKS}}}"
    running = start_dbt(root, env, "run", "--select", model, "--vars", vars_)
    running.wait_for_line("merged chunk 1/", timeout=DBT_TIMEOUT)
    interrupt()
    code = running.wait(timeout=DBT_TIMEOUT)
    return code, running.output


def test_of_two_processes_refreshing_one_model_exactly_one_refreshes(project, server, proved):
    run = ("run", "--select", "raced", "--vars", f"{{day: 2, {SMALL_CHUNKS}}}")
    outcomes = run_together(project, [run, run])
    codes = sorted(code for code, _, _ in outcomes)
    assert codes == [0, 1], [output[-2000:] for _, output, _ in outcomes]
    refused = next(output for code, output, _ in outcomes if code == 1)
    assert LOCK_HELD in refused and "refreshable_unlock" in refused, refused[-2000:]
    assert_holds(server, proved, "raced", 2)


# `make test-all`: each model's lock is its own state table, and the gate's dbt runs refresh
# several models on dbt's threads at once (test_materialization.py, the kill test)
@pytest.mark.extended
def test_processes_refreshing_different_models_do_not_wait_for_each_other(project, server, proved):
    outcomes = run_together(
        project,
        [
            ("run", "--select", "left", "--vars", "day: 2"),
            ("run", "--select", "right", "--vars", "day: 2"),
        ],
    )
    spans = []
    for code, output, target in outcomes:
        assert code == 0, output[-2000:]
        result = json.loads((target / "run_results.json").read_text())["results"][0]
        assert "REFRESHED" in result["adapter_response"]["_message"]
        execute = next(t for t in result["timing"] if t["name"] == "execute")
        spans.append(
            tuple(
                datetime.fromisoformat(execute[k].rstrip("Z"))
                for k in ("started_at", "completed_at")
            )
        )
    (start_a, end_a), (start_b, end_b) = spans
    assert start_a < end_b and start_b < end_a, f"the refreshes did not overlap: {spans}"
    assert_holds(server, proved, "left", 2)
    assert_holds(server, proved, "right", 2)


def test_a_process_killed_mid_merge_is_resumed_by_the_next(project, server, proved):
    vars_ = f"{{day: 2, {SMALL_CHUNKS}}}"
    crashed = dbt(project, "run", "--select", "killed", "--vars", vars_, fault="chunk_done@2:kill")
    assert crashed.returncode == -signal.SIGKILL, crashed.stdout[-3000:]
    resumed = dbt(project, "run", "--select", "killed", "--vars", "day: 3")
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    assert "resuming the merge of cycle" in resumed.stdout
    assert_holds(server, proved, "killed", 2)  # the resumed cycle completes day 2


def test_a_server_restarted_mid_merge_loses_nothing(project, server, proved):
    def restart() -> None:
        server.run("stop")
        server.run("start")

    code, output = interrupt_mid_merge(project, "restarted", restart)
    assert code != 0, f"the run finished before the server went away: {output[-3000:]}"
    resumed = dbt(project, "run", "--select", "restarted", "--vars", "day: 3")
    assert resumed.returncode == 0, output[-2000:] + resumed.stdout[-3000:]
    assert "resuming the merge of cycle" in resumed.stdout
    assert_holds(server, proved, "restarted", 2)


# `make test-all`: the same fencing in-process, a run paused in a thread while its lease is
# taken over (test_concurrency.py)
@pytest.mark.extended
def test_a_process_paused_past_its_lease_writes_nothing_when_it_goes_on(project, server, proved):
    """SIGSTOP a run mid-merge and keep it stopped past its lock_timeout: a second run takes
    the lease over and finishes the cycle, a third refreshes to day 3. SIGCONT the first:
    it stops with its lease lost, and its chunks (day 2's rows) never reach main."""
    root, env = project
    vars_ = f"{{day: 2, {SMALL_CHUNKS}}}"
    paused = start_dbt(root, env, "run", "--select", "taken_over", "--vars", vars_)
    paused.wait_for_line("merged chunk 1/", timeout=DBT_TIMEOUT)
    paused.process.send_signal(signal.SIGSTOP)
    try:
        time.sleep(TAKEN_OVER_LOCK_TIMEOUT + 5)  # its heartbeat is past lock_timeout + margin
        resumed = dbt(project, "run", "--select", "taken_over", "--vars", "day: 2")
        assert resumed.returncode == 0, resumed.stdout[-3000:]
        assert "resuming the merge of cycle" in resumed.stdout
        newer = dbt(project, "run", "--select", "taken_over", "--vars", "day: 3")
        assert newer.returncode == 0 and "REFRESHED" in newer.stdout, newer.stdout[-3000:]
    finally:
        paused.process.send_signal(signal.SIGCONT)
    code = paused.wait(timeout=DBT_TIMEOUT)
    assert code != 0 and "lost the refresh lock" in paused.output, paused.output[-3000:]
    assert_holds(server, proved, "taken_over", 3)


def test_pandas_frames_a_connect_client_cannot_send_or_would_change_are_refused(server):
    """A Spark Connect client sends a pandas frame through Arrow alone: the server refuses
    unsigned and float16 columns (UNSUPPORTED_ARROWTYPE) and the client a Python int beyond
    BIGINT (OverflowError), each refused naming what to change; a datetime among dates
    becomes its date there too, refused as on a classic session. A sound frame converts."""
    day, moment = datetime(2024, 2, 29).date(), datetime(2024, 2, 29, 13, 5)
    frames = {
        "`u` (uint8)": pd.DataFrame({"id": [1], "u": pd.Series([200], dtype="uint8")}),
        "`h` (float16)": pd.DataFrame({"id": [1], "h": pd.Series([0.5], dtype="float16")}),
        "beyond BIGINT": pd.DataFrame({"id": [1], "big": pd.Series([2**64], dtype=object)}),
        "other kinds of value than DATE": pd.DataFrame({"id": [1, 2], "d": [day, moment]}),
    }
    with server.session() as spark:
        for expected, frame in frames.items():
            with pytest.raises(ConfigError, match=re.escape(expected)):
                as_spark_frame(spark, frame)
        sound = pd.DataFrame({"id": [1, 2], "d": [day, day]})
        assert [tuple(r) for r in as_spark_frame(spark, sound).collect()] == [(1, day), (2, day)]


def test_the_proof_tests_pass_on_every_table_the_tests_above_left(project, proved):
    """One `dbt test` for the module (a `dbt` process costs a minute here): each model
    checked above passes `refreshable_matches_snapshot` through the server, and
    `matches_expected` finds the day it was found to hold."""
    if not proved:
        pytest.skip("no test of this module left a model checked")
    selected = ("matches_expected", *proved)
    checked = dbt(project, "test", "--select", *selected, "--vars", json.dumps({"expect": proved}))
    assert checked.returncode == 0, checked.stdout[-3000:]
    results = json.loads((project[0] / "target" / "run_results.json").read_text())["results"]
    statuses = {r["unique_id"]: r["status"] for r in results}
    assert len(statuses) == len(proved) + 1 and set(statuses.values()) == {"pass"}, statuses
