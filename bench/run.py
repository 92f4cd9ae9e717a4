"""The benchmark: `refreshable` against what a dbt + Spark user would pick instead, on TPC-H
lineitem, in one run. `make bench` runs it; see the README's Benchmark section.

    python bench/run.py [--sf 0.1] [--scaling 0.02,0.05] [--scenarios ...] [--cycles 20]
                        [--no-kill] [--no-warmup]

Writes bench/results/results.json, results.md and chart.png.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from bench import datagen, report  # noqa: E402
from bench.systems import MODELS, PROJECT, SYSTEMS, Systems, table_name  # noqa: E402
from tests.support.dbt_projects import DBT  # noqa: E402  (dbt, with a fault installed if named)
from tests.support.faults import FAULT_ENV  # noqa: E402

DATA = ROOT / ".spark" / "bench"
RESULTS = BENCH / "results"
KILL_CHUNKS = 6  # chunks of the killed refresh; the kill lands after half of them
SCALING_CHUNK_ROWS = 2000  # changed rows per chunk in the scaling runs: chunks follow size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=0.1, help="scale factor of the main runs")
    parser.add_argument(
        "--scaling", default="0.02,0.05", help="more scale factors, comma-separated"
    )
    parser.add_argument("--scenarios", default=",".join(datagen.SCENARIOS))
    parser.add_argument(
        "--cycles", type=int, default=20, help="refreshes of the file-count run (0: skip it)"
    )
    parser.add_argument("--no-kill", action="store_true", help="skip the kill -9 / resume run")
    parser.add_argument(
        "--no-warmup",
        action="store_true",
        help="measure from a cold JVM: no unmeasured refresh of every system first",
    )
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--data", type=Path, default=DATA, help="snapshots and warehouses")
    args = parser.parse_args()
    scenarios = [s for s in args.scenarios.split(",") if s]
    unknown = set(scenarios) - set(datagen.SCENARIOS)
    if unknown:
        parser.error(f"unknown scenario(s) {sorted(unknown)}; known: {datagen.SCENARIOS}")
    scaling = sorted({float(s) for s in args.scaling.split(",") if s} | {args.sf})

    os.environ.update(
        REFRESHABLE_HOME=str(ROOT),
        REFRESHABLE_DATA=str(args.data / "warehouse"),
        DBT_PROFILES_DIR=str(ROOT / "profiles"),
        DBT_REFRESHABLE_SCHEMA="bench",
    )
    started = time.monotonic()
    say(f"generating TPC-H lineitem at SF {', '.join(map(str, scaling))}")
    snapshots = {sf: datagen.generate(sf, args.data / f"sf{sf}") for sf in scaling}
    systems = Systems()
    results: dict[str, Any] = {
        "sf": args.sf,
        "refreshes": [],
        "scaling": [],
        "scaling_chunk_rows": SCALING_CHUNK_ROWS,
    }
    if not args.no_warmup:
        warm_up(systems, snapshots[min(scaling)])
    for scenario in scenarios:
        say(f"SF {args.sf}, {scenario}: every system from the base snapshot, then refreshed")
        from_delta = scenario == datagen.INPUTS_UNCHANGED
        source = systems.reset(snapshots[args.sf]["base"], from_delta=from_delta)
        for system in SYSTEMS:
            refresh = systems.refresh(system, scenario, snapshots[args.sf][scenario], **source)
            say(f"  {system:12} {refresh.seconds:7.1f}s correct={refresh.correct}")
            results["refreshes"].append(refresh.as_dict())
    for sf in scaling:
        say(f"scaling: SF {sf}, tpch_refresh, refreshable and table")
        systems.reset(snapshots[sf]["base"], ("refreshable", "table"))
        for system in ("refreshable", "table"):
            refresh = systems.refresh(
                system,
                "tpch_refresh",
                snapshots[sf]["tpch_refresh"],
                merge_chunk_rows=SCALING_CHUNK_ROWS,
            )
            rows = systems.count(f"SELECT * FROM parquet.`{snapshots[sf]['tpch_refresh']}`")
            results["scaling"].append({"sf": sf, "rows": rows, **refresh.as_dict()})
    if args.cycles > 0:
        say(f"SF {args.sf}: main's files after {args.cycles} refreshes at 1%, and a rebuild's")
        results["cycles"] = many_cycles(systems, snapshots[args.sf], args.cycles)
    if not args.no_kill and "tpch_refresh" in scenarios:
        results["resume"] = kill_and_resume(snapshots[args.sf], results["refreshes"], args.data)
    results["machine"] = report.machine()
    results["seconds"] = round(time.monotonic() - started, 1)
    report.write(results, args.results)
    say(f"done in {results['seconds']:.0f}s: {args.results}/results.md")


def warm_up(systems: Systems, snapshots: dict[str, Path]) -> None:
    """Every system built and refreshed once, unmeasured, so that no measured system pays
    for the JVM's first compilation of Spark's and Delta's code paths: in a cold JVM the
    first system measured, always refreshable, did (README, Benchmark)."""
    say("warm-up: every system built and refreshed once at the smallest scale, not measured")
    source = systems.reset(snapshots["base"])
    for system in SYSTEMS:
        systems.refresh(system, "warm-up", snapshots["tpch_refresh"], check=False, **source)


def many_cycles(systems: Systems, snapshots: dict[str, Path], cycles: int) -> dict[str, Any]:
    """Main's data files after ``cycles`` refreshes, each revising 1% more of the base's
    lines (var ``revision``: earlier revisions stay, so each refresh's files stay too),
    against the files of a rebuild of the last revision, which main must equal."""
    base = snapshots["base"]
    systems.reset(base, ("refreshable",))
    compactions, vacuums, seconds = [], [], []
    for revision in range(1, cycles + 1):
        refresh = systems.refresh("refreshable", "cycles", base, check=False, revision=revision)
        seconds.append(refresh.seconds)
        compacted = refresh.engine.get("main_compacted")
        if compacted is not None:  # [files before, files after]
            compactions.append([revision, *compacted])
        vacuumed = refresh.engine.get("scratch_vacuumed")
        if vacuumed is not None:  # {table role: files deleted}
            vacuums.append([revision, vacuumed])
    systems.dbt("run", "--select", MODELS["table"], snapshot=str(base), revision=cycles)
    differing = sum(systems.compare(table_name("refreshable"), table_name("table"), base))
    if differing:
        raise RuntimeError(
            f"after {cycles} refreshes main differs from a rebuild in {differing} rows"
        )
    return {
        "cycles": cycles,
        "files": systems.data_files("refreshable"),
        "rebuild_files": systems.data_files("table"),
        "compactions": compactions,  # [refresh, files before, files after]
        "vacuums": vacuums,  # [refresh, {scratch table: files deleted}]
        "seconds": seconds,  # each refresh's, its compaction included
    }


def kill_and_resume(
    snapshots: dict[str, Path], refreshes: list[dict[str, Any]], data: Path
) -> dict[str, Any]:
    """A refresh of ~KILL_CHUNKS chunks killed with SIGKILL after half of them, then the
    resuming run, against a full refresh of the same chunks: all `dbt` processes of their
    own, on a warehouse of their own (this process holds its metastore)."""
    engine = next(
        r["engine"]
        for r in refreshes
        if r["system"] == "refreshable" and r["scenario"] == "tpch_refresh"
    )
    changes = engine["rows_inserted"] + engine["rows_updated"] + engine["rows_deleted"]
    chunk_rows = max(1, changes // KILL_CHUNKS)
    env = dict(os.environ, REFRESHABLE_DATA=str(data / "kill"))
    env.pop(FAULT_ENV, None)

    def run(snapshot: str, *flags: str, fault: str | None = None) -> dict[str, Any]:
        target = data / "kill-target"
        vars_: dict[str, Any] = {"snapshot": str(snapshots[snapshot])}
        if snapshot != "base":  # the base builds in one chunk
            vars_["merge_chunk_rows"] = chunk_rows
        done = subprocess.run(
            [
                *DBT,
                "run",
                *flags,
                "--select",
                "lineitem_refreshable",
                "--project-dir",
                str(PROJECT),
                "--target-path",
                str(target),
                "--vars",
                json.dumps(vars_),
            ],
            env={**env, FAULT_ENV: fault} if fault else env,
            capture_output=True,
            text=True,
            timeout=3600,
        )
        if fault:
            if done.returncode != -signal.SIGKILL:
                raise RuntimeError(f"the refresh was not killed:\n{done.stdout[-3000:]}")
            return {}
        if done.returncode != 0:
            raise RuntimeError(f"dbt run failed:\n{done.stdout[-3000:]}")
        result = json.loads((target / "run_results.json").read_text())["results"][0]
        return {"seconds": result["execution_time"], **result["adapter_response"]}

    say(f"kill -9 at half the merge ({KILL_CHUNKS} chunks of {chunk_rows} changes), then resume")
    run("base", "--full-refresh")
    full = run("tpch_refresh")
    run("base", "--full-refresh")
    run("tpch_refresh", fault=f"chunk_done@{KILL_CHUNKS // 2}:kill")
    resumed = run("tpch_refresh")
    if not resumed.get("resumed"):
        raise RuntimeError(f"the run after the kill did not resume: {resumed}")
    return {
        "chunk_rows": chunk_rows,
        "full": full,
        "resumed": resumed,
        "share": resumed["seconds"] / full["seconds"],
    }


def say(message: str) -> None:
    print(f"[bench] {message}", flush=True)


if __name__ == "__main__":
    main()
