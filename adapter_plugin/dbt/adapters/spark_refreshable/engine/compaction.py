"""Keeping main compact: every chunk's ``MERGE`` adds files to main (and, into a main of
``merge.REWRITE_FILES_BELOW_BYTES`` or more, deletion vectors to the files it touched), so
cycle after cycle main becomes many small files that every query lists and opens. After a
cycle that merged something the run compacts main with Delta's ``OPTIMIZE`` (bin-packing:
small files, and files with many deleted rows, rewritten into files of up to
``spark.databricks.delta.optimize.maxFileSize``), by one of two rules:

- main holds ``compact_after_files`` files or more and they are small on average: the whole
  table is bin-packed;
- main holds ``SMALL_FILES_TO_COMPACT`` files or more under a quarter of its largest files'
  size (the chunks' files beside the files a build wrote): those alone are bin-packed, with
  ``optimize.minFileSize`` set to that size for the statement, so that a large main is not
  rewritten to merge a few small files. Their count is read from the file-size histogram in
  the checksum file Delta writes beside main's newest commit (no Spark job); a main without
  one (Spark Connect gives no access to the log), or partitioned or clustered (``OPTIMIZE``
  bins each partition apart, and clusters a clustered table), has the first rule only.

``OPTIMIZE`` changes no row: the next cycle still reads main's keys and hashes from staging,
and a run that skips unchanged inputs still skips (both accept it as a row-less commit,
``commits.ROWLESS_OPERATIONS``). It runs after the cycle's move to IDLE, so a crash or a
failure in it leaves a completed cycle; it fails no run. ``compact_after_files: 0`` turns
both rules off.

Main's files and bytes are known without reading main again when the run loaded the cycle
and main holds nothing but the cycle's commits since: ``DESCRIBE DETAIL`` as the load read
it, plus what each chunk's ``MERGE`` added and removed (its commit's metrics, which count a
file given a deletion vector as neither); otherwise ``DESCRIBE DETAIL`` is read after the
cycle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from py4j.protocol import Py4JError
from pyspark.errors import PySparkException

from dbt.adapters.spark_refreshable.engine.commits import (
    jvm_json,
    latest_snapshot,
    session_confs,
    table_files,
)

MAX_FILE_SIZE_CONF = "spark.databricks.delta.optimize.maxFileSize"
MIN_FILE_SIZE_CONF = "spark.databricks.delta.optimize.minFileSize"
DEFAULT_MAX_FILE_BYTES = 1024**3
# main's small files are bin-packed once this many are there: after any cycle main holds its
# large files and at most two small ones more
SMALL_FILES_TO_COMPACT = 3
SMALL_FILE_FRACTION = 4  # a file under a quarter of main's largest files' size is small


@dataclass(frozen=True)
class MainFiles:
    """Main's data files and their bytes (as ``DESCRIBE DETAIL`` counts them)."""

    files: int
    size_bytes: int

    @classmethod
    def of_table(cls, spark: Any, main: str) -> MainFiles:
        return cls(*table_files(spark, main))

    def after(self, merge_metrics: dict[str, Any]) -> MainFiles:
        """Main after a ``MERGE`` commit with these metrics (DESCRIBE HISTORY's
        operationMetrics)."""

        def metric(name: str) -> int:
            return int(merge_metrics.get(name) or 0)

        return MainFiles(
            self.files + metric("numTargetFilesAdded") - metric("numTargetFilesRemoved"),
            self.size_bytes + metric("numTargetBytesAdded") - metric("numTargetBytesRemoved"),
        )


@dataclass(frozen=True)
class SmallFiles:
    """Main's files under ``under_bytes`` bytes, ``count`` of them."""

    count: int
    under_bytes: int

    @classmethod
    def of_histogram(cls, boundaries: Sequence[int], counts: Sequence[int]) -> SmallFiles:
        """From a file-size histogram: ``counts[i]`` files of ``boundaries[i]`` bytes or more
        and under ``boundaries[i + 1]`` (ascending from 0). The largest files are at least the
        lower bound of the highest bin that holds any; the small ones are those in bins that
        end at or below a quarter of it, so the limit is a bin boundary."""
        held = [bound for bound, count in zip(boundaries, counts, strict=True) if count]
        if not held:
            return cls(0, 0)
        under = max(bound for bound in boundaries if bound <= held[-1] // SMALL_FILE_FRACTION)
        ends = zip(boundaries[1:], counts, strict=False)
        return cls(sum(count for end, count in ends if end <= under), under)

    @classmethod
    def of_table(cls, spark: Any, main: str) -> SmallFiles | None:
        """Main's small files, from its newest checksum file; None when it has none to read,
        or main is partitioned or clustered (see the module)."""
        snapshot = latest_snapshot(spark, main)
        if snapshot is None:
            return None
        try:
            clustering = spark._jvm.org.apache.spark.sql.delta.skipping.clustering
            if not snapshot.metadata().partitionColumns().isEmpty() or (
                clustering.ClusteredTableUtils.isSupported(snapshot.protocol())
            ):
                return None
            checksum = snapshot.checksumOpt()
            histogram = checksum.get().fileSizeHistogram() if checksum.isDefined() else None
            if histogram is None or not histogram.isDefined():
                return None
            found = jvm_json(spark, histogram.get())
        except (Py4JError, PySparkException):  # another Delta's log API
            return None
        return cls.of_histogram(found["sortedBinBoundaries"], found["fileCounts"])


@dataclass(frozen=True)
class Compaction:
    """What one ``OPTIMIZE`` of main did; ``small_under_bytes``: it bin-packed main's files
    under that size alone (and files with many deleted rows), not the whole table."""

    files_before: int
    files_after: int
    small_under_bytes: int | None = None


def needs_compaction(files: int, size_bytes: int, after_files: int, max_file_bytes: int) -> bool:
    """Whether main of ``files`` files and ``size_bytes`` bytes should be compacted whole: it
    has ``after_files`` files or more (0: never compact) and they average under half the size
    ``OPTIMIZE`` writes, so that a large main of large files is not rewritten every cycle."""
    if after_files <= 0 or files < after_files:
        return False
    return size_bytes / files < max_file_bytes / 2


def compact_main(
    spark: Any, main: str, after_files: int, known: MainFiles | None = None
) -> Compaction | None:
    """``OPTIMIZE`` main if it needs it (see the module); what it did, or None when it did
    not run. ``known``: main's files as the run knows them (None: read them)."""
    if after_files <= 0:
        return None
    found = known if known is not None else MainFiles.of_table(spark, main)
    if needs_compaction(found.files, found.size_bytes, after_files, _max_file_bytes(spark)):
        return _optimize(spark, main, found.files, None)
    if found.files <= SMALL_FILES_TO_COMPACT:  # no large file beside enough small ones
        return None
    small = SmallFiles.of_table(spark, main)
    if small is None or small.count < SMALL_FILES_TO_COMPACT:
        return None
    return _optimize(spark, main, found.files, small.under_bytes)


def _optimize(spark: Any, main: str, files: int, small_under_bytes: int | None) -> Compaction:
    """``OPTIMIZE`` main of ``files`` files: the whole table, or its files under
    ``small_under_bytes`` (Delta's minimum size of a file it leaves, for this statement)."""
    settings = {} if small_under_bytes is None else {MIN_FILE_SIZE_CONF: str(small_under_bytes)}
    with session_confs(spark, settings):
        metrics = spark.sql(f"OPTIMIZE {main}").collect()[0]["metrics"]
    after = files - metrics["numFilesRemoved"] + metrics["numFilesAdded"]
    return Compaction(files, after, small_under_bytes)


def _max_file_bytes(spark: Any) -> int:
    value = spark.conf.get(MAX_FILE_SIZE_CONF, None)
    try:
        return int(value) if value is not None else DEFAULT_MAX_FILE_BYTES
    except ValueError:  # a size spelled with a unit: OPTIMIZE's default is as good a guide
        return DEFAULT_MAX_FILE_BYTES
