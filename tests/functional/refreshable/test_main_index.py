"""The diff reads main's keys and row hashes from the last completed snapshot in staging
(``diff.MainIndex``) only while main still holds exactly that snapshot. Generated sequences
of snapshots, with something done to main or staging between two refreshes: after each one
main equals the snapshot, and the diff read all of main exactly when it had to. A snapshot
that is the last one again is not diffed at all; generated ones of its size are."""

from __future__ import annotations

import contextlib
import os
import random

import pytest

from dbt.adapters.spark_refreshable.engine import diff, load
from dbt.adapters.spark_refreshable.engine.errors import InjectedFault, SnapshotRejectedError
from dbt.adapters.spark_refreshable.engine.job import RefreshResult
from dbt.adapters.spark_refreshable.engine.proof import LastSnapshot
from tests.functional.refreshable.engine_harness import EngineModel
from tests.support.faults import injected

SEED = int(os.environ.get("REFRESHABLE_TEST_SEED", "20261123"))
IDS = 60
DDL = "id INT, v STRING, d DOUBLE"

# what is done between two refreshes: (whether the next diff must read main, statements
# formatted with the tables, a key of main and a random number)
DISTURBANCES = {
    # a constraint every snapshot keeps: the load checks them against it; no row changed
    "a CHECK constraint of the user's own added to main": (
        False,
        ["ALTER TABLE {main} ADD CONSTRAINT ids_not_negative CHECK (id >= 0)"],
    ),
    "properties set on main, then OPTIMIZE": (
        False,
        ["ALTER TABLE {main} SET TBLPROPERTIES ('team' = '{number}')", "OPTIMIZE {main}"],
    ),
    "rows of main updated, deleted and inserted": (
        True,
        [
            "UPDATE {main} SET v = 'outside' WHERE id = {key}",
            "DELETE FROM {main} WHERE id = {other_key}",
            "INSERT INTO {main} VALUES ({new_key}, 'outside', 0.5)",
        ],
    ),
    "main restored to an older version": (True, ["RESTORE TABLE {main} TO VERSION AS OF 1"]),
    "staging dropped": (True, ["DROP TABLE {staging}"]),
    # staging's old version readable, but not the snapshot the state recorded
    "the last snapshot's checksum recorded otherwise": (
        True,
        ["UPDATE {state} SET last_checksum = '{number}'"],
    ),
    "staging rewritten and vacuumed": (
        True,
        [
            "INSERT OVERWRITE {staging} SELECT * FROM {staging} LIMIT 1",
            "VACUUM {staging} RETAIN 0 HOURS",
        ],
    ),
    "vnodes changed": (True, []),
}


def next_snapshot(rng: random.Random, current: dict[int, tuple]) -> dict[int, tuple]:
    """``current`` with at least one row inserted, updated or deleted."""
    snapshot = dict(current)
    for _ in range(rng.randint(1, 8)):
        key = rng.randrange(IDS)
        if key in snapshot and rng.random() < 0.3:
            del snapshot[key]
        else:
            snapshot[key] = (key, rng.choice(["a", "b", "🙂", None]), rng.random())
    return snapshot if snapshot != current else next_snapshot(rng, current)


def disturb(model: EngineModel, what: str, rng: random.Random, current: dict) -> None:
    for statement in DISTURBANCES[what][1]:
        model.spark.sql(
            statement.format(
                main=model.tables.main,
                staging=model.tables.staging,
                state=model.tables.state,
                key=rng.choice(sorted(current)),
                other_key=rng.choice(sorted(current)),
                new_key=IDS + rng.randrange(100),
                number=rng.random(),
            )
        )


@pytest.fixture
def vacuum_allowed(spark):
    conf = "spark.databricks.delta.retentionDurationCheck.enabled"
    spark.conf.set(conf, "false")
    yield
    spark.conf.unset(conf)


def test_generated_disturbances_between_refreshes(spark, vacuum_allowed):
    rng = random.Random(SEED)
    model = EngineModel(spark, DDL, unique_key="id")
    snapshot = next_snapshot(rng, {})
    model.refresh(list(snapshot.values()))
    plan = rng.sample(sorted(DISTURBANCES), len(DISTURBANCES))  # each one, in a generated order
    vnodes = 8
    for what in plan:
        disturb(model, what, rng, snapshot)
        if what == "vnodes changed":
            vnodes = 16 if vnodes == 8 else 8
        snapshot = next_snapshot(rng, snapshot)
        result = model.refresh(list(snapshot.values()), vnodes=vnodes)
        context = f"seed {SEED}, after '{what}'"
        assert model.main() == sorted(snapshot.values()), context
        assert result.diff_read_main is DISTURBANCES[what][0], context
        assert model.vnode_rows() == rows_per_vnode(model, rows_of(snapshot)), context


def rewrite_staging_alike(model: EngineModel) -> None:
    """Staging overwritten outside the engine with the rows it holds."""
    staging = model.tables.staging
    model.spark.sql(f"INSERT OVERWRITE {staging} SELECT * FROM {staging}")


def staging_version(model: EngineModel) -> int | None:
    """Staging's newest version; None where it does not exist."""
    if not model.spark.catalog.tableExists(model.tables.staging):
        return None
    return model.table_version("staging")


# after which the same snapshot again is diffed against all of main, or staging rewritten
MAIN_UNTRUSTED = {
    "rows of main updated, deleted and inserted",
    "main restored to an older version",
    "the last snapshot's checksum recorded otherwise",
    "vnodes changed",
}
STAGING_TOUCHED = {"staging dropped", "staging rewritten and vacuumed", "staging rewritten alike"}


def test_the_last_snapshot_again_leaves_staging_as_it_is(spark, vacuum_allowed):
    """A disturbance of each kind (drawn), in a drawn order, each followed by the same
    snapshot again, shuffled: staging is not rewritten exactly where main still holds the
    last snapshot and staging's newest version is it (rewritten outside the engine with
    the same rows, it is not trusted); main equals the snapshot either way, staging's
    version the state records holds it, and the index that cycle leaves serves the next
    changed snapshot."""
    rng = random.Random(SEED + 2)
    model = EngineModel(spark, DDL, unique_key="id")
    snapshot = next_snapshot(rng, {})
    model.refresh(rows_of(snapshot))
    harmless = sorted(set(DISTURBANCES) - MAIN_UNTRUSTED - STAGING_TOUCHED)
    drawn = [rng.choice(harmless), rng.choice(sorted(MAIN_UNTRUSTED))]
    drawn.append(rng.choice(sorted(STAGING_TOUCHED - {"staging rewritten alike"})))
    plan = rng.sample([*drawn, "staging rewritten alike"], len(drawn) + 1)
    vnodes = 8
    for what in plan:
        if what == "staging rewritten alike":
            rewrite_staging_alike(model)
        else:
            disturb(model, what, rng, snapshot)
        if what == "vnodes changed":
            vnodes = 16 if vnodes == 8 else 8
        before = staging_version(model)
        again = model.refresh(rng.sample(rows_of(snapshot), len(snapshot)), vnodes=vnodes)
        context = f"seed {SEED + 2}, the same snapshot after '{what}'"
        kept = staging_version(model) == before
        assert kept is (what not in MAIN_UNTRUSTED | STAGING_TOUCHED), context
        assert not kept or again.rows_affected == 0, context
        assert again.diff_read_main is (what in MAIN_UNTRUSTED), context
        assert exactly(model.main()) == exactly(rows_of(snapshot)), context
        recorded = LastSnapshot.parse(model.state().last_columns).staging_version
        assert recorded == staging_version(model), context  # what the proof test reads
        at = f"{model.tables.staging} VERSION AS OF {recorded}"
        staged = spark.sql(f"SELECT id, v, d FROM {at}").collect()
        assert exactly([tuple(r) for r in staged]) == exactly(rows_of(snapshot)), context
        snapshot = next_snapshot(rng, snapshot)
        result = model.refresh(rows_of(snapshot), vnodes=vnodes)
        assert exactly(model.main()) == exactly(rows_of(snapshot)), context
        assert not result.diff_read_main and staging_version(model) != recorded, context


def test_a_cycle_crashed_after_keeping_staging_leaves_the_index_whole(spark):
    """The last snapshot again, crashed after the check that kept staging (the load's crash
    point: REFRESHING left by a gone owner): nothing was written, the next run starts a new
    cycle that keeps staging again, and the next changed snapshot is diffed through the
    index, main equal to it."""
    rng = random.Random(SEED + 3)
    model = EngineModel(spark, DDL, unique_key="id")
    snapshot = next_snapshot(rng, {})
    model.refresh(rows_of(snapshot))
    kept, main_version = staging_version(model), model.version()
    with injected("loading:raise"), pytest.raises(InjectedFault, match="loading"):
        model.refresh(rng.sample(rows_of(snapshot), len(snapshot)))
    assert model.state().phase == "REFRESHING", "left as a crash leaves it"
    assert (staging_version(model), model.version()) == (kept, main_version)
    again = model.refresh(rows_of(snapshot))
    assert again.rows_affected == 0 and staging_version(model) == kept
    assert model.state().phase == "IDLE"
    snapshot = next_snapshot(rng, snapshot)
    result = model.refresh(rows_of(snapshot))
    assert not result.diff_read_main
    assert exactly(model.main()) == exactly(rows_of(snapshot))


def alike_in_size(rng: random.Random, current: dict[int, tuple]) -> dict[int, tuple]:
    """``current`` changed without changing its row count: values moved between keys, a
    zero's sign flipped, a key renamed, or a row replaced by a copy of another (a duplicate
    key). The rows the index must not take for the last snapshot again."""
    rows = list(current.values())
    a, b = rng.sample(range(len(rows)), 2)
    (ka, va, da), (kb, vb, db) = rows[a], rows[b]
    mutation = rng.choice(["values swapped", "zero's sign", "key renamed", "duplicate"])
    if mutation == "values swapped":
        rows[a], rows[b] = (ka, vb, db), (kb, va, da)
    elif mutation == "zero's sign":
        rows[a] = (ka, va, -0.0 if str(da) == "0.0" else 0.0)
    elif mutation == "key renamed":
        rows[a] = (IDS + rng.randrange(100), va, da)
    else:
        rows[a] = rows[b]
    changed = {i: row for i, row in enumerate(rows)}
    if sorted(map(repr, changed.values())) == sorted(map(repr, rows_of(current))):
        return alike_in_size(rng, current)  # the swap met two equal rows
    return changed


def rows_per_vnode(model: EngineModel, rows: list[tuple]) -> tuple[int, ...]:
    """How many of ``rows`` (keyed by their first value) each vnode of the model holds."""
    vnodes = model.vnodes_of({row[0] for row in rows})
    count = model.layout().count
    return tuple(sum(1 for row in rows if vnodes[row[0]] == v) for v in range(count))


def rows_of(snapshot: dict[int, tuple]) -> list[tuple]:
    return list(snapshot.values())


def exactly(rows: list[tuple]) -> list[str]:
    """Rows as text: -0.0 and 0.0 differ (Python's tuples compare them equal)."""
    return sorted(map(repr, rows))


def test_only_the_last_snapshot_again_is_not_diffed(spark):
    """A snapshot with the last one's rows and checksum is not diffed (main holds it); any
    other of the same size is, and main then equals it, also one with a zero's sign flipped;
    a main changed by another writer is diffed against the same snapshot again."""
    rng = random.Random(SEED + 1)
    model = EngineModel(spark, DDL, unique_key="id")
    snapshot = {k: (k, rng.choice(["a", "b", None]), rng.choice([0.0, 1.5])) for k in range(12)}
    model.refresh(rows_of(snapshot))
    shuffled = rng.sample(rows_of(snapshot), len(snapshot))
    again = model.refresh(shuffled)
    assert again.diff_skipped and again.rows_affected == 0, again.message
    for _ in range(3):
        alike = alike_in_size(rng, snapshot)
        keys = [row[0] for row in rows_of(alike)]
        if len(set(keys)) < len(keys):
            with pytest.raises(SnapshotRejectedError, match="duplicate unique_key"):
                model.refresh(rows_of(alike))
            continue
        result = model.refresh(rows_of(alike))
        assert not result.diff_skipped and result.rows_affected > 0, (alike, result.message)
        assert exactly(model.main()) == exactly(rows_of(alike))
        snapshot = alike
    spark.sql(f"UPDATE {model.tables.main} SET v = 'outside' WHERE id = {rows_of(snapshot)[0][0]}")
    corrected = model.refresh(rows_of(snapshot))
    assert not corrected.diff_skipped and corrected.diff_read_main, corrected.message
    assert exactly(model.main()) == exactly(rows_of(snapshot))


def test_stagings_write_counts_what_the_diff_needs_of_it(spark, monkeypatch):
    """Staging's overwrite counts its rows, checksum and NULL keys as it writes them (Spark's
    observed metrics), and with the index no job sums staging: the last snapshot again
    (told before the load, or, where staging was rewritten outside the engine, by the
    write's totals) and a changed one, whose rows per vnode are the index's plus the diff's
    inserts less its deletes. Where the last snapshot has more rows than a write counts, or
    the write reports nothing, a job sums staging."""
    summed: list[str] = []
    summarize = diff.summarize_staging
    monkeypatch.setattr(
        diff, "summarize_staging", lambda *args: summed.append("job") or summarize(*args)
    )
    model = EngineModel(spark, DDL, unique_key="id", vnodes=4)

    def again_with_staging_rewritten(rows: list[tuple]) -> RefreshResult:
        rewrite_staging_alike(model)
        before = staging_version(model)
        again = model.refresh(rows)
        assert staging_version(model) == before + 1, again.message
        return again

    rows = [(k, "a", 1.5) for k in range(12)]
    model.refresh(rows)
    before = staging_version(model)
    again = model.refresh(list(reversed(rows)))
    assert again.diff_skipped and again.rows_affected == 0, again.message
    assert staging_version(model) == before, "the snapshot again: staging not rewritten"
    again = again_with_staging_rewritten(rows)
    assert again.diff_skipped and again.rows_affected == 0, again.message
    assert summed == [] and model.vnode_rows() == rows_per_vnode(model, rows)
    changed = [(k, "b" if k == 3 else "a", -0.0 if k == 7 else 1.5) for k in range(2, 12)]
    changed += [(k, "new", None) for k in range(20, 27)]
    result = model.refresh(changed)
    assert not result.diff_skipped, result.message
    assert (result.rows_inserted, result.rows_updated, result.rows_deleted) == (7, 2, 2)
    assert summed == [] and model.vnode_rows() == rows_per_vnode(model, changed)
    assert exactly(model.main()) == exactly(changed)

    monkeypatch.setattr(load, "COUNTED_WRITE_MAX_ROWS", len(changed) - 1)  # too many to count
    again = again_with_staging_rewritten(changed)
    assert again.diff_skipped and summed == ["job"], again.message
    monkeypatch.setattr(load, "COUNTED_WRITE_MAX_ROWS", len(changed))
    replace = load.replace_scratch_table
    monkeypatch.setattr(load, "replace_scratch_table", lambda frame, name, _: replace(frame, name))
    again = again_with_staging_rewritten(changed)
    assert again.diff_skipped and summed == ["job", "job"], again.message
    assert model.vnode_rows() == rows_per_vnode(model, changed)


def test_the_index_is_read_as_staging_held_it_before_the_load(spark, monkeypatch):
    """The index's view of staging (``diff.pinned_index``) is resolved before the load
    overwrites staging and reads that version's rows after it; the change cycle's diff
    reads the index through it and drops it, as a block that fails does. An index whose
    version cannot be resolved is read by version, which the diff then refuses with the
    reason."""
    pinned: list[diff.MainIndex | None] = []
    pin = diff.pinned_index

    @contextlib.contextmanager
    def recorded(*args):
        with pin(*args) as index:
            pinned.append(index)
            yield index

    monkeypatch.setattr(diff, "pinned_index", recorded)
    model = EngineModel(spark, DDL, unique_key="id")
    model.refresh([(1, "a", 1.0), (2, "b", 2.0)])
    result = model.refresh([(1, "a", 1.0), (2, "c", 2.0), (3, None, None)])
    assert pinned[0] is None and pinned[1] is not None and pinned[1].view is not None
    assert not result.diff_read_main and model.main() == [
        (1, "a", 1.0),
        (2, "c", 2.0),
        (3, None, None),
    ]
    assert not spark.catalog.tableExists(pinned[1].view)

    version = model.table_version("staging")
    index = diff.MainIndex(version, 3, "0", ())
    with pin(spark, model.tables, index, "pinned_staging") as held:
        spark.sql(
            f"INSERT OVERWRITE {model.tables.staging} SELECT * FROM {model.tables.staging} LIMIT 1"
        )
        rows = spark.sql(held.sql(model.tables, ("id",), None)).count()
    assert held.view == "pinned_staging" and rows == 3
    assert not spark.catalog.tableExists("pinned_staging")
    with pytest.raises(ZeroDivisionError), pin(spark, model.tables, index, "pinned_staging"):
        assert spark.catalog.tableExists("pinned_staging")
        raise ZeroDivisionError  # a failed cycle drops the view too
    assert not spark.catalog.tableExists("pinned_staging")
    gone = diff.MainIndex(version + 50, 3, "0", ())
    with pin(spark, model.tables, gone, "pinned_staging") as unresolved:
        assert unresolved == gone and not spark.catalog.tableExists("pinned_staging")
