"""A refresh stopped in each phase (a crash point raising, as a test hook) is recovered by
the next run exactly as the design says, and main ends equal to the snapshot: no lost row,
no extra row, no spurious delete."""

from __future__ import annotations

import datetime as dt

import pytest

from dbt.adapters.spark_refreshable.engine.commits import session_confs
from dbt.adapters.spark_refreshable.engine.datetime_writes import TIMESTAMP_OUTPUT_CONF
from dbt.adapters.spark_refreshable.engine.errors import ConfigError, InjectedFault
from dbt.adapters.spark_refreshable.engine.tables import table_exists
from tests.functional.refreshable.engine_harness import EngineModel, record_messages
from tests.support.faults import injected

OLD = [(i, f"old {i}") for i in range(0, 120)]
NEW = [(i, f"new {i}" if i % 3 == 0 else f"old {i}") for i in range(20, 150)]  # -20 +30 ~34
NEWER = [(i, f"newer {i}") for i in range(40, 160)]
# the refreshes around the one that crashes merge in one chunk: only the crashed cycle's
# chunks matter
ONE_CHUNK = 1_000_000


class RecordingSnapshot:
    """A snapshot that says whether the model was evaluated."""

    def __init__(self, model: EngineModel, rows: list[tuple]) -> None:
        self.model, self.rows, self.calls = model, rows, 0

    def __call__(self):
        self.calls += 1
        return self.model.frame(self.rows)


@pytest.fixture
def model(spark):
    """A model merged in 3 or more chunks (8 vnodes, <= 30 changed rows a chunk), refreshed once."""
    model = EngineModel(spark, "id INT, value STRING", unique_key="id", merge_chunk_rows=30)
    model.refresh(OLD, merge_chunk_rows=ONE_CHUNK)
    return model


def crash(model, point: str, rows) -> None:
    with injected(f"{point}:raise"), pytest.raises(InjectedFault, match=point.split("@")[0]):
        model.refresh(rows)


def assert_each_vnode_old_or_new(model, old, new):
    """Never neither old nor new per key range: each vnode holds exactly its old rows or
    exactly its new rows."""
    vnode_of = model.vnodes_of({r[0] for r in old + new})
    found = model.main()
    for vnode in range(model.config["vnodes"]):
        here = [r for r in found if vnode_of[r[0]] == vnode]
        was = sorted(r for r in old if vnode_of[r[0]] == vnode)
        will_be = sorted(r for r in new if vnode_of[r[0]] == vnode)
        assert here in (was, will_be), f"vnode {vnode} is neither old nor new"


def assert_the_next_run_loads_afresh(model: EngineModel, rows: list[tuple]) -> None:
    """REFRESHING with no cycle to resume: the next run evaluates the model, loads ``rows``
    and ends IDLE."""
    assert model.state().phase == "REFRESHING" and model.cycle_to_resume() is None
    snapshot = RecordingSnapshot(model, rows)
    result = model.refresh(snapshot, merge_chunk_rows=ONE_CHUNK)
    assert snapshot.calls == 1 and result.resumed is False
    assert model.main() == sorted(rows)
    assert model.state().refresh_id is None and model.state().phase == "IDLE"


def test_crash_before_an_unchanged_cycle_goes_idle_loads_again(model):
    """A cycle with nothing to merge goes from REFRESHING to IDLE: crashed before IDLE, it
    left no plan to resume, and the next run loads again."""
    crash(model, "merged", OLD)
    assert_the_next_run_loads_afresh(model, NEW)


def test_crash_during_load_discards_staging_and_starts_a_new_cycle(model):
    crash(model, "loading", NEW)
    assert model.main() == sorted(OLD), "main untouched by a partial load"
    assert_the_next_run_loads_afresh(model, NEWER)


def test_a_load_crashed_over_an_earlier_cycles_change_set_is_not_resumed(model):
    """REFRESHING is resumed only when the change set's commit carries that very cycle's
    plan: a load that crashed before writing its own leaves an earlier cycle's there."""
    model.refresh(NEW, merge_chunk_rows=ONE_CHUNK)  # a cycle that writes a change set
    crash(model, "loading", OLD)
    assert_the_next_run_loads_afresh(model, NEWER)


@pytest.mark.parametrize(
    "point",
    # a checkpointed chunk is also resumed across processes in test_connect.py
    ["finishing", "chunk_committed@2", pytest.param("chunk_done@2", marks=pytest.mark.extended)],
)
def test_crash_while_finishing_resumes_the_merge_without_rerunning_the_model(model, point):
    crash(model, point, NEW)
    # the plan rides on the change set's commit: the state stays REFRESHING throughout
    assert model.state().phase == "REFRESHING"
    planned = model.chunks_planned()
    assert planned >= 3
    assert_each_vnode_old_or_new(model, OLD, NEW)
    snapshot = RecordingSnapshot(model, NEWER)
    result = model.refresh(snapshot)
    assert snapshot.calls == 0, "a resumed cycle does not run the model again"
    assert result.resumed is True
    assert model.main() == sorted(NEW), "the resumed merge completes the crashed cycle"
    assert (result.rows_inserted, result.rows_deleted) == (30, 20)
    already_done = {"finishing": 0, "chunk_committed@2": 2, "chunk_done@2": 2}[point]
    assert result.chunks_total == planned
    assert result.chunks_done == planned - already_done
    # and the next run is an ordinary cycle again
    newer = model.refresh(NEWER, merge_chunk_rows=ONE_CHUNK)
    assert newer.resumed is False and model.main() == sorted(NEWER)


@pytest.mark.parametrize(
    # "merged": the cycle after the replace is one with nothing to merge (as above)
    "point",
    ["replaced", "loading", pytest.param("merged", marks=pytest.mark.extended)],
)
def test_a_full_refresh_stopped_anywhere_leaves_main_whole(model, point):
    """--full-refresh replaces main with the snapshot in one commit, then drops the
    bookkeeping and verifies main by a cycle that diffs against it: readers see the old rows
    or the snapshot, never no table, whenever the run stops. The next run ends with main
    equal to its snapshot, having diffed against main's rows (not trusting the index)."""
    with injected(f"{point}:raise"), pytest.raises(InjectedFault, match=point):
        model.refresh(NEW, full_refresh=True)
    assert model.main() == sorted(NEW), "replaced before the stop"
    result = model.refresh(NEWER, merge_chunk_rows=ONE_CHUNK)
    assert model.main() == sorted(NEWER) and model.state().phase == "IDLE"
    assert result.diff_read_main is True, "a replaced main is diffed by its rows"
    assert model.refresh(NEWER).rows_affected == 0


def test_a_full_refresh_verifies_the_replaced_main_and_keeps_its_layout_config(spark, monkeypatch):
    """A completed --full-refresh reports the replace, leaves main equal to the snapshot in
    the layout the model asks for now, and the next cycle uses the index again."""
    model = EngineModel(spark, "id INT, region STRING", unique_key="id")
    model.refresh([(1, "eu"), (2, "us")])
    said = record_messages(monkeypatch)
    result = model.refresh([(1, "eu"), (3, "us")], full_refresh=True, partition_by="region")
    assert "--full-refresh: replaced main with the snapshot's 2 rows in one commit" in said
    assert result.main_replaced is True
    # the replace's rows, and nothing more: the cycle after it found main equal
    assert result.message.startswith("REPLACED +2 ~0 -0 =0")
    detail = spark.sql(f"DESCRIBE DETAIL {model.tables.main}").collect()[0]
    assert list(detail["partitionColumns"]) == ["region"]
    assert model.main() == [(1, "eu"), (3, "us")]
    # the bookkeeping left whole, as after a first build: the next cycle commits as usual
    assert table_exists(spark, model.tables.progress)
    after = model.refresh([(1, "eu"), (4, "us")], partition_by="region")
    assert (after.rows_inserted, after.rows_deleted, after.diff_read_main) == (1, 1, False)
    assert model.main() == [(1, "eu"), (4, "us")]


# mains Delta cannot replace in place: the model's columns and config when main was built,
# in the refresh that followed, at the --full-refresh; and why not
UNREPLACEABLE = {
    # Delta refuses to replace a liquid-clustered table with a partitioned one
    "clustered-to-partitioned": (
        ("id INT, region STRING", {"cluster_by": "id"}),
        ("id INT, region STRING", {}),
        ("id INT, region STRING", {"cluster_by": None, "partition_by": "region"}),
        "Delta does not replace a clustered table with a partitioned one",
    ),
    # a replace that partitioned main left Spark's in-memory catalog an entry with the
    # partition column first: the next replace failed in Spark's check of it, after its commit
    "partitioned-in-memory": (
        ("id INT, region STRING", {}),
        ("id INT, region STRING, note STRING", {"on_schema_change": "append_new_columns"}),
        ("id INT, region STRING, note STRING", {"partition_by": "id"}),
        "Spark's in-memory catalog cannot replace a table partitioned by other than its last",
    ),
    # Delta refuses a replace that drops a column of a table with a change data feed whose
    # columns are mapped by name (a name with a space)
    "feed-and-a-column-gone": (
        ("id INT, `the region` STRING", {"change_data_feed": True}),
        ("id INT, `the region` STRING", {}),
        ("id INT", {}),
        "[DELTA_BLOCK_COLUMN_MAPPING_AND_CDC_OPERATION]",
    ),
}


def rows_of(ddl: str, *rows: tuple) -> list[tuple]:
    """``rows`` cut to ``ddl``'s columns."""
    return [row[: len(ddl.split(","))] for row in rows]


@pytest.mark.parametrize("case", UNREPLACEABLE)
def test_a_full_refresh_drops_a_main_delta_cannot_replace_and_says_why(spark, monkeypatch, case):
    """Where Delta cannot replace main in place, a --full-refresh drops main first, as
    before replaces, says why, and builds main of the model's config from the snapshot;
    the next --full-refresh too."""
    (built, config), (evolved, changed), (ddl, full), why = UNREPLACEABLE[case]
    model = EngineModel(spark, built, unique_key="id", **config)
    model.refresh(rows_of(built, (1, "eu"), (2, "us")))
    model.ddl = evolved
    model.config.update(changed)
    model.refresh(rows_of(evolved, (1, "eu", "a"), (3, "us", "b")))
    model.ddl = ddl
    model.config = {k: v for k, v in {**model.config, **full}.items() if v is not None}
    said = record_messages(monkeypatch)
    rows = rows_of(ddl, (1, "eu", "c"), (4, "ca", None))
    result = model.refresh(rows, full_refresh=True)
    assert result.main_replaced is False and result.message.startswith("REFRESHED +2 "), result
    assert any(f"dropping main (it cannot be replaced: {why}" in m for m in said), said
    assert model.main() == rows
    detail = spark.sql(f"DESCRIBE DETAIL {model.tables.main}").first()
    partitioned = [model.config["partition_by"]] if "partition_by" in model.config else []
    assert list(detail["partitionColumns"]) == partitioned
    model.refresh(rows[:1], full_refresh=True)
    assert model.main() == rows[:1]


def test_a_resume_in_a_session_whose_writes_would_change_its_timestamps_is_refused(spark):
    """A cycle crashed mid-merge and resumed from another session: one that writes
    timestamps in milliseconds would drop the microseconds of the rows the resumed chunks
    write (and of main's rows their files rewrite), so it is refused before main is touched
    (see test_bad_input for the settings); the next run in Spark's defaults serves the
    snapshot to the microsecond."""
    ddl = "id INT, t TIMESTAMP"
    model = EngineModel(spark, ddl, unique_key="id", merge_chunk_rows=30)
    at = dt.datetime(2026, 12, 3, 12, 0)
    timed = [
        [(i, at + dt.timedelta(microseconds=i * 7 + day)) for i, _ in rows]
        for day, rows in enumerate((OLD, NEW, NEWER))
    ]
    model.refresh(timed[0], merge_chunk_rows=ONE_CHUNK)
    crash(model, "chunk_committed@2", timed[1])
    crashed = model.version()
    with (
        session_confs(spark, {TIMESTAMP_OUTPUT_CONF: "TIMESTAMP_MILLIS"}),
        pytest.raises(ConfigError, match=rf"{TIMESTAMP_OUTPUT_CONF} = TIMESTAMP_MILLIS"),
    ):
        model.refresh(timed[2])
    assert model.version() == crashed, "main untouched by the refused resume"
    # the next run resumes the cycle, or (its plan rode on the change set's commit, which a
    # refused run gives up) loads afresh: either way main is a snapshot to the microsecond
    served = timed[1] if model.refresh(timed[2]).resumed else timed[2]
    assert model.main() == sorted(served)


def test_a_chunk_applied_twice_changes_nothing_the_second_time(model):
    """Crash between chunk 1's main commit and its checkpoint: the resumed run finds the
    commit in main's history, checkpoints it, and commits only the other chunks; diffing it
    again against main as it is would find nothing to do either."""
    crash(model, "chunk_committed@1", NEW)
    version, chunks = model.version(), model.chunks_planned()
    result = model.refresh(lambda: pytest.fail("the model must not run"))
    merges = model.history(version)
    assert [h["operation"] for h in merges] == ["MERGE"] * (chunks - 1)
    assert model.main() == sorted(NEW)
    assert result.chunks_done == chunks - 1
    assert (result.rows_inserted, result.rows_deleted) == (30, 20), "counts reconciled"


def test_chunks_found_in_mains_history_wait_for_the_resumes_next_checkpoint(model):
    """A resume records the chunks it finds committed to main (their checkpoint lost in a
    crash) with its own next checkpoint, not in a write before its merge. Stopped again
    before that checkpoint, the next resume finds them in main's history once more, with the
    chunk the stopped resume committed: each chunk is applied once and the counts add up."""
    version = model.version()
    crash(model, "chunk_committed@1", NEW)
    planned, progress_before = model.chunks_planned(), model.table_version("progress")
    assert planned >= 3, "two crashed runs must leave a chunk to merge"
    crash(model, "chunk_committed@1", NEW)  # the resume's first chunk, chunk 1
    assert model.table_version("progress") == progress_before, "no progress row written"
    result = model.refresh(lambda: pytest.fail("the model must not run"))
    assert result.resumed and result.chunks_done == planned - 2
    merges = [h["operation"] for h in model.history(version)]
    assert merges == ["MERGE"] * planned, "each chunk applied once"
    assert model.main() == sorted(NEW)
    assert (result.rows_inserted, result.rows_deleted) == (30, 20), "counts of three runs"


def test_crash_after_the_last_chunk_completes_the_cycle_without_a_merge(model):
    crash(model, "merged", NEW)
    assert model.cycle_to_resume() is not None
    assert model.main() == sorted(NEW), "the merge was complete"
    version = model.version()
    snapshot = RecordingSnapshot(model, NEWER)
    result = model.refresh(snapshot)
    assert snapshot.calls == 0 and result.resumed and result.chunks_done == 0
    assert model.version() == version and model.state().phase == "IDLE"
    assert model.state().last_rows == len(NEW)


@pytest.mark.extended  # an upgrade from an earlier layout, once per table: `make test-all`
def test_a_cleanup_left_by_0_1_0_is_finished_before_a_new_cycle(model, spark):
    crash(model, "merged", NEW)
    spark.sql(f"UPDATE {model.tables.state} SET phase = 'CLEANUP'")
    snapshot = RecordingSnapshot(model, NEWER)
    result = model.refresh(snapshot, merge_chunk_rows=ONE_CHUNK)
    assert snapshot.calls == 1, "after finishing the cleanup, a new cycle runs"
    assert model.main() == sorted(NEWER)
    gone = {r[0] for r in NEW} - {r[0] for r in NEWER}
    assert model.state().last_rows == len(NEWER) and result.rows_deleted == len(gone)
