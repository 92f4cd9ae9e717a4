"""A loaded cycle's plan through the change set's commit tag, and what recovery does with the
state it finds (engine/cycle_plan.py, engine/recovery.py)."""

import json

import pytest

from dbt.adapters.spark_refreshable.engine.cycle_plan import CyclePlan, LoadedCycle
from dbt.adapters.spark_refreshable.engine.progress import Chunk
from dbt.adapters.spark_refreshable.engine.recovery import Recovery, recovery_for
from dbt.adapters.spark_refreshable.engine.state import Phase, State

PLAN = {
    "base_version": 4,
    "staging_version": 9,
    "changes_version": None,
    "chunks": [[0, 3, 12], [4, 7, 30]],
    "changes": {"I": {"0": 2}, "U": {"5": 40}},
    "vnode_rows": [3, 0, 1, 7, 2, 2, 9, 1],
    'name with "quotes", spaces and é': "ünïcode ✓",
}
CYCLE = LoadedCycle("abc123", 8, 1_000, "-42", CyclePlan.from_json(PLAN))
# a plan as this version stores it: the schema plan's fields beside the cycle's own
FULL_PLAN = {
    "schema": {"type": "struct", "fields": []},
    "keys": ["id"],
    "add": [],
    "drop": [],
    "base_version": 4,
    "main_id": "0f1e",
    "staging_version": 9,
    "changes_version": 12,
    "chunks": [[0, 3, 12]],
    "changes": {"U": {"2": 12}},
    "vnode_rows": [3, 0, 1, 7],
    "vnode_layout": {"vnodes": 4, "column": None, "column_type": None, "bounds": []},
    "inputs": {"fingerprint": "f", "tables": {}},
    "failed_on_resume": None,
}


def commit(tag: str | None, version: int = 17) -> dict:
    """A commit (``commits.recent_commits``), as far as the plan is read from it."""
    return {"userMetadata": tag, "version": version}


def test_a_plan_reads_back_as_it_was_stored_and_typed():
    plan = CyclePlan.from_json(FULL_PLAN)
    assert json.loads(json.dumps(plan.to_json())) == FULL_PLAN
    assert plan.chunks == (Chunk(0, 0, 3, 12),)
    assert plan.changes == {"U": {2: 12}}, "vnodes as numbers, not JSON's strings"
    assert plan.schema_plan == {k: FULL_PLAN[k] for k in ("schema", "keys", "add", "drop")}


def test_a_plan_an_earlier_version_stored_reads_its_missing_fields_as_none():
    plan = CyclePlan.from_json(PLAN)
    assert (plan.main_id, plan.vnode_layout, plan.inputs, plan.failed_on_resume) == (None,) * 4
    assert plan.vnode_rows == (3, 0, 1, 7, 2, 2, 9, 1)
    assert plan.schema_plan == {'name with "quotes", spaces and é': "ünïcode ✓"}


def test_the_change_sets_commit_carries_the_whole_plan_and_its_own_version():
    found = LoadedCycle.from_changes_commit(commit(CYCLE.changes_tag()), "abc123")
    assert found == CYCLE.with_plan(changes_version=17)
    assert found.state_fields()["chunks_total"] == 2
    assert found.plan.changes_version == 17
    assert json.loads(found.state_fields()["cycle_plan"])["changes_version"] == 17


@pytest.mark.parametrize(
    "tag",
    [
        None,
        "",
        "dbt-refreshable:other:plan:{}",  # another cycle's plan
        "dbt-refreshable:abc123:chunk:0",  # a chunk's tag, not a plan
        "dbt-refreshable:abc1234:plan:{}",  # an id that merely starts like it
    ],
)
def test_a_commit_that_is_not_this_cycles_plan_is_none(tag):
    assert LoadedCycle.from_changes_commit(commit(tag), "abc123") is None


@pytest.mark.parametrize(
    ("phase", "committed", "recovery"),
    [
        (Phase.IDLE, False, Recovery.NONE),
        (Phase.REFRESHING, False, Recovery.DISCARD_PARTIAL_LOAD),
        (Phase.REFRESHING, True, Recovery.RESUME_MERGE),
        (Phase.FINISHING, True, Recovery.RESUME_MERGE),
        (Phase.CLEANUP, False, Recovery.FINISH_CLEANUP),
    ],
)
def test_recovery_resumes_exactly_the_cycles_whose_plan_is_committed(phase, committed, recovery):
    assert recovery_for(State(phase=phase.value, refresh_id="abc123"), committed) is recovery
