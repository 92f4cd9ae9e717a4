"""Keeping main compact: every chunk's ``MERGE`` adds files to main (and, into a main of
``merge.REWRITE_FILES_BELOW_BYTES`` or more, deletion vectors to the files it touched), so
cycle after cycle main becomes many small files that every query lists and opens. When a
cycle that merged something leaves main with ``compact_after_files`` files or more, and they
are small on average, the run compacts main with Delta's ``OPTIMIZE`` (bin-packing: small
files, and files with many deleted rows, rewritten into files of up to
``spark.databricks.delta.optimize.maxFileSize``).

``OPTIMIZE`` changes no row: the next cycle still reads main's keys and hashes from staging,
and a run that skips unchanged inputs still skips (both accept it as a row-less commit,
``commits.ROWLESS_OPERATIONS``). It runs after the cycle's move to IDLE, so a crash or a
failure in it leaves a completed cycle; it fails no run.

Main's files and bytes are known without reading main again when the run loaded the cycle
and main holds nothing but the cycle's commits since: ``DESCRIBE DETAIL`` as the load read
it, plus what each chunk's ``MERGE`` added and removed (its commit's metrics, which count a
file given a deletion vector as neither); otherwise ``DESCRIBE DETAIL`` is read after the
cycle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.spark_refreshable.engine.commits import table_files

MAX_FILE_SIZE_CONF = "spark.databricks.delta.optimize.maxFileSize"
DEFAULT_MAX_FILE_BYTES = 1024**3


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
class Compaction:
    """What one ``OPTIMIZE`` of main did."""

    files_before: int
    files_after: int


def needs_compaction(files: int, size_bytes: int, after_files: int, max_file_bytes: int) -> bool:
    """Whether main of ``files`` files and ``size_bytes`` bytes should be compacted: it has
    ``after_files`` files or more (0: never compact) and they average under half the size
    ``OPTIMIZE`` writes, so that a large main of large files is not rewritten every cycle."""
    if after_files <= 0 or files < after_files:
        return False
    return size_bytes / files < max_file_bytes / 2


def compact_main(
    spark: Any, main: str, after_files: int, known: MainFiles | None = None
) -> Compaction | None:
    """``OPTIMIZE`` main if it needs it (see :func:`needs_compaction`); what it did, or None
    when it did not run. ``known``: main's files as the run knows them (None: read them)."""
    found = known if known is not None else MainFiles.of_table(spark, main)
    files, size_bytes = found.files, found.size_bytes
    if not needs_compaction(files, size_bytes, after_files, _max_file_bytes(spark)):
        return None
    metrics = spark.sql(f"OPTIMIZE {main}").collect()[0]["metrics"]
    return Compaction(files, files - metrics["numFilesRemoved"] + metrics["numFilesAdded"])


def _max_file_bytes(spark: Any) -> int:
    value = spark.conf.get(MAX_FILE_SIZE_CONF, None)
    try:
        return int(value) if value is not None else DEFAULT_MAX_FILE_BYTES
    except ValueError:  # a size spelled with a unit: OPTIMIZE's default is as good a guide
        return DEFAULT_MAX_FILE_BYTES
