"""The fixed cost of a refresh cycle: many small cycles in this process (the `local` target's
Spark settings), each changing 5 of 40 rows in one chunk; prints the mean and median wall time
of a cycle and its mean split (load, diff, fetch, merge, bookkeeping) after two warm-up cycles.

    python bench/small_cycles.py [--cycles 20]

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


def snapshot(spark: Any, cycle: int) -> Any:
    """40 rows, the 5 whose id + cycle is a multiple of 8 changed by the cycle."""
    rows = [(i, f"v{i}-{cycle}" if (i + cycle) % 8 == 0 else f"v{i}") for i in range(40)]
    return lambda: spark.createDataFrame(rows, "id INT, value STRING")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=20, help="cycles measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="refreshable-small-cycles-") as folder:
        target = render_target(Path(folder) / "data", threads=1)
        fields = {k: v for k, v in target.items() if k not in ("type", "threads")}
        spark = for_credentials(SparkRefreshableCredentials.from_dict(fields)).base_session()
        spark.sql("CREATE SCHEMA IF NOT EXISTS small_cycles")
        request = {
            "schema": "small_cycles",
            "identifier": "measured",
            "config": {"unique_key": "id", "vnodes": 8},
        }
        walls, splits = [], []
        for cycle in range(WARM_UP + args.cycles):
            started = time.monotonic()
            result = run_refresh(spark, request, snapshot(spark, cycle))
            walls.append(time.monotonic() - started)
            splits.append([getattr(result, f"seconds_{step}") for step in STEPS])
        spark.stop()
    measured, split = walls[WARM_UP:], splits[WARM_UP:]
    means = [statistics.mean(s[i] for s in split) for i in range(len(STEPS))]
    print(
        f"{len(measured)} cycles: mean {statistics.mean(measured):.2f} s, median "
        f"{statistics.median(measured):.2f} s; mean "
        + ", ".join(f"{step} {m:.2f}" for step, m in zip(STEPS, means, strict=True))
    )


if __name__ == "__main__":
    main()
