"""Issue 10 items 1, 2, 3 and 11 through the engine: inputs that made a refresh fail oddly
or succeed with main different from the snapshot."""

from __future__ import annotations

import pytest

from dbt.adapters.spark_refreshable.engine.errors import SchemaChangeError
from dbt.adapters.spark_refreshable.engine.proof import LastSnapshot, content_difference_sql
from tests.functional.refreshable.engine_harness import EngineModel


def content_difference(model: EngineModel) -> tuple[int, int]:
    """(snapshot rows main lacks, main rows the snapshot lacks), as the proof test counts."""
    last = LastSnapshot.parse(model.state().last_columns)
    assert last is not None, "a completed cycle records its snapshot"
    row = model.spark.sql(content_difference_sql(model.tables, last)).collect()[0]
    return row["rows_missing"], row["rows_extra"]


def test_item1_a_nested_null_moving_is_an_update_and_the_proof_compares_content(spark):
    model = EngineModel(spark, "id INT, a ARRAY<STRING>, m MAP<STRING, INT>", unique_key="id")
    model.refresh([(1, ["a", None], {"k": 1}), (2, ["b"], {"k": None})])
    result = model.refresh([(1, [None, "a"], {"k": 1}), (2, ["b"], {})])
    assert result.rows_updated == 2
    assert model.main() == [(1, [None, "a"], {"k": 1}), (2, ["b"], {})]
    assert content_difference(model) == (0, 0)

    # a change behind the engine's back that the old row hash could not see
    spark.sql(f"UPDATE {model.tables.main} SET a = array('a', NULL) WHERE id = 1")
    assert content_difference(model) == (1, 1)


def test_item2_key_column_spelled_in_another_case_with_deletes(spark):
    """`id` on day 1, `ID` on day 2 with deletes and updates: deletes delete."""
    model = EngineModel(spark, "id INT, v STRING", unique_key="id")
    model.refresh([(1, "a"), (2, "b"), (3, "c")])
    day2 = spark.createDataFrame([(1, "A"), (4, "d")], "ID INT, v STRING")
    result = model.refresh(lambda: day2, unique_key="ID")
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, 1, 2)
    assert result.chunks_done == result.chunks_total
    assert model.main() == [(1, "A"), (4, "d")]
    assert content_difference(model) == (0, 0)


NEEDS_COLUMN_MAPPING = (
    "`order id` INT, `a;b` STRING, `x=y` INT, `f(x)` DOUBLE, `{braces}` STRING, "
    "`tab\tname` INT, `line,comma` STRING"
)


def test_item3_column_names_delta_accepts_only_with_column_mapping(spark):
    model = EngineModel(spark, NEEDS_COLUMN_MAPPING, unique_key="order id", merge_chunk_rows=1)
    day1 = [(1, "a", 1, 1.5, "x", 1, "p"), (2, "b", 2, 2.5, "y", 2, "q")]
    day2 = [(1, "a", 1, 1.5, "x", 1, "P"), (3, "c", 3, 3.5, None, 3, "r")]
    model.refresh(day1)
    assert model.main() == sorted(day1)
    result = model.refresh(day2)
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (1, 1, 1)
    assert model.main() == sorted(day2)
    assert content_difference(model) == (0, 0)


def wide_struct(count: int, last: str) -> str:
    fields = [f"f{i}: INT" for i in range(count - 1)] + [f"`{last}`: INT"]
    return "STRUCT<" + ", ".join(fields) + ">"


def test_item11_a_change_past_the_25th_struct_field_is_refused_as_a_type_change(spark):
    model = EngineModel(spark, f"id INT, s {wide_struct(30, 'f29')}", unique_key="id")
    model.refresh([(1, tuple(range(30)))])
    renamed = spark.createDataFrame([(1, tuple(range(30)))], f"id INT, s {wide_struct(30, 'x')}")
    with pytest.raises(SchemaChangeError, match="type of column"):
        model.refresh(lambda: renamed)
    assert model.main() == [(1, tuple(range(30)))]


def test_item11_an_added_struct_column_whose_fields_need_quoting(spark):
    model = EngineModel(spark, "id INT", unique_key="id", on_schema_change="append_new_columns")
    model.refresh([(1,), (2,)])
    ddl = "id INT, s STRUCT<`a b`: INT, `c;d`: ARRAY<STRING>>"
    day2 = spark.createDataFrame([(1, (1, ["x"])), (2, None)], ddl)
    result = model.refresh(lambda: day2)
    assert result.rows_updated == 1
    assert model.main() == [(1, (1, ["x"])), (2, None)]
    assert content_difference(model) == (0, 0)


VARIANT_DAYS = [
    "SELECT 1 AS id, parse_json('1') AS v UNION ALL SELECT 2, parse_json('\"2024-01-01\"')",
    "SELECT 1 AS id, parse_json('1.0') AS v UNION ALL SELECT 2, CAST(DATE'2024-01-01' AS VARIANT)",
]


def test_a_variant_whose_type_changes_under_the_same_json_is_an_update(spark):
    """`1` BIGINT -> `1.0` DECIMAL and "2024-01-01" STRING -> DATE print as the same JSON:
    main takes the snapshot's types, and the proof tells them apart."""
    model = EngineModel(spark, "id INT, v VARIANT", unique_key="id")
    types = f"SELECT id, schema_of_variant(v) FROM {model.tables.main} ORDER BY id"
    for sql in VARIANT_DAYS:
        result = model.refresh(lambda sql=sql: spark.sql(sql))
        expected = spark.sql(f"SELECT id, schema_of_variant(v) FROM ({sql}) ORDER BY id")
        assert spark.sql(types).collect() == expected.collect()
        assert content_difference(model) == (0, 0)
    assert result.rows_updated == 2

    spark.sql(f"UPDATE {model.tables.main} SET v = parse_json('1') WHERE id = 1")
    assert content_difference(model) == (1, 1)


LATE_COLUMNS = (
    "SELECT id, concat('v', id) AS v, TIMESTAMP_NTZ'2024-01-02 03:04:05' + make_interval(0, 0, 0, "
    "id) AS ntz, parse_json(concat('{\"a\":', id, '}')) AS doc, "
    "array(named_struct('t', TIMESTAMP_NTZ'2024-01-01 00:00:00')) AS nested FROM range(4)"
)


@pytest.mark.parametrize(
    "on_schema_change",
    ["append_new_columns", pytest.param("sync_all_columns", marks=pytest.mark.extended)],
)
def test_timestamp_ntz_and_variant_columns_that_come_late(spark, on_schema_change):
    """A TIMESTAMP_NTZ or VARIANT column (nested too) that a snapshot gains after the first
    cycle: Delta enables those types' table features by itself only when a table is
    created, so staging's replace and main's ADD COLUMNS failed with
    DELTA_FEATURES_REQUIRE_MANUAL_ENABLEMENT (found by the differential test's generator)."""
    model = EngineModel(spark, "id BIGINT, v STRING", unique_key="id")
    model.refresh([(i, f"v{i}") for i in range(3)], on_schema_change=on_schema_change)
    result = model.refresh(LATE_COLUMNS, on_schema_change=on_schema_change)
    assert result.rows_updated == 3 and result.rows_inserted == 1
    assert content_difference(model) == (0, 0)
    expected = spark.sql(f"SELECT id, v, ntz, CAST(doc AS STRING), nested FROM ({LATE_COLUMNS})")
    got = spark.sql(f"SELECT id, v, ntz, CAST(doc AS STRING), nested FROM {model.tables.main}")
    assert sorted(got.collect()) == sorted(expected.collect())
