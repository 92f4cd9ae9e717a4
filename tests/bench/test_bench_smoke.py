"""The benchmark end to end at a tiny scale: it runs, and what it reports is sane (every
correct system equals the snapshot, dbt incremental misses the deletes, unchanged Delta
inputs skip refreshable's refresh and add no file; an unchanged snapshot read by path adds
none either, tests/functional/refreshable/test_cycle.py shows it).
Its timings are not checked: they live in the benchmark's own results, never in tests."""

from __future__ import annotations

import json
import sys

import pytest

from tests.support.processes import run_bounded
from tests.support.profiles import ROOT

# `make test-all`: `make bench` runs the whole benchmark and checks the same figures
pytestmark = [pytest.mark.subprocess, pytest.mark.extended]


def test_a_tiny_benchmark_reports_sane_figures(tmp_path):
    results = tmp_path / "results"
    done = run_bounded(
        [
            sys.executable,
            str(ROOT / "bench" / "run.py"),
            "--sf",
            "0.002",
            "--scaling",
            "",  # the scaling pass at the main scale factor only: one more point proves nothing
            "--scenarios",
            "tpch_refresh,inputs_unchanged",
            "--cycles",
            "2",
            "--no-kill",
            "--no-warmup",  # the refreshes are checked, not timed
            "--results",
            str(results),
            "--data",
            str(tmp_path / "data"),
        ],
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((results / "results.json").read_text())
    by = {(r["system"], r["scenario"]): r for r in report["refreshes"]}
    assert len(by) == 8
    for system in ("refreshable", "table", "merge"):
        for scenario in ("tpch_refresh", "inputs_unchanged"):
            assert by[system, scenario]["correct"], (system, scenario)
    incremental = by["incremental", "tpch_refresh"]
    assert not incremental["correct"] and incremental["rows_missing"] == 0
    assert incremental["rows_unexpected"] > 0, "the deleted orders' lines stay"
    changed = by["refreshable", "tpch_refresh"]["engine"]
    assert (
        changed["rows_inserted"] > 0 and changed["rows_updated"] > 0 and changed["rows_deleted"] > 0
    )
    assert by["refreshable", "tpch_refresh"]["engine"]["skipped"] is False, "Parquet: refreshed"
    unchanged = by["refreshable", "inputs_unchanged"]
    assert unchanged["engine"]["skipped"] is True and unchanged["files_added"] == 0
    # main (0.4 MB) is under merge.REWRITE_FILES_BELOW_BYTES: the refresh rewrote its one file,
    # as the rebuild did, in another order of rows (so a few bytes more or less)
    written, rebuilt = (by[system, "tpch_refresh"] for system in ("refreshable", "table"))
    assert written["files_added"] == 1 and written["bytes_added"] < 1.1 * rebuilt["bytes_added"]
    assert {(s["sf"], s["system"]) for s in report["scaling"]} == {
        (0.002, "refreshable"),
        (0.002, "table"),
    }
    cycles = report["cycles"]
    assert cycles["cycles"] == 2 and cycles["files"] > 0 and cycles["rebuild_files"] > 0, cycles
    assert (
        len(cycles["seconds"]) == 2
        and "main was compacted after" in (results / "results.md").read_text()
    )
    assert report["targets"] and (results / "chart.png").stat().st_size > 0
    assert "| target |" in (results / "results.md").read_text()
