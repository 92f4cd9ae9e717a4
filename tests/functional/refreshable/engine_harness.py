"""Drive the engine directly (as the materialization's job does) on the shared session."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from dbt.adapters.spark_refreshable.engine.cycle_plan import LoadedCycle, resumable_cycle
from dbt.adapters.spark_refreshable.engine.job import RefreshResult
from dbt.adapters.spark_refreshable.engine.lease import Lease
from dbt.adapters.spark_refreshable.engine.naming import ModelTables, quote
from dbt.adapters.spark_refreshable.engine.owners import Owner
from dbt.adapters.spark_refreshable.engine.proof import LastSnapshot
from dbt.adapters.spark_refreshable.engine.refresh import run_refresh
from dbt.adapters.spark_refreshable.engine.report import ProgressReporter
from dbt.adapters.spark_refreshable.engine.state import State
from dbt.adapters.spark_refreshable.engine.vnodes import VnodeLayout

SCHEMA = "refreshable_engine"
_names = itertools.count()


def record_messages(monkeypatch: Any) -> list[str]:
    """Every progress message the engine says from now on (still said as usual)."""
    said: list[str] = []
    say = ProgressReporter.say
    monkeypatch.setattr(ProgressReporter, "say", lambda self, m: (said.append(m), say(self, m)))
    return said


class EngineModel:
    """A refreshable model under test: snapshots in, main table and state out."""

    def __init__(self, spark: Any, ddl: str, **config: Any) -> None:
        self.spark = spark
        self.ddl = ddl
        self.config = {"vnodes": 8, **config}
        self.tables = ModelTables(
            SCHEMA, f"model_{next(_names)}", self.config.get("bookkeeping_schema")
        )
        spark.sql(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")

    def frame(self, rows: list[tuple]) -> Any:
        return self.spark.createDataFrame(rows, self.ddl)

    def refresh(
        self,
        rows: list[tuple] | Callable[[], Any] | str,
        full_refresh: bool = False,
        **config: Any,
    ) -> RefreshResult:
        """Refresh to ``rows``; a callable returning the snapshot is run like a Python
        model's, a string like a SQL model's compiled code."""
        request = {
            "schema": self.tables.schema,
            "identifier": self.tables.identifier,
            "config": {**self.config, **config},
            "full_refresh": full_refresh,
            "invocation_id": "pytest",
        }
        if isinstance(rows, str):
            return run_refresh(self.spark, {**request, "sql": rows})
        snapshot = rows if callable(rows) else (lambda: self.frame(rows))
        return run_refresh(self.spark, request, snapshot)

    def main(self, version: int | None = None) -> list[tuple]:
        at = f" VERSION AS OF {version}" if version is not None else ""
        return sorted(
            tuple(r) for r in self.spark.sql(f"SELECT * FROM {self.tables.main}{at}").collect()
        )

    def version(self) -> int:
        return self.table_version("main")

    def table_version(self, role: str) -> int:
        """The latest version of one of the model's tables ('state', 'progress', ...)."""
        name = getattr(self.tables, role)
        return self.spark.sql(f"DESCRIBE HISTORY {name} LIMIT 1").collect()[0]["version"]

    def history(self, after: int = -1) -> list[Any]:
        """Main's commits after version ``after`` (all by default), oldest first."""
        history = self.spark.sql(f"DESCRIBE HISTORY {self.tables.main}")
        return history.where(f"version > {after}").orderBy("version").collect()

    def folder(self, role: str) -> Path:
        """Where the catalog puts the model's table of ``role`` ('main', 'state', ...) when it
        creates it (a managed table)."""
        schema = quote(self.tables.schema if role == "main" else self.tables.bookkeeping)
        self.spark.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        described = dict(self.spark.sql(f"DESCRIBE SCHEMA {schema}").collect())
        return Path(urlparse(described["Location"]).path) / self.tables.identifiers()[role]

    def leave_files_of_a_create(self, role: str, written: str = "data") -> Path:
        """The folder of the model's table of ``role`` as a run stopped in its CREATE leaves
        it, the catalog not listing the table: a CREATE ... AS SELECT's data files
        (``written="data"``) or an empty CREATE's first commit (``"log"``)."""
        folder = self.folder(role)
        if written == "data":
            folder.mkdir(parents=True)
            (folder / "part-00000-unregistered.snappy.parquet").write_bytes(b"PAR1")
        else:
            self.spark.range(3).write.format("delta").save(folder.as_uri())
        return folder

    def state(self) -> State:
        return Lease(self.spark, self.tables.state, Owner.this_process("pytest"), 300).read()

    def cycle_to_resume(self) -> LoadedCycle | None:
        """The cycle the next run resumes (its plan committed), if any."""
        return resumable_cycle(self.spark, self.tables, self.state())

    def chunks_planned(self) -> int:
        """The chunk count of the cycle the next run resumes."""
        cycle = self.cycle_to_resume()
        assert cycle is not None, f"no cycle to resume; the state is {self.state().phase}"
        return len(cycle.plan.chunks)

    def layout(self) -> VnodeLayout:
        """The vnode layout of the cycle in progress, else of the last completed one."""
        state = self.state()
        cycle = resumable_cycle(self.spark, self.tables, state)
        if cycle is not None:
            return VnodeLayout.from_json(cycle.plan.vnode_layout, cycle.vnodes)
        last = LastSnapshot.parse(state.last_columns)
        return (last and last.layout()) or VnodeLayout(self.config["vnodes"])

    def vnode_rows(self) -> tuple[int, ...]:
        """The last completed snapshot's rows per vnode, as its cycle recorded them."""
        last = LastSnapshot.parse(self.state().last_columns)
        assert last is not None, "no completed cycle"
        return last.vnode_rows

    def vnodes_of(self, ids: set[int]) -> dict[int, int]:
        """The vnode of each single-column integer key, by the model's own layout."""
        expression = self.layout().expression(["id"])
        frame = self.spark.createDataFrame([(i,) for i in ids], "id INT")
        return {r["id"]: r["v"] for r in frame.selectExpr("id", f"{expression} AS v").collect()}
