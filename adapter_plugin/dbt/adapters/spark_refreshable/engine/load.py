"""Refreshing: evaluate the snapshot into staging and validate it before main is touched.

Staging holds the snapshot's columns plus each row's vnode and content hash, computed once
as the snapshot is written (one pass over the snapshot, no shuffle; or summed without a
write, :func:`staged_totals`, to find the last snapshot again, which staging still holds).
The diff (``diff``) sums staging's rows per vnode, its rows with a NULL key and its content
checksum (:class:`StagedSnapshot`), and finds duplicate keys and what would be deleted,
which the checks here refuse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.errors import (
    AnalysisException,
    ArithmeticException,
    ArrayIndexOutOfBoundsException,
    DateTimeException,
    NumberFormatException,
)
from pyspark.sql.types import (
    BinaryType,
    StringType,
    StructType,
    TimestampType,
)

from dbt.adapters.spark_refreshable.engine.columns import (
    refuse_names_change_feed_breaks,
    resolve_keys,
)
from dbt.adapters.spark_refreshable.engine.datetime_writes import refuse_lossy_datetime_writes
from dbt.adapters.spark_refreshable.engine.errors import (
    ConfigError,
    SnapshotRejectedError,
    first_line,
)
from dbt.adapters.spark_refreshable.engine.naming import (
    HASH_COLUMN,
    RESERVED_PREFIX,
    VNODE_COLUMN,
    ModelTables,
    fold_name,
)
from dbt.adapters.spark_refreshable.engine.spec import RefreshConfig
from dbt.adapters.spark_refreshable.engine.sql import (
    checksum_expression,
    ident,
    literal,
    row_hash_expression,
    session_flag,
    showable,
)
from dbt.adapters.spark_refreshable.engine.tables import (
    MainDetail,
    SchemaPlan,
    columns_of,
    plan_schema,
    replace_scratch_table,
)
from dbt.adapters.spark_refreshable.engine.vnodes import VnodeLayout

EXAMPLES = 5
# what a Delta partition of a STRING or BINARY column cannot hold, besides bytes that are not
# UTF-8 text (a partition value is text in a file path; Spark replaces those bytes): Spark
# writes both as the partition of NULL values (Hive's default), so main would read NULL
LOST_PARTITION_VALUES = ("", "__HIVE_DEFAULT_PARTITION__")
# Delta writes a TIMESTAMP partition value as UTC while this is true (its default); false:
# as the session's local time, which a session in another time zone reads as another instant
UTC_PARTITION_VALUES = "spark.databricks.delta.write.utcTimestampPartitionValues"
# Up to this many rows (the last snapshot's), staging's write counts its own totals: observed
# metrics cost the write ~0.7 us a row (an observing node is not compiled into the write's
# stage), a job summing staging ~0.5 s and less a row; at 600,000 rows both cost ~0.5 s
# (bench/results/history/2026-12-06-staging-totals-observed.md)
COUNTED_WRITE_MAX_ROWS = 1_000_000


@dataclass(frozen=True)
class StagedSnapshot:
    """Staging's rows, content checksum and rows per vnode; rows with a NULL key."""

    rows: int
    checksum: str
    vnode_rows: dict[int, int]
    null_keys: int


@dataclass(frozen=True)
class StagedTotals:
    """Staging's rows, content checksum and rows with a NULL key, as its write counted them."""

    rows: int
    checksum: str
    null_keys: int

    @classmethod
    def of(cls, found: Any) -> StagedTotals:
        """The totals in a row (or dict) of :func:`staging_totals_sql`'s aggregates."""
        return cls(int(found["rows"]), str(int(found["checksum"] or 0)), int(found["null_keys"]))


def staging_totals_sql(keys: tuple[str, ...]) -> dict[str, str]:
    """The aggregates of :class:`StagedTotals` over staging's rows (name: SQL)."""
    null_key = " OR ".join(f"{ident(k)} IS NULL" for k in keys)
    return {
        "rows": "count(*)",
        "checksum": checksum_expression(HASH_COLUMN),
        "null_keys": f"count_if({null_key})",
    }


def plan_for(
    spark: Any, snapshot: Any, tables: ModelTables, config: RefreshConfig, main: MainDetail | None
) -> SchemaPlan:
    """The schema plan (keys spelled as main spells them), checked on the snapshot's schema
    alone: no data read yet."""
    keys = resolve_keys(snapshot.schema, config.unique_key)
    main_schema = None if main is None else columns_of(spark, tables.main)
    refuse_lossy_datetime_writes(spark, snapshot.schema, main_schema)
    plan = plan_schema(snapshot.schema, main_schema, keys, config.on_schema_change)
    if config.change_data_feed or (main is not None and main.change_data_feed):
        held = [] if main_schema is None else main_schema.names
        refuse_names_change_feed_breaks([*plan.columns, *held], config.change_data_feed)
    return plan


def spelled_as_planned(snapshot: Any, plan: SchemaPlan) -> Any:
    """The snapshot with each column main has spelled as main spells it: the plan's one
    spelling, which the cycle's SQL uses. Spark matches names whatever their case, unless a
    session sets ``spark.sql.caseSensitive``: then only this spelling resolves."""
    planned = {fold_name(name): name for name in plan.columns}
    renamed = {
        c: planned[fold_name(c)] for c in snapshot.columns if planned.get(fold_name(c), c) != c
    }
    return snapshot.withColumnsRenamed(renamed) if renamed else snapshot


def write_staging(
    snapshot: Any,
    tables: ModelTables,
    plan: SchemaPlan,
    layout: VnodeLayout,
    expected_rows: int | None,
) -> StagedTotals | None:
    """Write the snapshot, with each row's vnode and the hash of the columns compared with
    main, replacing staging whatever it held. Where the diff can use staging's totals
    (``expected_rows``: the last snapshot's rows; None: it cannot) and they are few enough
    (``COUNTED_WRITE_MAX_ROWS``), the write also counts them and returns them where Spark
    reported them (see ``replace_scratch_table``); None: not known."""
    counted = expected_rows is not None and expected_rows <= COUNTED_WRITE_MAX_ROWS
    totals = staging_totals_sql(plan.keys) if counted else None
    found = replace_scratch_table(as_staged(snapshot, plan, layout), tables.staging, totals)
    return None if found is None else StagedTotals.of(found)


def as_staged(snapshot: Any, plan: SchemaPlan, layout: VnodeLayout) -> Any:
    """The snapshot's rows as staging holds them: with each row's vnode and row hash."""
    from pyspark.sql import functions as F

    return snapshot.withColumn(VNODE_COLUMN, F.expr(layout.expression(plan.keys))).withColumn(
        HASH_COLUMN, F.expr(row_hash_expression(plan.schema))
    )


def staged_totals(staged: Any, keys: tuple[str, ...]) -> StagedTotals:
    """The totals staging's write would count of rows ``staged`` (:func:`as_staged`),
    summed in a job of their own that writes nothing."""
    from pyspark.sql import functions as F

    sums = [F.expr(sql).alias(name) for name, sql in staging_totals_sql(keys).items()]
    return StagedTotals.of(staged.agg(*sums).collect()[0])


def refuse_null_keys(
    spark: Any, tables: ModelTables, keys: tuple[str, ...], staged: StagedSnapshot
) -> None:
    """Refuse a snapshot with rows whose unique_key has a NULL (the diff counted them)."""
    if not staged.null_keys:
        return
    examples = spark.sql(f"SELECT * FROM {tables.staging} WHERE {_null_key(keys)} LIMIT {EXAMPLES}")
    raise SnapshotRejectedError(null_keys_refused(staged.null_keys, keys, _examples(examples)))


def refuse_unkeyed_rows(frame: Any, keys: tuple[str, ...]) -> None:
    """Refuse a snapshot with a NULL in unique_key or a key twice, read from the snapshot
    itself (two Spark jobs): ``--full-refresh`` checks it before it replaces main, where a
    cycle finds both in staging (:func:`refuse_null_keys`) and in its diff."""
    from pyspark.sql import functions as F

    nulls = frame.where(_null_key(keys))
    if count := nulls.count():
        raise SnapshotRejectedError(
            null_keys_refused(count, keys, _examples(nulls.limit(EXAMPLES)))
        )
    rows = f"{RESERVED_PREFIX}rows"
    copies = frame.groupBy(*(ident(k) for k in keys)).agg(F.count(F.lit(1)).alias(rows))
    copies = copies.where(f"{rows} > 1")
    if count := copies.count():
        shown = "; ".join(
            ", ".join(f"{k}={row[k]!r}" for k in keys) + f" ({row[rows]} rows)"
            for row in showable(copies.limit(EXAMPLES)).collect()
        )
        raise SnapshotRejectedError(duplicate_keys_refused(keys, shown, count))


def _null_key(keys: tuple[str, ...]) -> str:
    return " OR ".join(f"{ident(k)} IS NULL" for k in keys)


def null_keys_refused(count: int, keys: tuple[str, ...], examples: str) -> str:
    return (
        f"The snapshot has {count} row(s) with a NULL in unique_key {list(keys)}, "
        f"e.g. {examples}. Every row needs a key: filter or coalesce them in the "
        f"model. Main was not touched."
    )


def duplicate_keys_refused(keys: tuple[str, ...], shown: str, count: int) -> str:
    return (
        f"The snapshot has duplicate unique_key {list(keys)} values, e.g. {shown} "
        f"({count} key(s) in all). unique_key must identify one row: fix the model "
        f"(deduplicate) or the key. Main was not touched."
    )


# errors of a constraint's expression itself: unknown names, bad syntax or types, and the
# runtime errors of ANSI mode (division by zero, a failed cast, an index out of bounds)
EXPRESSION_ERRORS = (
    AnalysisException,
    ArithmeticException,
    ArrayIndexOutOfBoundsException,
    DateTimeException,
    NumberFormatException,
)


def check_constraints(
    spark: Any,
    tables: ModelTables,
    contract: tuple[tuple[str, str], ...],
    mains_own: dict[str, str],
    rows: str | None = None,
) -> None:
    """Refuse a snapshot with rows that break a CHECK constraint main holds through the
    merge (Delta's CHECK: an expression that is false or NULL), before main is touched: the
    contract's, and main's own (``mains_own``: a user's, added to the table outside the
    contract), which Delta would otherwise enforce on a chunk's ``MERGE`` midway through
    the cycle. One pass over staging (or the relation ``rows``) for each. A constraint of
    main's own that staging cannot resolve (a column only main has) is left to Delta."""
    rows = rows or tables.staging
    if contract:
        _refuse_broken(spark, rows, contract, ContractConstraints(tables))
    own = tuple((name, e) for name, e in mains_own.items() if _resolves(spark, rows, e))
    if own:
        _refuse_broken(spark, rows, own, MainsOwnConstraints(tables))


@dataclass(frozen=True)
class ContractConstraints:
    """How a refusal names the contract's constraints, and what it says to change."""

    tables: ModelTables

    def one(self, name: str, expression: str) -> str:
        return f"the contract's constraint {name} ({expression})"

    def all(self) -> str:
        return f"The contract's constraints of {self.tables.display}"

    def fix(self, names: list[str]) -> str:
        return "Fix the model, or the constraint in its contract."

    def fix_expression(self, names: list[str]) -> str:
        return "Fix the constraint's expression or the model's columns."


@dataclass(frozen=True)
class MainsOwnConstraints(ContractConstraints):
    """Main's CHECK constraints that no contract put there."""

    def one(self, name: str, expression: str) -> str:
        return f"the CHECK constraint {name} ({expression}) of {self.tables.display}"

    def all(self) -> str:
        return f"The CHECK constraints of {self.tables.display}"

    def fix(self, names: list[str]) -> str:
        return (
            f"It is not in the model's contract but on the table itself (added outside dbt): "
            f"fix the model, or drop the constraint ({self._drops(names)})."
        )

    def fix_expression(self, names: list[str]) -> str:
        return (
            f"Delta would fail the merge the same way. Fix the model's columns, or drop the "
            f"constraint(s), which are not in the model's contract ({self._drops(names)})."
        )

    def _drops(self, names: list[str]) -> str:
        main = self.tables.main
        return "; ".join(f"ALTER TABLE {main} DROP CONSTRAINT {ident(n)}" for n in names)


@dataclass(frozen=True)
class PartitionValues(ContractConstraints):
    """Main's STRING, BINARY and TIMESTAMP partition columns, as
    :func:`refuse_lost_partition_values` checks them; ``timestamps``: the TIMESTAMP ones."""

    timestamps: frozenset[str] = frozenset()

    def one(self, name: str, expression: str) -> str:
        if name in self.timestamps:
            return (
                f"main's partitioning by {ident(name)} (partition_by): Delta keeps a "
                f"partition value in a file path as the time the session's time zone shows, "
                f"and reads a time the clock shows twice (when it is set back, as at the end "
                f"of daylight saving time) back as the first of the two instants, another "
                f"than the snapshot's"
            )
        return (
            f"main's partitioning by {ident(name)} (partition_by): Delta keeps a partition "
            f"value as text in a file path, and would read an empty value or "
            f"'{LOST_PARTITION_VALUES[1]}' back as NULL, and bytes that are not UTF-8 text "
            f"changed"
        )

    def all(self) -> str:
        return f"The partition columns of {self.tables.display}"

    def fix(self, names: list[str]) -> str:
        column = ident(names[0])
        if names[0] in self.timestamps:
            return (
                f"Run the session in a time zone without such times "
                f"(spark.sql.session.timeZone: UTC), or partition main by a value derived "
                f"from it, e.g. to_date({column}) (partition_by, then "
                f"`dbt run --full-refresh`)."
            )
        return (
            f"Return NULL for them in the model if that is meant (nullif({column}, '')), "
            f"another value, or partition main by other columns (partition_by, then "
            f"`dbt run --full-refresh`)."
        )


def _resolves(spark: Any, rows: str, expression: str) -> bool:
    """Whether ``expression`` names only what the relation ``rows`` has. Analyzed by asking
    the schema, which a Spark Connect client does only then."""
    try:
        spark.sql(f"SELECT ({expression}) FROM {rows}").schema  # noqa: B018
    except AnalysisException:
        return False
    return True


def _refuse_broken(
    spark: Any,
    rows: str,
    constraints: tuple[tuple[str, str], ...],
    whose: ContractConstraints,
) -> None:
    """Refuse a snapshot (the relation ``rows``) with rows that break one of
    ``constraints``, or on which one cannot be evaluated, as ``whose`` names them."""
    broken = [f"NOT coalesce(({expression}), false)" for _, expression in constraints]
    counts = ", ".join(f"count_if({b}) AS c{i}" for i, b in enumerate(broken))
    try:
        row = spark.sql(f"SELECT {counts} FROM {rows}").collect()[0]
    except EXPRESSION_ERRORS as error:
        shown = "; ".join(f"{n}: {e}" for n, e in constraints)
        raise ConfigError(
            f"{whose.all()} cannot be evaluated on the model's result ({shown}): "
            f"{first_line(error, 500)}. "
            f"{whose.fix_expression([n for n, _ in constraints])} Main was not touched."
        ) from None
    for i, (name, expression) in enumerate(constraints):
        if row[f"c{i}"]:
            examples = spark.sql(f"SELECT * FROM {rows} WHERE {broken[i]} LIMIT {EXAMPLES}")
            raise SnapshotRejectedError(
                f"The snapshot has {row[f'c{i}']} row(s) that break {whose.one(name, expression)}, "
                f"e.g. {_examples(examples)}. {whose.fix([name])} Main was not touched."
            )


def refuse_lost_partition_values(
    spark: Any,
    tables: ModelTables,
    partition_columns: list[str],
    schema: StructType,
    rows: str | None = None,
) -> None:
    """Refuse a snapshot with a value that main's partitioning would change, before main is
    touched: main would differ from the snapshot, and the row hashes kept for the next cycle
    would say it does not. One pass over staging (or the relation ``rows``), only for a main
    partitioned by a STRING, BINARY or TIMESTAMP column. A TIMESTAMP partition value is
    written as the session's local time: an instant whose local time the clock shows twice
    comes back as the first."""
    partitioned = {fold_name(c) for c in partition_columns}
    values = ", ".join(literal(v) for v in LOST_PARTITION_VALUES)
    checks: list[tuple[str, str]] = []
    timestamps: list[str] = []
    for f in schema.fields:
        column = ident(f.name)
        if fold_name(f.name) not in partitioned:
            continue
        if isinstance(f.dataType, StringType | BinaryType):
            checks.append(
                (
                    f.name,
                    f"{column} IS NULL OR (is_valid_utf8({column}) "
                    f"AND CAST({column} AS STRING) NOT IN ({values}))",
                )
            )
        elif isinstance(f.dataType, TimestampType):
            timestamps.append(f.name)
            checks.append(
                (
                    f.name,
                    f"{column} IS NULL "
                    f"OR try_cast(CAST({column} AS STRING) AS TIMESTAMP) = {column}",
                )
            )
    if timestamps and not session_flag(spark, UTC_PARTITION_VALUES, default=True):
        raise ConfigError(
            f"{tables.display} is partitioned by TIMESTAMP column(s) {timestamps}, and the "
            f"session sets {UTC_PARTITION_VALUES} to false: Delta then writes their values as "
            f"local times without an offset, which a session in another time zone reads as "
            f"other instants (main would differ from the snapshot after the session's time "
            f"zone changes, and the engine's row hashes would not show it). Unset it (Delta's "
            f"default is true) or partition main by other columns (partition_by, then "
            f"`dbt run --full-refresh`). Main was not touched."
        )
    if checks:
        whose = PartitionValues(tables, frozenset(timestamps))
        _refuse_broken(spark, rows or tables.staging, tuple(checks), whose)


def check_delete_guards(
    tables: ModelTables, config: RefreshConfig, staged: StagedSnapshot, inserts: int, deletes: int
) -> None:
    """Refuse a snapshot that would empty main, or delete more of it than allowed. Main's
    rows follow from the diff: every staged row but the inserts, plus the deletes."""
    main_rows = staged.rows - inserts + deletes
    if main_rows == 0:
        return
    if staged.rows == 0 and not config.allow_empty_snapshot:
        raise SnapshotRejectedError(
            f"The snapshot is empty and would delete all {main_rows} rows of {tables.display}. "
            f"If that is intended, set allow_empty_snapshot=true in the model's config (for "
            f"one run: allow_empty_snapshot=var('allow_empty_snapshot', false) and "
            f"--vars 'allow_empty_snapshot: true'). Main was not touched."
        )
    if config.max_delete_fraction is not None and deletes > config.max_delete_fraction * main_rows:
        raise SnapshotRejectedError(
            f"The snapshot would delete {deletes} of {main_rows} rows of {tables.display} "
            f"({deletes / main_rows:.1%}), more than max_delete_fraction="
            f"{config.max_delete_fraction}. If that is intended, raise max_delete_fraction "
            f"(or unset it). Main was not touched."
        )


def _examples(frame: Any) -> str:
    rows = showable(frame.drop(VNODE_COLUMN, HASH_COLUMN)).collect()
    return "; ".join(str(row.asDict()) for row in rows)
