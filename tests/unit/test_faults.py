"""Crash points: the engine's hook does nothing unless a test installs a fault; a fault is
parsed strictly and fires exactly once, at the asked occurrence, in each refresh."""

import subprocess
import sys

import pytest

from dbt.adapters.spark_refreshable.engine import faults
from dbt.adapters.spark_refreshable.engine.errors import InjectedFault
from tests.support.faults import FAULT_ENV, FaultPlan, injected
from tests.support.profiles import ROOT


def reach_every_point(hook: faults.FaultHook) -> None:
    for point in faults.POINTS:
        hook.reached(point)


def test_a_refresh_reaches_every_point_harmlessly_without_an_installed_fault():
    reach_every_point(faults.for_run())


def test_fires_at_the_nth_occurrence_only():
    plan = FaultPlan("chunk_done@2")
    plan.reached("chunk_done")
    plan.reached("chunk_committed")
    with pytest.raises(InjectedFault, match="chunk_done #2"):
        plan.reached("chunk_done")
    plan.reached("chunk_done")


def test_each_refresh_counts_its_own_occurrences_and_the_fault_ends_with_its_block():
    with injected("finishing"):
        for _ in range(2):  # two refreshes: each meets the fault at its own first time
            with pytest.raises(InjectedFault, match="finishing #1"):
                faults.for_run().reached("finishing")
    reach_every_point(faults.for_run())


@pytest.mark.parametrize("spec", ["somewhere:raise", "chunk_done:explode"])
def test_an_unknown_point_or_action_is_refused(spec):
    with pytest.raises(ValueError, match="point must be one of"), injected(spec):
        pass


def test_the_launcher_installs_the_fault_its_environment_names():
    """What a `dbt` process the suite starts runs before dbt (tests/support/dbt_launcher.py)."""
    script = (
        "import runpy, sys; sys.argv = ['dbt', '--version'];"
        "from dbt.adapters.spark_refreshable.engine import faults;"
        "import dbt.cli.main; dbt.cli.main.cli = lambda: print(type(faults.for_run()).__name__);"
        f"runpy.run_path({str(ROOT / 'tests/support/dbt_launcher.py')!r}, run_name='__main__')"
    )
    run = subprocess.run(
        [sys.executable, "-c", script],
        env={FAULT_ENV: "merged:kill", "PATH": ""},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.stdout.strip() == "FaultPlan", run.stderr[-2000:]
