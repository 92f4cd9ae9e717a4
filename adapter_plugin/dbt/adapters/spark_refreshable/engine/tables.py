"""Creating, adopting, evolving and dropping a model's tables.

Main is a Delta table with deletion vectors on (a refresh that changes few rows writes
few bytes) and column mapping by name (so ``sync_all_columns`` can drop columns); change
data feed on request. The model's ``partition_by`` or liquid clustering shape main when it
is created; its ``tblproperties`` are set then and on every cycle that finds them changed.
A main table that already exists as a Delta table (say, built by the ``table``
materialization) is adopted as it is.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from py4j.protocol import Py4JError
from pyspark.errors import AnalysisException, PySparkException, UnsupportedOperationException
from pyspark.sql.types import (
    ArrayType,
    DataType,
    MapType,
    StructField,
    StructType,
    TimestampNTZType,
    VariantType,
)

from dbt.adapters.spark_refreshable.engine.columns import listed_in_one_name
from dbt.adapters.spark_refreshable.engine.commits import (
    commits_in_history,
    detail_files,
    engine_commit,
    is_commit_conflict,
    jvm_json,
    jvm_table,
    latest_snapshot,
    snapshot_files,
    snapshot_identity,
    snapshot_properties,
    table_detail,
    table_version,
)
from dbt.adapters.spark_refreshable.engine.errors import (
    ConfigError,
    SchemaChangeError,
    first_line,
)
from dbt.adapters.spark_refreshable.engine.naming import (
    BOOKKEEPING_SUFFIXES,
    HASH_COLUMN,
    OP_COLUMN,
    VNODE_COLUMN,
    ModelTables,
    fold_name,
    quote,
)
from dbt.adapters.spark_refreshable.engine.spec import RefreshConfig
from dbt.adapters.spark_refreshable.engine.sql import (
    ident,
    literal,
    schema_from_json,
    type_sql,
    unquoted,
    without_nullability,
)
from dbt.adapters.spark_refreshable.engine.state import STATE_COLUMNS, State, state_row_select

# Settings the engine's tables need whatever a session's defaults
# (spark.databricks.delta.properties.defaults.*) give new tables: rows updated and deleted.
UPDATABLE = {"delta.appendOnly": "false"}
CHANGE_DATA_FEED = "delta.enableChangeDataFeed"
MAIN_PROPERTIES = {
    "delta.enableDeletionVectors": "true",
    "delta.columnMapping.mode": "name",
    "delta.minReaderVersion": "3",
    "delta.minWriterVersion": "7",
    **UPDATABLE,
}
# every bookkeeping table carries MARKER: a table of the user's that happens to have a
# bookkeeping table's name is never dropped or overwritten
MARKER = "dbt_refreshable.bookkeeping"
# on the state table: the model (main's schema.identifier, lower case) whose lock and
# bookkeeping it holds. Two models of one name whose bookkeeping_schema is the same would
# otherwise share one lock, one staging table and one record of the last snapshot. Also on
# an external main: two models of one alias under one location_root would share its folder.
OWNER_PROPERTY = "dbt_refreshable.model"
# Spark's text in place of a redacted value
REDACTED = "*********(redacted)"
# the conditions of a Delta table the catalog lists but whose files are gone (as DDL and
# as a read meet it)
FILES_GONE = ("DELTA_PATH_DOES_NOT_EXIST", "DELTA_TABLE_NOT_FOUND")
# a CREATE's condition when the table's location holds files and the catalog lists no table
# there: a racing run's CREATE of it between writing its files and registering the table, or
# one that was stopped there
LOCATION_TAKEN = "DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION"
# how long a run that meets a racing CREATE waits for the catalog to list its table: a
# one-row CTAS takes 1-3 s on a loaded machine
CREATOR_WAIT_SECONDS = 60.0
# on main: the names of the CHECK constraints the engine added from the model's contract
CONSTRAINTS_PROPERTY = "dbt_refreshable.constraints"
# A Delta checkpoint every 100 commits, not 10: writing one is a Spark job in the committing
# thread, ~1.3 s for a table of a few rows, and a cycle commits 3-5 times to these tables.
# Reading 100 small commits' JSON costs no more than a checkpoint and 9 of them
# (bench/results/history/2026-11-26-bookkeeping-checkpoints.md).
BOOKKEEPING_LOG_PROPERTIES = {"delta.checkpointInterval": "100"}
BOOKKEEPING_PROPERTIES = {
    "delta.enableDeletionVectors": "false",
    # no change data feed, which Delta refuses on a table replaced under column mapping
    CHANGE_DATA_FEED: "false",
    **UPDATABLE,
    MARKER: "true",
    **BOOKKEEPING_LOG_PROPERTIES,
}
# columns by which tables of 0.1.0 (which set no marker) are recognized
LEGACY_COLUMNS = {
    "staging": {VNODE_COLUMN, HASH_COLUMN},
    "changes": {VNODE_COLUMN, OP_COLUMN},
    "progress": {"refresh_id", "vnode", "chunk", "staged_rows"},
    "state": {"phase", "lease_version", "owner_id"},
}
# staging and changes hold the snapshot's columns: every name main accepts. Only the engine
# reads them, and it filters on the vnode alone: file statistics on that column only.
SCRATCH_PROPERTIES = {
    **BOOKKEEPING_PROPERTIES,
    "delta.columnMapping.mode": "name",
    "delta.dataSkippingStatsColumns": VNODE_COLUMN,
}


def properties_sql(properties: dict[str, str]) -> str:
    return ", ".join(f"{literal(k)} = {literal(v)}" for k, v in properties.items())


def table_exists(spark: Any, name: str) -> bool:
    """Whether the catalog has table ``name`` (also when its files are gone)."""
    try:
        return spark.catalog.tableExists(name)
    except AnalysisException as error:
        if error.getCondition() in FILES_GONE:
            return True
        raise


def files_gone(tables: ModelTables, role: str) -> ConfigError:
    """The error of a table of the model the catalog lists but whose files are gone."""
    return ConfigError(
        f"{tables.role_display(role)} is in the catalog but its files are gone (deleted from "
        f"the file system or object store). Run `dbt run --full-refresh --select <model>`: "
        f"it drops the model's tables and rebuilds main from the snapshot."
    )


@dataclass(frozen=True)
class MainDetail:
    """What a cycle reads of an existing main, as DESCRIBE DETAIL lists it, and the version
    it was read at."""

    id: str
    version: int
    location: str
    partition_columns: list[str]
    clustering_columns: list[str]
    files: int
    size_bytes: int
    # main's CHECK constraints that no contract put there (a user's own), by name
    own_checks: dict[str, str]
    change_data_feed: bool  # Delta writes main's change data feed (config, or a user's own)
    owner: str | None  # the model an external main was created for (OWNER_PROPERTY)

    def reclusters_to(self, wanted: list[str]) -> bool:
        """Whether main is to be clustered by ``wanted`` (liquid_clustered_by) with an
        ``ALTER TABLE ... CLUSTER BY``: it is clustered otherwise or not at all, and not
        partitioned (Delta clusters no partitioned table). The ALTER changes Delta's
        metadata only: ``OPTIMIZE`` lays files out by it."""
        return (
            bool(wanted)
            and not self.partition_columns
            and [*map(fold_name, self.clustering_columns)] != [*map(fold_name, wanted)]
        )

    @classmethod
    def of_snapshot(cls, spark: Any, snapshot: Any) -> MainDetail:
        """From Delta's snapshot of main's log, as DESCRIBE DETAIL reads it, but without the
        Spark jobs that compute the table's state for its file count (see
        ``commits.snapshot_files``). Clustering columns cost those jobs still, for a table
        with liquid clustering only."""
        clustering = spark._jvm.org.apache.spark.sql.delta.skipping.clustering
        clustered = []
        if clustering.ClusteredTableUtils.isSupported(snapshot.protocol()):
            names = clustering.ClusteringColumnInfo.extractLogicalNames(snapshot)
            clustered = [unquoted(n) for n in jvm_json(spark, names)]
        table, version = snapshot_identity(snapshot)
        files, size_bytes = snapshot_files(snapshot)
        properties = snapshot_properties(spark, snapshot)
        return cls(
            id=table,
            version=version,
            location=str(snapshot.deltaLog().dataPath().toString()),
            partition_columns=jvm_json(spark, snapshot.metadata().partitionColumns()),
            clustering_columns=clustered,
            files=files,
            size_bytes=size_bytes,
            own_checks=own_check_constraints(properties),
            change_data_feed=writes_change_data_feed(properties),
            owner=properties.get(OWNER_PROPERTY),
        )

    @classmethod
    def of_row(cls, row: Any, version: int) -> MainDetail:
        """From DESCRIBE DETAIL's row (which names no version: read it after)."""
        try:
            clustered = [unquoted(n) for n in row["clusteringColumns"] or []]
        except (KeyError, ValueError):  # a Delta without liquid clustering
            clustered = []
        files, size_bytes = detail_files(row)
        properties = dict(row["properties"] or {})
        return cls(
            id=str(row["id"]),
            version=version,
            location=str(row["location"]),
            partition_columns=list(row["partitionColumns"] or []),
            clustering_columns=clustered,
            files=files,
            size_bytes=size_bytes,
            own_checks=own_check_constraints(properties),
            change_data_feed=writes_change_data_feed(properties),
            owner=properties.get(OWNER_PROPERTY),
        )


def main_detail(spark: Any, tables: ModelTables) -> MainDetail | None:
    """Main's detail, None when main does not exist yet: from its Delta log where the driver
    can read it, else from DESCRIBE DETAIL, which refuses a main that is a view, a table of
    another format than Delta, or one whose files are gone. (Existence is asked before
    DESCRIBE DETAIL: Spark logs every failed statement as an error, a first build's
    included.)"""
    snapshot = latest_snapshot(spark, tables.main)
    if snapshot is not None:
        try:
            return MainDetail.of_snapshot(spark, snapshot)
        except (Py4JError, PySparkException):  # Delta's API is not the one this reads
            pass
    if not table_exists(spark, tables.main):
        return None
    try:
        detail = table_detail(spark, tables.main)
    except AnalysisException as error:
        condition = error.getCondition() or ""
        if condition in FILES_GONE:
            raise files_gone(tables, "main") from None
        if not condition.startswith("EXPECT_TABLE_NOT_VIEW"):
            raise
        raise ConfigError(
            f"{tables.display} exists and is a view, not a Delta table. Drop the view (DROP "
            f"VIEW {tables.main}) or give the model another alias. Nothing was changed."
        ) from None
    if (detail["format"] or "").lower() != "delta":
        raise ConfigError(
            f"{tables.display} exists and is a {detail['format']} table, not a Delta table. "
            f"Run `dbt run --full-refresh --select <model>` to rebuild it as refreshable, or "
            f"drop it. Nothing was changed."
        )
    return MainDetail.of_row(detail, table_version(spark, tables.main))


@dataclass(frozen=True)
class Claim:
    """What claiming some of a model's bookkeeping tables found: the roles whose table
    exists, and the properties that the state and progress tables of earlier versions lack
    (log properties, the state table's owner), by table name, for the run to set once it
    holds the lease (a commit to the state table beside a live owner's would fail its next
    compare-and-set)."""

    present: frozenset[str]
    outdated: dict[str, dict[str, str]]


def claim_bookkeeping_tables(
    spark: Any,
    tables: ModelTables,
    roles: tuple[str, ...] = tuple(BOOKKEEPING_SUFFIXES),
    dropping: bool = False,
) -> Claim:
    """Refuse to go on if a table with the name of a bookkeeping table of ``roles`` is not
    the engine's, or if the state table is another model's, or if a table's files are gone
    (unless the run is ``dropping`` the tables: --full-refresh). Tables of 0.1.0, recognized
    by their columns, get the marker now."""
    outdated, present = {}, set()
    for role in roles:
        name = tables.role_name(role)
        try:
            held = existing_table_properties(spark, name)
        except AnalysisException as error:
            if error.getCondition() not in FILES_GONE:
                raise
            if dropping:
                continue  # its files are gone: it holds nothing to claim
            raise files_gone(tables, role) from None
        if held is None:
            continue
        present.add(role)
        if held.get(MARKER) != "true":
            _claim_legacy(spark, tables, role, name)
        missing = {k: v for k, v in BOOKKEEPING_LOG_PROPERTIES.items() if held.get(k) != v}
        if role == "state":
            _refuse_another_models_state(tables, held.get(OWNER_PROPERTY))
            if held.get(OWNER_PROPERTY) is None:  # a state table of an earlier version
                missing[OWNER_PROPERTY] = state_owner(tables)
        if missing and role in ("state", "progress"):  # staging and changes get them anew
            outdated[name] = missing
    return Claim(frozenset(present), outdated)


def refuse_bookkeeping_table_as_main(spark: Any, tables: ModelTables) -> None:
    """Refuse a main that is a bookkeeping table of dbt-refreshable: another model's
    staging, changes, progress or state table has this model's name (a model
    ``orders__staging`` in the schema ``analytics_refreshable``, which dbt gives a model
    configured ``schema='refreshable'``, or beside ``orders`` when its bookkeeping_schema is
    their schema). Served from, it would show the other model's rows, and each model's run
    would overwrite what the other wrote."""
    try:
        held = existing_table_properties(spark, tables.main)
    except AnalysisException as error:
        if error.getCondition() in FILES_GONE:
            return  # reading main says so, with what to do
        raise
    if held is None or held.get(MARKER) != "true":
        return
    role, model = next(
        (
            (role, tables.identifier[: -len(suffix)])
            for role, suffix in BOOKKEEPING_SUFFIXES.items()
            if tables.identifier.endswith(suffix)
        ),
        ("bookkeeping", None),
    )
    owner = held.get(OWNER_PROPERTY) or model
    of = f"the model {owner}" if owner else "another model"
    raise ConfigError(
        f"{tables.display} is a bookkeeping table of dbt-refreshable (the {role} table of {of}, "
        f"whose bookkeeping tables are in {tables.schema}), not a table this model can "
        f"serve from: its rows are that model's, and each model's run would overwrite the "
        f"other's. Give this model another alias or schema, or set bookkeeping_schema on the "
        f"other model. Nothing was changed."
    )


def state_owner(tables: ModelTables) -> str:
    """The value of the state table's OWNER_PROPERTY for this model."""
    return tables.display.lower()


def _refuse_another_models_state(tables: ModelTables, owner: str | None) -> None:
    if owner is None or owner == state_owner(tables):
        return
    names = ", ".join(tables.role_display(r) for r in tables.identifiers() if r != "main")
    raise ConfigError(
        f"{tables.role_display('state')} holds the refresh state of the model {owner}, not of "
        f"{tables.display}: the two have the same name and bookkeeping schema "
        f"({tables.bookkeeping}), and would share one lock and one record of the last "
        f"snapshot. Give one of them another alias or another bookkeeping_schema; if {owner} "
        f"no longer exists, drop its bookkeeping tables ({names}). Nothing was changed."
    )


def _claim_legacy(spark: Any, tables: ModelTables, role: str, name: str) -> None:
    columns = {c.lower() for c in spark.table(name).columns}
    if not LEGACY_COLUMNS[role] <= columns:
        raise ConfigError(
            f"{tables.role_display(role)} exists and is not a bookkeeping table of "
            f"dbt-refreshable (no table property {MARKER}), but the {role} table of "
            f"{tables.display} must have that name. Nothing was changed. Rename or move "
            f"your table, give the model another alias, or set bookkeeping_schema."
        )
    set_table_properties(spark, name, {MARKER: "true"})


def set_table_properties(spark: Any, name: str, properties: dict[str, str]) -> None:
    spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ({properties_sql(properties)})")


def ensure_bookkeeping_schema(spark: Any, tables: ModelTables) -> None:
    """Create the schema of the bookkeeping tables if it does not exist."""
    try:
        spark.sql(f"CREATE SCHEMA IF NOT EXISTS {quote(tables.bookkeeping)}")
    except Exception as error:
        if spark.catalog.databaseExists(tables.bookkeeping):
            return  # another run created it first
        raise ConfigError(
            f"The schema {tables.bookkeeping} for the bookkeeping tables of "
            f"{tables.display} cannot be created ({first_line(error)}). Create it, or set "
            f"bookkeeping_schema in the model's config to a schema this connection can "
            f"create tables in (the model's own schema works too). Nothing was changed."
        ) from None


def ensure_state_table(spark: Any, tables: ModelTables) -> None:
    """Create the state table with its one IDLE row, or bring an existing one up to
    STATE_COLUMNS."""
    if table_exists(spark, tables.state):
        add_missing_state_columns(spark, tables)
    else:
        create_state_table(spark, tables, State.initial())


def create_state_table(spark: Any, tables: ModelTables, row: State) -> bool:
    """Create the state table holding ``row``, atomically (CTAS): of two runs that race to
    create it, one creates it and the other finds it. Whether this call created it."""
    properties = {**BOOKKEEPING_PROPERTIES, OWNER_PROPERTY: state_owner(tables)}
    try:
        spark.sql(
            f"CREATE TABLE {tables.state} USING delta "
            f"TBLPROPERTIES ({properties_sql(properties)}) AS " + state_row_select(row)
        )
    except Exception as error:
        if table_exists(spark, tables.state):
            return False  # another run created it first
        if not (location_taken(error) or is_commit_conflict(error)):
            raise
        # another run's CREATE has written its files or its first commit and may not have
        # registered the table yet
        if not _appears_within(spark, tables.state, CREATOR_WAIT_SECONDS):
            raise folder_taken(
                f"The state table {tables.role_display('state')} of {tables.display}",
                error,
                "A run that was creating it was stopped between writing its files and "
                "registering the table; those files hold no lock and none of the model's rows. "
                "If no run of this model is going on, delete that folder and run again. "
                "Nothing was changed.",
            ) from None
        return False
    return True


def _appears_within(spark: Any, name: str, seconds: float) -> bool:
    """Whether the catalog lists table ``name`` within ``seconds``."""
    deadline = time.monotonic() + seconds
    while not table_exists(spark, name):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.25)
    return True


def location_taken(error: BaseException) -> bool:
    """Whether a CREATE failed because the table's folder holds files the catalog lists
    no table for."""
    return isinstance(error, PySparkException) and error.getCondition() == LOCATION_TAKEN


def remove_stopped_create(spark: Any, name: str, tag: str) -> bool:
    """Delete the folder of managed table ``name`` if it holds what a run stopped between its
    ``CREATE``'s commit and the catalog listing the table leaves, and nothing else: a Delta
    log of one commit, a ``CREATE`` tagged ``tag`` (the cycle's own, so written by a run of
    this very cycle), no data file, and no file beside the log. Whether it did; False where
    the folder holds anything else (a user's files stay), or the session has no JVM (Spark
    Connect)."""
    found = jvm_table(spark, name)
    if found is None:
        return False
    session, identifier = found
    try:
        folder = session.sessionState().catalog().defaultTablePath(identifier).toString()
        at = f"delta.{ident(folder)}"
        history = commits_in_history(spark, at, None)
        ours = len(history) == 1 and history[0]["userMetadata"] == tag
        if not ours or not history[0]["operation"].startswith("CREATE"):
            return False
        if detail_files(table_detail(spark, at))[0]:
            return False
        path = spark._jvm.org.apache.hadoop.fs.Path(folder)
        files = path.getFileSystem(session.sessionState().newHadoopConf())
        if [entry.getPath().getName() for entry in files.listStatus(path)] != ["_delta_log"]:
            return False  # files of someone's beside the log
        files.delete(path, True)
        spark._jvm.org.apache.spark.sql.delta.DeltaLog.invalidateCache(session, path)
    except (Py4JError, PySparkException):
        return False
    return True


def folder_taken(table: str, error: Exception, cause_and_fix: str) -> ConfigError:
    """The error of a CREATE of ``table`` (as messages name it) that found its folder
    holding files the catalog lists no table for."""
    return ConfigError(
        f"{table} cannot be created: its folder holds files, yet the catalog lists no table "
        f"there ({first_line(error, 400)}). {cause_and_fix}"
    )


def add_missing_state_columns(spark: Any, tables: ModelTables) -> None:
    """Bring a state table of an earlier version up to STATE_COLUMNS (new columns only)."""
    present = {name.lower() for name in spark.table(tables.state).columns}
    missing = [(n, t) for n, t in STATE_COLUMNS.items() if n not in present]
    if not missing:
        return
    try:
        spark.sql(
            f"ALTER TABLE {tables.state} ADD COLUMNS ("
            + ", ".join(f"{ident(n)} {t}" for n, t in missing)
            + ")"
        )
    except Exception:
        spark.sql(f"REFRESH TABLE {tables.state}")
        present = {name.lower() for name in spark.table(tables.state).columns}
        if any(n not in present for n, _ in missing):
            raise
        # another run added them first


def replace_scratch_table(
    frame: Any, name: str, observed: dict[str, str] | None = None
) -> dict[str, Any] | None:
    """Replace table ``name`` (staging, changes) with ``frame``, in one commit, whatever
    schema it had; column mapping on, so any column name main accepts fits. A table that
    has the frame's columns and the scratch properties already has its rows overwritten
    instead, by its path, its metadata kept: ``REPLACE`` also rewrites the table in the
    catalog (a 40-row write 0.45 s against 0.32, and the next read of it 0.6 against 0.55).
    The aggregates ``observed`` (name: SQL) are computed over the rows as that overwrite
    writes them and returned (None: the table was replaced, or Spark reported nothing):
    Spark reports a write's observed metrics when it writes by path, not when it writes a
    table by name, which Delta runs in a nested execution that no listener reads."""
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    properties = {**SCRATCH_PROPERTIES, **features_for(frame.schema)}
    path = _fitting_scratch_table_path(frame.sparkSession, name, frame.schema, properties)
    if path is None:
        create_or_replace(frame, name, properties)
        return None
    observation = Observation() if observed else None
    if observation is not None:
        frame = frame.observe(observation, *(F.expr(v).alias(k) for k, v in observed.items()))
    frame.write.format("delta").mode("overwrite").save(path)
    if observation is None:
        return None
    try:
        found = dict(observation.get)
    except Exception:  # an empty row: PySpark's conversion of it fails
        return None
    return found if set(found) == set(observed) else None


def create_or_replace(frame: Any, name: str, properties: dict[str, str]) -> None:
    """Make Delta table ``name`` hold ``frame`` with ``properties``, in one commit. Unlike
    SQL's ``CREATE OR REPLACE TABLE``, it also takes a folder that holds files the catalog
    lists no table for."""
    writer = frame.writeTo(name).using("delta")
    for key, value in properties.items():
        writer = writer.tableProperty(key, value)
    writer.createOrReplace()


def _fitting_scratch_table_path(
    spark: Any, name: str, schema: StructType, properties: dict[str, str]
) -> str | None:
    """The folder of Delta table ``name`` when, as its log says, it has ``schema``'s columns
    (the same names, spelled alike, and types; Delta keeps a written table's columns
    nullable) and ``properties``; None when it has not, or its log cannot be read from here
    (Spark Connect)."""
    snapshot = latest_snapshot(spark, name)
    if snapshot is None:
        return None
    held = schema_from_json(json.loads(snapshot.schema().json()))
    same_columns = [(f.name, without_nullability(f.dataType)) for f in held.fields] == [
        (f.name, without_nullability(f.dataType)) for f in schema.fields
    ]
    if not same_columns:
        return None
    held_properties = snapshot_properties(spark, snapshot)
    if any(held_properties.get(k) != v for k, v in properties.items()):
        return None
    return str(snapshot.deltaLog().dataPath().toString())


# Types whose Delta table feature Delta enables by itself only when a table is created: a
# table that gains such a column later (staging replaced, main altered) needs it set.
FEATURE_OF_TYPE = {TimestampNTZType: "timestampNtz", VariantType: "variantType"}


def features_for(dtype: DataType) -> dict[str, str]:
    """The table properties that enable the Delta table features columns of ``dtype`` (a
    schema, or a column's type, nested anywhere) need."""
    if isinstance(dtype, StructType):
        inner = [f.dataType for f in dtype.fields]
    elif isinstance(dtype, ArrayType):
        inner = [dtype.elementType]
    elif isinstance(dtype, MapType):
        inner = [dtype.keyType, dtype.valueType]
    else:
        feature = FEATURE_OF_TYPE.get(type(dtype))
        return {f"delta.feature.{feature}": "supported"} if feature else {}
    return {k: v for t in inner for k, v in features_for(t).items()}


def drop_all(spark: Any, tables: ModelTables) -> None:
    spark.sql(f"DROP TABLE IF EXISTS {tables.main}")
    drop_bookkeeping(spark, tables)


def drop_bookkeeping(spark: Any, tables: ModelTables) -> None:
    """Drop the bookkeeping tables, the state table last: while it exists, its lease
    guards the others."""
    for name in (tables.staging, tables.changes, tables.progress, tables.state):
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@dataclass(frozen=True)
class SchemaPlan:
    """How the snapshot's columns map onto main's: the one spelling of every column name
    (main's, where main has the column) used by all the SQL of a cycle."""

    schema: StructType  # written to main and compared: the snapshot's columns and types
    keys: tuple[str, ...]  # unique_key, spelled as in ``schema``
    add: list[tuple[str, str]] = field(default_factory=list)  # (name, DDL type) to add
    drop: list[str] = field(default_factory=list)  # main columns to drop

    @property
    def columns(self) -> list[str]:
        return list(self.schema.names)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": self.schema.jsonValue(),
            "keys": list(self.keys),
            "add": [list(pair) for pair in self.add],
            "drop": list(self.drop),
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> SchemaPlan:
        return cls(
            schema_from_json(value["schema"]),
            tuple(value["keys"]),
            [(name, ddl) for name, ddl in value["add"]],
            list(value["drop"]),
        )


def plan_schema(
    snapshot: StructType,
    main: StructType | None,
    keys: tuple[str, ...],
    on_schema_change: str,
) -> SchemaPlan:
    """Decide, before anything is written, what main's columns become. Names are matched
    as Spark resolves them (:func:`fold_name`). Raise :class:`SchemaChangeError` where
    on_schema_change does not allow the change."""
    snapshot_fields = {fold_name(f.name): f for f in snapshot.fields}
    if main is None:
        return SchemaPlan(snapshot, _spelled(keys, snapshot.names))
    main_fields = {fold_name(f.name): f for f in main.fields}
    added = [snapshot_fields[c] for c in snapshot_fields if c not in main_fields]
    removed = [main_fields[c].name for c in main_fields if c not in snapshot_fields]
    retyped = _retyped(main_fields, snapshot_fields)
    missing_keys = [k for k in keys if fold_name(k) not in main_fields]
    fix = "Rebuild with `dbt run --full-refresh --select <model>`"
    if retyped:
        raise SchemaChangeError(
            f"The snapshot changes the type of column(s) {', '.join(retyped)}. A refreshable "
            f"table cannot change a column's type in place. {fix}, or cast the column in the "
            f"model to its old type."
        )
    if missing_keys:
        raise SchemaChangeError(f"unique_key column(s) {missing_keys} are not in main. {fix}.")
    if (added or removed) and on_schema_change == "fail":
        raise SchemaChangeError(
            f"The snapshot's columns differ from main's (on_schema_change='fail'): added "
            f"{[f.name for f in added] or 'none'}, removed {removed or 'none'}. Set "
            f"on_schema_change to ignore, append_new_columns or sync_all_columns, or "
            f"{fix[0].lower() + fix[1:]}."
        )
    kept = [
        StructField(main_fields[c].name, snapshot_fields[c].dataType, True)
        for c in main_fields
        if c in snapshot_fields
    ]
    if on_schema_change == "ignore":
        added = []
    schema = StructType(kept + [StructField(f.name, f.dataType, True) for f in added])
    drop = removed if on_schema_change == "sync_all_columns" else []
    return SchemaPlan(
        schema,
        _spelled(keys, schema.names),
        [(f.name, type_sql(f.dataType)) for f in added],
        drop,
    )


def _retyped(main: dict[str, StructField], snapshot: dict[str, StructField]) -> list[str]:
    """The columns (by folded name) whose type the snapshot changes, as "name (old ->
    new)"; nullability aside."""
    return [
        f"{main[c].name} ({type_sql(main[c].dataType)} -> {type_sql(snapshot[c].dataType)})"
        for c in snapshot
        if c in main
        and without_nullability(main[c].dataType) != without_nullability(snapshot[c].dataType)
    ]


def _spelled(keys: tuple[str, ...], names: list[str]) -> tuple[str, ...]:
    by_fold = {fold_name(name): name for name in names}
    return tuple(by_fold[fold_name(k)] for k in keys)


def columns_of(spark: Any, name: str) -> StructType:
    return spark.table(name).schema


def layout_columns(plan: SchemaPlan, config: RefreshConfig) -> tuple[str, list[str]]:
    """Main's layout clause (PARTITIONED BY or CLUSTER BY, or none) and its columns spelled
    as in ``plan``. Raise :class:`ConfigError` for a column the snapshot does not have or
    of a type a layout cannot use; checked before the load writes anything."""
    setting, wanted = (
        ("partition_by", config.partition_by)
        if config.partition_by
        else ("liquid_clustered_by", config.cluster_by)
    )
    if not wanted:
        return "", []
    fields = {fold_name(f.name): f for f in plan.schema.fields}
    missing = [c for c in wanted if fold_name(c) not in fields]
    if missing:
        raise ConfigError(
            f"{setting} names column(s) {missing} that the model does not return. Its "
            f"columns: {plan.columns}. Fix {setting} in the model's config."
            + listed_in_one_name(missing, fields)
        )
    nested = [
        f"{fields[fold_name(c)].name} ({type_sql(fields[fold_name(c)].dataType)})"
        for c in wanted
        if isinstance(fields[fold_name(c)].dataType, StructType | ArrayType | MapType)
    ]
    if nested:
        raise ConfigError(
            f"{setting} names column(s) {nested} of a nested type, which Delta cannot "
            f"{'partition' if config.partition_by else 'cluster'} by. Use other columns."
        )
    spelled = [fields[fold_name(c)].name for c in wanted]
    unwritable = [c for c in spelled if "." in c or "`" in c]
    if config.partition_by and unwritable:
        raise ConfigError(
            f"partition_by names column(s) {unwritable} with a '.' or '`' in the name: "
            f"Delta's MERGE cannot write a table partitioned by such a column (it reads the "
            f"name unquoted). Rename the column in the model (e.g. `a.b` AS a_b) or "
            f"partition by another."
        )
    clause = "PARTITIONED BY" if config.partition_by else "CLUSTER BY"
    return clause, spelled


def main_location(tables: ModelTables, config: RefreshConfig) -> str | None:
    """Where main is stored when location_root is set (as dbt-spark places a table):
    ``<location_root>/<identifier>``; None: a managed table in its schema's location."""
    if config.location_root is None:
        return None
    return f"{config.location_root}/{tables.identifier}"


def _same_location(found: str, wanted: str) -> bool:
    """Whether DESCRIBE DETAIL's location (``file:/x`` for a local path) is ``wanted``."""

    def normal(location: str) -> str:
        location = location.rstrip("/")
        if location.startswith("file://"):
            location = "file:" + location[len("file://") :]
        return "file:" + location if location.startswith("/") else location

    return normal(found) == normal(wanted)


def refuse_dropping_layout_columns(plan: SchemaPlan, detail: MainDetail) -> None:
    """Refuse a plan that drops a column main is partitioned or clustered by (Delta cannot
    drop one; the merge would fail after the load), before the load writes anything."""
    dropped = {fold_name(c) for c in plan.drop}
    for how, columns in (
        ("partitioned", detail.partition_columns),
        ("clustered", detail.clustering_columns),
    ):
        held = [c for c in columns if fold_name(c) in dropped]
        if held:
            raise SchemaChangeError(
                f"The snapshot no longer has column(s) {held}, which main is {how} by: "
                f"on_schema_change='sync_all_columns' would drop them, and Delta cannot drop "
                f"a column a table is {how} by. Return the column(s) in the model, or "
                f"rebuild main without them with `dbt run --full-refresh --select <model>`. "
                f"Main was not touched."
            )


def refuse_another_models_location(
    spark: Any, tables: ModelTables, config: RefreshConfig, detail: MainDetail | None
) -> None:
    """Refuse an external main whose folder holds another model's main: location_root
    places main at ``<location_root>/<alias>``, so two models of one alias in two schemas
    (``staging.orders``, ``marts.orders``) get one folder, and each run would replace the
    rows the other serves. ``detail``: main as the catalog has it (None: not yet, and the
    folder may hold a Delta table all the same). A main created before its model was
    recorded (``OWNER_PROPERTY``, set when an external main is created) passes."""
    location = main_location(tables, config)
    if location is None:
        return
    owner = detail.owner if detail is not None else _owner_at(spark, location)
    this = state_owner(tables)
    if owner is None or owner == this:
        return
    way_out = (
        "drop the other table or give one of the two models another alias or location_root"
        if detail is None
        else f"give one of the two models another alias or location_root; if {owner} is this "
        f"model under its old name, record it: ALTER TABLE {tables.main} SET TBLPROPERTIES "
        f"('{OWNER_PROPERTY}' = '{this}')"
    )
    raise ConfigError(
        f"{location} holds the main table of the model {owner}, not of {tables.display}: "
        f"location_root places main at <location_root>/<alias>, so models of one alias share "
        f"a folder, and each run would replace the rows the other serves. To fix, {way_out}. "
        f"Nothing was changed."
    )


def _owner_at(spark: Any, location: str) -> str | None:
    """The model the Delta table in folder ``location`` was created for, if any."""
    try:
        nothing = spark._jvm.scala.Option.empty()
        log = spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(
            spark._jsparkSession, location
        )
        snapshot = log.update(False, nothing, nothing)
        if snapshot.version() < 0:
            return None
        return snapshot_properties(spark, snapshot).get(OWNER_PROPERTY)
    except (AttributeError, Py4JError, PySparkException):  # Spark Connect: by SQL
        pass
    try:
        return _properties_by_sql(spark, f"delta.{quote(location)}").get(OWNER_PROPERTY)
    except AnalysisException:  # no Delta table there
        return None


def layout_drift(detail: MainDetail, config: RefreshConfig, location: str | None) -> str | None:
    """How an existing main's partitioning, clustering or location differs from the model's
    config (``location``: ``main_location``'s), if it does, where only a --full-refresh can
    bring main to it. Partitioning and location apply when main is created; a clustering
    the config names is applied by the cycle's merge to a main not partitioned
    (``create_or_evolve_main``)."""
    wanted = {
        "partition_by": list(config.partition_by),
        "liquid_clustered_by": list(config.cluster_by),
    }
    found = {
        "partition_by": detail.partition_columns,
        "liquid_clustered_by": (
            wanted["liquid_clustered_by"]
            if detail.reclusters_to(wanted["liquid_clustered_by"])
            else detail.clustering_columns
        ),
    }
    differing = [
        f"{setting} is {wanted[setting] or 'unset'}, main has {found[setting] or 'none'}"
        for setting in found
        if [*map(fold_name, found[setting])] != [*map(fold_name, wanted[setting])]
    ]
    if location is not None and not _same_location(detail.location, location):
        differing.append(f"location_root puts main at {location}, main is at {detail.location}")
    if not differing:
        return None
    return (
        f"{'; '.join(differing)}. Partitioning and location are set when main is created, "
        f"and Delta clusters no partitioned table: run "
        f"`dbt run --full-refresh --select <model>` to rebuild main with it"
    )


def create_or_evolve_main(
    spark: Any,
    tables: ModelTables,
    plan: SchemaPlan,
    config: RefreshConfig,
    tag: str,
    before_alter: Callable[[], None],
) -> None:
    """Make main exist with the planned columns, layout and properties, its statements
    tagged ``tag`` (``commits.engine_commit``: the cycle's). Idempotent: a resumed merge
    calls it again, also after a run stopped between its CREATE's commit and the catalog
    listing main (``remove_stopped_create``). Delta does not fence DDL: ``before_alter``
    (the caller's lease check) runs before statements that alter an existing main."""
    tagged = partial(engine_commit, spark, tag)
    properties = _main_properties(config)
    if table_exists(spark, tables.main):
        _evolve_main(spark, tables, plan, config, properties, tagged, before_alter)
        detail = main_detail(spark, tables) if config.cluster_by else None
        if detail is not None and detail.reclusters_to(layout_columns(plan, config)[1]):
            before_alter()
            _cluster(spark, tables, plan, config, tagged)
    else:
        _create_main(spark, tables, plan, config, properties, tag)


def _main_properties(config: RefreshConfig) -> dict[str, str]:
    """The table properties main is created with, and kept at."""
    properties = {**MAIN_PROPERTIES, **config.tblproperties}
    if config.change_data_feed:
        properties[CHANGE_DATA_FEED] = "true"
    return properties


def _main_definition(
    tables: ModelTables, plan: SchemaPlan, config: RefreshConfig, properties: dict[str, str]
) -> tuple[str, str, list[str]]:
    """What main's CREATE says after its columns (format, partitioning, folder, table
    properties), its layout clause and that clause's columns (clustering is set after: see
    ``_cluster``)."""
    clause, columns = layout_columns(plan, config)
    location = main_location(tables, config)
    if location:
        properties = {**properties, OWNER_PROPERTY: state_owner(tables)}
    partitioned = f"{_layout_clause(clause, columns)} " if clause == "PARTITIONED BY" else ""
    at = f"LOCATION {literal(location)} " if location else ""
    definition = f"USING delta {partitioned}{at}TBLPROPERTIES ({properties_sql(properties)})"
    return definition, clause, columns


NO_MAIN = "there is no main"  # why replace_main replaced nothing, for a model not built yet


def replace_main(
    spark: Any,
    tables: ModelTables,
    plan: SchemaPlan,
    config: RefreshConfig,
    rows: str,
    tag: str,
    fence: tuple[str, int] | None,
) -> str | None:
    """Replace main, in one commit tagged ``tag`` and fenced by ``fence``, with a table of
    the model's layout and properties holding the rows of view ``rows``: ``--full-refresh``
    where main exists, so that readers see the old table until that commit and the snapshot
    from it, and a run stopped before it leaves main as it was. Clustering follows in a
    commit of its own (``_cluster``). None: done; else why Delta cannot replace main so (not
    a Delta table, in another folder than the model asks for, clustered where the model
    partitions it, partitioned by other than its last columns in Spark's in-memory catalog,
    refused by Delta), with nothing written: the caller drops main instead."""
    try:
        detail = main_detail(spark, tables)
    except ConfigError as refused:  # a view, another format, files gone
        return first_line(refused, 200)
    if detail is None:
        return NO_MAIN
    location = main_location(tables, config)
    if location is not None and not _same_location(detail.location, location):
        return f"location_root puts main at {location}, main is at {detail.location}"
    if location is None and _is_external(spark, tables.main):
        return f"main is stored at {detail.location}, outside its schema's folder"
    if detail.clustering_columns and config.partition_by:
        return "Delta does not replace a clustered table with a partitioned one"
    definition, clause, layout = _main_definition(tables, plan, config, _main_properties(config))
    partitions = layout if clause == "PARTITIONED BY" else []
    if _in_memory_catalog(spark) and (
        _partitioned_not_last(columns_of(spark, tables.main).names, detail.partition_columns)
        or _partitioned_not_last(plan.columns, partitions)
    ):
        return (
            "Spark's in-memory catalog cannot replace a table partitioned by other than its "
            "last columns"
        )
    columns = ", ".join(ident(c) for c in plan.columns)
    statement = (
        f"CREATE OR REPLACE TABLE {tables.main} {definition} AS SELECT {columns} FROM {rows}"
    )
    try:
        with engine_commit(spark, tag, fence):
            spark.sql(statement)
    except (AnalysisException, UnsupportedOperationException) as error:
        return first_line(error, 300)  # Delta's refusal: nothing was committed
    if clause == "CLUSTER BY":
        _cluster(spark, tables, plan, config, partial(engine_commit, spark, tag))
    forget_catalog_size(spark, tables.main)
    return None


def _in_memory_catalog(spark: Any) -> bool:
    """Whether the session's catalog is Spark's in-memory one. Delta's replace (and a change
    of columns) writes a partitioned table's entry there with the columns in the table's
    order, where Spark's catalog expects the partition columns last: a replace of a table
    whose entry has them elsewhere fails after its commit, in Spark's check of that entry
    ("Corrupted table metadata"). A Hive metastore keeps no columns of a Delta table."""
    return spark.conf.get("spark.sql.catalogImplementation", "hive") == "in-memory"


def _partitioned_not_last(columns: list[str], partitions: list[str]) -> bool:
    """Whether a table of ``columns`` is partitioned by other than its last columns."""
    last = columns[len(columns) - len(partitions) :]
    return [fold_name(c) for c in last] != [fold_name(c) for c in partitions]


def _is_external(spark: Any, name: str) -> bool:
    """Whether table ``name`` keeps its files where its CREATE put them (LOCATION)."""
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
    return any(r["col_name"] == "Type" and r["data_type"] == "EXTERNAL" for r in rows)


def _create_main(
    spark: Any,
    tables: ModelTables,
    plan: SchemaPlan,
    config: RefreshConfig,
    properties: dict[str, str],
    tag: str,
) -> None:
    """Create main (:func:`create_or_evolve_main`), taking over its folder from a run
    stopped while it created main; a folder another table's files hold is refused."""
    tagged = partial(engine_commit, spark, tag)
    definition, clause, _ = _main_definition(tables, plan, config, properties)
    # An external main's files outlive DROP TABLE (--full-refresh's, or a user's): the
    # new main replaces what they hold, as dbt-spark's table materialization does. A
    # cycle diffs against main as the catalog has it, so none of it is lost that way.
    external = main_location(tables, config) is not None
    create = "CREATE OR REPLACE TABLE" if external else "CREATE TABLE IF NOT EXISTS"
    # Columns declared, not selected: see ``forget_catalog_size``.
    declared = ", ".join(f"{ident(f.name)} {type_sql(f.dataType)}" for f in plan.schema.fields)
    statement = f"{create} {tables.main} ({declared}) {definition}"
    try:
        with tagged():
            spark.sql(statement)
    except Exception as error:
        if not location_taken(error):
            raise
        if remove_stopped_create(spark, tables.main, tag):
            with tagged():
                spark.sql(statement)
        else:
            raise folder_taken(
                tables.display,
                error,
                "They are the files of a table dropped while its files stayed, or of a run "
                "stopped while it created the table. Check that they hold nothing you need, "
                f"delete or move that folder, and run again; {tables.display} was not touched.",
            ) from None
    if clause == "CLUSTER BY":  # once main exists (``_cluster``)
        _cluster(spark, tables, plan, config, tagged)


def _layout_clause(clause: str, columns: list[str]) -> str:
    return f"{clause} ({', '.join(ident(c) for c in columns)})"


def _cluster(
    spark: Any,
    tables: ModelTables,
    plan: SchemaPlan,
    config: RefreshConfig,
    tagged: Callable[[], AbstractContextManager[None]],
) -> None:
    """Cluster main as liquid_clustered_by asks, by ALTER TABLE: Delta 4.4 rewrites a
    CREATE's CLUSTER BY at character offsets that each character outside Unicode's BMP (an
    emoji) before it shifts, a syntax error."""
    with tagged():
        spark.sql(f"ALTER TABLE {tables.main} {_layout_clause(*layout_columns(plan, config))}")


def forget_catalog_size(spark: Any, name: str) -> None:
    """Drop the size the catalog holds for table ``name``, if any, so that the planner takes
    its size from Delta's latest snapshot. Spark stores a ``CREATE TABLE ... AS SELECT``'s
    size in the catalog and no write ever updates it: a main created so (as up to 0.2.0,
    from an empty select) is planned as a table of a few kilobytes however large it grows,
    and every join with it, each ``MERGE`` too, broadcasts it whole (1.4 GB at TPC-H SF 1;
    beyond the driver's memory at some size). A Hive metastore then gives the table its
    folder's size instead (all files, those of old versions too), which a cycle renews
    before its merge and after it. Through the JVM's catalog, so not on Spark Connect,
    where such a main keeps its frozen size until ``--full-refresh``."""
    try:
        found = jvm_table(spark, name)
        if found is None:
            return
        session, table = found
        catalog = session.sessionState().catalog()
        if catalog.getTableMetadata(table).stats().isDefined():
            catalog.alterTableStats(table, spark._jvm.scala.Option.apply(None))
    except (Py4JError, PySparkException):  # PySpark raises the JVM's errors as its own
        return  # a size the catalog cannot drop: only the planner's estimate is at stake


def _evolve_main(
    spark: Any,
    tables: ModelTables,
    plan: SchemaPlan,
    config: RefreshConfig,
    properties: dict[str, str],
    tagged: Callable[[], AbstractContextManager[None]],
    before_alter: Callable[[], None],
) -> None:
    """Bring an existing main to the plan's columns, the model's properties and its
    contract's constraints (stale ones dropped), altering only what differs."""
    forget_catalog_size(spark, tables.main)
    current = {fold_name(name) for name in columns_of(spark, tables.main).names}
    wanted = {k: v for k, v in properties.items() if not k.startswith("delta.min")}
    held = table_properties(spark, tables.main)
    if not (config.change_data_feed or plan.drop):
        wanted = {k: v for k, v in config.tblproperties.items() if held.get(k) != v}
    stale = _stale_constraints(held, dict(config.constraints))
    to_add = [(n, t) for n, t in plan.add if fold_name(n) not in current]
    to_drop = [n for n in plan.drop if fold_name(n) in current]
    added = {fold_name(n) for n, _ in to_add}
    needed = features_for(StructType([f for f in plan.schema if fold_name(f.name) in added]))
    wanted.update({k: v for k, v in needed.items() if held.get(k) != v})
    if not (wanted or stale or to_add or to_drop):
        return
    before_alter()
    with tagged():
        if wanted:
            set_table_properties(spark, tables.main, wanted)
        if stale:
            _drop_constraints(spark, tables.main, held, stale)
        if to_add:
            spark.sql(
                f"ALTER TABLE {tables.main} ADD COLUMNS ("
                + ", ".join(f"{ident(n)} {t}" for n, t in to_add)
                + ")"
            )
        if to_drop:
            spark.sql(
                f"ALTER TABLE {tables.main} DROP COLUMNS ({', '.join(ident(n) for n in to_drop)})"
            )


def existing_table_properties(spark: Any, name: str) -> dict[str, str] | None:
    """A table's properties (see :func:`table_properties`), or None when the catalog has no
    table ``name``: for a Delta table one read of its log, where asking the catalog whether
    it exists and SQL for its properties takes two round trips."""
    snapshot = latest_snapshot(spark, name)
    if snapshot is None and not table_exists(spark, name):
        return None
    return table_properties(spark, name, snapshot)


def table_properties(spark: Any, name: str, snapshot: Any | None = None) -> dict[str, str]:
    """A table's properties: from a Delta table's log where the session can read it (see
    ``commits.latest_snapshot``; ``snapshot``: the table's, if already read), else by SQL."""
    snapshot = snapshot if snapshot is not None else latest_snapshot(spark, name)
    if snapshot is not None:
        return snapshot_properties(spark, snapshot)
    return _properties_by_sql(spark, name)


def _properties_by_sql(spark: Any, name: str) -> dict[str, str]:
    """SHOW TBLPROPERTIES hides the value of every property whose key or value matches
    spark.sql.redaction.options.regex (by default any "url": a model named `hourly`, a
    constraint on `url`); Delta's DESCRIBE DETAIL does not, and costs a read of the table's
    log, so it is asked only when a value came back hidden."""
    held = {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}
    if REDACTED in held.values():
        try:
            held.update(table_detail(spark, name)["properties"] or {})
        except Exception:  # not a Delta table: DESCRIBE DETAIL cannot say more
            pass
    return held


def _managed_constraints(held: dict[str, str]) -> dict[str, str]:
    """The CHECK constraints the engine put on main (from a contract), by name, with their
    expressions as the contract wrote them (Delta keeps them respelled)."""
    value = json.loads(held.get(CONSTRAINTS_PROPERTY) or "{}")
    return value if isinstance(value, dict) else {}


def writes_change_data_feed(properties: dict[str, str]) -> bool:
    """Whether a table of these properties has Delta write its change data feed."""
    return properties.get(CHANGE_DATA_FEED, "false").strip().lower() == "true"


def own_check_constraints(properties: dict[str, str]) -> dict[str, str]:
    """Main's CHECK constraints (from its table ``properties``) that the engine did not add
    from a contract: a user's own, which Delta enforces on every write to main, each chunk's
    ``MERGE`` too. By name as Delta keeps it (lower case)."""
    prefix = "delta.constraints."
    managed = {name.lower() for name in _managed_constraints(properties)}
    return {
        key[len(prefix) :]: expression
        for key, expression in properties.items()
        if key.startswith(prefix) and key[len(prefix) :].lower() not in managed
    }


def _record_managed(spark: Any, main: str, constraints: dict[str, str]) -> None:
    set_table_properties(
        spark, main, {CONSTRAINTS_PROPERTY: json.dumps(constraints, sort_keys=True)}
    )


def _stale_constraints(held: dict[str, str], wanted: dict[str, str]) -> list[str]:
    """The CHECK constraints the engine put on main that the contract no longer has, or has
    with another expression: dropped before a merge (they could refuse the snapshot's rows;
    the changed ones come back after the merge). A user's own constraints stay."""
    managed = _managed_constraints(held)
    return [name for name, expression in managed.items() if wanted.get(name) != expression]


def _drop_constraints(spark: Any, main: str, held: dict[str, str], names: list[str]) -> None:
    for name in names:
        spark.sql(f"ALTER TABLE {main} DROP CONSTRAINT IF EXISTS {ident(name)}")
    managed = _managed_constraints(held)
    _record_managed(spark, main, {n: e for n, e in managed.items() if n not in names})


def add_contract_constraints(
    spark: Any, main: str, constraints: tuple[tuple[str, str], ...]
) -> None:
    """After a merge (main holds the snapshot, checked against them at load): add the
    contract's CHECK constraints main lacks, and record them as the engine's."""
    if not constraints:
        return
    held = table_properties(spark, main)
    managed = _managed_constraints(held)
    for name, expression in constraints:
        on_main = f"delta.constraints.{name}" in held
        if on_main and managed.get(name) != expression:  # a user's constraint of that name
            spark.sql(f"ALTER TABLE {main} DROP CONSTRAINT {ident(name)}")
        if not on_main or managed.get(name) != expression:
            spark.sql(f"ALTER TABLE {main} ADD CONSTRAINT {ident(name)} CHECK ({expression})")
    if {**managed, **dict(constraints)} != managed:
        _record_managed(spark, main, {**managed, **dict(constraints)})
