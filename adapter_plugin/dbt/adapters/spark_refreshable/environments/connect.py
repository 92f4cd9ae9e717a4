"""A Spark Connect server: ``spark.remote: sc://host:port`` in the profile.

dbt's SQL, Python models and the refreshable engine's Spark work run on the server; the
dbt process holds thin Connect sessions (one shared for SQL, one of its own per Python job)
and runs the engine's control loop. Many dbt processes can share one server, which is
what the refresh lock is for. The profile's other ``server_side_parameters`` are set as
session confs.
"""

from __future__ import annotations

import atexit
import socket
import threading
import warnings
from typing import Any, ClassVar
from urllib.parse import urlparse

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_refreshable.environments.base import SparkEnvironment

REMOTE_PARAMETER = "spark.remote"
START_HINT = (
    "Start a Spark Connect server (Spark's sbin/start-connect-server.sh, with Delta Lake's "
    "jars), or point spark.remote in the profile's server_side_parameters at a running one"
)


class ConnectSparkEnvironment(SparkEnvironment):
    _instances: ClassVar[dict[str, ConnectSparkEnvironment]] = {}
    _instances_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, url: str, session_confs: dict[str, str]) -> None:
        super().__init__()
        self.url = url
        self.session_confs = session_confs
        self._session: Any = None

    @classmethod
    def shared(cls, credentials: Any) -> ConnectSparkEnvironment:
        """One per endpoint and process."""
        parameters = dict(credentials.server_side_parameters or {})
        url = str(parameters.pop(REMOTE_PARAMETER))
        with cls._instances_lock:
            if url not in cls._instances:
                cls._instances[url] = cls(url, parameters)
            return cls._instances[url]

    def base_session(self) -> Any:
        with self._lock:
            if self._session is None:
                self._check_reachable()
                self._session = self._configured(connect_builder(self.url).getOrCreate())
            return self._session

    def isolated_session(self) -> Any:
        self.base_session()
        return self._configured(connect_builder(self.url).create())

    def _configured(self, session: Any) -> Any:
        """A session that fails within seconds when the server is gone, and lets the
        process exit. The client's defaults retry an unreachable server for about ten
        minutes, release results from non-daemon threads and send a cleanup RPC at exit
        (with the same retries): a dbt process would hang after its work, or long after
        its server died."""
        from pyspark.sql.connect.client.retries import DefaultPolicy

        client = session.client
        client.disable_reattachable_execute()
        client.set_retry_policies([DefaultPolicy(max_retries=6, max_backoff=5000)])
        atexit.register(client.close)  # runs before the client's own exit hook (LIFO)
        for key, value in self.session_confs.items():
            session.conf.set(key, value)
        return session

    def _check_reachable(self) -> None:
        """Fail fast and clearly when nothing listens (the client would retry for long)."""
        parsed = urlparse(self.url.replace("sc://", "http://", 1))
        host, port = parsed.hostname or "localhost", parsed.port or 15002
        try:
            socket.create_connection((host, port), timeout=5).close()
        except OSError as exc:
            raise DbtRuntimeError(
                f"No Spark Connect server answers at {self.url} ({exc}). {START_HINT}."
            ) from exc


def connect_builder(url: str) -> Any:
    """A Connect session builder, or a clear error when the client's packages are missing."""
    try:
        from pyspark.sql.connect.utils import check_dependencies

        check_dependencies()
    except ImportError as exc:
        raise DbtRuntimeError(
            f"The Spark Connect client needs packages that are not installed ({exc}). "
            f"Install them with `pip install 'pyspark[connect]'` (dbt-refreshable depends on "
            f"it: a reinstall of dbt-refreshable brings them too)."
        ) from exc
    from pyspark.sql import SparkSession

    # dbt-spark's session cursor asks for Hive support, a static conf a Connect session
    # cannot set (the server decides); its warning on every statement says nothing useful
    warnings.filterwarnings("ignore", message="Failed to set spark.sql.catalogImplementation")
    return SparkSession.builder.remote(url)
