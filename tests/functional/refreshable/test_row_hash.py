"""Issue 10 item 1: values that differ never hash alike, at any depth, and the proof's
comparable form tells them apart too. Each pair below but the last few hashed alike with
a plain ``xxhash64`` over the columns and the top-level null pattern (the engine's old
row hash), so an update between them was missed and the checksum agreed."""

from __future__ import annotations

import itertools

import pytest

from dbt.adapters.spark_refreshable.engine.sql import comparable_columns, row_hash_expression

Pair = tuple[list[tuple[str, str]], list[str], list[str]]  # (columns, first row, second row)
# one as a variant of a BIGINT and of a DECIMAL: the same JSON text `1`
ONE_INT = "CAST(1 AS VARIANT)"
ONE_DECIMAL = "CAST(CAST(1 AS DECIMAL(5,0)) AS VARIANT)"

S = [("s", "STRUCT<x: INT, y: INT>")]
DIFFERENT: list[Pair] = [
    ([("a", "ARRAY<STRING>")], ["array('a', NULL)"], ["array('a')"]),
    ([("a", "ARRAY<STRING>")], ["array(NULL)"], ["array()"]),
    ([("a", "ARRAY<STRING>")], ["NULL"], ["array()"]),
    (S, ["named_struct('x', NULL, 'y', 1)"], ["named_struct('x', 1, 'y', NULL)"]),
    (S, ["named_struct('x', NULL, 'y', NULL)"], ["NULL"]),
    ([("a", "ARRAY<ARRAY<INT>>")], ["array(array(1), array(2))"], ["array(array(1, 2))"]),
    (
        [("a", "ARRAY<INT>"), ("b", "ARRAY<INT>")],
        ["array(1)", "array(2)"],
        ["array(1, 2)", "array()"],
    ),
    ([("m", "MAP<STRING, INT>")], ["map('a', 1)"], ["map('a', 2)"]),
    ([("m", "MAP<STRING, INT>")], ["map('a', NULL)"], ["map()"]),
    ([("m", "MAP<STRING, INT>")], ["map('a', 1, 'b', 2)"], ["map('a', 2, 'b', 1)"]),
    ([("m", "MAP<INT, ARRAY<INT>>")], ["map(1, array(1, NULL))"], ["map(1, array(1))"]),
    ([("d", "DOUBLE")], ["0.0D"], ["-0.0D"]),
    ([("f", "FLOAT")], ["CAST('0.0' AS FLOAT)"], ["CAST('-0.0' AS FLOAT)"]),
    ([("a", "ARRAY<DOUBLE>")], ["array(-0.0D)"], ["array(0.0D)"]),
    ([("b", "BINARY")], ["X'00'"], ["X''"]),
    ([("a", "ARRAY<BINARY>")], ["array(X'01', X'02')"], ["array(X'0102')"]),
    ([("d", "DECIMAL(38,10)")], ["1"], ["1.0000000001"]),
    ([("d", "DECIMAL(5,2)")], ["1.01"], ["1.1"]),
    (
        [("t", "TIMESTAMP")],
        ["TIMESTAMP'2024-01-01 00:00:00'"],
        ["TIMESTAMP'2024-01-01 00:00:00.000001'"],
    ),
    (
        [("t", "TIMESTAMP_NTZ")],
        ["TIMESTAMP_NTZ'2024-01-01 00:00:00'"],
        ["TIMESTAMP_NTZ'2024-01-01 01:00:00'"],
    ),
    ([("a", "STRING"), ("b", "STRING")], ["'ab'", "''"], ["'a'", "'b'"]),
    ([("a", "STRING"), ("b", "STRING")], ["NULL", "'x'"], ["'x'", "NULL"]),
    (
        [("s", "STRUCT<m: MAP<STRING, STRUCT<z: ARRAY<INT>>>>")],
        ["named_struct('m', map('k', named_struct('z', array(1, NULL))))"],
        ["named_struct('m', map('k', named_struct('z', array(NULL, 1))))"],
    ),
    # variants of one JSON text holding values of other types (schema_of_variant tells)
    ([("v", "VARIANT")], ["parse_json('1.0')"], ["parse_json('1')"]),
    ([("v", "VARIANT")], ["parse_json('1.5')"], ["parse_json('1.5e0')"]),
    ([("v", "VARIANT")], ["CAST(DATE'2024-01-01' AS VARIANT)"], ["parse_json('\"2024-01-01\"')"]),
    ([("v", "VARIANT")], ["CAST(X'0102' AS VARIANT)"], ["parse_json('\"AQI=\"')"]),
    (
        [("v", "VARIANT")],
        ["to_variant_object(named_struct('t', TIMESTAMP'2024-01-01 00:00:00'))"],
        ["to_variant_object(named_struct('t', '2024-01-01 00:00:00+00:00'))"],
    ),
    (
        [("a", "ARRAY<VARIANT>")],
        ["array(CAST(CAST(1.5 AS FLOAT) AS VARIANT))"],
        ["array(CAST(1.5D AS VARIANT))"],
    ),
    # the same JSON text and merged array type, the elements' types swapped: at the top,
    # inside an object, inside an array of arrays
    (
        [("v", "VARIANT")],
        [f"CAST(array({ONE_INT}, {ONE_DECIMAL}) AS VARIANT)"],
        [f"CAST(array({ONE_DECIMAL}, {ONE_INT}) AS VARIANT)"],
    ),
    (
        [("v", "VARIANT")],
        [f"to_variant_object(named_struct('a', 1, 'b', array({ONE_INT}, {ONE_DECIMAL})))"],
        [f"to_variant_object(named_struct('a', 1, 'b', array({ONE_DECIMAL}, {ONE_INT})))"],
    ),
    (
        [("v", "VARIANT")],
        [f"CAST(array(array({ONE_INT}), array({ONE_DECIMAL}, {ONE_DECIMAL})) AS VARIANT)"],
        [f"CAST(array(array({ONE_DECIMAL}), array({ONE_INT}, {ONE_DECIMAL})) AS VARIANT)"],
    ),
]
# equal by content, spelled differently
EQUAL: list[Pair] = [
    ([("m", "MAP<STRING, INT>")], ["map('a', 1, 'b', 2)"], ["map('b', 2, 'a', 1)"]),
    ([("d", "DOUBLE")], ["CAST('NaN' AS DOUBLE)"], ["CAST('NaN' AS DOUBLE) * 2"]),
    ([("a", "ARRAY<STRING>")], ["array('x', NULL)"], ["array('x', NULL)"]),
    (
        [("v", "VARIANT")],
        ['parse_json(\'{"b": 1, "a": [2]}\')'],
        ['parse_json(\'{"a":[2],"b":1}\')'],
    ),
]
_views = itertools.count()


def pair_view(spark, columns: list[tuple[str, str]], first: list[str], second: list[str]):
    """A temporary view of two rows of ``columns``; its name and schema."""

    def select(values: list[str]) -> str:
        return ", ".join(
            f"CAST({value} AS {dtype}) AS `{name}`"
            for value, (name, dtype) in zip(values, columns, strict=True)
        )

    view = f"hash_pair_{next(_views)}"
    frame = spark.sql(f"SELECT {select(first)} UNION ALL SELECT {select(second)}")
    frame.createOrReplaceTempView(view)
    return view, frame.schema


def hashes(spark, view: str, schema) -> list[int]:
    return [r[0] for r in spark.sql(f"SELECT {row_hash_expression(schema)} FROM {view}").collect()]


def distinct_forms(spark, view: str, schema) -> int:
    """How many distinct rows the proof's comparable form sees (EXCEPT ALL compares alike)."""
    return spark.sql(f"SELECT DISTINCT {comparable_columns(schema)} FROM {view}").count()


@pytest.mark.parametrize(("columns", "first", "second"), DIFFERENT)
def test_item1_nested_values_that_differ_hash_and_compare_differently(
    spark, columns, first, second
):
    view, schema = pair_view(spark, columns, first, second)
    found = hashes(spark, view, schema)
    assert found[0] != found[1], f"{first} and {second} hash alike"
    assert distinct_forms(spark, view, schema) == 2, f"{first} and {second} compare alike"


@pytest.mark.parametrize(("columns", "first", "second"), EQUAL)
def test_item1_equal_values_hash_and_compare_alike(spark, columns, first, second):
    view, schema = pair_view(spark, columns, first, second)
    found = hashes(spark, view, schema)
    assert found[0] == found[1], f"{first} and {second} hash differently"
    assert distinct_forms(spark, view, schema) == 1, f"{first} and {second} compare differently"
