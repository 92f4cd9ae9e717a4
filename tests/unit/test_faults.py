"""Crash points for tests: parsed strictly, fired exactly once at the asked occurrence."""

import pytest

from dbt.adapters.spark_refreshable.engine.errors import InjectedFault
from dbt.adapters.spark_refreshable.engine.faults import FaultPlan


def test_off_by_default():
    plan = FaultPlan("")
    for point in ("loading", "finishing", "chunk_done"):
        plan.reached(point)


def test_fires_at_the_nth_occurrence_only():
    plan = FaultPlan("chunk_done@2")
    plan.reached("chunk_done")
    plan.reached("chunk_committed")
    with pytest.raises(InjectedFault, match="chunk_done #2"):
        plan.reached("chunk_done")
    plan.reached("chunk_done")


def test_unknown_point_is_refused():
    with pytest.raises(ValueError, match="point must be one of"):
        FaultPlan("somewhere:raise")
