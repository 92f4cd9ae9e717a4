"""on_schema_change: what main's columns become, decided before anything is written."""

import pytest

from dbt.adapters.spark_refreshable.engine.errors import SchemaChangeError
from dbt.adapters.spark_refreshable.engine.tables import plan_schema

MAIN = [("id", "int"), ("name", "string"), ("old", "string")]
SNAPSHOT = [("id", "int"), ("name", "string"), ("new", "double")]


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
    plan = plan_schema([("ID", "int"), ("Name", "string")], MAIN[:2], ("id",), "fail")
    assert plan.columns == ["id", "name"]


@pytest.mark.parametrize("mode", ["ignore", "append_new_columns", "sync_all_columns"])
def test_a_type_change_is_refused_in_every_mode(mode):
    with pytest.raises(SchemaChangeError, match=r"id \(int -> bigint\).*--full-refresh"):
        plan_schema([("id", "bigint"), ("name", "string")], MAIN, ("id",), mode)
