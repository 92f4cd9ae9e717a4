"""A Spark Connect server for the `connect` profile target, on 127.0.0.1.

    python scripts/connect_server.py start    start it unless it runs; wait until it answers
    python scripts/connect_server.py stop     stop it by pid (TERM, wait, KILL)
    python scripts/connect_server.py status   say whether it runs, and where

The server is Spark's own ``SparkConnectServer`` (in the pip pyspark's jars), run with the
embedded target's Spark settings (profiles/profiles.yml, target ``local``: Delta's jars,
extension and catalog, sizes), a warehouse and Derby metastore of its own, and its gRPC
endpoint bound to loopback. Many dbt processes can share it.

Environment: REFRESHABLE_CONNECT_PORT (default 15002), REFRESHABLE_CONNECT_DATA (default
.spark/connect: warehouse, metastore, log and pid file), REFRESHABLE_CONNECT_TIMEOUT
(seconds to wait for the server, default 120).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from spark_profile import ROOT, render_target  # this folder: run as a script

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
# the embedded target's settings the server does not take from there
NOT_FOR_THE_SERVER = ("spark.master", "spark.app.name", "spark.jars", "spark.driver.memory")


class Server:
    def __init__(self, port: int, data_dir: Path, timeout: float) -> None:
        self.port = port
        self.data_dir = data_dir
        self.timeout = timeout
        self.pid_file = data_dir / "server.pid"
        self.log_file = data_dir / "server.log"

    @classmethod
    def from_environment(cls) -> Server:
        port = os.environ.get("REFRESHABLE_CONNECT_PORT", "15002")
        timeout = os.environ.get("REFRESHABLE_CONNECT_TIMEOUT", "120")
        if not port.isdigit() or not timeout.isdigit():
            fail(
                f"REFRESHABLE_CONNECT_PORT ({port!r}) and REFRESHABLE_CONNECT_TIMEOUT "
                f"({timeout!r}) must be whole numbers"
            )
        data = Path(os.environ.get("REFRESHABLE_CONNECT_DATA", ROOT / ".spark" / "connect"))
        return cls(int(port), data.resolve(), float(timeout))

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def running_pid(self) -> int | None:
        """The server's pid, if it runs; a stale pid file is removed."""
        try:
            pid = int(self.pid_file.read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            self.pid_file.unlink(missing_ok=True)
            return None
        if SERVER_CLASS.encode() not in cmdline:
            self.pid_file.unlink(missing_ok=True)
            return None
        return pid

    def answers(self) -> bool:
        with socket.socket() as probe:
            probe.settimeout(1)
            return probe.connect_ex(("127.0.0.1", self.port)) == 0

    def command(self) -> list[str]:
        from dbt.adapters.spark_refreshable.environments.session import expand_jars

        settings = render_target(self.data_dir)["server_side_parameters"]
        confs = {k: v for k, v in settings.items() if k not in NOT_FOR_THE_SERVER}
        confs.update(
            {
                "spark.sql.catalogImplementation": "hive",
                "spark.connect.grpc.binding.address": "127.0.0.1",
                "spark.connect.grpc.binding.port": str(self.port),
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
            }
        )
        command = [
            str(spark_home() / "bin" / "spark-submit"),
            "--class",
            SERVER_CLASS,
            "--name",
            "dbt-refreshable Spark Connect server",
            "--master",
            "local[*]",
            "--driver-memory",
            settings.get("spark.driver.memory", "4g"),
            "--jars",
            expand_jars(settings["spark.jars"]),
        ]
        for key, value in confs.items():
            command += ["--conf", f"{key}={value}"]
        return [*command, "spark-internal"]

    def start(self) -> None:
        pid = self.running_pid()
        if pid is not None and self.answers():
            say(f"already running (pid {pid}) at {self.url}")
            return
        if pid is None and not self.port_frees_up():
            fail(f"port {self.port} is taken by another program; set REFRESHABLE_CONNECT_PORT")
        if pid is not None:
            say(f"pid {pid} is starting; waiting for it")
            started = None
        else:
            started = self._launch()
            pid = started.pid
        deadline = time.monotonic() + self.timeout
        while not self.answers():
            gone = started.poll() is not None if started else self.running_pid() is None
            if gone:
                self.pid_file.unlink(missing_ok=True)
                fail(f"the server stopped while starting.\n{self.log_tail()}")
            if time.monotonic() > deadline:
                fail(
                    f"the server did not answer on {self.url} within {self.timeout:.0f}s "
                    f"(raise REFRESHABLE_CONNECT_TIMEOUT?).\n{self.log_tail()}"
                )
            time.sleep(0.5)
        say(f"running (pid {pid}) at {self.url}")

    def _launch(self) -> subprocess.Popen:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_HOME=str(spark_home()))
        env.pop("SPARK_REMOTE", None)
        with open(self.log_file, "w") as log:
            process = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.data_dir,
                env=env,
                start_new_session=True,  # a Ctrl-C of the caller does not reach it
            )
        # spark-submit execs into the JVM: this pid becomes the server's
        self.pid_file.write_text(str(process.pid))
        say(f"starting (pid {process.pid}, log {self.log_file})")
        return process

    def stop(self) -> None:
        pid = self.running_pid()
        if pid is None:
            say("not running")
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while self.running_pid() is not None and time.monotonic() < deadline:
            time.sleep(0.2)
        if self.running_pid() is not None:
            os.kill(pid, signal.SIGKILL)
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline + 10:
            time.sleep(0.2)  # gone, and its port free, before we say so
        self.pid_file.unlink(missing_ok=True)
        say(f"stopped (pid {pid})")

    def port_frees_up(self, seconds: float = 15) -> bool:
        """Whether nothing answers on the port, waiting a little for a server that is
        still going away."""
        deadline = time.monotonic() + seconds
        while self.answers():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)
        return True

    def status(self) -> None:
        pid = self.running_pid()
        where = f"at {self.url}" if pid and self.answers() else "not answering yet"
        say(f"running (pid {pid}) {where}" if pid else f"not running ({self.data_dir})")

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_file.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return "(no log)"
        return f"--- last lines of {self.log_file} ---\n" + "\n".join(text)


def spark_home() -> Path:
    """The pip pyspark's folder: Spark's launch scripts and jars (its real path, as pyspark
    finds it: the driver's class archive names the jars by it)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def say(message: str) -> None:
    print(f"[connect] {message}", flush=True)


def fail(message: str) -> None:
    print(f"[connect] error: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def main(argv: list[str]) -> None:
    actions = {"start": Server.start, "stop": Server.stop, "status": Server.status}
    if len(argv) != 1 or argv[0] not in actions:
        fail(f"usage: {Path(__file__).name} start|stop|status")
    actions[argv[0]](Server.from_environment())


if __name__ == "__main__":
    main(sys.argv[1:])
