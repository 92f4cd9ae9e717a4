"""Where a refresh cycle's time goes, statement by statement: runs a few engine cycles on a
small model in this process (the `local` target's Spark settings) with Spark's event log on,
then prints each cycle's top-level Spark SQL executions (what the engine asked for; Delta's
own nested jobs are counted in their parent), grouped by kind, with their count and seconds.

    python bench/statements.py [--rows 40]
    python bench/statements.py --sf 1 [--longer-than 0.15]

A cycle at this size is nothing but fixed per-statement costs: the table says which
statements to cut (see README, Benchmark). With ``--sf``, the measured model is TPC-H's
lineitem at that scale factor instead (the benchmark's snapshots, generated if missing):
a first build, the 1% change of ``tpch_refresh`` and the same snapshot again; and
each cycle's statements longer than ``--longer-than`` seconds are listed in order, with
their start in the cycle, where the data work shows."""

from __future__ import annotations

import argparse
import collections
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dbt.adapters.spark_refreshable.connections import SparkRefreshableCredentials
from dbt.adapters.spark_refreshable.engine.job import RefreshResult
from dbt.adapters.spark_refreshable.engine.refresh import run_refresh
from dbt.adapters.spark_refreshable.environments import for_credentials

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import datagen
from bench.run import DATA
from scripts.spark_profile import render_target

SCHEMA = "refreshable_statements"
LINEITEM_KEY = ["l_orderkey", "l_linenumber"]


def session(folder: Path) -> Any:
    """The `local` target's session, with an uncompressed event log in ``folder``."""
    target = render_target(folder / "data", threads=1)
    target["server_side_parameters"] = {
        **target["server_side_parameters"],
        "spark.eventLog.enabled": "true",
        "spark.eventLog.compress": "false",
        "spark.eventLog.dir": (folder / "events").as_uri(),
    }
    (folder / "events").mkdir()
    fields = {k: v for k, v in target.items() if k not in ("type", "threads")}
    return for_credentials(SparkRefreshableCredentials.from_dict(fields)).base_session()


Mark = tuple[str, float, float, RefreshResult]  # a cycle's name, start, end (ms), result


def refresh(spark: Any, model: str, unique_key: Any, named: dict[str, Any]) -> list[Mark]:
    """Refresh ``model`` to each snapshot of ``named`` (name -> a function of a DataFrame)
    in turn."""
    request = {"schema": SCHEMA, "identifier": model, "config": {"unique_key": unique_key}}
    marks = []
    for name, snapshot in named.items():
        started = time.time() * 1000
        result = run_refresh(spark, request, snapshot)
        marks.append((f"{model}: {name}", started, time.time() * 1000, result))
    return marks


def cycles(spark: Any, rows: int, models: tuple[str, ...]) -> list[Mark]:
    """Refresh each of ``models`` through a first build, a change and an unchanged
    snapshot of ``rows`` rows."""
    spark.sql(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    first = [(i, f"one {i}") for i in range(rows)]
    changed = [(i, f"two {i}" if i % 2 else f"one {i}") for i in range(rows // 4, rows * 3 // 2)]

    def frame(snapshot: list[tuple[int, str]]) -> Any:
        return lambda: spark.createDataFrame(snapshot, "id INT, value STRING")

    named = {"build": frame(first), "change": frame(changed), "no change": frame(changed)}
    return [mark for model in models for mark in refresh(spark, model, "id", named)]


def lineitem_cycles(spark: Any, scale_factor: float) -> list[Mark]:
    """TPC-H lineitem at ``scale_factor``: built, changed by 1%, and that snapshot again."""
    snapshots = datagen.generate(scale_factor, DATA / f"sf{scale_factor}")

    def frame(name: str) -> Any:
        return lambda: spark.read.parquet(str(snapshots[name]))

    named = {
        "build": frame("base"),
        "change": frame("tpch_refresh"),
        "no change": frame("tpch_refresh"),
    }
    return refresh(spark, "measured", LINEITEM_KEY, named)


def executions(events: Path) -> list[tuple[float, float, str]]:
    """Top-level SQL executions: start (ms), seconds, kind (the engine's line for a collect,
    else the plan's first node)."""
    started: dict[int, tuple[float, str]] = {}
    found = []
    for file in sorted(p for p in events.rglob("events_*") if p.is_file()):
        for line in file.read_text().splitlines():
            event = json.loads(line)
            kind = event["Event"].rsplit(".", 1)[-1]
            if kind == "SparkListenerSQLExecutionStart":
                if event["executionId"] != event.get("rootExecutionId", event["executionId"]):
                    continue
                plan = event.get("physicalPlanDescription", "").split("\n")
                node = plan[1].split(" (")[0].lstrip("* ") if len(plan) > 1 else "?"
                where = event["description"]
                if where.startswith("collect at") and "engine/" in where:
                    node = f"{node} <- {where.rsplit('engine/', 1)[1]}"
                started[event["executionId"]] = (event["time"], node)
            elif kind == "SparkListenerSQLExecutionEnd" and event["executionId"] in started:
                begin, node = started.pop(event["executionId"])
                found.append((begin, (event["time"] - begin) / 1000, node))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=40, help="rows of the first snapshot")
    parser.add_argument("--sf", type=float, help="measure TPC-H lineitem at this scale factor")
    parser.add_argument(
        "--longer-than", type=float, default=0.15, help="with --sf: list statements over this"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="refreshable-statements-") as folder:
        spark = session(Path(folder))
        # the first round (a small model) warms the JVM up
        warm_up = cycles(spark, args.rows, ("warm_up",) if args.sf else ("warm_up", "measured"))
        marks = warm_up + (lineitem_cycles(spark, args.sf) if args.sf else [])
        spark.stop()
        found = executions(Path(folder) / "events")
    for name, begin, end, result in marks:
        if name.startswith("warm_up"):
            continue
        mine = [(t, s, kind) for t, s, kind in found if begin <= t <= end]
        split = " / ".join(
            f"{step} {getattr(result, f'seconds_{step}'):.1f}"
            for step in ("load", "diff", "fetch", "merge", "bookkeeping")
        )
        print(f"\n{name}: {(end - begin) / 1000:.1f} s wall, {len(mine)} statements; {split}")
        by_kind: dict[str, list[float]] = collections.defaultdict(list)
        for _, seconds, kind in mine:
            by_kind[kind].append(seconds)
        print("| statement | count | seconds |\n| --- | ---: | ---: |")
        for kind, times in sorted(by_kind.items(), key=lambda item: -sum(item[1])):
            print(f"| {kind} | {len(times)} | {sum(times):.2f} |")
        if args.sf:
            print("\n| at s | seconds | statement |\n| ---: | ---: | --- |")
            for at, seconds, kind in mine:
                if seconds > args.longer_than:
                    print(f"| {(at - begin) / 1000:.1f} | {seconds:.2f} | {kind} |")


if __name__ == "__main__":
    main()
