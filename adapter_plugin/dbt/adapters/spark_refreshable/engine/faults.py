"""The named points of a refresh where a test may stop it, as a crash would.

The engine only announces each point it reaches (``RefreshRun`` calls ``reached`` on the
hook ``for_run`` gives it); nothing happens there unless a test installed a fault with
``install`` (the suite's faults: tests/support/faults.py, in-process and in the `dbt`
processes it starts). Nothing in a user's run reads or sets one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

POINTS = (
    "replaced",  # --full-refresh: main replaced (or not), the bookkeeping tables not dropped
    "loading",  # staging written, not yet validated: the cycle is still REFRESHING
    "finishing",  # the cycle's plan committed (see cycle_plan), before the first chunk
    "chunk_committed",  # a chunk's main commit is done, its progress write is not
    "chunk_done",  # a chunk's progress is written (mid-merge)
    "merged",  # every chunk merged and checkpointed, state not yet IDLE
    "compacting",  # the cycle is IDLE, main's compaction (if it needs one) not yet run
    "vacuuming",  # the cycle is IDLE, a scratch table's due vacuum not yet run
)


class FaultHook(Protocol):
    def reached(self, point: str) -> None:
        """Called each time a refresh reaches ``point`` (one of POINTS)."""


class _NoFaults:
    def reached(self, point: str) -> None:
        return None


NO_FAULTS: FaultHook = _NoFaults()
# what gives each refresh its own hook, once a test installed a fault
_installed: list[Callable[[], FaultHook]] = []


def install(hook_for_run: Callable[[], FaultHook] | None) -> None:
    """From now on, each refresh in this process gets a hook of its own from
    ``hook_for_run`` (None: no faults again)."""
    _installed[:] = [hook_for_run] if hook_for_run is not None else []


def for_run() -> FaultHook:
    """The hook of a refresh starting now: the installed fault's, else one that does nothing."""
    return _installed[0]() if _installed else NO_FAULTS
