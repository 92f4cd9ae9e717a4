"""What ``refreshable_matches_snapshot`` proves: main holds exactly the last completed
snapshot, compared by content, not by the engine's row hash.

A completed cycle leaves its snapshot in staging and records, in the state row, staging's
Delta version and the schema compared (:class:`LastSnapshot`). The proof reads staging at
that version and main, both in a form ``EXCEPT ALL`` compares exactly
(:func:`sql.comparable_columns`), and counts the rows each has that the other lacks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import StructType

from dbt.adapters.spark_refreshable.engine.inputs import VerifiedMain
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.sql import comparable_columns, schema_from_json
from dbt.adapters.spark_refreshable.engine.vnodes import VnodeLayout


@dataclass(frozen=True)
class LastSnapshot:
    """The last completed snapshot: its compared columns, staging's version holding it,
    and, when the cycle verified main equal to it, main as it left it (``main``) with the
    keys and vnodes the snapshot's hashes and vnodes in staging were computed with, and
    how many of its rows each vnode held (``vnode_rows``), and of the snapshot of the cycle
    that chose that layout (``vnode_rows_at_cut``)."""

    schema: StructType
    staging_version: int | None
    main: VerifiedMain | None = None
    keys: tuple[str, ...] = ()
    vnodes: int | None = None
    vnode_layout: dict[str, Any] | None = None  # VnodeLayout.to_json; None: hash vnodes
    vnode_rows: tuple[int, ...] = ()  # by vnode; empty in records of earlier versions
    vnode_rows_at_cut: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": self.schema.jsonValue(),
            "staging_version": self.staging_version,
            "main": None if self.main is None else self.main.to_json(),
            "keys": list(self.keys),
            "vnodes": self.vnodes,
            "vnode_layout": self.vnode_layout,
            "vnode_rows": list(self.vnode_rows),
            "vnode_rows_at_cut": list(self.vnode_rows_at_cut),
        }

    @classmethod
    def parse(cls, stored: str | None) -> LastSnapshot | None:
        """The state row's record; None when there is none, or only a list of column names
        (recorded by 0.1.0, which kept no snapshot to compare with)."""
        value = json.loads(stored) if stored else None
        if not isinstance(value, dict) or value.get("staging_version") is None:
            return None
        main = value.get("main")
        return cls(
            schema_from_json(value["schema"]),
            int(value["staging_version"]),
            None if main is None else VerifiedMain.from_json(main),
            tuple(value.get("keys") or ()),
            value.get("vnodes"),
            value.get("vnode_layout"),
            tuple(int(n) for n in value.get("vnode_rows") or ()),
            tuple(int(n) for n in value.get("vnode_rows_at_cut") or ()),
        )

    def layout(self) -> VnodeLayout | None:
        """The vnode layout the snapshot's vnodes in staging were computed with (hash
        vnodes for a record without one), if the record says."""
        return (
            None if self.vnodes is None else VnodeLayout.from_json(self.vnode_layout, self.vnodes)
        )


def content_difference_sql(tables: ModelTables, last: LastSnapshot) -> str:
    """One row: the snapshot's rows main lacks, and main's rows the snapshot lacks."""
    columns = comparable_columns(last.schema)
    snapshot = f"SELECT {columns} FROM {tables.staging} VERSION AS OF {last.staging_version}"
    main = f"SELECT {columns} FROM {tables.main}"
    return (
        f"SELECT (SELECT count(*) FROM ({snapshot} EXCEPT ALL {main})) AS rows_missing, "
        f"(SELECT count(*) FROM ({main} EXCEPT ALL {snapshot})) AS rows_extra"
    )
