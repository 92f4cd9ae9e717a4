"""The engine's Delta commits: their tags and fences, commit conflicts, and the versions and
detail a table's log holds.

Delta takes a commit's ``userMetadata`` and its idempotent-write id (``txnAppId``,
``txnVersion``) from session confs, which every thread of a session shares. They are set
only around one engine write, under a process-wide lock that the lease's state writes take
too, so that a heartbeat's commit never carries a chunk's tag or fence.

A fence makes a write of a run that lost its lease a no-op: each write to main carries a
``txnVersion`` above every one of the owners before it (see ``lease.Lease.fence``), and
Delta skips a write whose version is not above the latest it recorded for the app id, or
fails it with a commit conflict when a newer one lands while it runs.

Every dbt job runs on a session of its own (``SparkEnvironment.isolated_session``): under
dbt ``threads`` other models write through other sessions, and the only other thread on a
refresh's session is its heartbeat, whose state appends take the lock and carry their ids
as write options. A caller that shares one session between refreshes (the engine tests'
threads) may still have a write of its own take the confs; so the app id names the model's
main table, and Delta resets the version after its first use: such a write records at most
one fence of ours, lower than any later one, and is never skipped for it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
from collections.abc import Iterator, Mapping
from typing import Any

# once imported, the Connect client and (with delta.exceptions) the classic one raise Delta's
# commit conflicts as subclasses of delta.exceptions.base's
import delta.connect.exceptions  # noqa: F401
from delta.exceptions import base as delta_errors
from py4j.protocol import Py4JError
from pyspark.errors import PySparkException

from dbt.adapters.spark_refreshable.engine.errors import ConfigError
from dbt.adapters.spark_refreshable.engine.naming import quote

USER_METADATA_CONF = "spark.databricks.delta.commitInfo.userMetadata"
TXN_APP_ID_CONF = "spark.databricks.delta.write.txnAppId"
TXN_VERSION_CONF = "spark.databricks.delta.write.txnVersion"
TXN_AUTO_RESET_CONF = "spark.databricks.delta.write.txnVersion.autoReset.enabled"

# The same, as an option of one DataFrame write (the state log's appends): no session conf.
USER_METADATA_OPTION = "userMetadata"

SESSION_CONF_LOCK = threading.RLock()

# Delta's commit conflicts: the classes both clients convert them to, and their conditions
COMMIT_CONFLICTS = (
    delta_errors.DeltaConcurrentModificationException,
    delta_errors.ConcurrentWriteException,
    delta_errors.MetadataChangedException,
    delta_errors.ProtocolChangedException,
    delta_errors.ConcurrentAppendException,
    delta_errors.ConcurrentDeleteReadException,
    delta_errors.ConcurrentDeleteDeleteException,
    delta_errors.ConcurrentTransactionException,
)
CONFLICT_CONDITIONS = ("DELTA_CONCURRENT_", "DELTA_METADATA_CHANGED", "DELTA_PROTOCOL_CHANGED")


# Chars of JSON read from the JVM in one call: each escaped backslash doubles in Py4J's
# answer, which stays under the 8,192 chars of its buffer (see ``jvm_json``).
ANSWER_CHARS = 4000
# the fields of a commit that the engine reads, as DESCRIBE HISTORY names them
COMMIT_FIELDS = ("version", "operation", "operationMetrics", "userMetadata")
# The catalog whose tables Delta's log API finds by a ``db.table`` identifier
SESSION_CATALOG = "spark_catalog"
# Delta operations that change no row of a table, nor its columns but for their comments
ROWLESS_OPERATIONS = frozenset(
    {
        "SET TBLPROPERTIES",
        "UNSET TBLPROPERTIES",
        "CHANGE COLUMN",
        "ADD CONSTRAINT",
        "DROP CONSTRAINT",
        "OPTIMIZE",
        "VACUUM START",
        "VACUUM END",
    }
)


def recent_commits(spark: Any, name: str, limit: int) -> list[dict[str, Any]]:
    """A Delta table's newest ``limit`` commits, newest first, each with ``COMMIT_FIELDS``:
    read from the commits' own files in the log where the driver can (see
    ``latest_snapshot``; 0.01-0.02 s for three commits, where DESCRIBE HISTORY runs a Spark
    job: 0.27-0.36 s), else DESCRIBE HISTORY's rows, also when a commit file cannot be read
    (Delta's log cleanup deleted it): then DESCRIBE HISTORY lists the commits it still has."""
    snapshot = latest_snapshot(spark, name)
    found = None if snapshot is None else commits_in_log(spark, snapshot, limit)
    return found if found is not None else commits_in_history(spark, name, limit)


def commits_in_history(spark: Any, name: str, limit: int | None) -> list[dict[str, Any]]:
    """The newest ``limit`` commits (None: all) as DESCRIBE HISTORY lists them, newest first."""
    bound = "" if limit is None else f" LIMIT {limit}"
    rows = spark.sql(f"DESCRIBE HISTORY {name}{bound}").collect()
    return [{field: row[field] for field in COMMIT_FIELDS} for row in rows]


def commits_in_log(spark: Any, snapshot: Any, limit: int) -> list[dict[str, Any]] | None:
    """The newest ``limit`` commits up to ``snapshot`` (``latest_snapshot``'s), newest first,
    each read by Delta from its commit file (DeltaHistoryManager.getCommitInfoOpt, as
    DESCRIBE HISTORY does); None if one cannot be."""
    found = []
    try:
        delta = spark._jvm.org.apache.spark.sql.delta
        log = snapshot.deltaLog()
        files = delta.util.DeltaCommitFileProvider.apply(snapshot)
        store, conf = log.store(), log.newDeltaHadoopConf()
        latest = int(snapshot.version())
        for version in range(latest, max(latest - limit, -1), -1):
            info = delta.DeltaHistoryManager.getCommitInfoOpt(store, files.deltaFile(version), conf)
            commit = jvm_json(spark, info.get()) if info.isDefined() else {}
            found.append({field: commit.get(field) for field in COMMIT_FIELDS[1:]})
            found[-1]["version"] = version
    except (Py4JError, PySparkException):
        return None
    return found


def jvm_table(spark: Any, name: str) -> tuple[Any, Any] | None:
    """The session's JVM side and table ``name`` (``db.table``, or with the session catalog's
    name first, as a plan names a table) parsed as that catalog's identifier; None where the
    session has no JVM of its own (Spark Connect) or the name is of another catalog. Raises
    what the JVM raises for a name it cannot parse."""
    session = getattr(spark, "_jsparkSession", None)
    if session is None:
        return None
    parser = session.sessionState().sqlParser()
    try:
        return session, parser.parseTableIdentifier(name)
    except PySparkException:  # three parts, or not a name
        parts = parser.parseMultipartIdentifier(name)
        if parts.size() != 3 or parts.head().lower() != SESSION_CATALOG:
            return None
        return session, parser.parseTableIdentifier(
            f"{quote(parts.apply(1))}.{quote(parts.apply(2))}"
        )


def latest_snapshot(spark: Any, name: str) -> Any | None:
    """Delta's snapshot of a table's latest version, as the driver reads it from the table's
    log: no Spark job, where DESCRIBE HISTORY runs one to read commits (0.15-0.5 s against
    0.02-0.1, measured in a cycle and alone) and DESCRIBE DETAIL one or more to count files.
    None where the session has no JVM of its own (Spark Connect), where Delta's log API is
    not the one this reads, or where the name has no Delta log (missing, not Delta, files
    gone): the caller then asks SQL, which also says what is wrong."""
    try:
        found = jvm_table(spark, name)
        if found is None:
            return None
        session, identifier = found
        log = spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(session, identifier)
        nothing = spark._jvm.scala.Option.empty()
        snapshot = log.update(False, nothing, nothing)  # not stale: lists the log
        return snapshot if snapshot.version() >= 0 else None
    except (Py4JError, PySparkException):  # PySpark raises the JVM's errors as its own
        return None


def jvm_json(spark: Any, value: Any) -> Any:
    """A JVM value of Delta's (a commit's info, a Scala map or sequence) as Python's, by
    way of Delta's JSON mapper: a few calls to the JVM, where reading a collection through
    Py4J costs one or two an element. The JSON is written in the JVM, in ASCII, and read in
    pieces of ``ANSWER_CHARS``: Py4J answers through a buffer of 8,192 chars, and a longer
    answer leaves in two TCP sends, the second held until the first's delayed ACK, 40 ms
    later (a state commit of a table of 16 columns: 45 ms read whole, 5 ms in pieces)."""
    json_writer, string_writer = _json_writers(spark._jvm)
    written = string_writer()
    json_writer.writeValue(written, value)
    text = written.getBuffer()
    length = text.length()
    pieces = range(0, length, ANSWER_CHARS)
    return json.loads("".join(text.substring(i, min(i + ANSWER_CHARS, length)) for i in pieces))


@functools.cache
def _json_writers(jvm: Any) -> tuple[Any, Any]:
    """Delta's JSON mapper's writer, in ASCII, and the JVM's StringWriter class: looked up
    once per JVM (each name costs Py4J a call a dot)."""
    escaped = jvm.com.fasterxml.jackson.core.json.JsonWriteFeature.ESCAPE_NON_ASCII
    mapper = jvm.org.apache.spark.sql.delta.util.JsonUtils.mapper()
    return getattr(mapper.writer(), "with")(escaped.mappedFeature()), jvm.java.io.StringWriter


def snapshot_properties(spark: Any, snapshot: Any) -> dict[str, str]:
    """A snapshot's table properties (the ones SHOW TBLPROPERTIES lists, none redacted)."""
    return jvm_json(spark, snapshot.getProperties())


def snapshot_files(snapshot: Any) -> tuple[int, int]:
    """A snapshot's data files and their bytes: from its version's checksum file where
    Delta wrote one (no Spark job), else from the table's state, which Delta computes in
    Spark jobs (as DESCRIBE DETAIL does: three, 0.9-1.4 s of a tiny cycle)."""
    checksum = snapshot.checksumOpt()
    if checksum.isDefined():
        return int(checksum.get().numFiles()), int(checksum.get().tableSizeBytes())
    return int(snapshot.numOfFiles()), int(snapshot.sizeInBytes())


def table_version(spark: Any, name: str) -> int:
    """A Delta table's latest version."""
    snapshot = latest_snapshot(spark, name)
    if snapshot is not None:
        return int(snapshot.version())
    return int(commits_in_history(spark, name, 1)[0]["version"])


def written_by_newest_commit(spark: Any, name: str) -> tuple[int, int | None]:
    """A table's newest version and the rows its commit wrote (Delta's ``numOutputRows``
    operation metric; None when the commit recorded none)."""
    newest = recent_commits(spark, name, 1)[0]
    rows = (newest["operationMetrics"] or {}).get("numOutputRows")
    return int(newest["version"]), None if rows is None else int(rows)


def table_detail(spark: Any, name: str) -> Any:
    """DESCRIBE DETAIL's row of a Delta table (id, partitionColumns, clusteringColumns...)."""
    return spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]


def detail_files(detail: Any) -> tuple[int, int]:
    """The data files and their bytes in DESCRIBE DETAIL's row."""
    return int(detail["numFiles"] or 0), int(detail["sizeInBytes"] or 0)


def table_files(spark: Any, name: str) -> tuple[int, int]:
    """A Delta table's data files and their bytes, as DESCRIBE DETAIL counts them: from its
    log where the driver can read it (``snapshot_files``), else by DESCRIBE DETAIL."""
    snapshot = latest_snapshot(spark, name)
    if snapshot is not None:
        return snapshot_files(snapshot)
    return detail_files(table_detail(spark, name))


def table_id(spark: Any, name: str) -> str:
    """A Delta table's id: it changes when the table is dropped and created again."""
    snapshot = latest_snapshot(spark, name)
    if snapshot is not None:
        return str(snapshot.metadata().id())
    return str(table_detail(spark, name)["id"])


def snapshot_identity(snapshot: Any) -> tuple[str, int]:
    """The table id and version of a snapshot (``latest_snapshot``'s)."""
    return str(snapshot.metadata().id()), int(snapshot.version())


def table_identity(spark: Any, name: str) -> tuple[str, int]:
    """A Delta table's id and latest version, in one read of its log where the driver can
    read it (else as ``table_id`` and ``table_version`` ask SQL)."""
    snapshot = latest_snapshot(spark, name)
    if snapshot is not None:
        return snapshot_identity(snapshot)
    return table_id(spark, name), table_version(spark, name)


@contextlib.contextmanager
def engine_commit(
    spark: Any,
    tag: str,
    fence: tuple[str, int] | None = None,
    settings: Mapping[str, str] | None = None,
) -> Iterator[None]:
    """Tag (and with ``fence``, an app id and version, fence) the Delta commit of the block,
    which holds the session's conf lock: keep it to one write. ``settings``: more session
    confs for that write."""
    confs = {USER_METADATA_CONF: tag, **(settings or {})}
    if fence is not None:
        app_id, version = fence
        confs.update(
            {TXN_APP_ID_CONF: app_id, TXN_VERSION_CONF: str(version), TXN_AUTO_RESET_CONF: "true"}
        )
    with SESSION_CONF_LOCK, session_confs(spark, confs):
        yield


@contextlib.contextmanager
def session_confs(spark: Any, confs: Mapping[str, str]) -> Iterator[None]:
    """Set session confs for a block; each gets back the session's own value, or is unset."""
    held = {key: spark.conf.get(key, None) for key in confs}
    for key, value in confs.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in held.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def refuse_session_write_ids(spark: Any) -> None:
    """Refuse a session that carries idempotent-write ids of its own: Delta would skip as
    done, or refuse, every write of the engine's that it reaches (and the engine unsets them
    after each of its fenced writes)."""
    with SESSION_CONF_LOCK:  # the engine's own ids are set only under it
        held = {conf: spark.conf.get(conf, None) for conf in (TXN_APP_ID_CONF, TXN_VERSION_CONF)}
    held = {conf: value for conf, value in held.items() if value is not None}
    if held:
        raise ConfigError(
            f"This session sets Delta's idempotent-write ids {held}: Delta would skip (as "
            f"already done) or refuse the refresh's writes to its tables, and the refresh "
            f"sets them itself to fence its writes to main. Unset "
            f"{' and '.join(held)} for this model's runs (the profile's "
            f"server_side_parameters, or the code that set them). Nothing was written."
        )


def fence_app_id(main: str) -> str:
    """The idempotent-write app id of the engine's commits to ``main``."""
    return f"dbt-refreshable:{main}"


def is_commit_conflict(exc: BaseException) -> bool:
    """A Delta optimistic-concurrency failure: another writer committed first. Delta's own
    exception classes, as both the classic and the Connect client raise them, or a Spark
    error whose condition is one of them."""
    if isinstance(exc, COMMIT_CONFLICTS):
        return True
    condition = exc.getCondition() if isinstance(exc, PySparkException) else None
    return bool(condition) and condition.startswith(CONFLICT_CONDITIONS)
