"""Quoting, literals, types and hashes for the Spark SQL the engine generates, and the
temporary views through which it reads DataFrames.

The row hash decides what changed, so it must tell apart every two values that differ.
Spark's ``xxhash64`` does not: it skips NULLs (also inside arrays, structs and maps), folds
the elements of nested values in sequence (``[[1], [2]]`` hashes like ``[[1, 2]]``),
hashes ``-0.0`` like ``0.0`` and refuses maps. So every
value is hashed by its type (:func:`value_hash`): NULL as a constant of its own, a
collection with its length and one hash per element, a map by its entries in hash order,
a struct by one hash per field, a float with its sign. A row's hash is the hash of its
columns' hashes, none of them NULL.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    DataType,
    DateType,
    DoubleType,
    FloatType,
    MapType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from dbt.adapters.spark_refreshable.engine.errors import ConfigError

# Session settings under which the engine's SQL text reads otherwise than written, and how
SQL_TEXT_SETTINGS = {
    "spark.sql.parser.escapedStringLiterals": (
        "string literals read as Spark 1.x read them, backslashes kept: no quote, backslash "
        "or `${` could be written in the literals of the refresh's state, main's comments and "
        "table properties (once it is false, the model's own string literals escape "
        "backslashes: `\\\\d` for a regex's `\\d`)"
    ),
    "spark.sql.parser.quotedRegexColumnNames": (
        "a quoted column name read as a regular expression: the refresh quotes every column "
        "name, so its statements would fail or select other columns"
    ),
}
# levels of arrays and objects inside a variant whose scalars' types are told one by one
VARIANT_TYPE_DEPTH = 8
# the hash of a NULL value at any depth (a non-null value hashes to it with odds 2^-64)
NULL_HASH = "CAST(-4875932512283745717 AS BIGINT)"


def ident(name: str) -> str:
    """A column name as a quoted identifier."""
    return "`" + name.replace("`", "``") + "`"


def unquoted(written: str) -> str:
    """A column name as Spark SQL writes it (a config's, or Delta's list of clustering
    columns): quoted in backticks (a doubled backtick for a backtick), exactly as quoted;
    unquoted, without surrounding spaces. The inverse of :func:`ident`."""
    name = written.strip()
    if len(name) > 2 and name[0] == name[-1] == "`":
        return name[1:-1].replace("``", "`")
    return name


def qualified(prefix: str, name: str) -> str:
    return f"{prefix}.{ident(name)}"


def literal(value: object) -> str:
    """A Python value as a Spark SQL literal (str, int, float, bool, None). A string's
    ``$`` is written as its escape ``\\u0024``: Spark replaces ``${...}`` in SQL text, quoted
    or not, before it parses it (spark.sql.variable.substitute: ``'${x}'`` reads as ``''``,
    ``'${env:HOME}'`` as the home folder)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return f"CAST({value} AS BIGINT)"
    if isinstance(value, float):
        return f"CAST({value!r} AS DOUBLE)"
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace("'", "\\'").replace("$", "\\u0024")
        return f"'{escaped}'"
    raise TypeError(f"no SQL literal for {type(value).__name__}: {value!r}")


def session_flag(spark: Any, conf: str, default: bool) -> bool:
    """A boolean setting of the session, as Spark reads it (any case, spaces around)."""
    value = spark.conf.get(conf, None)
    return default if value is None else str(value).strip().lower() == "true"


def refuse_sql_text_settings(spark: Any) -> None:
    """Refuse a session whose settings make the SQL text :func:`literal` and :func:`ident`
    write read otherwise (``SQL_TEXT_SETTINGS``), before anything is written."""
    held = [conf for conf in SQL_TEXT_SETTINGS if session_flag(spark, conf, default=False)]
    if not held:
        return
    why = "; ".join(f"{conf}=true ({SQL_TEXT_SETTINGS[conf]})" for conf in held)
    raise ConfigError(
        f"This session sets {why}. Set {' and '.join(held)} to false for this model's runs "
        f"(the profile's server_side_parameters, or the code that set it). Nothing was written."
    )


def column_list(names: Iterable[str], prefix: str | None = None) -> str:
    return ", ".join(qualified(prefix, n) if prefix else ident(n) for n in names)


def vnode_expression(keys: Iterable[str], vnodes: int, prefix: str | None = None) -> str:
    """The vnode of a row: pmod(xxhash64(key columns), vnodes). One definition, used for
    staging's layout and for slicing main, so that both always agree."""
    return f"pmod(xxhash64({column_list(keys, prefix)}), {int(vnodes)})"


# -- types -------------------------------------------------------------------------------


def type_sql(dtype: DataType) -> str:
    """A type as Spark SQL DDL, nested field names quoted (``simpleString`` quotes none)."""
    if isinstance(dtype, ArrayType):
        return f"ARRAY<{type_sql(dtype.elementType)}>"
    if isinstance(dtype, MapType):
        return f"MAP<{type_sql(dtype.keyType)}, {type_sql(dtype.valueType)}>"
    if isinstance(dtype, StructType):
        fields = ", ".join(f"{ident(f.name)}: {type_sql(f.dataType)}" for f in dtype.fields)
        return f"STRUCT<{fields}>"
    return dtype.simpleString()


def holds(dtype: DataType, kind: type[DataType]) -> bool:
    """Whether ``dtype`` is of ``kind`` or holds one, at any depth of arrays, maps and
    structs."""
    if isinstance(dtype, kind):
        return True
    if isinstance(dtype, ArrayType):
        return holds(dtype.elementType, kind)
    if isinstance(dtype, MapType):
        return holds(dtype.keyType, kind) or holds(dtype.valueType, kind)
    if isinstance(dtype, StructType):
        return any(holds(f.dataType, kind) for f in dtype.fields)
    return False


def _shown_as_text(dtype: DataType) -> bool:
    """Whether values of ``dtype`` hold dates, timestamps or variants at any depth."""
    if isinstance(dtype, ArrayType):
        return _shown_as_text(dtype.elementType)
    if isinstance(dtype, MapType):
        return _shown_as_text(dtype.keyType) or _shown_as_text(dtype.valueType)
    if isinstance(dtype, StructType):
        return any(_shown_as_text(f.dataType) for f in dtype.fields)
    return isinstance(dtype, (DateType, TimestampType, TimestampNTZType)) or (
        dtype.typeName() == "variant"
    )


def showable(frame: Any) -> Any:
    """``frame`` with its columns that hold dates, timestamps or variants as Spark spells
    them (``CAST(c AS STRING)``), for rows a message shows: Spark holds dates of years
    before 1 and after 9999, which collecting them into Python fails on, and a variant
    collects as bytes."""
    return frame.selectExpr(
        *(
            f"CAST({ident(f.name)} AS STRING) AS {ident(f.name)}"
            if _shown_as_text(f.dataType)
            else ident(f.name)
            for f in frame.schema.fields
        )
    )


def without_nullability(dtype: DataType) -> DataType:
    """``dtype`` with every nested value nullable and no field metadata: two columns of one
    type compare equal whatever Spark inferred about their NULLs."""
    if isinstance(dtype, ArrayType):
        return ArrayType(without_nullability(dtype.elementType), True)
    if isinstance(dtype, MapType):
        return MapType(
            without_nullability(dtype.keyType), without_nullability(dtype.valueType), True
        )
    if isinstance(dtype, StructType):
        return StructType(
            [StructField(f.name, without_nullability(f.dataType), True) for f in dtype.fields]
        )
    return dtype


def schema_from_json(value: Any) -> StructType:
    """A schema stored by :meth:`StructType.jsonValue`."""
    return StructType.fromJson(value)


# -- hashes ------------------------------------------------------------------------------


def value_hash(expr: str, dtype: DataType, depth: int = 0) -> str:
    """A BIGINT hash of the value of ``expr`` (of type ``dtype``), never NULL, that differs
    for any two values that differ (up to 64-bit collisions), NULLs at any depth included."""
    element = f"__refreshable_e{depth}"
    if isinstance(dtype, ArrayType):
        inner = value_hash(element, dtype.elementType, depth + 1)
        hashed = f"xxhash64(size({expr}), transform({expr}, {element} -> {inner}))"
    elif isinstance(dtype, MapType):
        key = value_hash(f"{element}.key", dtype.keyType, depth + 1)
        value = value_hash(f"{element}.value", dtype.valueType, depth + 1)
        entries = f"transform(map_entries({expr}), {element} -> array({key}, {value}))"
        hashed = f"xxhash64(size({expr}), array_sort({entries}))"
    elif isinstance(dtype, StructType):
        fields = [value_hash(f"{expr}.{ident(f.name)}", f.dataType, depth) for f in dtype.fields]
        hashed = f"xxhash64({', '.join(['0', *fields])})"
    elif isinstance(dtype, (FloatType, DoubleType)):
        # xxhash64 hashes -0.0 as 0.0: add the sign of a zero
        negative_zero = f"({expr} = 0 AND startswith(CAST({expr} AS STRING), '-'))"
        hashed = f"xxhash64({expr}, {negative_zero})"
    elif dtype.typeName() == "variant":
        hashed = f"xxhash64({', '.join(variant_identity(expr))})"
    else:
        hashed = f"xxhash64({expr})"
    return f"CASE WHEN {expr} IS NULL THEN {NULL_HASH} ELSE {hashed} END"


def row_hash_expression(schema: StructType, prefix: str | None = None) -> str:
    """A 64-bit hash of a row's content over the columns of ``schema`` (in its order)."""
    hashes = [
        value_hash(qualified(prefix, f.name) if prefix else ident(f.name), f.dataType)
        for f in schema.fields
    ]
    return f"xxhash64({', '.join(['0', *hashes])})"


def checksum_expression(hash_column: str) -> str:
    """An order-independent checksum of rows: the exact sum of their 64-bit hashes."""
    return f"sum(CAST({ident(hash_column)} AS DECIMAL(38,0)))"


def comparable_expression(expr: str, dtype: DataType, depth: int = 0) -> str:
    """The value of ``expr`` in a form that ``EXCEPT ALL`` compares exactly: maps as their
    entries sorted, floats as their decimal spelling (-0.0 and NaN included), variants as
    JSON and type (:func:`variant_identity`). Independent of :func:`value_hash`."""
    element = f"__refreshable_c{depth}"
    if isinstance(dtype, ArrayType):
        inner = comparable_expression(element, dtype.elementType, depth + 1)
        return expr if inner == element else f"transform({expr}, {element} -> {inner})"
    if isinstance(dtype, MapType):
        key = comparable_expression(f"{element}.key", dtype.keyType, depth + 1)
        value = comparable_expression(f"{element}.value", dtype.valueType, depth + 1)
        entry = f"named_struct('key', {key}, 'value', {value})"
        return f"array_sort(transform(map_entries({expr}), {element} -> {entry}))"
    if isinstance(dtype, StructType):
        fields = [
            (f.name, comparable_expression(f"{expr}.{ident(f.name)}", f.dataType, depth))
            for f in dtype.fields
        ]
        if all(value == f"{expr}.{ident(name)}" for name, value in fields):
            return expr
        pairs = ", ".join(f"{literal(name)}, {value}" for name, value in fields)
        return f"CASE WHEN {expr} IS NULL THEN NULL ELSE named_struct({pairs}) END"
    if isinstance(dtype, (FloatType, DoubleType)):
        return f"CAST({expr} AS STRING)"
    if dtype.typeName() == "variant":
        text, kind = variant_identity(expr)
        return f"named_struct('json', {text}, 'type', {kind})"
    return expr


def variant_identity(expr: str) -> tuple[str, str]:
    """What tells two variants apart: their JSON text, and the types it does not show
    (``1`` BIGINT or DECIMAL, ``"2024-01-01"`` STRING or DATE), each scalar's own
    (:func:`variant_types`)."""
    return f"to_json({expr})", variant_types(expr)


def variant_types(expr: str, depth: int = 0) -> str:
    """The types of a variant's scalars, in the order of its JSON text, as a string:
    ``schema_of_variant`` names the type of one scalar exactly, but merges the element types
    of an array (an integer 1 and a DECIMAL 1, in either order, are ``[1,1]`` and
    ``ARRAY<DECIMAL(20,0)>``), so arrays and objects are walked, their elements one by one,
    an object's by sorted key. Below
    ``VARIANT_TYPE_DEPTH`` levels of nesting the merged type stands for the rest."""
    kind = f"schema_of_variant({expr})"
    if depth == VARIANT_TYPE_DEPTH:
        return kind
    element, key = f"__refreshable_v{depth}", f"__refreshable_k{depth}"
    # try_: Spark may evaluate a CASE branch whose condition is false (a cast that fails)
    as_object = f"try_variant_get({expr}, '$', 'MAP<STRING, VARIANT>')"
    elements = (
        f"CASE WHEN startswith({kind}, 'ARRAY') "
        f"THEN try_variant_get({expr}, '$', 'ARRAY<VARIANT>') "
        f"ELSE transform(array_sort(map_keys({as_object})), {key} -> {as_object}[{key}]) END"
    )
    # the next level once (not once per kind of container): the text grows with the depth
    listed = f"transform({elements}, {element} -> {variant_types(element, depth + 1)})"
    return (
        f"CASE WHEN {kind} RLIKE '^(ARRAY|OBJECT)' "
        f"THEN concat(left({kind}, 1), '(', array_join({listed}, ',', 'NULL'), ')') "
        f"ELSE {kind} END"
    )


def comparable_columns(schema: StructType) -> str:
    """A select list of ``schema``'s columns in comparable form, named c0, c1, ..."""
    return ", ".join(
        f"{comparable_expression(ident(f.name), f.dataType)} AS c{i}"
        for i, f in enumerate(schema.fields)
    )


def as_of(table: str, version: int | None) -> str:
    """``table`` as of a Delta version (its latest when ``version`` is None)."""
    return table if version is None else f"{table} VERSION AS OF {int(version)}"


@contextlib.contextmanager
def temp_view(frame: Any, name: str) -> Iterator[str]:
    """``frame`` as the session's temporary view ``name`` while the block lasts (dropped
    however it ends); the block gets the name to read it by."""
    frame.createOrReplaceTempView(name)
    try:
        yield name
    finally:
        frame.sparkSession.catalog.dropTempView(name)
