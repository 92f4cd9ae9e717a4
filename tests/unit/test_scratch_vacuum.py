"""Which versions of a scratch table a completed cycle vacuums at (engine/scratch_vacuum.py);
the vacuum itself: tests/functional/refreshable/test_scratch_vacuum.py."""

from __future__ import annotations

from dbt.adapters.spark_refreshable.engine.scratch_vacuum import VACUUM_EVERY_VERSIONS, is_due


def test_a_scratch_table_is_vacuumed_at_every_tenth_version():
    assert VACUUM_EVERY_VERSIONS == 10
    due = [v for v in range(0, 31) if is_due(v)]
    assert due == [10, 20, 30]
    assert not is_due(None)  # a cycle that wrote no change set
