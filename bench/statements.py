"""Where a refresh cycle's time goes, statement by statement: runs a few engine cycles on a
small model in this process (the `local` target's Spark settings) with Spark's event log on,
then prints each cycle's top-level Spark SQL executions (what the engine asked for; Delta's
own nested jobs are counted in their parent), grouped by kind, with their count and seconds.

    python bench/statements.py [--rows 40]

A cycle at this size is nothing but fixed per-statement costs: the table says which
statements to cut (see README, Benchmark)."""

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
from dbt.adapters.spark_refreshable.engine.refresh import run_refresh
from dbt.adapters.spark_refreshable.environments import for_credentials

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.spark_profile import render_target

SCHEMA = "refreshable_statements"


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


def cycles(spark: Any, rows: int) -> list[tuple[str, float, float, dict[str, Any]]]:
    """Refresh one model through a first build, a change and an unchanged snapshot (twice
    over: the first round warms the JVM up). Each cycle's name, start, end (ms) and result."""
    spark.sql(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    first = [(i, f"one {i}") for i in range(rows)]
    changed = [(i, f"two {i}" if i % 2 else f"one {i}") for i in range(rows // 4, rows * 3 // 2)]
    marks = []
    for model in ("warm_up", "measured"):
        request = {"schema": SCHEMA, "identifier": model, "config": {"unique_key": "id"}}
        for name, snapshot in (("build", first), ("change", changed), ("no change", changed)):
            started = time.time() * 1000
            result = run_refresh(
                spark, request, lambda s=snapshot: spark.createDataFrame(s, "id INT, value STRING")
            )
            marks.append((f"{model}: {name}", started, time.time() * 1000, result))
    return marks


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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="refreshable-statements-") as folder:
        spark = session(Path(folder))
        marks = cycles(spark, args.rows)
        spark.stop()
        found = executions(Path(folder) / "events")
    for name, begin, end, result in marks:
        if name.startswith("warm_up"):
            continue
        mine = [(s, kind) for t, s, kind in found if begin <= t <= end]
        split = " / ".join(
            f"{step} {result.get(f'seconds_{step}', 0):.1f}"
            for step in ("load", "diff", "fetch", "merge", "bookkeeping")
        )
        print(f"\n{name}: {(end - begin) / 1000:.1f} s wall, {len(mine)} statements; {split}")
        by_kind: dict[str, list[float]] = collections.defaultdict(list)
        for seconds, kind in mine:
            by_kind[kind].append(seconds)
        print("| statement | count | seconds |\n| --- | ---: | ---: |")
        for kind, times in sorted(by_kind.items(), key=lambda item: -sum(item[1])):
            print(f"| {kind} | {len(times)} | {sum(times):.2f} |")


if __name__ == "__main__":
    main()
