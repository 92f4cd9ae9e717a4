"""What a run must do first, given the state it found when it took the lease.

=====================  =============================================================
found                  first action
=====================  =============================================================
IDLE                   nothing: a new cycle starts (the lease moved it to REFRESHING)
REFRESHING, the        staging and the change set are whole (``cycle_plan``): resume
change set carries     the merge from progress and main's history, skipping done
its cycle's plan       chunks, then IDLE. The model is not run again for that cycle.
REFRESHING, else       the load of a gone owner may be partial: never merge it.
                       Restart the cycle with a new refresh id; its load overwrites
                       staging.
FINISHING              as for a plan in the change set: resume the merge (a first
                       build's, or one that failed or was stopped).
CLEANUP                (left by 0.1.0, whose cleanup emptied tables) finish
                       it, then start a new cycle: a new cycle never overlaps it.
=====================  =============================================================
"""

from __future__ import annotations

from enum import Enum

from dbt.adapters.spark_refreshable.engine.state import Phase, State


class Recovery(str, Enum):
    NONE = "none"
    DISCARD_PARTIAL_LOAD = "discard_partial_load"
    RESUME_MERGE = "resume_merge"
    FINISH_CLEANUP = "finish_cleanup"


def recovery_for(found: State, plan_committed: bool) -> Recovery:
    """``plan_committed``: the cycle ``found`` holds has its plan committed (FINISHING, or
    REFRESHING with the plan in the change set's commit)."""
    if found.current_phase is Phase.REFRESHING and plan_committed:
        return Recovery.RESUME_MERGE
    return {
        Phase.IDLE: Recovery.NONE,
        Phase.REFRESHING: Recovery.DISCARD_PARTIAL_LOAD,
        Phase.FINISHING: Recovery.RESUME_MERGE,
        Phase.CLEANUP: Recovery.FINISH_CLEANUP,
    }[found.current_phase]


def describe(recovery: Recovery, found: State) -> str:
    who = found.owner_description()
    return {
        Recovery.NONE: "",
        Recovery.DISCARD_PARTIAL_LOAD: (
            f"recovering: the load of cycle {found.refresh_id} by {who} did not finish; "
            f"discarding its staging and starting a new cycle"
        ),
        Recovery.RESUME_MERGE: (
            f"recovering: resuming the merge of cycle {found.refresh_id} (left by {who}) "
            f"from its last checkpoint"
        ),
        Recovery.FINISH_CLEANUP: (
            f"recovering: finishing the cleanup of cycle {found.refresh_id} (left by {who}) "
            f"before a new cycle"
        ),
    }[recovery]
