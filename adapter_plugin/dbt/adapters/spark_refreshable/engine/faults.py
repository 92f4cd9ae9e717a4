"""Named crash points, for tests of recovery. Off unless DBT_REFRESHABLE_FAULT is set.

``DBT_REFRESHABLE_FAULT=<point>[@<n>][:raise|:kill]`` stops the engine at the n-th time
(default 1st) this run reaches ``point``: ``raise`` raises :class:`InjectedFault`;
``kill`` sends SIGKILL to this process, as a crash would.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

from dbt.adapters.spark_refreshable.engine.errors import InjectedFault

FAULT_ENV = "DBT_REFRESHABLE_FAULT"

POINTS = (
    "loading",  # staging written, not yet validated: the cycle is still REFRESHING
    "finishing",  # the cycle's plan committed (see cycle_plan), before the first chunk
    "chunk_committed",  # a chunk's main commit is done, its progress write is not
    "chunk_done",  # a chunk's progress is written (mid-merge)
    "merged",  # every chunk merged and checkpointed, state not yet IDLE
)


class FaultPlan:
    def __init__(self, spec: str | None = None) -> None:
        spec = os.environ.get(FAULT_ENV, "") if spec is None else spec
        self.point: str | None = None
        self.ordinal = 1
        self.action = "raise"
        self._seen: Counter[str] = Counter()
        if not spec:
            return
        point, _, action = spec.partition(":")
        point, _, ordinal = point.partition("@")
        if point not in POINTS or action not in ("", "raise", "kill"):
            raise ValueError(
                f"{FAULT_ENV}={spec!r}: point must be one of {POINTS}, action raise|kill"
            )
        self.point, self.action = point, action or "raise"
        self.ordinal = int(ordinal or 1)

    def reached(self, point: str) -> None:
        self._seen[point] += 1
        if point != self.point or self._seen[point] != self.ordinal:
            return
        if self.action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise InjectedFault(f"injected fault at {point} #{self.ordinal} ({FAULT_ENV})")
