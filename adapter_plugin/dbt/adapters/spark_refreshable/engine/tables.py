"""Creating, adopting, evolving and dropping a model's tables.

Main is a Delta table with deletion vectors on (a refresh that changes few rows writes
few bytes) and column mapping by name (so ``sync_all_columns`` can drop columns); change
data feed on request. A main table that already exists as a Delta table (say, built by
the ``table`` materialization) is adopted as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.spark_refreshable.engine.errors import SchemaChangeError
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.sql import column_list, ident, literal
from dbt.adapters.spark_refreshable.engine.state import STATE_COLUMNS, State

MAIN_PROPERTIES = {
    "delta.enableDeletionVectors": "true",
    "delta.columnMapping.mode": "name",
    "delta.minReaderVersion": "3",
    "delta.minWriterVersion": "7",
}
BOOKKEEPING_PROPERTIES = {"delta.enableDeletionVectors": "false"}


def properties_sql(properties: dict[str, str]) -> str:
    return ", ".join(f"{literal(k)} = {literal(v)}" for k, v in properties.items())


def table_exists(spark: Any, name: str) -> bool:
    return spark.catalog.tableExists(name)


def table_format(spark: Any, name: str) -> str:
    """'delta', another provider, or 'view'."""
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {name}").collect()
    info = {r[0]: r[1] for r in rows}
    if (info.get("Type") or "").upper() == "VIEW":
        return "view"
    return (info.get("Provider") or "").lower()


def ensure_state_table(spark: Any, tables: ModelTables) -> None:
    """Create the state table with its one IDLE row, atomically (CTAS): of two runs that
    race to create it, one creates it and the other finds it."""
    if table_exists(spark, tables.state):
        return
    initial = State()
    select = ", ".join(
        f"CAST({literal(getattr(initial, name))} AS {sql_type}) AS {name}"
        for name, sql_type in STATE_COLUMNS.items()
    )
    try:
        spark.sql(
            f"CREATE TABLE {tables.state} USING delta "
            f"TBLPROPERTIES ({properties_sql(BOOKKEEPING_PROPERTIES)}) AS SELECT {select}"
        )
    except Exception as exc:
        if not table_exists(spark, tables.state):
            raise
        del exc  # another run created it first


def drop_all(spark: Any, tables: ModelTables) -> None:
    for name in (tables.main, tables.staging, tables.changes, tables.progress, tables.state):
        spark.sql(f"DROP TABLE IF EXISTS {name}")


@dataclass(frozen=True)
class SchemaPlan:
    """How the snapshot's columns map onto main's."""

    columns: list[str]  # written to main and compared: the snapshot's columns, main's order
    add: list[tuple[str, str]]  # (name, type) to add to main
    drop: list[str]  # main columns to drop


def plan_schema(
    snapshot: list[tuple[str, str]],
    main: list[tuple[str, str]] | None,
    keys: tuple[str, ...],
    on_schema_change: str,
) -> SchemaPlan:
    """Decide, before anything is written, what main's columns become. Raise
    :class:`SchemaChangeError` where on_schema_change does not allow the change."""
    snapshot_types = {name.lower(): (name, dtype) for name, dtype in snapshot}
    if main is None:
        return SchemaPlan([name for name, _ in snapshot], [], [])
    main_types = {name.lower(): (name, dtype) for name, dtype in main}
    added = [snapshot_types[c] for c in snapshot_types if c not in main_types]
    removed = [main_types[c][0] for c in main_types if c not in snapshot_types]
    retyped = [
        f"{main_types[c][0]} ({main_types[c][1]} -> {snapshot_types[c][1]})"
        for c in snapshot_types
        if c in main_types and main_types[c][1] != snapshot_types[c][1]
    ]
    missing_keys = [k for k in keys if k.lower() not in main_types]
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
            f"{[n for n, _ in added] or 'none'}, removed {removed or 'none'}. Set on_schema_change "
            f"to ignore, append_new_columns or sync_all_columns, or {fix[0].lower() + fix[1:]}."
        )
    kept = [main_types[c][0] for c in main_types if c in snapshot_types]
    if on_schema_change == "ignore":
        return SchemaPlan(kept, [], [])
    drop = removed if on_schema_change == "sync_all_columns" else []
    return SchemaPlan(kept + [name for name, _ in added], added, drop)


def columns_of(spark: Any, name: str) -> list[tuple[str, str]]:
    return [(f.name, f.dataType.simpleString()) for f in spark.table(name).schema.fields]


def create_or_evolve_main(
    spark: Any, tables: ModelTables, plan: SchemaPlan, change_data_feed: bool
) -> None:
    """Make main exist with the planned columns. Idempotent: a resumed merge calls it again."""
    properties = dict(MAIN_PROPERTIES)
    if change_data_feed:
        properties["delta.enableChangeDataFeed"] = "true"
    if not table_exists(spark, tables.main):
        spark.sql(
            f"CREATE TABLE IF NOT EXISTS {tables.main} USING delta "
            f"TBLPROPERTIES ({properties_sql(properties)}) "
            f"AS SELECT {column_list(plan.columns)} FROM {tables.staging} WHERE false"
        )
        return
    current = {name.lower() for name, _ in columns_of(spark, tables.main)}
    wanted = {k: v for k, v in properties.items() if not k.startswith("delta.min")}
    if change_data_feed or plan.drop:
        spark.sql(f"ALTER TABLE {tables.main} SET TBLPROPERTIES ({properties_sql(wanted)})")
    to_add = [(n, t) for n, t in plan.add if n.lower() not in current]
    if to_add:
        spark.sql(
            f"ALTER TABLE {tables.main} ADD COLUMNS ("
            + ", ".join(f"{ident(n)} {t}" for n, t in to_add)
            + ")"
        )
    to_drop = [n for n in plan.drop if n.lower() in current]
    if to_drop:
        spark.sql(
            f"ALTER TABLE {tables.main} DROP COLUMNS ({', '.join(ident(n) for n in to_drop)})"
        )
