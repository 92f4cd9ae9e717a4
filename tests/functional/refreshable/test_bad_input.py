"""Bad input gets a clear error, main is untouched, the state stays consistent, and the
next good run succeeds."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest

from dbt.adapters.spark_refreshable.engine.errors import (
    ConfigError,
    SchemaChangeError,
    SnapshotRejectedError,
)
from dbt.adapters.spark_refreshable.engine.load import DATE_REBASE_CONF
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.tables import table_exists
from tests.functional.refreshable.engine_harness import EngineModel

GOOD = [(i, f"v{i}", float(i)) for i in range(10)]


def good_model(spark) -> EngineModel:
    model = EngineModel(spark, "id INT, value STRING, score DOUBLE", unique_key="id")
    model.refresh(GOOD)
    return model


@pytest.fixture
def model(spark):
    return good_model(spark)


@pytest.fixture(scope="module")
def refusing_model(spark):
    """One model for the tests whose bad input is refused before anything is written: each
    proves main and the state untouched, so the next one starts from the same model."""
    return good_model(spark)


def assert_untouched_and_idle(model, version):
    assert model.version() == version, "main was not written"
    assert model.main() == sorted(GOOD)
    state = model.state()
    assert state.phase == "IDLE" and state.owner_id is None and state.refresh_id is None


def test_each_bad_snapshot_is_refused_with_main_untouched(model):
    version = model.version()
    cases = [
        (
            GOOD + [(3, "again", 3.0), (3, "thrice", 3.0)],
            {},
            SnapshotRejectedError,
            r"duplicate unique_key \['id'\] values, e\.g\. id=3 \(3 rows\)",
        ),
        (
            GOOD + [(None, "no key", 0.0)],
            {},
            SnapshotRejectedError,
            r"1 row\(s\) with a NULL in unique_key.*'value': 'no key'",
        ),
        (
            [],
            {},
            SnapshotRejectedError,
            r"empty and would delete all 10 rows.*allow_empty_snapshot",
        ),
        (
            GOOD[:4],
            {"max_delete_fraction": 0.5},
            SnapshotRejectedError,
            r"would delete 6 of 10 rows .*60\.0%.*max_delete_fraction=0\.5",
        ),
    ]
    for rows, config, error, message in cases:
        with pytest.raises(error, match=message):
            model.refresh(rows, **config)
        assert_untouched_and_idle(model, version)
    model.refresh(GOOD[:6], max_delete_fraction=0.5)
    assert model.main() == sorted(GOOD[:6]), "the next good run succeeds"


def test_an_empty_snapshot_is_allowed_when_asked(model):
    model.refresh([], allow_empty_snapshot=True)
    assert model.main() == []


def test_a_model_that_fails_mid_load_leaves_main_and_state_clean(model):
    def failing_snapshot():
        return model.spark.sql(
            "SELECT CAST(id AS INT) AS id, CAST(id AS STRING) AS value, CASE WHEN id = 7 "
            "THEN raise_error('boom in row 7') ELSE CAST(1 AS DOUBLE) END AS score FROM range(10)"
        )

    version = model.version()
    with pytest.raises(Exception, match="boom in row 7"):
        model.refresh(failing_snapshot)
    assert_untouched_and_idle(model, version)
    model.refresh(GOOD[1:])
    assert model.main() == sorted(GOOD[1:])


def test_a_missing_key_column_is_named(refusing_model):
    version = refusing_model.version()
    with pytest.raises(
        ConfigError, match=r"unique_key column\(s\) \['id'\] are not in the model's result"
    ):
        refusing_model.refresh(lambda: refusing_model.spark.sql("SELECT 1 AS other"))
    assert_untouched_and_idle(refusing_model, version)


def test_a_pandas_frame_whose_types_cannot_be_inferred_is_refused(refusing_model):
    import pandas

    version = refusing_model.version()
    empty = pandas.DataFrame({"id": pandas.Series([], dtype="int64"), "value": []})
    with pytest.raises(ConfigError, match=r"CANNOT_INFER_EMPTY_SCHEMA.*createDataFrame\(df"):
        refusing_model.refresh(lambda: empty)
    assert_untouched_and_idle(refusing_model, version)


@pytest.mark.parametrize(
    "select, message",
    [
        ("INTERVAL '3' DAY AS value", r"`value` is INTERVAL DAY, which Delta tables cannot store"),
        ("'x' COLLATE UTF8_LCASE AS value", r"`value` is STRING COLLATE UTF8_LCASE.*UTF8_BINARY"),
        ("TIME'12:00:00' AS value", r"`value` is TIME\(6\).*CAST\(c AS STRING\)"),
        ("array(named_struct('a', 1, 'A', 2)) AS value", r"`value\[\]` is a struct.*\['a', 'A'\]"),
        ("1 AS value, 2 AS value", r"more than one column of one name.*\[\['value', 'value'\]\]"),
        ("1 AS value, 2 AS VALUE", r"more than one column of one name.*\[\['value', 'VALUE'\]\]"),
        ("named_struct('a', 1, 'a', 2) AS value", r"`value` is a struct.*\['a', 'a'\]"),
        ("NULL AS value", r"`value` is VOID .*CAST\(NULL AS STRING\)"),
        ("named_struct('a', array()) AS value", r"`value.a\[\]` is VOID"),
        ("array(CAST(NULL AS STRUCT<>)) AS value", r"`value\[\]` is a STRUCT without fields"),
        ("map('k', 1) AS id", r"unique_key `id` contains a MAP"),
        ("named_struct('m', map(1, 2)) AS id", r"unique_key `id.m` contains a MAP"),
        ("parse_json('1') AS id", r"unique_key `id` is VARIANT.*variant_get"),
        ("named_struct('v', parse_json('1')) AS id", r"unique_key `id.v` is VARIANT"),
    ],
)
def test_columns_a_table_cannot_hold_are_named_before_anything_is_written(
    refusing_model, select, message
):
    version = refusing_model.version()
    key = "" if " AS id" in select else "id, "
    with pytest.raises(ConfigError, match=message):
        refusing_model.refresh(
            lambda: refusing_model.spark.sql(f"SELECT {key}{select} FROM range(3)")
        )
    assert_untouched_and_idle(refusing_model, version)


def test_a_key_named_with_spaces_at_its_ends_is_quoted_in_backticks(spark):
    model = EngineModel(spark, "` id ` INT, `v` STRING", unique_key="` id `")
    model.refresh([(1, "a"), (2, "b")])
    model.refresh([(2, "B"), (3, "c")])
    assert model.main() == [(2, "B"), (3, "c")]
    with pytest.raises(ConfigError, match=r"\['id'\] are not in.*between backticks"):
        EngineModel(spark, "` id ` INT, `v` STRING", unique_key=" id ").refresh([(1, "a")])


def test_schema_changes_follow_on_schema_change(spark):
    model = EngineModel(spark, "id INT, value STRING, old STRING", unique_key="id")
    model.refresh([(1, "a", "x"), (2, "b", "y")])
    model.ddl = "id INT, value STRING, new DOUBLE"
    changed = [(1, "a", 1.0), (2, "B", 2.0), (3, "c", None)]
    version = model.version()
    with pytest.raises(SchemaChangeError, match=r"added \['new'\], removed \['old'\]"):
        model.refresh(changed, on_schema_change="fail")
    assert model.version() == version and model.state().phase == "IDLE"

    model.refresh(changed, on_schema_change="ignore")
    assert model.main() == [(1, "a", "x"), (2, "B", "y"), (3, "c", None)]

    model.refresh(changed, on_schema_change="append_new_columns")
    columns = spark.table(model.tables.main).columns
    assert columns == ["id", "value", "old", "new"]
    assert model.main() == [(1, "a", "x", 1.0), (2, "B", "y", 2.0), (3, "c", None, None)]

    model.refresh(changed, on_schema_change="sync_all_columns")
    assert spark.table(model.tables.main).columns == ["id", "value", "new"]
    assert model.main() == sorted(changed)

    model.ddl = "id BIGINT, value STRING, new DOUBLE"
    with pytest.raises(SchemaChangeError, match=r"id \(int -> bigint\)"):
        model.refresh(changed)
    assert model.main() == sorted(changed)


@pytest.mark.parametrize(
    "identifier",
    [
        "orders v2",
        "orders`v2",  # Spark fails wording its error about this name (another condition)
        *(pytest.param(i, marks=pytest.mark.extended) for i in ("orders-v2", "ordérs")),
    ],
)
def test_a_name_the_catalog_refuses_is_refused_with_the_way_out(spark, identifier):
    """Spark's session catalog takes table names of letters, digits and _ only (as for a
    `table` model): the alias is named, with what to change, and nothing is created."""
    model = EngineModel(spark, "id INT", unique_key="id")
    model.tables = ModelTables(model.tables.schema, identifier)
    with pytest.raises(ConfigError, match=r"Give the model an `alias` \(and `schema`\)") as refused:
        model.refresh([(1,)])
    assert identifier in str(refused.value) and "No table was created" in str(refused.value)
    roles = ("main", "staging", "changes", "progress", "state")
    assert not any(table_exists(spark, getattr(model.tables, role)) for role in roles)


def test_an_alias_as_long_as_a_file_name_allows_refreshes(spark):
    """Main's name may take all of a file name's 255 bytes; its bookkeeping tables, whose
    names are longer, take a shortened one (start and hash): it failed creating the state
    table's folder."""
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    model.tables = ModelTables(model.tables.schema, model.tables.identifier.ljust(250, "x"))
    model.refresh([(1, "a"), (2, "b")])
    model.refresh([(2, "c"), (3, "d")])
    assert model.main() == [(2, "c"), (3, "d")]
    assert model.state().phase == "IDLE"


@pytest.mark.parametrize(
    "create, refused",
    [
        ("CREATE TABLE {main} (id INT, value STRING) USING parquet", r"is a parquet table.*--full"),
        ("CREATE VIEW {main} AS SELECT 1 AS id, 'a' AS value", r"is a view.*DROP VIEW"),
    ],
    ids=["parquet", "view"],
)
def test_a_main_that_is_not_a_delta_table_is_refused_and_kept(spark, create, refused):
    """A table of another format, or a view, already named as main: the run says what it is
    and changes nothing; for a table, --full-refresh rebuilds it as Delta."""
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    main = model.tables.main
    spark.sql(create.format(main=main))
    with pytest.raises(ConfigError, match=refused):
        model.refresh([(1, "a"), (2, "b")])
    assert spark.sql(f"SELECT * FROM {main}").collect() == (
        [] if "parquet" in create else [(1, "a")]
    )
    assert not table_exists(spark, model.tables.staging)
    if "parquet" in create:
        model.refresh([(1, "a"), (2, "b")], full_refresh=True)
        assert sorted(spark.table(main).collect()) == [(1, "a"), (2, "b")]
        assert spark.sql(f"DESCRIBE DETAIL {main}").collect()[0]["format"] == "delta"


# staging's case takes the state's path (a bookkeeping table's claim): beyond the gate
@pytest.mark.parametrize(
    "role", ["main", pytest.param("staging", marks=pytest.mark.extended), "state"]
)
def test_a_table_whose_files_are_gone_is_named_and_full_refresh_rebuilds(spark, role):
    """The catalog still lists a table of the model whose directory was deleted: a run says
    which and that --full-refresh repairs it (it cannot be read, nor its lease taken);
    --full-refresh drops every table of the model and rebuilds main."""
    model = EngineModel(spark, "id INT, value STRING", unique_key="id")
    model.refresh([(1, "a"), (2, "b")])
    name = model.tables.role_name(role)
    location = spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["location"]
    shutil.rmtree(location.removeprefix("file:"))
    display = model.tables.role_display(role)
    with pytest.raises(ConfigError, match=rf"{display} is in the catalog but its files are gone"):
        model.refresh([(1, "a"), (3, "c")])
    model.refresh([(1, "a"), (3, "c")], full_refresh=True)
    assert model.main() == [(1, "a"), (3, "c")]
    assert model.refresh([(1, "z"), (3, "c")]).rows_updated == 1


def test_dates_in_a_session_that_rebases_them_to_the_julian_calendar_are_refused(spark):
    """A session writing Parquet dates in LEGACY rebase mode wrote 1582-10-10 as 1582-10-15
    into staging and main alike, and the run succeeded (the proof compares the two). A
    snapshot holding dates, also nested, is refused before anything is written; one without
    dates refreshes; in Spark's default mode the gap's dates are main's as written."""
    model = EngineModel(spark, "id INT", unique_key="id")
    dated = [
        "SELECT 1 AS id, DATE'1582-10-10' AS d",
        "SELECT 1 AS id, array(named_struct('d', DATE'2020-01-01')) AS d",
    ]
    conf = DATE_REBASE_CONF
    spark.conf.set(conf, "LEGACY")
    try:
        for select in dated:
            with pytest.raises(ConfigError, match=f"{conf} = LEGACY.*CORRECTED"):
                model.refresh(select)
            assert not table_exists(spark, model.tables.main)
            assert not table_exists(spark, model.tables.staging)
        undated = EngineModel(spark, "id INT", unique_key="id")
        undated.refresh("SELECT 1 AS id, TIMESTAMP'2020-01-01 00:00:00' AS t")
        assert len(undated.main()) == 1
    finally:
        spark.conf.unset(conf)
    model.refresh(dated[0])
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM {model.tables.main}").collect()] == [
        (1, dt.date(1582, 10, 10))
    ]
