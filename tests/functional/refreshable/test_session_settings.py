"""The engine does not depend on the settings a session happens to carry: other models may
set dbt-spark's insert_overwrite conf (dynamic partition overwrite) on the same session, and a
profile may set defaults for new Delta tables. One it cannot work under is refused."""

import pytest

from dbt.adapters.spark_refreshable.engine.errors import ConfigError
from tests.functional.refreshable.engine_harness import EngineModel
from tests.support.profiles import WORKER_JVM_OPTIONS


def test_refresh_with_dynamic_partition_overwrite_set_on_the_session(spark):
    session = spark.newSession()
    session.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    model = EngineModel(session, "id INT, value STRING", unique_key="id")
    model.refresh([(1, "a"), (2, "b")])
    model.refresh([(2, "B")])
    assert model.main() == [(2, "B")]
    assert session.table(model.tables.staging).count() == 1, "staging holds the last snapshot only"


@pytest.mark.parametrize(
    "default",
    ["enableChangeDataFeed", "appendOnly"],
)
def test_refresh_with_table_defaults_set_on_the_session(spark, default):
    """A session's defaults for new Delta tables (a change data feed on every table, or
    append-only tables) reach the engine's own tables: staging is replaced every cycle and
    main and the state have rows updated and deleted."""
    session = spark.newSession()
    session.conf.set(f"spark.databricks.delta.properties.defaults.{default}", "true")
    model = EngineModel(session, "id INT, value STRING", unique_key="id")
    model.refresh([(1, "a"), (2, "b"), (3, "c")])
    model.refresh([(2, "B"), (3, "c"), (4, "d")])
    model.refresh([(3, "C"), (5, "e")])
    assert model.main() == [(3, "C"), (5, "e")]


@pytest.mark.parametrize(
    "setting", ["spark.sql.parser.escapedStringLiterals", "spark.sql.parser.quotedRegexColumnNames"]
)
def test_a_session_reading_sql_text_otherwise_is_refused(spark, setting):
    """Under Spark 1.x's string literals (backslashes kept) the engine could not write a
    quote, a backslash or `${` in the SQL literals of its state, comments and properties (a
    plan naming a column `it's` unreadable); with quoted column names read as regular
    expressions its statements failed (`a.b` an invalid regex in `isnull`) or could select
    other columns. Refused before anything is written, naming the setting."""
    session = spark.newSession()
    session.conf.set(setting, "true")
    model = EngineModel(session, "id INT, `it's` STRING, `a.b` STRING", unique_key="id")
    with pytest.raises(ConfigError, match=f"{setting}=true .*Set {setting} to false"):
        model.refresh([(1, "a", "b")])
    assert not session.catalog.tableExists(model.tables.main), "nothing was written"


def test_the_workers_driver_runs_the_suites_jvm_options(spark):
    """The collector of every JVM the suite starts, and the JIT thresholds of the pytest
    processes' own long-lived drivers (tests/support/profiles.py), reach the real JVM."""
    runtime = spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    arguments = set(runtime.getInputArguments())
    missing = {"-XX:+UseParallelGC", *WORKER_JVM_OPTIONS} - arguments
    assert not missing, f"the driver runs without {sorted(missing)}: {sorted(arguments)}"
