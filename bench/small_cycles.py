"""The fixed cost of a refresh cycle: many small cycles in this process (the `local` target's
Spark settings), each changing 5 of 40 rows in one chunk; prints the mean and median wall time
of a cycle and its mean split (load, diff, fetch, merge, bookkeeping) after two warm-up cycles,
then the same of the first builds of as many new models of those 40 rows.

    python bench/small_cycles.py [--cycles 20] [--first-builds 8]

At this size a cycle is nothing but per-statement and per-commit costs, which every cycle
pays at any size, and which most of the test suite's time is made of. To compare two engines,
run it from each checkout (``PYTHONPATH=<checkout>/adapter_plugin``) one after the other."""

from __future__ import annotations

import argparse
import statistics
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

STEPS = ("load", "diff", "fetch", "merge", "bookkeeping")
WARM_UP = 2
CONFIG = {"unique_key": "id", "vnodes": 8}


def snapshot(spark: Any, cycle: int) -> Any:
    """40 rows, the 5 whose id + cycle is a multiple of 8 changed by the cycle."""
    rows = [(i, f"v{i}-{cycle}" if (i + cycle) % 8 == 0 else f"v{i}") for i in range(40)]
    return lambda: spark.createDataFrame(rows, "id INT, value STRING")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=20, help="cycles measured")
    parser.add_argument("--first-builds", type=int, default=8, help="first builds measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="refreshable-small-cycles-") as folder:
        target = render_target(Path(folder) / "data", threads=1)
        fields = {k: v for k, v in target.items() if k not in ("type", "threads")}
        spark = for_credentials(SparkRefreshableCredentials.from_dict(fields)).base_session()
        spark.sql("CREATE SCHEMA IF NOT EXISTS small_cycles")
        cycles = [("measured", cycle) for cycle in range(WARM_UP + args.cycles)]
        first_builds = [(f"first_build_{n}", 0) for n in range(args.first_builds)]
        measured = [measure(spark, name, cycle) for name, cycle in cycles + first_builds]
        spark.stop()
    report(f"{args.cycles} cycles", measured[WARM_UP : len(cycles)])
    report(f"{args.first_builds} first builds", measured[len(cycles) :])


def measure(spark: Any, model: str, cycle: int) -> tuple[float, list[float]]:
    """One refresh of ``model`` to the snapshot of ``cycle``: its wall time and split."""
    request = {"schema": "small_cycles", "identifier": model, "config": CONFIG}
    started = time.monotonic()
    result = run_refresh(spark, request, snapshot(spark, cycle))
    return time.monotonic() - started, [getattr(result, f"seconds_{step}") for step in STEPS]


def report(what: str, measured: list[tuple[float, list[float]]]) -> None:
    if not measured:
        return
    walls = [wall for wall, _ in measured]
    means = [statistics.mean(split[i] for _, split in measured) for i in range(len(STEPS))]
    print(
        f"{what}: mean {statistics.mean(walls):.2f} s, median {statistics.median(walls):.2f} s; "
        "mean " + ", ".join(f"{step} {m:.2f}" for step, m in zip(STEPS, means, strict=True))
    )


if __name__ == "__main__":
    main()
