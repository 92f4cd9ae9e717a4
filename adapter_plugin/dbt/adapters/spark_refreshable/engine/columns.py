"""What a snapshot's columns may be, checked on its schema alone before anything is written:
names the engine can tell apart and resolve, types Delta can store (and that are types: not
VOID), keys Spark can compare.
Each refusal names the column and the cast or rename that fixes it."""

from __future__ import annotations

from collections.abc import Container, Iterator

from pyspark.sql.types import (
    ArrayType,
    DataType,
    MapType,
    StringType,
    StructType,
)

from dbt.adapters.spark_refreshable.engine.errors import ConfigError
from dbt.adapters.spark_refreshable.engine.naming import RESERVED_PREFIX, fold_name
from dbt.adapters.spark_refreshable.engine.sql import type_sql

# Spark substitutes ${...} in SQL text (spark.sql.variable.substitute, on by default)
SUBSTITUTION = "${"
BINARY = "UTF8_BINARY"  # Spark's default collation, the only one Delta 4.4 stores
# types a Delta table cannot hold (Delta 4.4), by Spark's type name, with the cast that fixes it
UNSTORABLE = {
    "daytimeinterval": "a number (e.g. seconds) or CAST(c AS STRING)",
    "yearmonthinterval": "a number of months or CAST(c AS STRING)",
    "interval": "CAST(c AS STRING)",
    "time": "CAST(c AS STRING), or a timestamp",
    "geometry": "its well-known binary, st_asbinary(c)",
    "geography": "its well-known binary, st_asbinary(c)",
}


def _is_collated(dtype: DataType) -> bool:
    """A string type of another collation than the binary one."""
    return isinstance(dtype, StringType) and getattr(dtype, "collation", BINARY) != BINARY


def _by_fold(names: list[str]) -> dict[str, list[str]]:
    """Names grouped as Spark resolves them, case-insensitively (:func:`fold_name`)."""
    grouped: dict[str, list[str]] = {}
    for name in names:
        grouped.setdefault(fold_name(name), []).append(name)
    return grouped


def _case_clashes(by_fold: dict[str, list[str]]) -> list[list[str]]:
    """Groups of names that are the same but for case, if at all: Spark takes them for
    one."""
    return [names for names in by_fold.values() if len(names) > 1]


def listed_in_one_name(missing: list[str], folded: Container[str]) -> str:
    """A hint for columns written as one name ('a, b') where a list was meant, if one is:
    ``missing`` are the names a setting gave that are not columns, ``folded`` the columns'
    names as :func:`fold_name` folds them."""
    for name in missing:
        parts = [part.strip() for part in name.split(",")]
        if len(parts) > 1 and all(fold_name(part) in folded for part in parts):
            listed = ", ".join(repr(part) for part in parts)
            return f" {name!r} is one name: several columns are a list, [{listed}]."
    return ""


def resolve_keys(schema: StructType, unique_key: tuple[str, ...]) -> tuple[str, ...]:
    """The unique_key columns as the snapshot spells them, after checking the snapshot's
    columns: a clear error for a missing key, names that differ only in case (Spark and
    Delta take them for one), the engine's reserved prefix, a type Delta cannot store or a
    key Spark cannot compare."""
    columns = schema.names
    by_fold = _by_fold(columns)
    clashes = _case_clashes(by_fold)
    if clashes:
        raise ConfigError(
            f"The model's result has more than one column of one name, in the same or "
            f"another case: {clashes}. Spark resolves names case-insensitively (also `ı` "
            f"as `i`, `ſ` as `s`); rename or drop all but one of each."
        )
    missing = [k for k in unique_key if fold_name(k) not in by_fold]
    if missing:
        raise ConfigError(
            f"unique_key column(s) {missing} are not in the model's result, whose columns are "
            f"{columns}. Fix unique_key in the model's config or select the column(s) (a name "
            f"with spaces at its ends is written between backticks: '` id `')."
            + listed_in_one_name(missing, by_fold)
        )
    reserved = [c for c in columns if fold_name(c).startswith(RESERVED_PREFIX)]
    if reserved:
        raise ConfigError(
            f"Columns {reserved} use the prefix {RESERVED_PREFIX}, reserved for the engine; "
            f"rename them in the model."
        )
    substituted = [c for c in columns if SUBSTITUTION in c]
    if substituted:
        raise ConfigError(
            f"Columns {substituted} have `{SUBSTITUTION}` in their name, which Spark replaces "
            f"in SQL text (spark.sql.variable.substitute: `${{spark.app.name}}` reads as "
            f"the application's name), so the refresh's statements could not name them; "
            f"rename them in the model."
        )
    keys = tuple(by_fold[fold_name(k)][0] for k in unique_key)
    problems = [
        problem
        for field in schema.fields
        for problem in _type_problems(field.name, field.dataType, field.name in keys)
    ]
    if problems:
        raise ConfigError(
            "The model's result has columns a refreshable table cannot hold:\n- "
            + "\n- ".join(problems)
            + "\nCast or rename them in the model."
        )
    return keys


def refuse_names_change_feed_breaks(columns: list[str], configured: bool) -> None:
    """Refuse column names that Delta's ``MERGE`` cannot write to a change data feed, before
    anything is written: a name with a backtick (Delta 4.4 reads it back unescaped, as
    ``packedCdc.`a`b```, and every merge that updates or deletes a row fails). Nested
    fields are not affected."""
    broken = [c for c in dict.fromkeys(columns) if "`" in c]
    if not broken:
        return
    why = (
        "change_data_feed is true"
        if configured
        else "main has Delta's change data feed on (delta.enableChangeDataFeed, set outside "
        "the model's config)"
    )
    off = (
        "or set change_data_feed: false"
        if configured
        else "or turn it off with ALTER TABLE <main> SET TBLPROPERTIES "
        "('delta.enableChangeDataFeed' = 'false')"
    )
    raise ConfigError(
        f"Column(s) {broken} have a backtick in their name, and {why}: Delta's MERGE cannot "
        f"write the change data feed of such a column (it fails on every update or delete). "
        f"Rename them in the model (e.g. `a``b` AS a_b; a column main already has, with "
        f"`dbt run --full-refresh`), {off}. Main was not touched."
    )


def _type_problems(path: str, dtype: DataType, is_key: bool) -> Iterator[str]:
    """What is wrong with the column (or nested field) at ``path`` of type ``dtype``."""
    name = dtype.typeName()
    if name == "void":
        yield (
            f"`{path}` is VOID (an untyped NULL, e.g. `NULL AS c`, an empty array() or map(), "
            f"or a pandas column of None only), which no later value can fill without a full "
            f"refresh: cast it to the type it will hold, e.g. CAST(NULL AS STRING), "
            f"CAST(array() AS ARRAY<STRING>), or .cast('string') in a Python model."
        )
    elif name in UNSTORABLE:
        yield (
            f"`{path}` is {type_sql(dtype).upper()}, which Delta tables cannot store: cast it "
            f"to {UNSTORABLE[name]}."
        )
    elif name in ("char", "varchar"):
        yield (
            f"`{path}` is {type_sql(dtype).upper()}, which a Delta table written from a query "
            f"cannot hold (a query's result keeps CHAR and VARCHAR only where the session "
            f"sets spark.sql.preserveCharVarcharTypeInfo to true): cast it to STRING "
            f"(rpad(c, n) pads as CHAR(n) does), or leave that setting false."
        )
    elif _is_collated(dtype):
        yield (
            f"`{path}` is {type_sql(dtype).upper()}, which Delta tables cannot store: use "
            f"collate(c, 'UTF8_BINARY') (and lower(c) if it should compare without case)."
        )
    elif name == "variant" and is_key:
        yield (
            f"unique_key `{path}` is VARIANT: Spark cannot group, join or hash variants. Key "
            f"on a typed value of it (e.g. variant_get(c, '$.id', 'bigint')) or on to_json(c)."
        )
    elif isinstance(dtype, MapType):
        if is_key:
            yield (
                f"unique_key `{path}` contains a MAP ({type_sql(dtype)}): Spark cannot hash or "
                f"compare maps. Key on other columns, or on array_sort(map_entries(c))."
            )
        yield from _type_problems(f"{path}.key", dtype.keyType, is_key)
        yield from _type_problems(f"{path}.value", dtype.valueType, is_key)
    elif isinstance(dtype, ArrayType):
        yield from _type_problems(f"{path}[]", dtype.elementType, is_key)
    elif isinstance(dtype, StructType) and not dtype.fields:
        yield (
            f"`{path}` is a STRUCT without fields, which Delta tables cannot store: drop it, "
            f"or give it a field."
        )
    elif isinstance(dtype, StructType):
        yield from _struct_problems(path, dtype, is_key)


def _struct_problems(path: str, dtype: StructType, is_key: bool) -> Iterator[str]:
    """What is wrong with the fields of the struct at ``path`` (:func:`_type_problems`)."""
    clashes = _case_clashes(_by_fold(dtype.names))
    if clashes:
        yield (
            f"`{path}` is a struct with fields of one name, in the same or another case "
            f"{clashes}: "
            f"Spark resolves field names case-insensitively; rename them in named_struct()."
        )
    for field in dtype.fields:
        if SUBSTITUTION in field.name:
            yield (
                f"`{path}.{field.name}` has `{SUBSTITUTION}` in its name, which Spark "
                f"replaces in SQL text: rename it in named_struct()."
            )
        yield from _type_problems(f"{path}.{field.name}", field.dataType, is_key)
