"""A real Spark Connect server for a test module (scripts/connect_server.py, on a free
loopback port, with a warehouse and metastore of its own), and a client of this process to
read what the `dbt` processes left in its tables or to convert frames."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.support.dbt_projects import free_port
from tests.support.processes import run_bounded
from tests.support.profiles import ROOT, subprocess_java_options

SERVER_SCRIPT = ROOT / "scripts" / "connect_server.py"


class ConnectServer:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    @property
    def port(self) -> str:
        return self.env["REFRESHABLE_CONNECT_PORT"]

    def run(self, action: str) -> None:
        done = run_bounded([sys.executable, str(SERVER_SCRIPT), action], env=self.env, timeout=300)
        assert done.returncode == 0, f"connect server {action}: {done.stdout}{done.stderr}"

    def rows(self, table: str) -> list[tuple]:
        """Every row of ``table``, read through the server by a Connect client of this
        process (a second, independent reader: no `dbt` process involved)."""
        with self.session() as spark:
            return [tuple(row) for row in spark.table(table).collect()]

    @contextlib.contextmanager
    def session(self) -> Iterator[Any]:
        """A Connect client session of this process, stopped at the end."""
        from pyspark.sql.connect.session import SparkSession

        # the Connect session class itself: no environment switch that would turn the
        # classic session other tests of this process build into a Connect one
        spark = SparkSession.builder.remote(f"sc://127.0.0.1:{self.port}").create()
        try:
            yield spark
        finally:
            spark.stop()  # no client threads left behind to keep pytest alive


@contextlib.contextmanager
def started_server(data_dir: Path) -> Iterator[ConnectServer]:
    """A server on a free port with its data in ``data_dir``, stopped at the end."""
    server = ConnectServer(
        dict(
            os.environ,
            REFRESHABLE_HOME=str(ROOT),
            REFRESHABLE_CONNECT_PORT=str(free_port()),
            REFRESHABLE_CONNECT_DATA=str(data_dir),
            JDK_JAVA_OPTIONS=subprocess_java_options(os.environ.get("JDK_JAVA_OPTIONS")),
        )
    )
    server.run("start")
    try:
        yield server
    finally:
        server.run("stop")
