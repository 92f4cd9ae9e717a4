"""A loaded cycle's plan, and where it is kept while the cycle merges.

A cycle is resumable once its staging and change set are whole. Its plan (schema, the
versions it read and wrote, its chunks and counts) is kept by the commit that made it so:

- a cycle that diffed against main: the change set's own commit (its ``userMetadata``),
  so the state row stays REFRESHING through the merge and the cycle makes no state commit
  between its lease and its move to IDLE;
- a first build (staging itself is the change set, no change set is written), or a merge
  that failed or was stopped: the state row, moved to FINISHING.

A run that finds REFRESHING left by a gone owner resumes the cycle when a commit of the
change set carries that cycle's plan (``resumable_cycle``), and discards it otherwise. The
chunks read the change set at that commit's version, whatever was written after it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from dbt.adapters.spark_refreshable.engine.merge import cycle_tag
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.state import Phase, State
from dbt.adapters.spark_refreshable.engine.tables import table_exists

PLAN_TAG = "plan:"
# the change set's commits searched for a cycle's plan when the latest is not it
PLAN_SEARCH = 32


@dataclass(frozen=True)
class LoadedCycle:
    """A cycle whose staging and change set are whole, as its plan was committed, or as
    this run's load left it when it has nothing to merge."""

    refresh_id: str
    vnodes: int
    snapshot_rows: int
    snapshot_checksum: str
    plan: dict[str, Any]  # the cycle plan: schema, versions, chunks, counts, inputs

    @classmethod
    def of_state(cls, state: State) -> LoadedCycle:
        """The cycle a state row in FINISHING holds."""
        return cls(
            state.refresh_id,
            state.vnodes,
            state.snapshot_rows,
            state.snapshot_checksum,
            json.loads(state.cycle_plan),
        )

    def state_fields(self) -> dict[str, Any]:
        """The state row's fields that a move to FINISHING stores (``of_state`` reads them
        back; refresh_id is already the row's)."""
        return {
            "vnodes": self.vnodes,
            "chunks_total": len(self.plan["chunks"]),
            "snapshot_rows": self.snapshot_rows,
            "snapshot_checksum": self.snapshot_checksum,
            "cycle_plan": json.dumps(self.plan),
        }

    def with_plan(self, **changes: Any) -> LoadedCycle:
        return replace(self, plan={**self.plan, **changes})

    def changes_tag(self) -> str:
        """The ``userMetadata`` of the change set's commit: the cycle's id and plan, but
        ``changes_version``, the version of that very commit (``from_changes_commit``)."""
        fields = {k: v for k, v in self.state_fields().items() if k != "chunks_total"}
        return f"{cycle_tag(self.refresh_id)}{PLAN_TAG}{json.dumps(fields)}"

    @classmethod
    def from_changes_commit(cls, commit: Any, refresh_id: str) -> LoadedCycle | None:
        """The cycle ``refresh_id`` as the change set's commit (a DESCRIBE HISTORY row)
        planned it; None when that commit is not this cycle's plan."""
        prefix = f"{cycle_tag(refresh_id)}{PLAN_TAG}"
        tag = commit["userMetadata"] or ""
        if not tag.startswith(prefix):
            return None
        fields = json.loads(tag[len(prefix) :])
        plan = {**json.loads(fields["cycle_plan"]), "changes_version": int(commit["version"])}
        return cls(
            refresh_id, fields["vnodes"], fields["snapshot_rows"], fields["snapshot_checksum"], plan
        )


def committed_cycle(spark: Any, tables: ModelTables, refresh_id: str) -> LoadedCycle | None:
    """The cycle ``refresh_id`` as the change set's commit carries it: the latest commit
    (one DESCRIBE HISTORY row), else one of the ``PLAN_SEARCH`` before it, since a run that
    lost its lease may have rewritten the change set after it. None: no such commit."""
    for limit in (1, PLAN_SEARCH):
        for commit in spark.sql(f"DESCRIBE HISTORY {tables.changes} LIMIT {limit}").collect():
            found = LoadedCycle.from_changes_commit(commit, refresh_id)
            if found is not None:
                return found
    return None


def resumable_cycle(spark: Any, tables: ModelTables, state: State) -> LoadedCycle | None:
    """The cycle ``state`` leaves to merge: FINISHING's, or REFRESHING's once the change set
    carries its plan. None: nothing to merge."""
    phase = state.current_phase
    if phase is Phase.FINISHING:
        return LoadedCycle.of_state(state)
    if phase is not Phase.REFRESHING or state.refresh_id is None:
        return None
    if not table_exists(spark, tables.changes):
        return None
    return committed_cycle(spark, tables, state.refresh_id)
