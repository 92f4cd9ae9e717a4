"""Delta idempotent writes on this stack: the basis for fencing a stale owner's commits.

Probes `spark.databricks.delta.write.txnAppId` / `txnVersion` with `MERGE INTO`: a write
whose (appId, version) is not above the latest recorded for that appId must add no commit.
"""

from uuid import uuid4

APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"


def _commits(spark, table: str) -> int:
    return spark.sql(f"DESCRIBE HISTORY {table}").count()


UPSERT = "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"
# a chunk of inserts alone merges with this clause alone (merge.merge_sql), which Delta runs
# by another executor than a MERGE with a matched clause
INSERT_ONLY = "WHEN NOT MATCHED THEN INSERT *"


def _merge(
    spark, table: str, app_id: str, version: int, value: int, clauses: str = UPSERT, key: int = 1
) -> None:
    spark.conf.set(APP_ID, app_id)
    spark.conf.set(TXN_VERSION, str(version))
    try:
        spark.sql(
            f"MERGE INTO {table} t USING (SELECT {key} AS k, {value} AS v) s ON t.k = s.k "
            + clauses
        )
    finally:
        spark.conf.unset(APP_ID)
        spark.conf.unset(TXN_VERSION)


def test_merge_with_stale_txn_version_commits_nothing(spark):
    table = f"txn_probe_{uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} (k INT, v INT) USING delta")
    base = _commits(spark, table)
    _merge(spark, table, "main-x", 5, 1)
    assert _commits(spark, table) == base + 1
    _merge(spark, table, "main-x", 5, 2)  # same version: a retry
    _merge(spark, table, "main-x", 3, 3)  # older owner
    assert _commits(spark, table) == base + 1
    assert spark.sql(f"SELECT v FROM {table}").collect()[0][0] == 1
    _merge(spark, table, "main-x", 6, 4)  # newer version commits
    assert _commits(spark, table) == base + 2
    assert spark.sql(f"SELECT v FROM {table}").collect()[0][0] == 4


def test_an_insert_only_merge_with_stale_txn_version_commits_nothing(spark):
    table = f"txn_probe_{uuid4().hex[:8]}"
    spark.sql(f"CREATE TABLE {table} (k INT, v INT) USING delta")
    base = _commits(spark, table)
    _merge(spark, table, "main-y", 5, 1, INSERT_ONLY, key=1)
    assert _commits(spark, table) == base + 1
    _merge(spark, table, "main-y", 5, 2, INSERT_ONLY, key=2)  # same version: a retry
    _merge(spark, table, "main-y", 3, 3, INSERT_ONLY, key=3)  # older owner
    assert _commits(spark, table) == base + 1
    assert spark.sql(f"SELECT k, v FROM {table}").collect() == [(1, 1)]
    _merge(spark, table, "main-y", 6, 4, INSERT_ONLY, key=4)  # newer version commits
    assert _commits(spark, table) == base + 2
    assert sorted(spark.sql(f"SELECT k, v FROM {table}").collect()) == [(1, 1), (4, 4)]
