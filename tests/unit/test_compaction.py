"""When main is compacted: enough files, and small ones; which of its files are small."""

from __future__ import annotations

import pytest

from dbt.adapters.spark_refreshable.engine.compaction import SmallFiles, needs_compaction

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


# bins of Delta's file-size histogram: [0, 8 KiB), [8 KiB, 16 KiB) ... [2 MiB, 4 MiB), 4 MiB on
BOUNDS = [0, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304]


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        # two files of 1-2 MiB: a quarter of 1 MiB is 256 KiB; three files under it
        ([1, 0, 2, 0, 0, 0, 0, 0, 2, 0, 0], SmallFiles(3, 262144)),
        # a file of 256-512 KiB beside one of 1-2 MiB: not certainly under a quarter of it
        ([0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0], SmallFiles(0, 262144)),
        # a file in the last bin (4 MiB and more): a quarter of 4 MiB is 1 MiB
        ([0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1], SmallFiles(2, 1048576)),
        # files of under 32 KiB only: none is small beside the others
        ([3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0], SmallFiles(0, 0)),
        ([0] * 11, SmallFiles(0, 0)),  # an empty main
    ],
)
def test_small_files_from_a_histogram(counts, expected):
    assert SmallFiles.of_histogram(BOUNDS, counts) == expected
