"""The `cluster` target end to end: a real Spark standalone master and two workers
(scripts/cluster.sh, on free loopback ports with a state folder of their own), and a `dbt`
subprocess whose driver sends every task of a refresh to executors on those workers.

dbt runs as a subprocess because this pytest process may already own a local SparkContext
(one per process). Day 1 is built on the local target (same warehouse and metastore); day
2's refresh, on the cluster, changes rows in every vnode, and its `dbt build` proves main
equals the snapshot; the master and the workers prove the work ran in executors that got
Delta's jars from the driver."""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.dbt_projects import free_port, refreshable_model, run_dbt, write_project
from tests.support.processes import run_bounded
from tests.support.profiles import ROOT, subprocess_env

pytestmark = pytest.mark.subprocess

CLUSTER = ROOT / "scripts" / "cluster.sh"
APP_NAME = "dbt-refreshable-cluster"  # spark.app.name of the profile's cluster target


class Cluster:
    def __init__(self, state: Path) -> None:
        self.state = state
        self.port = free_port()
        self.webui_port = free_port()
        while self.webui_port == self.port:
            self.webui_port = free_port()
        self.env = {
            **os.environ,
            "PYTHON": sys.executable,
            "REFRESHABLE_CLUSTER_PORT": str(self.port),
            "REFRESHABLE_CLUSTER_WEBUI_PORT": str(self.webui_port),
            "REFRESHABLE_CLUSTER_STATE": str(state),
        }

    def script(self, command: str) -> subprocess.CompletedProcess:
        return run_bounded([str(CLUSTER), command], env=self.env, timeout=240)

    def status(self) -> dict[str, Any]:
        url = f"http://127.0.0.1:{self.webui_port}/json/"
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.loads(response.read())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    cluster = Cluster(tmp_path_factory.mktemp("cluster-state"))
    started = cluster.script("start")
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        yield cluster
    finally:
        stopped = cluster.script("stop")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert not list(cluster.state.glob("*.pid")), "pid files left behind"


@pytest.fixture(scope="module")
def project(tmp_path_factory, cluster: Cluster) -> tuple[Path, dict[str, str]]:
    root = write_project(
        tmp_path_factory.mktemp("cluster-project"),
        "cluster_tests",
        {"on_cluster": refreshable_model(vnodes=8)},
    )
    env = subprocess_env(tmp_path_factory.mktemp("cluster-data"))
    env.update(
        DBT_REFRESHABLE_SCHEMA="cluster_tests",
        REFRESHABLE_CLUSTER_PORT=str(cluster.port),
    )
    env.pop("REFRESHABLE_CLUSTER_MASTER", None)
    return root, env


def dbt(
    project: tuple[Path, dict[str, str]], *args: str, target: str = "cluster"
) -> subprocess.CompletedProcess:
    root, env = project
    return run_dbt(root, env, *args, "--target", target)


class AppWatcher(threading.Thread):
    """Samples the master's JSON while dbt runs: our application's cores and executors."""

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(daemon=True)
        self.cluster = cluster
        self.done = threading.Event()
        self.max_cores: dict[str, int] = {}

    def run(self) -> None:
        while not self.done.is_set():
            try:
                for app in self.cluster.status()["activeapps"]:
                    if app["name"] == APP_NAME:
                        cores = max(self.max_cores.get(app["id"], 0), app["cores"])
                        self.max_cores[app["id"]] = cores
            except OSError:
                pass
            time.sleep(0.5)


def test_a_refresh_runs_on_the_cluster_executors(cluster: Cluster, project) -> None:
    status = cluster.status()
    assert status["aliveworkers"] == 2 and status["cores"] == 2, status

    # Day 1 builds main on the local target (same warehouse and metastore): only day 2's
    # refresh needs the executors, and an application on the cluster starts three JVMs.
    day1 = dbt(project, "run", "--vars", "day: 1", target="local")
    assert day1.returncode == 0, day1.stdout[-4000:]

    watcher = AppWatcher(cluster)
    watcher.start()
    try:
        day2 = dbt(project, "build", "--vars", "{day: 2, expect: {on_cluster: 2}}")
    finally:
        watcher.done.set()
        watcher.join()
    assert day2.returncode == 0, day2.stdout[-4000:]
    # day 2 drops ids 0-19, adds 90-109 and changes every third id that stays
    assert "REFRESHED +20 ~23 -20 =47" in day2.stdout, day2.stdout[-4000:]
    results = json.loads((project[0] / "target" / "run_results.json").read_text())
    statuses = {r["unique_id"]: r["status"] for r in results["results"]}
    assert len(statuses) == 3 and set(statuses.values()) == {"success", "pass"}, statuses

    # The day-2 application, the only one, held both workers' cores while it ran...
    assert watcher.max_cores, "the master never listed the dbt application as running"
    assert max(watcher.max_cores.values()) == 2, watcher.max_cores
    # ...and each worker ran an executor of it, which fetched Delta's jars from the driver.
    status = cluster.status()
    finished = {app["id"] for app in status["completedapps"] if app["name"] == APP_NAME}
    assert set(watcher.max_cores) == finished and len(finished) == 1, status["completedapps"]
    for app_id in watcher.max_cores:
        for worker in ("worker1", "worker2"):
            executors = list((cluster.state / worker / app_id).iterdir())
            assert executors, f"no executor of {app_id} on {worker}"
            assert any(
                jar.name.startswith("delta-spark_") for e in executors for jar in e.iterdir()
            ), f"the executor of {app_id} on {worker} has no Delta jar"


def test_dbt_names_the_fix_when_the_cluster_is_not_started(tmp_path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "dbt_project.yml").write_text(
        "name: no_cluster\nversion: '1.0'\nconfig-version: 2\nprofile: refreshable\n"
    )
    env = {**subprocess_env(tmp_path / "data"), "REFRESHABLE_CLUSTER_PORT": str(free_port())}
    env.pop("REFRESHABLE_CLUSTER_MASTER", None)
    started = time.monotonic()
    debug = dbt((root, env), "debug")
    assert debug.returncode != 0
    assert "No Spark standalone master answers" in debug.stdout, debug.stdout[-3000:]
    assert "spark.master in the profile" in debug.stdout
    assert time.monotonic() - started < 60, "waited for Spark's retries instead of failing"


def test_a_master_answering_with_an_empty_page_is_one_not_answering_yet(tmp_path) -> None:
    """A master's web UI that is starting may answer its JSON status with an empty page:
    `start` counted the workers of that page and stopped with a JSONDecodeError before it
    waited for them (gate 141's cluster module failed so). Here a stand-in master (a
    process with the master's class in its command line, its web UI an empty page): `start`
    waits for the workers, and says none registered."""

    class EmptyPage(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    cluster = Cluster(tmp_path / "state")
    cluster.env["REFRESHABLE_CLUSTER_TIMEOUT"] = "3"
    cluster.state.mkdir()
    master_class = "org.apache.spark.deploy.master.Master"
    master = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", master_class])
    (cluster.state / "master.pid").write_text(str(master.pid))
    (cluster.state / "ports").write_text(f"{cluster.port} {cluster.webui_port}\n")
    try:
        with http.server.HTTPServer(("127.0.0.1", cluster.webui_port), EmptyPage) as web_ui:
            threading.Thread(target=web_ui.serve_forever, daemon=True).start()
            started = cluster.script("start")
            web_ui.shutdown()
    finally:
        cluster.script("stop")
        master.kill()
        master.wait()
    assert "only 0 of 2 workers registered" in started.stderr, started.stderr[-3000:]
    assert "JSONDecodeError" not in started.stderr


def test_the_script_refuses_a_busy_port_and_reports_a_stopped_cluster(tmp_path) -> None:
    cluster = Cluster(tmp_path / "state")
    stopped = cluster.script("status")
    assert stopped.returncode == 3 and "make cluster-start" in stopped.stdout, stopped.stdout
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", cluster.port))
        squatter.listen()
        busy = cluster.script("start")
    assert busy.returncode != 0
    assert f"port {cluster.port} (REFRESHABLE_CLUSTER_PORT)" in busy.stderr, busy.stderr
    assert not list(cluster.state.glob("*.pid"))
    usage = cluster.script("restart")
    assert usage.returncode != 0 and "usage: scripts/cluster.sh start|stop|status" in usage.stderr
