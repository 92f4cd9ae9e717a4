"""A table's version, id, properties and commits as the engine reads them from Delta's log in
the driver (``commits.latest_snapshot``, ``commits.recent_commits``) equal what DESCRIBE
HISTORY, DESCRIBE DETAIL and SHOW TBLPROPERTIES say, whatever the table's case and history;
where the log cannot tell (no such table, not Delta, files gone), the engine asks SQL and
fails as SQL does."""

import shutil
from pathlib import Path
from uuid import uuid4

import pytest
from pyspark.errors import AnalysisException

from dbt.adapters.spark_refreshable.engine import merge
from dbt.adapters.spark_refreshable.engine.commits import (
    ANSWER_CHARS,
    COMMIT_FIELDS,
    USER_METADATA_CONF,
    latest_snapshot,
    recent_commits,
    table_detail,
    table_id,
    table_version,
    written_by_newest_commit,
)
from dbt.adapters.spark_refreshable.engine.merge import MainHistory
from dbt.adapters.spark_refreshable.engine.naming import VNODE_COLUMN, ModelTables, quote
from dbt.adapters.spark_refreshable.engine.tables import (
    REDACTED,
    MainDetail,
    existing_table_properties,
    main_detail,
    replace_scratch_table,
    set_table_properties,
    table_properties,
)

# table names the session catalog takes (letters, digits and _ only): mixed case, a leading _
NAMES = ["plain", "MiXeD_Case", "_leading_9"]


def _by_sql(spark, name: str) -> tuple[int, str]:
    version = spark.sql(f"DESCRIBE HISTORY {name} LIMIT 1").collect()[0]["version"]
    return int(version), str(spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["id"])


@pytest.fixture(scope="module")
def schema(spark):
    name = f"versions_{uuid4().hex[:8]}"
    spark.sql(f"CREATE SCHEMA {name}")
    return name


@pytest.mark.parametrize("table", NAMES)
def test_version_and_id_from_the_log_equal_sqls_through_a_history(spark, schema, table):
    name = f"{quote(schema)}.{quote(table + '_' + uuid4().hex[:4])}"
    spark.sql(f"CREATE TABLE {name} (k INT, v STRING) USING delta")
    assert latest_snapshot(spark, name) is not None  # the log is read, not SQL asked
    seen = []
    for step in range(3):
        spark.sql(f"INSERT INTO {name} VALUES ({step}, 'x')")
        seen.append((table_version(spark, name), table_id(spark, name)))
        assert seen[-1] == _by_sql(spark, name)
    spark.sql(f"UPDATE {name} SET v = 'y' WHERE k = 1")
    assert (table_version(spark, name), table_id(spark, name)) == _by_sql(spark, name)
    # as a model's plan names it (its inputs): the session catalog's name first
    for catalog in ("spark_catalog", "`SPARK_CATALOG`"):
        qualified = f"{catalog}.{name}"
        assert latest_snapshot(spark, qualified) is not None
        assert (table_version(spark, qualified), table_id(spark, qualified)) == _by_sql(spark, name)
    spark.sql(f"DROP TABLE {name}")
    spark.sql(f"CREATE TABLE {name} USING delta AS SELECT 1 AS k")
    recreated = (table_version(spark, name), table_id(spark, name))
    assert recreated == _by_sql(spark, name)
    assert recreated[1] != seen[-1][1]  # another table under the same name


def test_mains_history_since_its_latest_version_is_empty(spark, schema):
    tables = ModelTables(schema, f"history_{uuid4().hex[:6]}")
    spark.sql(f"CREATE TABLE {tables.main} (k INT) USING delta")
    spark.sql(f"INSERT INTO {tables.main} VALUES (1)")
    latest = table_version(spark, tables.main)
    assert MainHistory.since(spark, tables, latest) == MainHistory(latest, [])
    spark.sql(f"INSERT INTO {tables.main} VALUES (2)")
    after = MainHistory.since(spark, tables, latest)
    assert after.latest == latest + 1
    assert [int(c["version"]) for c in after.commits] == [latest + 1]


def test_a_short_history_since_main_was_created_is_read_from_its_log(spark, schema, monkeypatch):
    """A cycle that created main (its diff saw none) reads every commit since: from the log,
    as DESCRIBE HISTORY lists them, with no Spark job; a longer history is asked of SQL."""
    tables = ModelTables(schema, f"created_{uuid4().hex[:6]}")
    spark.sql(f"CREATE TABLE {tables.main} (k INT) USING delta")
    for step in range(3):
        _insert_tagged(spark, tables.main, f"step {step}", f"({step})")
    expected = _history_by_sql(spark, tables.main, 10)
    asked, by_sql = [], merge.commits_in_history

    def commits_in_history(*args):
        asked.append(args)
        return by_sql(*args)

    monkeypatch.setattr(merge, "commits_in_history", commits_in_history)
    history = MainHistory.since(spark, tables, None)
    assert asked == []
    assert history.latest == 3
    assert [(int(c["version"]), c["userMetadata"]) for c in history.commits] == [
        (int(c["version"]), c["userMetadata"]) for c in expected
    ]
    assert [c["userMetadata"] for c in history.commits][:3] == ["step 2", "step 1", "step 0"]
    monkeypatch.setattr(merge, "HISTORY_WINDOW", 2)  # longer than the window: SQL is asked
    assert MainHistory.since(spark, tables, None) == history
    assert asked


def test_a_scratch_tables_replace_counts_the_rows_it_wrote(spark, schema):
    """Staging's row count from its commit, which decides whether the cycle sums staging
    before its diff: a count never read would sum it in every cycle."""
    name = f"{quote(schema)}.{quote('scratch_' + uuid4().hex[:6])}"
    for rows in (7, 0, 3):
        replace_scratch_table(spark.range(rows).selectExpr(f"id AS {VNODE_COLUMN}"), name)
        assert written_by_newest_commit(spark, name) == (table_version(spark, name), rows)
    spark.sql(f"DELETE FROM {name} WHERE {VNODE_COLUMN} = 0")  # a commit that writes no output rows
    assert written_by_newest_commit(spark, name) == (table_version(spark, name), None)


def _insert_tagged(spark, name: str, tag: str, values: str) -> None:
    """``INSERT INTO name VALUES values`` in a commit whose userMetadata is ``tag``."""
    spark.conf.set(USER_METADATA_CONF, tag)
    try:
        spark.sql(f"INSERT INTO {name} VALUES {values}")
    finally:
        spark.conf.unset(USER_METADATA_CONF)


def _history_by_sql(spark, name: str, limit: int) -> list[dict]:
    rows = spark.sql(f"DESCRIBE HISTORY {name} LIMIT {limit}").collect()
    return [{field: row[field] for field in COMMIT_FIELDS} for row in rows]


def test_commits_from_the_log_equal_describe_historys_and_its_own_after_a_cleanup(spark, schema):
    """Writes of every kind the engine reads back (tagged appends, a MERGE's metrics, DELETE,
    a property change); once Delta's log cleanup deleted commits, DESCRIBE HISTORY is asked."""
    name = f"{quote(schema)}.commits_{uuid4().hex[:6]}"
    spark.sql(f"CREATE TABLE {name} (k INT, v STRING) USING delta")
    for step in range(3):
        _insert_tagged(spark, name, f'tag {step} "quoted" 🙂', f"({step}, 'x')")
    spark.sql(
        f"MERGE INTO {name} t USING (SELECT 1 AS k, 'y' AS v UNION ALL SELECT 7, 'z') s "
        "ON t.k = s.k WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    spark.sql(f"DELETE FROM {name} WHERE k = 0")
    spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('delta.checkpointInterval' = '2')")
    latest = table_version(spark, name)
    jobs = spark.sparkContext.statusTracker().getJobIdsForGroup
    for limit in (1, 3, latest + 1, latest + 5):
        before = set(jobs(None))
        from_log = recent_commits(spark, name, limit)
        assert set(jobs(None)) == before  # read from the log: no Spark job
        assert from_log == _history_by_sql(spark, name, limit), limit
    merged = recent_commits(spark, name, 3)[-1]
    assert merged["operation"] == "MERGE"
    assert merged["operationMetrics"]["numTargetRowsInserted"] == "1"
    spark.sql(f"INSERT INTO {name} VALUES (9, 'w')")  # a checkpoint: the cleanup keeps its own
    location = spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["location"]
    for path in (Path(location.removeprefix("file:")) / "_delta_log").glob("*00001.json"):
        path.unlink()  # as the cleanup would
    limit = table_version(spark, name) + 1
    assert recent_commits(spark, name, limit) == _history_by_sql(spark, name, limit)
    assert 1 not in [c["version"] for c in recent_commits(spark, name, limit)]


def test_where_the_log_cannot_tell_sql_is_asked_and_fails_as_before(spark, schema, tmp_path):
    parquet = f"{quote(schema)}.parquet_{uuid4().hex[:6]}"
    spark.sql(f"CREATE TABLE {parquet} USING parquet AS SELECT 1 AS k")
    missing = f"{quote(schema)}.missing_{uuid4().hex[:6]}"
    gone = f"{quote(schema)}.gone_{uuid4().hex[:6]}"
    spark.sql(f"CREATE TABLE {gone} USING delta LOCATION '{tmp_path / 'gone'}' AS SELECT 1 k")
    shutil.rmtree(tmp_path / "gone")
    for name in (parquet, missing, gone):
        assert latest_snapshot(spark, name) is None, name
        with pytest.raises(AnalysisException):
            table_version(spark, name)


def test_properties_from_the_log_are_those_sql_lists_none_hidden(spark, schema):
    """SHOW TBLPROPERTIES hides values whose key matches the redaction regex ("url"); the
    log's do not, and otherwise list the same properties."""
    name = f"{quote(schema)}.props_{uuid4().hex[:6]}"
    spark.sql(
        f"CREATE TABLE {name} (k INT, url STRING) USING delta TBLPROPERTIES "
        "('dbt_refreshable.marker' = 'true', 'my.url' = 'https://x', 'quote''d' = 'a''b', "
        "'ünï.🦆' = '☃ \"q\" 🦆')"
    )
    spark.sql(f"ALTER TABLE {name} ADD CONSTRAINT url_set CHECK (url IS NOT NULL)")
    shown = {r["key"]: r["value"] for r in spark.sql(f"SHOW TBLPROPERTIES {name}").collect()}
    from_log = table_properties(spark, name)
    assert existing_table_properties(spark, name) == from_log
    hidden = {k for k, v in shown.items() if v == REDACTED}
    assert hidden  # the redaction this stands in for is on
    assert {k: v for k, v in from_log.items() if k not in hidden} == {
        k: v for k, v in shown.items() if k not in hidden
    }
    assert from_log["my.url"] == "https://x"
    assert from_log["quote'd"] == "a'b"
    assert from_log["ünï.🦆"] == '☃ "q" 🦆'
    assert from_log["delta.constraints.url_set"] == "url IS NOT NULL"
    assert existing_table_properties(spark, f"{quote(schema)}.none_{uuid4().hex[:6]}") is None


def test_values_longer_than_one_answer_of_the_jvm_are_read_whole(spark, schema):
    """A commit's tag and a property longer than what one Py4J answer carries (read in
    pieces, see ``commits.jvm_json``), with emoji, backslashes and quotes at every offset,
    so across the pieces' edges too."""
    name = f"{quote(schema)}.long_{uuid4().hex[:6]}"
    spark.sql(f"CREATE TABLE {name} (k INT) USING delta")
    unit = "ü\\\"🦆'x"
    text = (unit * (3 * ANSWER_CHARS))[: 3 * ANSWER_CHARS + 7]
    spark.conf.set(USER_METADATA_CONF, text)
    try:
        spark.sql(f"INSERT INTO {name} VALUES (1)")
    finally:
        spark.conf.unset(USER_METADATA_CONF)
    set_table_properties(spark, name, {"long.value": text[1:]})
    tagged = recent_commits(spark, name, 2)[1]  # the INSERT, before the property's commit
    assert tagged["userMetadata"] == text
    assert recent_commits(spark, name, 3) == _history_by_sql(spark, name, 3)
    assert table_properties(spark, name)["long.value"] == text[1:]


@pytest.mark.parametrize(
    "layout",
    [
        "",
        "PARTITIONED BY (p)",
        "CLUSTER BY (k, p)",
        "CLUSTER BY (k) TBLPROPERTIES ('delta.columnMapping.mode' = 'name')",
    ],
)
def test_mains_detail_from_the_log_is_describe_details(spark, schema, layout):
    """Main's id, location, layout, files and bytes as a cycle reads them from the log (the
    files from the version's checksum, without the Spark jobs that compute them) equal
    DESCRIBE DETAIL's, through writes, a renamed clustering column and a log without
    checksum files."""
    tables = ModelTables(schema, f"detail_{uuid4().hex[:6]}")
    spark.sql(f"CREATE TABLE {tables.main} (k INT, p STRING, v STRING) USING delta {layout}")

    def agree() -> MainDetail:
        from_log = main_detail(spark, tables)
        described = MainDetail.of_row(
            table_detail(spark, tables.main), table_version(spark, tables.main)
        )
        assert from_log == described
        return from_log

    for step in range(3):
        spark.sql(f"INSERT INTO {tables.main} VALUES ({step}, 'p{step % 2}', 'x')")
        assert agree().files == step + 1
    spark.sql(f"DELETE FROM {tables.main} WHERE k = 0")
    agree()
    spark.sql(f"ALTER TABLE {tables.main} ADD CONSTRAINT v_set CHECK (v IS NOT NULL)")
    assert agree().own_checks == {"v_set": "v IS NOT NULL"}
    if "columnMapping" in layout:
        spark.sql(f"ALTER TABLE {tables.main} RENAME COLUMN k TO k2")
        assert agree().clustering_columns == ["k2"]
    checksums = "spark.databricks.delta.writeChecksumFile.enabled"
    spark.conf.set(checksums, "false")
    try:
        spark.sql(f"INSERT INTO {tables.main} VALUES (9, 'p9', 'x')")
    finally:
        spark.conf.unset(checksums)
    spark._jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()  # read back from its files
    assert latest_snapshot(spark, tables.main).checksumOpt().isEmpty()  # files computed
    agree()
