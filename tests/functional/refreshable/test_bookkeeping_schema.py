"""The bookkeeping tables live in a schema of their own (issue 11): the model's schema holds
main alone, and a model whose bookkeeping an earlier version kept beside main has it moved
by its next run, without losing a row, whatever state the old tables were left in."""

from __future__ import annotations

import pytest

from dbt.adapters.spark_refreshable.engine.errors import (
    ConfigError,
    InjectedFault,
    LockHeldError,
)
from dbt.adapters.spark_refreshable.engine.lease import Lease
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.owners import Owner
from dbt.adapters.spark_refreshable.engine.tables import (
    BOOKKEEPING_LOG_PROPERTIES,
    MARKER,
    OWNER_PROPERTY,
    table_exists,
    table_properties,
)
from tests.functional.refreshable.engine_harness import SCHEMA, EngineModel
from tests.support.faults import injected

DAY1 = [(i, f"one {i}") for i in range(30)]
DAY2 = [(i, f"two {i}" if i % 3 else f"one {i}") for i in range(10, 50)]
DAY3 = [(i, f"three {i}") for i in range(20, 45)]
ROLES = ("staging", "changes", "progress", "state")


def tables_in(spark, schema: str) -> set[str]:
    return {r["tableName"] for r in spark.sql(f"SHOW TABLES IN {schema}").collect()}


def bookkeeping_of(tables: ModelTables) -> set[str]:
    return {tables.identifiers()[role] for role in ROLES}


def built_beside_main(spark) -> tuple[EngineModel, ModelTables]:
    """A model built on day 1 with its bookkeeping in main's schema, as versions up to 0.2
    kept it; the model then runs with the default layout."""
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    model.refresh(DAY1, bookkeeping_schema=SCHEMA)
    old = model.tables.beside_main()
    assert bookkeeping_of(old) - {old.identifiers()["changes"]} <= tables_in(spark, SCHEMA)
    return model, old


def test_the_models_schema_holds_main_alone(spark):
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    model.refresh(DAY1)
    model.refresh(DAY2)
    tables = model.tables
    assert tables.bookkeeping == f"{SCHEMA}_refreshable"
    assert not bookkeeping_of(tables) & tables_in(spark, SCHEMA)
    assert tables.identifier in tables_in(spark, SCHEMA)
    for role in ROLES:
        name = tables.role_name(role)
        assert table_exists(spark, name), name
        held = table_properties(spark, name)
        assert held.get(MARKER) == "true", name
        assert BOOKKEEPING_LOG_PROPERTIES.items() <= held.items(), (name, held)
    assert model.main() == sorted(DAY2)


@pytest.mark.extended  # an upgrade from an earlier layout, once per table: `make test-all`
def test_bookkeeping_tables_of_an_earlier_version_get_the_log_properties(spark):
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    model.refresh(DAY1)
    earlier = {
        model.tables.role_name("state"): {**BOOKKEEPING_LOG_PROPERTIES, OWNER_PROPERTY: "?"},
        model.tables.role_name("progress"): BOOKKEEPING_LOG_PROPERTIES,
    }
    for name, properties in earlier.items():  # as earlier versions created them
        keys = ", ".join(f"'{k}'" for k in properties)
        spark.sql(f"ALTER TABLE {name} UNSET TBLPROPERTIES ({keys})")
        assert not properties.keys() & table_properties(spark, name).keys()
    model.refresh(DAY2)
    for name in earlier:
        held = table_properties(spark, name)
        assert BOOKKEEPING_LOG_PROPERTIES.items() <= held.items(), (name, held)
    state = table_properties(spark, model.tables.state)
    assert state.get(OWNER_PROPERTY) == model.tables.display.lower(), state
    assert model.main() == sorted(DAY2) and model.state().phase == "IDLE"


def test_a_configured_bookkeeping_schema_is_created_and_used(spark):
    schema = "refreshable_engine_own_bookkeeping"
    model = EngineModel(spark, "id INT, value STRING", unique_key="id", bookkeeping_schema=schema)
    model.refresh(DAY1)
    assert model.tables.bookkeeping == schema
    assert bookkeeping_of(model.tables) <= tables_in(spark, schema) | {
        model.tables.identifiers()["changes"]
    }
    assert model.state().phase == "IDLE" and model.main() == sorted(DAY1)

    # a model of the same name in another schema, with the same bookkeeping schema, would
    # share the first one's lock and record of its last snapshot: refused, nothing written
    other_schema = "refreshable_engine_other"
    spark.sql(f"CREATE SCHEMA IF NOT EXISTS {other_schema}")
    other = EngineModel(spark, "id INT, value STRING", unique_key="id", bookkeeping_schema=schema)
    other.tables = ModelTables(other_schema, model.tables.identifier, schema)
    state_version = model.table_version("state")
    with pytest.raises(ConfigError, match=f"holds the refresh state of the model {SCHEMA}"):
        other.refresh(DAY3)
    assert not table_exists(spark, other.tables.main)
    assert model.table_version("state") == state_version
    model.refresh(DAY2)
    assert model.main() == sorted(DAY2)


@pytest.mark.parametrize("beside_main", [False, pytest.param(True, marks=pytest.mark.extended)])
def test_another_models_bookkeeping_table_is_never_taken_for_main(spark, beside_main):
    """A model whose main has the name of another model's bookkeeping table: a model
    `<m>__staging` in the schema `<schema>_refreshable` (where dbt puts a model configured
    schema='refreshable'), or beside `<m>` when their bookkeeping_schema is their schema. Each
    run of it, --full-refresh too, is refused before anything is written, where it once
    merged its rows into the other model's staging (and the other's next load replaced them)."""
    layout = {"bookkeeping_schema": SCHEMA} if beside_main else {}
    owner = EngineModel(spark, "id INT, value STRING", unique_key="id", **layout)
    owner.refresh(DAY1)
    present = ("staging", "progress", "state")
    held = {role: (owner.table_version(role), rows(spark, owner, role)) for role in present}
    for role in present:
        intruder = EngineModel(spark, "id INT, value STRING", unique_key="id", **layout)
        intruder.tables = ModelTables(
            owner.tables.bookkeeping,
            owner.tables.identifiers()[role],
            layout.get("bookkeeping_schema"),
        )
        for full_refresh in (False, True):
            with pytest.raises(ConfigError, match=f"the {role} table of the model") as refused:
                intruder.refresh(DAY3, full_refresh=full_refresh)
            assert "Nothing was changed" in str(refused.value)
        assert not table_exists(spark, intruder.tables.state)
    assert {role: (owner.table_version(role), rows(spark, owner, role)) for role in present} == held
    result = owner.refresh(DAY2)
    assert owner.main() == sorted(DAY2) and not result.diff_read_main  # staging kept its rows


def rows(spark, model: EngineModel, role: str) -> list[tuple]:
    return sorted(map(tuple, spark.table(model.tables.role_name(role)).collect()), key=repr)


@pytest.mark.parametrize("value", ["", "a-b", "x.y", 3])
def test_a_bad_bookkeeping_schema_is_refused_before_anything_runs(spark, value):
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    with pytest.raises(ConfigError, match="bookkeeping_schema must be a schema name"):
        model.refresh(DAY1, bookkeeping_schema=value)
    assert not table_exists(spark, model.tables.main)


def test_bookkeeping_beside_main_is_moved_by_the_next_run(spark):
    model, old = built_beside_main(spark)
    model.refresh(DAY2)
    assert not bookkeeping_of(old) & tables_in(spark, SCHEMA), "the old tables are dropped"
    assert model.main() == sorted(DAY2)
    assert model.state().phase == "IDLE" and model.state().last_rows == len(DAY2)
    model.refresh(DAY3)
    assert model.main() == sorted(DAY3)


@pytest.mark.extended  # an upgrade from an earlier layout, once per table: `make test-all`
def test_a_cycle_left_mid_merge_beside_main_is_given_up_and_main_still_ends_right(spark):
    model, old = built_beside_main(spark)
    with injected("chunk_done@1:raise"), pytest.raises(InjectedFault):
        model.refresh(DAY2, bookkeeping_schema=SCHEMA, merge_chunk_rows=10)
    left = model.main()
    assert left != sorted(DAY1) and left != sorted(DAY2), "main is mid-merge"
    model.refresh(DAY3)
    assert model.main() == sorted(DAY3)
    assert not table_exists(spark, old.state)


def test_a_live_owner_of_the_old_tables_keeps_them(spark):
    model, old = built_beside_main(spark)
    holder = Lease(spark, old.state, Owner.this_process("another run"), 300)
    holder.acquire()
    try:
        with pytest.raises(LockHeldError):
            model.refresh(DAY2)
        assert table_exists(spark, old.state) and table_exists(spark, old.staging)
        assert model.main() == sorted(DAY1)
    finally:
        holder.forget()
