"""What one commit to a one-row Delta table costs, by kind, in seconds and Spark jobs: the
engine's state change (a blind append, whose winner its table's log decides: see
``engine/state_log.py``) against the alternatives, on the `local` target's session.
Also checks that an append with ``txnAppId``/``txnVersion`` (the engine's state change
before 2026-12) behaves as a compare-and-set.

    python bench/commits.py [--commits 8]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dbt.adapters.spark_refreshable.connections import SparkRefreshableCredentials
from dbt.adapters.spark_refreshable.engine.commits import table_version
from dbt.adapters.spark_refreshable.environments import for_credentials

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.spark_profile import render_target

TABLE = "refreshable_commits.state"
COLUMNS = "lease_version BIGINT, owner STRING"
CHECKSUM = "spark.databricks.delta.writeChecksumFile.enabled"


def session(folder: Path) -> Any:
    target = render_target(folder, threads=1)
    fields = {k: v for k, v in target.items() if k not in ("type", "threads")}
    return for_credentials(SparkRefreshableCredentials.from_dict(fields)).base_session()


def write(spark: Any, mode: str, lease_version: int, owner: str, app_id: str | None) -> None:
    frame = spark.createDataFrame([(lease_version, owner)], COLUMNS)
    writer = frame.write.format("delta").mode(mode)
    if app_id is not None:
        writer = writer.option("txnAppId", app_id).option("txnVersion", lease_version)
    writer.saveAsTable(TABLE)


def seconds_each(spark: Any, commit: Callable[[int], Any], commits: int) -> tuple[float, float]:
    """Seconds and Spark jobs per commit, after one commit of warm-up. A commit that reads
    its table's ``SetTransaction``s (``txnAppId``) starts Delta's state reconstruction, a
    job of its own (Delta 4.4 does not read them from the checksum file)."""
    commit(0)  # warm-up
    context = spark.sparkContext
    group = f"refreshable-commits-{id(commit)}"
    context.setJobGroup(group, group)
    started = time.monotonic()
    for i in range(1, commits + 1):
        commit(i)
    seconds = (time.monotonic() - started) / commits
    jobs = len(context.statusTracker().getJobIdsForGroup(group)) / commits
    context.setJobGroup("", "")
    return seconds, jobs


def check_compare_and_set(spark: Any) -> None:
    """Appends as a compare-and-set on the lease version: a stale writer commits nothing, and
    of two writers expecting the same version exactly one commits."""
    app_id = "lease-check"
    write(spark, "append", 1, "first", app_id)
    before = table_version(spark, TABLE)
    write(spark, "append", 1, "stale", app_id)
    print(f"a stale writer committed nothing: {table_version(spark, TABLE) == before}")
    outcomes: dict[str, str] = {}

    def race(owner: str) -> None:
        try:
            write(spark, "append", 2, owner, app_id)
            outcomes[owner] = "committed"
        except Exception as error:  # the loser: Delta's conflict, named in the Java trace
            conflict = "ConcurrentTransactionException"
            outcomes[owner] = conflict if conflict in str(error) else type(error).__name__

    racers = [threading.Thread(target=race, args=(owner,)) for owner in ("a", "b")]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    print(f"two writers expecting the same version: {outcomes}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=8, help="commits timed per kind")
    n = parser.parse_args().commits
    with tempfile.TemporaryDirectory(prefix="refreshable-commits-") as folder:
        spark = session(Path(folder))
        spark.sql("CREATE SCHEMA IF NOT EXISTS refreshable_commits")
        spark.sql(
            f"CREATE TABLE {TABLE} ({COLUMNS}) USING delta "
            f"TBLPROPERTIES ('delta.enableDeletionVectors' = 'false')"
        )
        spark.sql(f"INSERT INTO {TABLE} VALUES (0, NULL)")
        update = f"UPDATE {TABLE} SET owner = 'me' WHERE lease_version = 0"
        merge = (
            f"MERGE INTO {TABLE} t USING (SELECT CAST({{}} AS BIGINT) AS lease_version, 'me' "
            f"AS owner) s ON t.lease_version >= s.lease_version WHEN NOT MATCHED THEN INSERT *"
        )
        kinds: list[tuple[str, Callable[[int], Any]]] = [
            ("UPDATE ... WHERE lease_version = v", lambda i: spark.sql(update).collect()),
            ("overwrite with txnAppId", lambda i: write(spark, "overwrite", 100 + i, "me", "o")),
            ("append with txnAppId", lambda i: write(spark, "append", 100 + i, "me", "a")),
            ("blind append", lambda i: write(spark, "append", 0, "me", None)),
            ("MERGE inserting v where none >= v", lambda i: spark.sql(merge.format(10**6 + i))),
        ]
        print("| commit | seconds each | Spark jobs each |\n| --- | ---: | ---: |")
        for name, commit in kinds:
            seconds, jobs = seconds_each(spark, commit, n)
            print(f"| {name} | {seconds:.2f} | {jobs:.1f} |", flush=True)
        spark.conf.set(CHECKSUM, "false")
        seconds, jobs = seconds_each(spark, kinds[0][1], n)
        print(f"| UPDATE, {CHECKSUM}=false | {seconds:.2f} | {jobs:.1f} |")
        spark.conf.unset(CHECKSUM)
        check_compare_and_set(spark)
        spark.stop()


if __name__ == "__main__":
    main()
