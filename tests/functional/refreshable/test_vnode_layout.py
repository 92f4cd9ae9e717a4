"""Range vnodes: a chunk of an integer- or date-keyed model is a range of its first key
column, so that its MERGE reads only main's files of that range. The vnode expression and
a chunk's slice of main must agree exactly, or a chunk would miss rows of its own."""

from __future__ import annotations

import bisect
import datetime
import random

import pytest

from dbt.adapters.spark_refreshable.engine import refresh
from dbt.adapters.spark_refreshable.engine.errors import InjectedFault, SnapshotRejectedError
from dbt.adapters.spark_refreshable.engine.vnodes import VnodeLayout, choose_layout
from tests.functional.refreshable.engine_harness import EngineModel, record_messages
from tests.support.content import content_problems
from tests.support.faults import injected
from tests.support.snapshots import CALENDAR_EDGES


def agreement(spark, layout: VnodeLayout, ddl: str, keys: list, values: list) -> None:
    """Every key's vnode is where the sorted bounds ``values`` put it, and every slice of
    vnodes holds exactly the keys of its vnodes."""
    count = layout.count
    slices = [(a, b) for a in range(count) for b in range(a, count)]
    selected = [f"{layout.expression(['k'])} AS v"] + [
        f"coalesce({layout.slice_predicate(['k'], a, b, 't') or 'true'}, false) AS s{i}"
        for i, (a, b) in enumerate(slices)
    ]
    frame = spark.createDataFrame([(k,) for k in keys], ddl).alias("t")
    for row in frame.selectExpr("k", *selected).collect():
        assert row["v"] == bisect.bisect_right(values, row["k"]), row
        for i, (a, b) in enumerate(slices):
            assert row[f"s{i}"] == (a <= row["v"] <= b), (row["k"], a, b)


def test_vnodes_and_chunk_slices_agree_for_integers_and_dates(spark):
    rng = random.Random(20261126)
    values = sorted(rng.sample(range(-(10**12), 10**12), 6))
    layout = VnodeLayout(8, "k", "bigint", tuple(str(v) for v in values))
    keys = values + [v + d for v in values for d in (-1, 1)] + [-(2**63), 2**63 - 1]
    keys += [rng.randrange(-(10**13), 10**13) for _ in range(200)]
    agreement(spark, layout, "k BIGINT", keys, values)

    days = sorted(datetime.date(2020, 1, 1) + datetime.timedelta(d) for d in (3, 40, 41, 500))
    layout = VnodeLayout(5, "k", "date", tuple(f"DATE'{d.isoformat()}'" for d in days))
    keys = days + [d + datetime.timedelta(s) for d in days for s in (-1, 1)]
    keys += [datetime.date(1, 1, 1), datetime.date(9999, 12, 31)]
    agreement(spark, layout, "k DATE", keys, days)


def test_the_layout_follows_the_first_key_column(spark):
    frame = spark.range(100).selectExpr("CAST(id AS INT) AS id", "CAST(id AS STRING) AS s")
    ranged = choose_layout(frame, ("ID", "s"), 4, None)
    assert ranged.column == "id" and ranged.bounds == ("24", "49", "74"), ranged
    assert choose_layout(frame, ("s", "id"), 4, None) == VnodeLayout(4), "strings hash"
    assert choose_layout(frame, ("id",), 4, ranged) is ranged, "a fitting layout is kept"
    assert choose_layout(frame, ("id",), 8, ranged).count == 8, "a new vnodes, new bounds"
    assert choose_layout(frame.limit(0), ("id",), 4, None) == VnodeLayout(4)


def test_a_chunk_merges_only_main_files_of_its_key_range(spark):
    model = EngineModel(spark, "id INT, value STRING", unique_key="id", vnodes=8)
    day1 = [(i, f"one {i}") for i in range(200)]
    model.refresh(day1, merge_chunk_rows=25)  # 8 chunks of 25 ids: a file each
    layout = model.layout()
    assert layout.column == "id" and layout.count == 8, layout
    files = spark.sql(f"DESCRIBE DETAIL {model.tables.main}").collect()[0]["numFiles"]
    assert files >= 8

    day2 = [(i, f"two {i}" if i % 5 == 0 else f"one {i}") for i in range(200)]
    before = model.version()
    result = model.refresh(day2, merge_chunk_rows=10)
    assert result.chunks_total == 4 and model.main() == sorted(day2)
    assert model.layout() == layout, "the layout is kept"
    merges = [h for h in model.history(before) if h["operation"] == "MERGE"]
    assert len(merges) == 4
    for merge in merges:  # 10 changed ids span 50: two of main's files, not all of them
        metrics = merge["operationMetrics"]
        touched = int(metrics["numTargetDeletionVectorsAdded"]) + int(
            metrics["numTargetFilesRemoved"]
        )
        assert 0 < touched <= 3, metrics


@pytest.mark.parametrize(
    "chunk_rows",
    [7, pytest.param(1_000_000, marks=pytest.mark.extended)],  # one chunk: make test-all
)
def test_keys_beyond_the_first_builds_bounds(spark, chunk_rows):
    model = EngineModel(spark, "id BIGINT, value STRING", unique_key="id", vnodes=4)
    model.refresh([(i, "a") for i in range(100, 140)])
    bounds = model.layout().bounds
    far = [(i, "b") for i in (-(2**62), -5, 0, 99, 100, 139, 140, 10**15)]
    snapshot = far + [(i, "c") for i in range(120, 130)]
    model.refresh(snapshot, merge_chunk_rows=chunk_rows)
    assert model.main() == sorted(snapshot)
    assert model.layout().bounds == bounds
    model.refresh([(i, "d") for i in range(100, 140)], merge_chunk_rows=chunk_rows)
    assert model.main() == sorted((i, "d") for i in range(100, 140))


def test_date_keys_crowding_the_calendar_gap(spark):
    """Delta's file statistics misread dates of the Julian-to-Gregorian gap, so a bound in
    the gap would make a chunk's MERGE skip files holding its keys (main then held each
    such key twice). Generated days of keys mostly at the calendar's edges, merged in
    small chunks: main equals each day's snapshot, and no bound is in the gap."""
    rng = random.Random(1582)
    model = EngineModel(spark, "day DATE, n INT, value STRING", unique_key=["day", "n"])
    first, last = datetime.date(1582, 10, 5), datetime.date(1582, 10, 14)
    gap = {f"DATE'{d.isoformat()}'" for d in CALENDAR_EDGES if first <= d <= last}
    for _ in range(3):
        keys = {(rng.choice(CALENDAR_EDGES), rng.randrange(4)) for _ in range(40)}
        snapshot = [(d, n, rng.choice([None, "a", "b", "c"])) for d, n in keys]
        model.refresh(snapshot, merge_chunk_rows=4)
        differences = content_problems(spark, model.tables.main, model.frame(snapshot), 2)
        assert not differences, "\n".join(what for _, what in differences)
    layout = model.layout()
    assert layout.column == "day" and not gap & set(layout.bounds), layout

    frame = model.frame(snapshot)
    stored = VnodeLayout(8, "day", "date", ("DATE'1582-10-10'",))  # by an earlier version
    assert choose_layout(frame, ("day", "n"), 8, stored) != stored, "a bound in the gap"


VALUES = ["NULL", "'a'", "'b'"]


def far_days_snapshot(rng: random.Random, keys: int) -> str:
    """A SQL model of ``keys`` generated (day, n) keys, days mostly outside Python's years
    1 to 9999 (Spark holds about +-5.8 million years), some near year 0 and the gap."""
    edges = [-719_163, -141_427, -141_418, 2_932_897]  # days of years 1, 1582 (the gap), 10000
    near_edges = [rng.choice(edges) + rng.randrange(-3, 4) for _ in range(keys)]
    anywhere = [rng.randrange(-2_000_000_000, 2_000_000_000) for _ in range(keys)]
    days = {(rng.choice([near_edges, anywhere])[i], rng.randrange(3)) for i in range(keys)}
    rows = ", ".join(f"({d}, {n}, {rng.choice(VALUES)})" for d, n in days)
    return (
        "SELECT date_from_unix_date(CAST(d AS INT)) AS day, CAST(n AS INT) AS n, value "
        f"FROM VALUES {rows} AS t(d, n, value)"
    )


def sql_differences(spark, main: str, snapshot_sql: str) -> list[str]:
    """Rows of main not in the snapshot and the other way round, days spelled by Spark."""
    shown = "SELECT CAST(day AS STRING) AS day, n, value FROM {}"
    main_rows, snapshot_rows = shown.format(main), shown.format(f"({snapshot_sql})")
    return [
        f"{side}: {tuple(row)}"
        for side, query in (
            ("only in main", f"{main_rows} EXCEPT ALL {snapshot_rows}"),
            ("only in the snapshot", f"{snapshot_rows} EXCEPT ALL {main_rows}"),
        )
        for row in spark.sql(query).limit(5).collect()
    ]


def test_date_keys_beyond_pythons_calendar(spark):
    """Spark and Delta hold dates of years before 1 and after 9999, which Python cannot: the
    range bounds among them are taken and written in SQL (collecting them as Python dates
    failed the load), a chunk's slice of main on them finds its files (Delta's statistics
    spell them as Spark does), and a refusal shows such keys and values as Spark spells
    them (collecting its examples failed too). Generated days, merged in small chunks:
    main equals each snapshot."""
    rng = random.Random(5881580)
    model = EngineModel(spark, "day DATE, n INT, value STRING", unique_key=["day", "n"])
    for _ in range(2):
        snapshot = far_days_snapshot(rng, 30)
        model.refresh(snapshot, merge_chunk_rows=20)
        differences = sql_differences(spark, model.tables.main, snapshot)
        assert not differences, "\n".join(differences)
    bounds = model.layout().bounds
    assert any(b.startswith(("DATE'-", "DATE'+")) for b in bounds), bounds

    far = "date_from_unix_date(-2000000000)"
    spelled = spark.sql(f"SELECT CAST({far} AS STRING)").first()[0]
    refused = {
        f"duplicate unique_key .* e\\.g\\. day='{spelled}', n=1 \\(2 rows\\)": "1",
        f"NULL in unique_key .* e\\.g\\. \\{{'day': '{spelled}', 'n': None": "NULL",
    }
    for message, n in refused.items():
        with pytest.raises(SnapshotRejectedError, match=message):
            model.refresh(f"{snapshot} UNION ALL SELECT {far}, {n}, 'x' FROM range(2)")
    assert not sql_differences(spark, model.tables.main, snapshot), "main was not touched"


def test_a_cycle_left_with_a_bound_in_the_gap_is_discarded_not_resumed(spark, monkeypatch):
    """A cycle an earlier version left mid-merge with a bound in the gap would merge its
    remaining chunks by a slice Delta misreads: the next run loads afresh instead."""
    said = record_messages(monkeypatch)
    model = EngineModel(spark, "day DATE, n INT, value STRING", unique_key=["day", "n"])
    days = [datetime.date(1582, 10, 1) + datetime.timedelta(d) for d in range(20)]
    model.refresh([(d, n, "one") for d in days for n in range(2)])

    earlier = VnodeLayout(8, "day", "date", ("DATE'1582-10-10'",))
    monkeypatch.setattr(refresh, "choose_layout", lambda *args: earlier)
    day2 = [(d, n, "two") for d in days for n in range(3)]
    with injected("chunk_done@1:raise"), pytest.raises(InjectedFault):
        model.refresh(day2, merge_chunk_rows=1)
    monkeypatch.setattr(refresh, "choose_layout", choose_layout)

    assert model.refresh(day2).resumed is False
    assert any("vnode bounds [\"DATE'1582-10-10'\"]" in m for m in said), said
    assert model.main() == sorted(day2)


def test_skewed_judges_the_largest_vnode_against_even_shares_and_a_chunk():
    layout = VnodeLayout(4, "id", "int", ("10", "20", "30"))
    why = layout.skewed([1, 1, 1, 97], 50)
    assert why == "vnode 3 of 4 held 97 of the last snapshot's 100 rows", why
    assert layout.skewed([0, 0, 0, 100], 100) is None, "no more rows than one chunk"
    assert layout.skewed([25, 0, 0, 75], 10) is None, "three quarters: few vnodes"
    assert layout.skewed([1, 97, 1, 1], 50) is not None, "any vnode"
    assert layout.skewed([97, 3], 50) is None, "counts of another layout"
    assert VnodeLayout(4).skewed([0, 0, 0, 100], 1) is None, "hash vnodes spread unique keys"
    wide = VnodeLayout(32, "id", "int", tuple(str(b) for b in range(31)))
    assert wide.skewed([12] + [3] * 29 + [0, 0], 10) is None, "four even shares: 12.4"
    assert wide.skewed([14] + [3] * 29 + [0, 0], 10) is not None


def test_range_bounds_are_cut_again_when_keys_drift_past_them(spark, monkeypatch):
    """A window of ids that slid past the bounds day 1 cut put every row in the last vnode,
    and every change in one chunk. The next cycle cuts the bounds again at its snapshot's
    quantiles and merges its changes in chunks over every vnode; then they are kept."""
    said = record_messages(monkeypatch)
    model = EngineModel(spark, "id INT, value STRING", unique_key="id", vnodes=4)
    model.refresh([(i, "one") for i in range(100)])
    day1 = model.layout()
    assert day1.bounds == ("24", "49", "74"), day1

    slid = [(i, "two") for i in range(200, 300)]
    model.refresh(slid, merge_chunk_rows=5)
    assert model.layout() == day1, "judged by day 1's rows, which the bounds spread"
    assert model.main() == sorted(slid)

    day3 = [(i, "three" if i % 2 else "two") for i in range(210, 310)]
    result = model.refresh(day3, merge_chunk_rows=5)
    recut = model.layout()
    assert recut.count == 4 and all(210 < int(b) < 310 for b in recut.bounds), recut
    assert result.chunks_total == 4, "the last vnode alone would be one chunk"
    assert model.main() == sorted(day3)
    assert any("cutting the range vnodes' bounds again (vnode 3 of 4 held 100" in m for m in said)

    day4 = [(i, "four" if i % 3 == 0 else v) for i, v in day3]
    model.refresh(day4, merge_chunk_rows=5)
    assert model.layout() == recut and model.main() == sorted(day4)


def test_range_bounds_skewed_from_the_start_are_kept(spark, monkeypatch):
    """A first key column of few values: 70 rows share one value, which no bound can split.
    Cutting again would give the same skew and cost a diff against all of main each cycle,
    so the bounds stay and the next cycle diffs against the stored index."""
    said = record_messages(monkeypatch)
    model = EngineModel(spark, "k INT, n INT, value STRING", unique_key=["k", "n"], vnodes=16)
    day1 = [(0, n, "one") for n in range(70)] + [(k, 0, "one") for k in range(1, 31)]
    model.refresh(day1, merge_chunk_rows=5)
    layout = model.layout()
    assert layout.column == "k" and layout.skewed(model.vnode_rows(), 5) is not None, layout
    day2 = [(k, n, "two" if n % 4 == 0 else v) for k, n, v in day1]
    model.refresh(day2, merge_chunk_rows=5)
    assert model.layout() == layout and model.main() == sorted(day2)
    assert not [m for m in said if "again" in m or "diffing against all of main" in m], said
