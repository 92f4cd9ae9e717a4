"""Freeing the disk that the scratch tables' old versions hold: every cycle overwrites
staging with the whole snapshot (and the change set with its changed rows), and Delta keeps
the files an overwrite removed until a ``VACUUM``, so without one a model's bookkeeping
schema grows by about one snapshot per cycle.

After a completed cycle, a scratch table whose version the cycle left is a multiple of
``VACUUM_EVERY_VERSIONS`` is vacuumed: ``VACUUM ... LITE RETAIN 1 HOURS``, which deletes the
files that commits of the table removed over an hour ago, found in its log (no listing of
the folder; a full ``VACUUM`` where Delta refuses the light one because its log no longer
holds every commit since the last vacuum). What stays readable:

- the table's newest version, always: the last completed snapshot, which the next cycle's
  diff and ``refreshable_matches_snapshot`` read at its version, is staging's newest version
  when its cycle completes, and its files are removed only by the next load's overwrite;
- any version a run or a query may still be reading: a file is deleted an hour after the
  commit that removed it, and a write in flight adds files that no commit removed yet. So the
  vacuum needs no lock: like main's compaction it runs after the cycle's move to IDLE and
  fails no run.

The table keeps Delta's own ``delta.deletedFileRetentionDuration`` (7 days), below which
Delta lets a version be read by number; the vacuum's shorter retention is set for its
statement alone (``spark.databricks.delta.retentionDurationCheck.enabled`` false).
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.spark_refreshable.engine.commits import recent_commits, session_confs

VACUUM_EVERY_VERSIONS = 10
RETAIN_HOURS = 1
RETENTION_CHECK_CONF = "spark.databricks.delta.retentionDurationCheck.enabled"
LITE_REFUSED = "DELTA_CANNOT_VACUUM_LITE"


def is_due(version: int | None) -> bool:
    """Whether a scratch table left at ``version`` by a completed cycle is vacuumed now."""
    return version is not None and version > 0 and version % VACUUM_EVERY_VERSIONS == 0


def vacuum_scratch_table(spark: Any, name: str) -> int:
    """Vacuum scratch table ``name`` (see the module); the files it deleted. The caller holds
    ``commits.SESSION_CONF_LOCK``, so that no fence or tag of a chunk is on the session."""
    retain = f"RETAIN {RETAIN_HOURS} HOURS"
    with session_confs(spark, {RETENTION_CHECK_CONF: "false"}):
        try:
            spark.sql(f"VACUUM {name} LITE {retain}").collect()
        except Exception as error:  # as Delta raises it, through the classic or Connect client
            if LITE_REFUSED not in str(error):
                raise
            spark.sql(f"VACUUM {name} {retain}").collect()
    ended = recent_commits(spark, name, 1)[0]
    return int(dict(ended["operationMetrics"] or {}).get("numDeletedFiles", 0))
