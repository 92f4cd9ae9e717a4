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
from dataclasses import dataclass, fields, replace
from typing import Any

from dbt.adapters.spark_refreshable.engine.commits import recent_commits
from dbt.adapters.spark_refreshable.engine.merge import cycle_tag
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.progress import Chunk
from dbt.adapters.spark_refreshable.engine.state import Phase, State
from dbt.adapters.spark_refreshable.engine.tables import table_exists

PLAN_TAG = "plan:"
# the change set's commits searched for a cycle's plan when the latest is not it
PLAN_SEARCH = 32


@dataclass(frozen=True)
class CyclePlan:
    """What a cycle's chunks merge, and against which versions, as its load planned it.
    Kept as one JSON object: the schema plan's fields (``tables.SchemaPlan.to_json``) beside
    the cycle's own. A plan an earlier version stored may lack a field: it reads as None."""

    schema_plan: dict[str, Any]  # an earlier version's: column names and keys, no types
    base_version: int | None  # main's version the diff read; None: main did not exist
    main_id: str | None  # main's table id as the diff found it
    staging_version: int | None
    changes_version: int | None  # the change set's commit that carries this plan
    chunks: tuple[Chunk, ...]
    changes: dict[str, dict[int, int]] | None  # changed rows per op and vnode
    vnode_rows: tuple[int, ...]  # the snapshot's rows per vnode
    vnode_layout: dict[str, Any] | None  # ``VnodeLayout.to_json``
    inputs: dict[str, Any] | None  # ``Inputs.to_json``: what the snapshot read
    failed_on_resume: str | None = None  # the error of a resume that failed

    def to_json(self) -> dict[str, Any]:
        own = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "schema_plan"}
        return {
            **self.schema_plan,
            **own,
            "chunks": [chunk.to_json() for chunk in self.chunks],
            "vnode_rows": list(self.vnode_rows),
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> CyclePlan:
        own = {f.name for f in fields(cls)} - {"schema_plan"}
        changes = value.get("changes")  # JSON: vnodes as strings
        return cls(
            schema_plan={k: v for k, v in value.items() if k not in own},
            base_version=value["base_version"],
            main_id=value.get("main_id"),
            staging_version=value.get("staging_version"),
            changes_version=value.get("changes_version"),
            chunks=tuple(Chunk.from_json(i, c) for i, c in enumerate(value["chunks"])),
            changes=None
            if changes is None
            else {op: {int(v): n for v, n in by.items()} for op, by in changes.items()},
            vnode_rows=tuple(value.get("vnode_rows") or ()),
            vnode_layout=value.get("vnode_layout"),
            inputs=value.get("inputs"),
            failed_on_resume=value.get("failed_on_resume"),
        )


@dataclass(frozen=True)
class LoadedCycle:
    """A cycle whose staging and change set are whole, as its plan was committed, or as
    this run's load left it when it has nothing to merge."""

    refresh_id: str
    vnodes: int
    snapshot_rows: int
    snapshot_checksum: str
    plan: CyclePlan

    @classmethod
    def of_state(cls, state: State) -> LoadedCycle:
        """The cycle a state row in FINISHING holds."""
        return cls(
            state.refresh_id,
            state.vnodes,
            state.snapshot_rows,
            state.snapshot_checksum,
            CyclePlan.from_json(json.loads(state.cycle_plan)),
        )

    def state_fields(self) -> dict[str, Any]:
        """The state row's fields that a move to FINISHING stores (``of_state`` reads them
        back; refresh_id is already the row's)."""
        return {
            "vnodes": self.vnodes,
            "chunks_total": len(self.plan.chunks),
            "snapshot_rows": self.snapshot_rows,
            "snapshot_checksum": self.snapshot_checksum,
            "cycle_plan": json.dumps(self.plan.to_json()),
        }

    def with_plan(self, **changes: Any) -> LoadedCycle:
        return replace(self, plan=replace(self.plan, **changes))

    def changes_tag(self) -> str:
        """The ``userMetadata`` of the change set's commit: the cycle's id and plan, but
        ``changes_version``, the version of that very commit (``from_changes_commit``)."""
        tagged = {k: v for k, v in self.state_fields().items() if k != "chunks_total"}
        return f"{cycle_tag(self.refresh_id)}{PLAN_TAG}{json.dumps(tagged)}"

    @classmethod
    def from_changes_commit(cls, commit: Any, refresh_id: str) -> LoadedCycle | None:
        """The cycle ``refresh_id`` as the change set's commit (``commits.recent_commits``)
        planned it; None when that commit is not this cycle's plan."""
        prefix = f"{cycle_tag(refresh_id)}{PLAN_TAG}"
        tag = commit["userMetadata"] or ""
        if not tag.startswith(prefix):
            return None
        tagged = json.loads(tag[len(prefix) :])
        stored = {**json.loads(tagged["cycle_plan"]), "changes_version": int(commit["version"])}
        return cls(
            refresh_id,
            tagged["vnodes"],
            tagged["snapshot_rows"],
            tagged["snapshot_checksum"],
            CyclePlan.from_json(stored),
        )


def committed_cycle(spark: Any, tables: ModelTables, refresh_id: str) -> LoadedCycle | None:
    """The cycle ``refresh_id`` as the change set's commit carries it: the latest commit
    (one commit read), else one of the ``PLAN_SEARCH`` before it, since a run that
    lost its lease may have rewritten the change set after it. None: no such commit."""
    for limit in (1, PLAN_SEARCH):
        for commit in recent_commits(spark, tables.changes, limit):
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
