"""A Spark driver inside the dbt process: ``method: session``.

``server_side_parameters`` from the profile configure the session when it is first built
(``spark.master``, ``spark.jars``, Delta's extension and catalog, warehouse, metastore).
With ``spark.master: local[*]`` everything runs in this process's JVM; with ``spark://...``
executors run on a standalone cluster. Both are this one implementation.
"""

from __future__ import annotations

import glob
import socket
import threading
from typing import Any, ClassVar

from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_refreshable.environments.base import SparkEnvironment

DELTA_HINT = (
    "Point spark.jars in the profile's server_side_parameters at Delta Lake's jars "
    "(io.delta:delta-spark_4.2_2.13 and delta-storage), or set spark.jars.packages to "
    "io.delta:delta-spark_4.2_2.13:<version> to have Spark fetch them at session start"
)


class InProcessSparkEnvironment(SparkEnvironment):
    _instance: ClassVar[InProcessSparkEnvironment | None] = None
    _instance_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, server_side_parameters: dict[str, str]) -> None:
        super().__init__()
        self.server_side_parameters = dict(server_side_parameters)
        self._session: Any = None

    @classmethod
    def shared(cls, credentials: Any) -> InProcessSparkEnvironment:
        """One per process: a process has one SparkContext."""
        with cls._instance_lock:
            if cls._instance is None:
                cls._instance = cls(credentials.server_side_parameters or {})
            return cls._instance

    def base_session(self) -> Any:
        with self._lock:
            if self._session is None:
                self._session = self._build_session()
            return self._session

    def isolated_session(self) -> Any:
        return self.base_session().newSession()

    def _build_session(self) -> Any:
        from pyspark.sql import SparkSession

        keep_delta_error_messages()
        parameters = dict(self.server_side_parameters)
        if "spark.jars" in parameters:
            parameters["spark.jars"] = expand_jars(parameters["spark.jars"])
        check_standalone_master(parameters.get("spark.master", ""))
        builder = SparkSession.builder.enableHiveSupport()
        for key, value in parameters.items():
            builder = builder.config(key, value)
        return builder.getOrCreate()


def keep_delta_error_messages() -> None:
    """Make PySpark report Delta's errors instead of failing to format them.

    PySpark 4.2 formats a JVM error that carries an error class (and a SQL position) through
    Spark's own catalogue of error classes, which lacks Delta's ``DELTA_*`` classes: the
    conversion itself then fails with ``[INTERNAL_ERROR] Cannot find main error class`` and
    the real message (an unresolved MERGE column, a violated constraint) is lost. Fall back
    to the message of the JVM exception, which Delta formatted. Idempotent.
    """
    from py4j.protocol import Py4JError
    from pyspark.errors.exceptions.captured import CapturedException

    format_message = CapturedException.getMessage
    if getattr(format_message, "keeps_delta_messages", False):
        return

    def get_message(self: CapturedException) -> str:
        try:
            return format_message(self)
        except Py4JError:
            return self._desc

    get_message.keeps_delta_messages = True  # type: ignore[attr-defined]
    CapturedException.getMessage = get_message  # type: ignore[method-assign]


def expand_jars(spark_jars: str) -> str:
    """Expand the globs in ``spark.jars`` (Spark does not, for local files), and fail early
    and clearly when a pattern matches nothing."""
    expanded = []
    for pattern in filter(None, (entry.strip() for entry in spark_jars.split(","))):
        if "://" in pattern and not pattern.startswith("file:"):
            expanded.append(pattern)  # remote jars are Spark's to fetch
            continue
        matches = sorted(glob.glob(pattern.removeprefix("file:")))
        if not matches:
            raise DbtRuntimeError(
                f"spark.jars in the profile names {pattern!r}, which matches no file. "
                f"Delta Lake's jars are missing. {DELTA_HINT}."
            )
        expanded.extend(matches)
    return ",".join(expanded)


def check_standalone_master(master: str, timeout: float = 5.0) -> None:
    """Fail at once and clearly when a ``spark://`` master does not answer.

    Spark itself retries for a minute and then fails with a stack trace that does not say
    the master is down."""
    if not master.startswith("spark://"):
        return
    addresses = master.removeprefix("spark://").split(",")  # spark://h1:7077,h2:7077 (HA)
    for address in addresses:
        host, _, port = address.strip().rpartition(":")
        if not host or not port.isdigit():
            raise DbtRuntimeError(
                f"spark.master in the profile is {master!r}: expected spark://host:port"
            )
        try:
            with socket.create_connection((host, int(port)), timeout=timeout):
                return
        except OSError:
            continue
    raise DbtRuntimeError(
        f"No Spark standalone master answers at {master}. Start the master (Spark's "
        f"sbin/start-master.sh) and its workers, or point spark.master in the profile's "
        f"server_side_parameters at a running one."
    )
