"""Crashes on purpose, at the engine's named points (engine/faults.py POINTS): installed
in this process (``injected``) or, for a `dbt` process the suite starts, named in its
environment (FAULT_ENV) and installed by tests/support/dbt_launcher.py before dbt runs.

A fault is ``<point>[@<n>][:raise|:kill]``: the n-th time (default the 1st) one refresh
reaches ``point``, ``raise`` raises :class:`InjectedFault`; ``kill`` sends SIGKILL to the
process, as a crash would. In-process, ``acting_at`` runs a statement at a point instead, as
another writer acting at that moment.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from dbt.adapters.spark_refreshable.engine import faults
from dbt.adapters.spark_refreshable.engine.errors import InjectedFault

FAULT_ENV = "REFRESHABLE_TEST_FAULT"


class FaultPlan:
    """One refresh's fault: fires once, at the asked occurrence of its point."""

    def __init__(self, spec: str) -> None:
        point, _, action = spec.partition(":")
        point, _, ordinal = point.partition("@")
        if point not in faults.POINTS or action not in ("", "raise", "kill"):
            raise ValueError(
                f"fault {spec!r}: point must be one of {faults.POINTS}, action raise|kill"
            )
        self.point = point
        self.action = action or "raise"
        self.ordinal = int(ordinal or 1)
        self._seen: Counter[str] = Counter()

    def reached(self, point: str) -> None:
        self._seen[point] += 1
        if point != self.point or self._seen[point] != self.ordinal:
            return
        if self.action == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise InjectedFault(f"injected fault at {point} #{self.ordinal}")


@contextmanager
def injected(spec: str) -> Iterator[None]:
    """Every refresh of this process inside the block stops at ``spec``'s point."""
    FaultPlan(spec)  # refused here, not in the refresh, if malformed
    faults.install(lambda: FaultPlan(spec))
    try:
        yield
    finally:
        faults.install(None)


class ActAt:
    """One refresh's hook that runs ``action`` the first time the refresh reaches ``point``:
    what another writer did at that moment."""

    def __init__(self, point: str, action: Callable[[], None]) -> None:
        if point not in faults.POINTS:
            raise ValueError(f"point {point!r} is not one of {faults.POINTS}")
        self.point, self.action, self.done = point, action, False

    def reached(self, point: str) -> None:
        if point == self.point and not self.done:
            self.done = True
            self.action()


@contextmanager
def acting_at(point: str, action: Callable[[], None]) -> Iterator[None]:
    """Every refresh of this process inside the block runs ``action`` at ``point``."""
    faults.install(lambda: ActAt(point, action))
    try:
        yield
    finally:
        faults.install(None)


def install_from_env() -> None:
    """The fault FAULT_ENV names, for every refresh of this process (none if unset)."""
    spec = os.environ.get(FAULT_ENV)
    if spec:
        FaultPlan(spec)
        faults.install(lambda: FaultPlan(spec))
