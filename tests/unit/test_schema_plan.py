"""on_schema_change: what main's columns become, decided before anything is written."""

import pytest
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from dbt.adapters.spark_refreshable.engine.errors import ConfigError, SchemaChangeError
from dbt.adapters.spark_refreshable.engine.spec import RefreshConfig
from dbt.adapters.spark_refreshable.engine.tables import SchemaPlan, layout_columns, plan_schema


def schema(*columns: tuple[str, DataType]) -> StructType:
    return StructType([StructField(name, dtype) for name, dtype in columns])


MAIN = schema(("id", IntegerType()), ("name", StringType()), ("old", StringType()))
SNAPSHOT = schema(("id", IntegerType()), ("name", StringType()), ("new", DoubleType()))


def test_first_run_takes_the_snapshot_columns():
    plan = plan_schema(SNAPSHOT, None, ("id",), "fail")
    assert plan.columns == ["id", "name", "new"] and plan.add == plan.drop == []


def test_ignore_keeps_main_columns_that_the_snapshot_has():
    plan = plan_schema(SNAPSHOT, MAIN, ("id",), "ignore")
    assert plan.columns == ["id", "name"] and plan.add == plan.drop == []


def test_fail_names_added_and_removed_columns():
    with pytest.raises(SchemaChangeError, match=r"added \['new'\], removed \['old'\]"):
        plan_schema(SNAPSHOT, MAIN, ("id",), "fail")


def test_append_adds_and_keeps():
    plan = plan_schema(SNAPSHOT, MAIN, ("id",), "append_new_columns")
    assert plan.columns == ["id", "name", "new"]
    assert plan.add == [("new", "double")] and plan.drop == []


def test_sync_adds_and_drops():
    plan = plan_schema(SNAPSHOT, MAIN, ("id",), "sync_all_columns")
    assert plan.add == [("new", "double")] and plan.drop == ["old"]


def test_same_columns_in_another_case_are_not_a_change():
    main = schema(("id", IntegerType()), ("name", StringType()))
    plan = plan_schema(schema(("ID", IntegerType()), ("Name", StringType())), main, ("ID",), "fail")
    assert plan.columns == ["id", "name"]
    assert plan.keys == ("id",)  # spelled as main spells it, everywhere in the cycle's SQL


@pytest.mark.parametrize("mode", ["ignore", "append_new_columns", "sync_all_columns"])
def test_a_type_change_is_refused_in_every_mode(mode):
    with pytest.raises(SchemaChangeError, match=r"id \(int -> bigint\).*--full-refresh"):
        plan_schema(schema(("id", LongType()), ("name", StringType())), MAIN, ("id",), mode)


def wide_struct(names: list[str]) -> StructType:
    return StructType([StructField(name, IntegerType()) for name in names])


def test_a_change_past_the_25th_struct_field_is_a_type_change():
    """Types are compared as types, not as (possibly truncated) strings."""
    before = wide_struct([f"f{i}" for i in range(30)])
    after = wide_struct([f"f{i}" for i in range(29)] + ["renamed"])
    with pytest.raises(SchemaChangeError, match="renamed"):
        plan_schema(
            schema(("id", IntegerType()), ("s", after)),
            schema(("id", IntegerType()), ("s", before)),
            ("id",),
            "ignore",
        )


def test_nullability_inside_a_type_is_not_a_change():
    strict = schema(("id", IntegerType()), ("a", ArrayType(IntegerType(), False)))
    loose = schema(("id", IntegerType()), ("a", ArrayType(IntegerType(), True)))
    assert plan_schema(strict, loose, ("id",), "fail").columns == ["id", "a"]


def test_added_columns_carry_quoted_ddl():
    nested = StructType([StructField("a b", IntegerType()), StructField("x`y", StringType())])
    main = schema(("id", IntegerType()))
    plan = plan_schema(
        schema(("id", IntegerType()), ("n", nested)), main, ("id",), "append_new_columns"
    )
    assert plan.add == [("n", "STRUCT<`a b`: int, `x``y`: string>")]


def test_the_plan_survives_its_json_form():
    plan = plan_schema(SNAPSHOT, MAIN, ("id",), "sync_all_columns")
    assert SchemaPlan.from_json(plan.to_json()) == plan


@pytest.mark.parametrize(
    ("setting", "written"), [("partition_by", "id, name"), ("liquid_clustered_by", "ID,name")]
)
def test_layout_columns_written_as_one_name_are_refused_with_their_list(setting, written):
    config = RefreshConfig.from_model_config({"unique_key": "id", setting: written})
    plan = plan_schema(SNAPSHOT, None, ("id",), "fail")
    with pytest.raises(ConfigError, match=rf"{setting} names column\(s\) .* is one name: several"):
        layout_columns(plan, config)
