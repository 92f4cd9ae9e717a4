"""The diff reads main's keys and row hashes from the last completed snapshot in staging
(``diff.MainIndex``) only while main still holds exactly that snapshot. Generated sequences
of snapshots, with something done to main or staging between two refreshes: after each one
main equals the snapshot, and the diff read all of main exactly when it had to."""

from __future__ import annotations

import random

import pytest

from tests.functional.refreshable.engine_harness import EngineModel

SEED = 20261123
IDS = 60
DDL = "id INT, v STRING, d DOUBLE"

# what is done between two refreshes: (whether the next diff must read main, statements
# formatted with the tables, a key of main and a random number)
DISTURBANCES = {
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
