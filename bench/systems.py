"""The systems compared, each keeping one Delta table equal to a lineitem snapshot, and the
figures of one refresh: wall time, what Delta's history says was written, correctness.

Three are dbt models of bench/project run in this process (one JVM for all, so no system
pays a JVM start): ``refreshable``, ``table`` (full rebuild) and ``incremental`` (dbt-spark's
``merge`` strategy on the key). The fourth is one Delta ``MERGE`` from the snapshot with
``WHEN NOT MATCHED BY SOURCE THEN DELETE``, run on the same session.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dbt.adapters.spark_refreshable.engine.commits import table_detail, table_version
from dbt.adapters.spark_refreshable.engine.naming import ModelTables

PROJECT = Path(__file__).resolve().parent / "project"
SCHEMA = "bench"
KEYS = ("l_orderkey", "l_linenumber")
MODELS = {
    "refreshable": "lineitem_refreshable",
    "table": "lineitem_table",
    "incremental": "lineitem_incremental",
}
MERGE_TABLE = "lineitem_merge"
SOURCE_MODEL = "lineitem_source"  # a Delta copy of a snapshot, read when var `source` is set
SYSTEMS = ("refreshable", "table", "merge", "incremental")

# Delta's operationMetrics, by what they mean (writes, MERGE and CTAS spell them apart)
ADDED_FILES = ("numAddedFiles", "numTargetFilesAdded", "numFiles")
REMOVED_FILES = ("numRemovedFiles", "numTargetFilesRemoved")
ADDED_BYTES = ("numAddedBytes", "numTargetBytesAdded", "numOutputBytes")
REMOVED_BYTES = ("numRemovedBytes", "numTargetBytesRemoved")
# a write's rows, a MERGE's too: inserted, updated and copied with a rewritten file
ROWS_WRITTEN = ("numOutputRows",)


@dataclass
class Refresh:
    """One system's refresh of its table to one snapshot."""

    system: str
    scenario: str
    seconds: float
    files_added: int = 0
    files_removed: int = 0
    bytes_added: int = 0
    bytes_removed: int = 0
    rows_written: int = 0
    correct: bool = False
    rows_missing: int = 0
    rows_unexpected: int = 0
    commits: int = 0  # Delta commits of the refresh, on every table the system keeps
    engine: dict[str, Any] = field(default_factory=dict)  # refreshable's adapter_response

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def table_name(system: str) -> str:
    return f"{SCHEMA}.{MODELS.get(system, MERGE_TABLE)}"


class Systems:
    """Runs the systems on one warehouse, in this process."""

    def __init__(self, vars_: dict[str, Any] | None = None) -> None:
        self.base_vars = vars_ or {}
        self._spark: Any = None

    @property
    def spark(self) -> Any:
        if self._spark is None:
            from pyspark.sql import SparkSession

            self._spark = SparkSession.builder.getOrCreate()  # the session dbt built
        return self._spark

    def dbt(self, *args: str, **vars_: Any) -> list[Any]:
        from dbt.cli.main import dbtRunner

        command = [
            *args,
            "--project-dir",
            str(PROJECT),
            "--quiet",
            "--vars",
            json.dumps({**self.base_vars, **vars_}),
        ]
        result = dbtRunner().invoke(command)
        if not result.success:
            raise RuntimeError(f"dbt {' '.join(args)} failed: {result.exception or result.result}")
        return list(result.result.results) if result.result is not None else []

    def reset(
        self, snapshot: Path, systems: tuple[str, ...] = SYSTEMS, from_delta: bool = False
    ) -> dict[str, str]:
        """Every system's table made equal to ``snapshot`` from scratch; ``from_delta``:
        read from a Delta copy of it. The vars that make the systems read the same input."""
        source = {"source": f"{SCHEMA}.{SOURCE_MODEL}"} if from_delta else {}
        if from_delta:
            self.dbt("run", "--select", SOURCE_MODEL, snapshot=str(snapshot))
        models = [MODELS[s] for s in systems if s in MODELS]
        self.dbt("run", "--full-refresh", "--select", *models, snapshot=str(snapshot), **source)
        if "merge" in systems:
            self.spark.sql(
                f"CREATE OR REPLACE TABLE {table_name('merge')} USING delta "
                f"TBLPROPERTIES ('delta.enableDeletionVectors' = 'true') "
                f"AS SELECT * FROM {read(snapshot, source)}"
            )
        return source

    def refresh(
        self, system: str, scenario: str, snapshot: Path, check: bool = True, **vars_: Any
    ) -> Refresh:
        """Refresh ``system`` to ``snapshot``; with ``check``, compare its table with it."""
        versions_before = self.versions(system)
        if system == "merge":
            started = time.monotonic()
            self.spark.sql(self.merge_sql(snapshot, vars_.get("source"))).collect()
            refresh = Refresh(system, scenario, time.monotonic() - started)
        else:
            [result] = self.dbt("run", "--select", MODELS[system], snapshot=str(snapshot), **vars_)
            refresh = Refresh(system, scenario, float(result.execution_time))
            if system == "refreshable":
                refresh.engine = dict(result.adapter_response)
        self.add_history(refresh, versions_before[table_name(system)])
        refresh.commits = sum(
            after - versions_before.get(name, -1) for name, after in self.versions(system).items()
        )
        if check:
            self.check(refresh, snapshot)
        return refresh

    def data_files(self, system: str) -> int:
        """The data files of the system's table now (Delta's DESCRIBE DETAIL)."""
        return int(table_detail(self.spark, table_name(system))["numFiles"])

    def merge_sql(self, snapshot: Path, source: str | None = None) -> str:
        columns = [f.name for f in self.spark.read.parquet(str(snapshot)).schema.fields]
        on = " AND ".join(f"t.{k} = s.{k}" for k in KEYS)
        changed = " OR ".join(f"NOT (t.{c} <=> s.{c})" for c in columns if c not in KEYS)
        return (
            f"MERGE INTO {table_name('merge')} t USING {read(snapshot, {'source': source})} s "
            f"ON {on} "
            f"WHEN MATCHED AND ({changed}) THEN UPDATE SET * "
            f"WHEN NOT MATCHED THEN INSERT * "
            f"WHEN NOT MATCHED BY SOURCE THEN DELETE"
        )

    def versions(self, system: str) -> dict[str, int]:
        """The Delta version of every table the system keeps (refreshable: main and its
        bookkeeping tables), by name."""
        names = [table_name(system)]
        if system == "refreshable":
            tables = ModelTables(SCHEMA, MODELS[system])
            names += [tables.staging, tables.changes, tables.progress, tables.state]
        return {
            name: table_version(self.spark, name)
            for name in names
            if self.spark.catalog.tableExists(name)
        }

    def add_history(self, refresh: Refresh, before: int) -> None:
        """Sum what the refresh's commits to the table wrote, per Delta's history."""
        rows = self.spark.sql(f"DESCRIBE HISTORY {table_name(refresh.system)}").collect()
        for row in rows:
            if int(row["version"]) <= before:
                continue
            metrics = {
                k: int(v)
                for k, v in (row["operationMetrics"] or {}).items()
                if str(v).lstrip("-").isdigit()
            }
            refresh.files_added += first(metrics, ADDED_FILES)
            refresh.files_removed += first(metrics, REMOVED_FILES)
            refresh.bytes_added += first(metrics, ADDED_BYTES)
            refresh.bytes_removed += first(metrics, REMOVED_BYTES)
            refresh.rows_written += first(metrics, ROWS_WRITTEN)

    def check(self, refresh: Refresh, snapshot: Path) -> None:
        """The table equals the snapshot: nothing missing, nothing unexpected."""
        refresh.rows_missing, refresh.rows_unexpected = self.compare(
            table_name(refresh.system), f"parquet.`{snapshot}`", snapshot
        )
        refresh.correct = refresh.rows_missing == refresh.rows_unexpected == 0

    def compare(self, table: str, expected: str, snapshot: Path) -> tuple[int, int]:
        """Rows of ``expected`` missing from ``table`` and rows of ``table`` not expected
        (``EXCEPT ALL`` both ways), on the columns of ``snapshot``."""
        columns = ", ".join(f.name for f in self.spark.read.parquet(str(snapshot)).schema.fields)
        mine, theirs = f"SELECT {columns} FROM {table}", f"SELECT {columns} FROM {expected}"
        return (
            self.count(f"{theirs} EXCEPT ALL {mine}"),
            self.count(f"{mine} EXCEPT ALL {theirs}"),
        )

    def count(self, select: str) -> int:
        return int(self.spark.sql(f"SELECT count(*) FROM ({select})").collect()[0][0])


def read(snapshot: Path, vars_: dict[str, Any]) -> str:
    """What the systems read: the Delta table of var ``source``, or the Parquet snapshot."""
    return vars_.get("source") or f"parquet.`{snapshot}`"


def first(metrics: dict[str, int], names: tuple[str, ...]) -> int:
    return next((metrics[n] for n in names if n in metrics), 0)
