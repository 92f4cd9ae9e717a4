"""The benchmark's results: targets checked as ratios against the baselines of the same run,
written as JSON, a Markdown page and a chart."""

from __future__ import annotations

import json
import os
import platform
import statistics
from importlib.metadata import version
from pathlib import Path
from typing import Any

SYSTEM_LABELS = {
    "refreshable": "refreshable",
    "table": "dbt table (rebuild)",
    "merge": "one Delta MERGE",
    "incremental": "dbt incremental (merge)",
}


def machine() -> dict[str, Any]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    memory_kb = next(
        int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal")
    )
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(memory_kb / 2**20, 1),
        "python": platform.python_version(),
        "versions": {p: version(p) for p in ("pyspark", "delta-spark", "dbt-core", "dbt-spark")},
    }


def find(results: dict[str, Any], system: str, scenario: str) -> dict[str, Any] | None:
    return next(
        (r for r in results["refreshes"] if r["system"] == system and r["scenario"] == scenario),
        None,
    )


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The issue's targets, each a measured ratio against its limit."""
    checks = []
    mine, table, merge = (
        find(results, s, "tpch_refresh") for s in ("refreshable", "table", "merge")
    )
    if mine and table:
        checks.append(
            target(
                "1% change: wall time vs table rebuild", mine["seconds"] / table["seconds"], 1.25
            )
        )
        checks.append(
            target(
                "1% change: bytes written vs rebuild",
                mine["bytes_added"] / max(table["bytes_added"], 1),
                0.05,
            )
        )
    if mine and merge:
        checks.append(
            target(
                "merge phase vs one MERGE statement",
                mine["engine"]["seconds_merge"] / merge["seconds"],
                1.2,
            )
        )
    if mine:
        checks.append(
            target(
                "bookkeeping share of wall time",
                mine["engine"]["seconds_bookkeeping"] / mine["seconds"],
                0.10,
            )
        )
    unchanged = find(results, "refreshable", "no_change")
    if unchanged:
        checks.append(target("no change: data files added", unchanged["files_added"], 0))
    for scenario, label, limit in (
        ("no_change", "no change, same rows in a new file", 1.0),
        ("inputs_unchanged", "no change, Delta inputs unchanged (skipped)", 0.1),
    ):
        mine, table = (find(results, s, scenario) for s in ("refreshable", "table"))
        if mine and table:
            ratio = mine["seconds"] / table["seconds"]
            checks.append(target(f"{label}: wall time vs table rebuild", ratio, limit))
    if "cycles" in results:
        cycles = results["cycles"]
        checks.append(
            target(
                f"main's files after {cycles['cycles']} refreshes at 1% vs after a rebuild",
                cycles["files"] / max(cycles["rebuild_files"], 1),
                2.0,
            )
        )
    if "resume" in results:
        checks.append(
            target("resume after kill at half vs full refresh", results["resume"]["share"], 0.6)
        )
    return checks


def target(name: str, value: float, limit: float) -> dict[str, Any]:
    return {"target": name, "value": round(value, 3), "limit": limit, "met": value <= limit}


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [
        "# Benchmark results",
        "",
        f"TPC-H lineitem at SF {results['sf']}; machine: {m['cores']} cores, "
        f"{m['memory_gib']} GiB, {m['cpu']}; "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items())
        + f". Whole run: {results['seconds']:.0f} s.",
        "",
        "## Targets (ratios in the same run)",
        "",
        "| target | measured | limit | met |",
        "| --- | ---: | ---: | --- |",
    ]
    lines += [
        f"| {t['target']} | {t['value']} | {t['limit']} | {'yes' if t['met'] else '**no**'} |"
        for t in targets(results)
    ]
    lines += [
        "",
        "## Refreshes",
        "",
        "| scenario | system | seconds | files +/- | MB +/- | rows written | equals snapshot |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results["refreshes"]:
        correct = (
            "yes"
            if r["correct"]
            else (f"no ({r['rows_missing']} missing, {r['rows_unexpected']} unexpected)")
        )
        lines.append(
            f"| {r['scenario']} | {SYSTEM_LABELS[r['system']]} | {r['seconds']:.1f} | "
            f"{r['files_added']}/{r['files_removed']} | {r['bytes_added'] / 1e6:.1f}/"
            f"{r['bytes_removed'] / 1e6:.1f} | {r['rows_written']:,} | {correct} |"
        )
    lines += [
        "",
        "`refreshable` split (seconds): load (the snapshot into staging) / diff / fetch (the "
        "changed rows into the change set) / merge / bookkeeping; Delta commits on all five "
        "tables; chunks:",
        "",
        "| scenario | load | diff | fetch | merge | bookkeeping | commits | chunks "
        "| +ins ~upd -del |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results["refreshes"]:
        if r["system"] == "refreshable":
            e = r["engine"]
            lines.append(
                f"| {r['scenario']} | {e['seconds_load']:.1f} | {e.get('seconds_diff', 0):.1f} | "
                f"{e.get('seconds_fetch', 0):.1f} | {e['seconds_merge']:.1f} | "
                f"{e['seconds_bookkeeping']:.1f} | {r.get('commits', 0)} | {e['chunks_total']} | "
                f"+{e['rows_inserted']} "
                f"~{e['rows_updated']} -{e['rows_deleted']} |"
            )
    if "cycles" in results:
        lines += ["", many_cycles_summary(results["cycles"])]
    if "resume" in results:
        resume = results["resume"]
        lines += [
            "",
            f"Kill -9 at half the merge ({resume['full']['chunks_total']} chunks of "
            f"{resume['chunk_rows']} changes): full refresh {resume['full']['seconds']:.1f} s, "
            f"resuming run {resume['resumed']['seconds']:.1f} s "
            f"({resume['share']:.0%} of a full refresh, "
            f"{resume['resumed']['chunks_done']} chunks left).",
        ]
    lines += [
        "",
        f"## Scaling (tpch_refresh; chunks of {results['scaling_chunk_rows']:,} changed rows)",
        "",
        "| SF | rows | refreshable s | table s | ratio | chunks |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for sf in sorted({s["sf"] for s in results["scaling"]}):
        mine = next(s for s in results["scaling"] if s["sf"] == sf and s["system"] == "refreshable")
        table = next(s for s in results["scaling"] if s["sf"] == sf and s["system"] == "table")
        lines.append(
            f"| {sf} | {mine['rows']:,} | {mine['seconds']:.1f} | {table['seconds']:.1f} | "
            f"{mine['seconds'] / table['seconds']:.2f} | {mine['engine']['chunks_total']} |"
        )
    return "\n".join(lines) + "\n"


def chart(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (bars, curve) = plt.subplots(1, 2, figsize=(13, 4.8))
    scenarios = list(dict.fromkeys(r["scenario"] for r in results["refreshes"]))
    width = 0.8 / len(SYSTEM_LABELS)
    for i, (system, label) in enumerate(SYSTEM_LABELS.items()):
        seconds = [(find(results, system, s) or {"seconds": 0})["seconds"] for s in scenarios]
        bars.bar([x + i * width for x in range(len(scenarios))], seconds, width, label=label)
    bars.set_xticks([x + 0.4 - width / 2 for x in range(len(scenarios))], scenarios)
    bars.set_ylabel("refresh wall time (s)")
    bars.set_title(f"TPC-H lineitem, SF {results['sf']}")
    bars.legend(fontsize=8)
    for system in ("refreshable", "table"):
        points = sorted(
            (s["rows"], s["seconds"]) for s in results["scaling"] if s["system"] == system
        )
        curve.plot(*zip(*points, strict=True), marker="o", label=SYSTEM_LABELS[system])
    chunks = sorted(
        (s["rows"], s["engine"]["chunks_total"])
        for s in results["scaling"]
        if s["system"] == "refreshable"
    )
    twin = curve.twinx()
    twin.plot(*zip(*chunks, strict=True), linestyle="--", color="grey", label="refreshable chunks")
    twin.set_ylabel("chunks")
    curve.set_xlabel("rows")
    curve.set_ylabel("seconds (tpch_refresh)")
    curve.set_title("scaling")
    curve.legend(fontsize=8, loc="upper left")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def write(results: dict[str, Any], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    results["targets"] = targets(results)
    (folder / "results.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    (folder / "results.md").write_text(markdown(results))
    chart(results, folder / "chart.png")


def many_cycles_summary(cycles: dict[str, Any]) -> str:
    """The file-count run in a sentence: main's files at the end, when it was compacted and
    the scratch tables vacuumed, and what those refreshes took against the others."""
    compactions, seconds = cycles["compactions"], cycles["seconds"]
    vacuums = cycles.get("vacuums", [])  # not in the results of runs before it was recorded
    compacted = {revision for revision, _, _ in compactions}
    vacuumed = {revision for revision, _ in vacuums}
    when = ", ".join(f"{revision} ({before} -> {after})" for revision, before, after in compactions)
    deleted = ", ".join(
        f"{revision} ({', '.join(f'{table} {n:,} files' for table, n in by_table.items())})"
        for revision, by_table in vacuums
    )
    timing = f"the refreshes took {statistics.mean(seconds):.1f} s on average"
    groups = [
        ("those that compacted", compacted),
        ("those that vacuumed", vacuumed),
        ("the others", set(range(1, len(seconds) + 1)) - compacted - vacuumed),
    ]
    timing += "".join(
        f", {statistics.mean(seconds[i - 1] for i in refreshes):.1f} s {which}"
        for which, refreshes in groups
        if refreshes and len(refreshes) < len(seconds)
    )
    return (
        f"After {cycles['cycles']} refreshes at 1%, each revising 1% more of the lines (one "
        f"chunk each): main has {cycles['files']} data files, a rebuild "
        f"{cycles['rebuild_files']}; main was compacted after {len(compactions)} of them "
        f"(`compact_after_files` and small files; refresh: files before -> after): "
        f"{when or 'none'}; the scratch tables were vacuumed after {len(vacuums)} "
        f"(refresh: files deleted): {deleted or 'none'}; {timing}."
    )
