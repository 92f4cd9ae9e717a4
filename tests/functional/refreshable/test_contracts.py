"""An enforced contract's constraints (issue 11), through the engine: every snapshot is
checked against them before main is touched, and main carries them as Delta CHECK
constraints after a refresh, a second one and a resumed one, following the contract as it
changes. (The dbt side, the contract's columns and types, is in test_materialization.)"""

from __future__ import annotations

import pytest

from dbt.adapters.spark_refreshable.engine.errors import (
    ConfigError,
    InjectedFault,
    SnapshotRejectedError,
)
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from tests.functional.refreshable.engine_harness import SCHEMA, EngineModel
from tests.support.faults import injected

DDL = "id INT, v STRING, d DOUBLE"
CONSTRAINTS = [["not_null_v", "`v` IS NOT NULL"], ["d_not_negative", "d >= 0"]]


def rows(day: int) -> list[tuple]:
    return [(i, f"v{i * day}", float(i + day)) for i in range(day, day + 6)]


def constraints_on(model: EngineModel) -> dict[str, str]:
    """Main's CHECK constraints, their expressions without spaces (Delta respells them)."""
    prefix = "delta.constraints."
    found = model.spark.sql(f"SHOW TBLPROPERTIES {model.tables.main}").collect()
    return {
        r["key"][len(prefix) :]: r["value"].replace(" ", "")
        for r in found
        if r["key"].startswith(prefix)
    }


def spelled(constraints: list[list[str]]) -> dict[str, str]:
    return {name: expression.replace(" ", "") for name, expression in constraints}


def test_main_carries_the_constraints_through_refreshes_and_a_resume(spark):
    model = EngineModel(spark, DDL, unique_key="id", constraints=CONSTRAINTS)
    model.refresh(rows(1))
    assert constraints_on(model) == spelled(CONSTRAINTS)
    model.refresh(rows(2))
    assert constraints_on(model) == spelled(CONSTRAINTS)

    with injected("chunk_done@1:raise"), pytest.raises(InjectedFault):
        model.refresh(rows(3), merge_chunk_rows=3)  # in chunks: one merged, then the crash
    assert model.refresh(rows(3)).resumed is True
    assert model.main() == sorted(rows(3))
    assert constraints_on(model) == spelled(CONSTRAINTS)
    with pytest.raises(Exception, match="d_not_negative"):  # Delta enforces them on main
        spark.sql(f"INSERT INTO {model.tables.main} VALUES (100, 'x', -1.0)")


@pytest.mark.parametrize(
    "snapshot, message",
    [
        (
            [(1, None, 1.0), (2, "b", 2.0)],
            r"1 row\(s\) that break the contract's constraint not_null_v",
        ),
        ([(1, "a", -1.0)], r"constraint d_not_negative \(d >= 0\), e.g. .*'d': -1.0"),
        ([(1, "a", None)], "constraint d_not_negative"),  # NULL breaks a CHECK in Delta
    ],
)
def test_a_snapshot_breaking_a_constraint_is_refused_before_main_is_touched(
    spark, snapshot, message
):
    model = EngineModel(spark, DDL, unique_key="id", constraints=CONSTRAINTS)
    model.refresh(rows(1))
    version = model.version()
    with pytest.raises(SnapshotRejectedError, match=message):
        model.refresh(snapshot)
    assert model.version() == version and model.main() == sorted(rows(1))
    assert model.state().phase == "IDLE"


def test_a_snapshot_breaking_a_users_own_constraint_is_refused_before_main_is_touched(spark):
    """A CHECK constraint added to main outside the contract holds through the merge too:
    a snapshot that breaks it is refused at load, with the way out, rather than by Delta in
    the middle of the chunks' MERGEs (some merged, the next failing)."""
    model = EngineModel(spark, DDL, unique_key="id")
    model.refresh(rows(1))
    spark.sql(f"ALTER TABLE {model.tables.main} ADD CONSTRAINT Small_D CHECK (d < 100)")
    version = model.version()
    breaking = [*rows(2)[:5], (7, "x", 500.0)]
    with pytest.raises(SnapshotRejectedError) as refused:
        model.refresh(breaking, merge_chunk_rows=2)
    message = str(refused.value)
    assert "1 row(s) that break the CHECK constraint small_d (d < 100)" in message, message
    assert "'d': 500.0" in message and "not in the model's contract" in message, message
    assert f"ALTER TABLE {model.tables.main} DROP CONSTRAINT `small_d`" in message, message
    assert model.version() == version and model.main() == sorted(rows(1))
    assert model.state().phase == "IDLE"

    spark.sql(f"ALTER TABLE {model.tables.main} DROP CONSTRAINT small_d")
    model.refresh(breaking, merge_chunk_rows=2)
    assert model.main() == sorted(breaking)


def test_a_users_constraint_on_a_column_only_main_has_is_left_to_delta(spark):
    """A snapshot without the column a user's constraint reads (main keeps it under
    on_schema_change 'ignore'): the constraint cannot be checked on the snapshot, and Delta
    enforces it on the merge as on any write."""
    model = EngineModel(spark, DDL, unique_key="id")
    model.refresh(rows(1))
    spark.sql(f"ALTER TABLE {model.tables.main} ADD CONSTRAINT v_not_bad CHECK (v <> 'bad')")
    model.ddl = "id INT, d DOUBLE"
    without_v = [(i, float(i)) for i in range(1, 4)]
    model.refresh(without_v, on_schema_change="ignore")
    assert model.main() == [(1, "v1", 1.0), (2, "v2", 2.0), (3, "v3", 3.0)]


def test_the_constraints_follow_the_contract_and_leave_a_users_own(spark):
    model = EngineModel(spark, DDL, unique_key="id", constraints=CONSTRAINTS)
    model.refresh(rows(1))
    spark.sql(f"ALTER TABLE {model.tables.main} ADD CONSTRAINT users_own CHECK (id >= 0)")
    version = model.version()
    model.refresh(rows(1))  # an unchanged contract and snapshot: no commit to main
    assert model.version() == version

    model.refresh(rows(2), constraints=[["d_not_negative", "d >= -10"]])
    assert constraints_on(model) == spelled(
        [["d_not_negative", "d >= -10"], ["users_own", "id >= 0"]]
    )

    # the contract no longer forbids a NULL v: such a snapshot goes through
    with_null = [(7, None, 1.0)]
    model.refresh(with_null, constraints=[])
    assert model.main() == with_null
    assert constraints_on(model) == {"users_own": "id>=0"}

    with pytest.raises(ConfigError, match="cannot be evaluated on the model's result"):
        model.refresh(rows(1), constraints=[["bad", "no_such_column > 0"]])
    # an expression that fails as it runs (ANSI mode) is the contract's error as well
    spark.conf.set("spark.sql.ansi.enabled", "true")
    try:
        with pytest.raises(ConfigError, match="DIVIDE_BY_ZERO"):
            model.refresh(rows(1), constraints=[["bad", "id / (id - id) > 0"]])
    finally:
        spark.conf.unset("spark.sql.ansi.enabled")
    assert model.main() == with_null


def test_properties_spark_redacts_are_read_as_written(spark):
    """SHOW TBLPROPERTIES hides every value whose key or value holds "url" (Spark's default
    spark.sql.redaction.options.regex): the state table's owner for a model named like
    `hourly`, the record of a contract constraint on a column `url`, a tblproperty
    `docs_url`. Each run must read them as written: no refusal, no failed constraint record,
    no commit to main to set a property it already has."""
    model = EngineModel(
        spark,
        "id INT, url STRING",
        unique_key="id",
        constraints=[["url_set", "url IS NOT NULL"]],
        tblproperties={"docs_url": "https://example.com/docs"},
    )
    model.tables = ModelTables(SCHEMA, f"hourly_{model.tables.identifier}")
    settings: list[int] = []
    for day in (1, 2, 3):
        rows = [(i, f"https://example.com/{day}/{i}") for i in range(day, day + 5)]
        model.refresh(rows)
        assert model.main() == sorted(rows)
        settings.append(sum(h["operation"] == "SET TBLPROPERTIES" for h in model.history()))
    assert settings[0] == settings[1] == settings[2], settings
