"""When main is compacted: enough files, and small ones."""

from __future__ import annotations

import pytest

from dbt.adapters.spark_refreshable.engine.compaction import needs_compaction

GIB = 1024**3


@pytest.mark.parametrize(
    ("files", "size", "after_files", "expected"),
    [
        (15, 15 * 2**20, 16, False),  # below the threshold
        (16, 16 * 2**20, 16, True),  # at it, small files
        (16, 16 * GIB, 16, False),  # at it, files as large as OPTIMIZE writes
        (1000, 1000 * 2**20, 0, False),  # 0: never
    ],
)
def test_needs_compaction(files, size, after_files, expected):
    assert needs_compaction(files, size, after_files, GIB) is expected
