"""Session settings under which a Parquet write stores another date or instant than it was given.

Staging and main are written by the same session, so such a write changes both alike and no
comparison of the two (the diff, the proof) can see it: the cycle would report main equal to a
snapshot it differs from. A model whose columns hold such values is refused before anything is
written. TIMESTAMP_NTZ is never rebased nor truncated, so it is not checked. A session whose
rebase mode is EXCEPTION fails a write of an ancient value instead: that failure is named with
the setting to change (:func:`ancient_value_refused`).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql.types import (
    DataType,
    DateType,
    StructField,
    StructType,
    TimestampType,
)

from dbt.adapters.spark_refreshable.engine.errors import ConfigError
from dbt.adapters.spark_refreshable.engine.sql import holds

# LEGACY rebases to the hybrid Julian calendar, which lacks 1582-10-05 to 1582-10-14: a DATE
# of that gap is written as 1582-10-15, and so is a TIMESTAMP_MICROS or _MILLIS instant
DATE_REBASE_CONF = "spark.sql.parquet.datetimeRebaseModeInWrite"
# the same rebase for TIMESTAMP written as INT96 (Spark's default output type)
INT96_REBASE_CONF = "spark.sql.parquet.int96RebaseModeInWrite"
# INT96, TIMESTAMP_MICROS or TIMESTAMP_MILLIS; the last drops each instant's microseconds
TIMESTAMP_OUTPUT_CONF = "spark.sql.parquet.outputTimestampType"
GAP = "the Julian-to-Gregorian gap (1582-10-05 to 1582-10-14)"
# Spark's error for a write, in EXCEPTION rebase mode, of a value the two calendars disagree on
ANCIENT_WRITE_CONDITION = "INCONSISTENT_BEHAVIOR_CROSS_VERSION.WRITE_ANCIENT_DATETIME"
HOW_TO_SET = "for this model's runs (the profile's server_side_parameters)"


def refuse_lossy_datetime_writes(spark: Any, *schemas: StructType | None) -> None:
    """Refuse a model whose columns (the snapshot's, and main's, which a MERGE rewrites) hold
    dates or timestamps at any depth, in a session whose Parquet writes would change them."""
    fields = [f for schema in schemas if schema is not None for f in schema.fields]
    dated = _names_holding(fields, DateType)
    timed = _names_holding(fields, TimestampType)
    if dated and _setting(spark, DATE_REBASE_CONF) == "LEGACY":
        raise _lossy(
            f"{DATE_REBASE_CONF} = LEGACY, which writes a date of {GAP} as 1582-10-15",
            f"dates in {dated}",
            f"Set {DATE_REBASE_CONF} to CORRECTED (Spark's default)",
        )
    if not timed:
        return
    output = _setting(spark, TIMESTAMP_OUTPUT_CONF)
    if output == "TIMESTAMP_MILLIS":
        raise _lossy(
            f"{TIMESTAMP_OUTPUT_CONF} = TIMESTAMP_MILLIS, which drops each timestamp's "
            f"microseconds",
            f"timestamps in {timed}",
            f"Set {TIMESTAMP_OUTPUT_CONF} to INT96 (Spark's default) or TIMESTAMP_MICROS",
        )
    rebase_conf = INT96_REBASE_CONF if output == "INT96" else DATE_REBASE_CONF
    if _setting(spark, rebase_conf) == "LEGACY":
        raise _lossy(
            f"{rebase_conf} = LEGACY (with {TIMESTAMP_OUTPUT_CONF} = {output}), which writes "
            f"an instant of {GAP} as another",
            f"timestamps in {timed}",
            f"Set {rebase_conf} to CORRECTED (Spark's default)",
        )


def ancient_value_refused(spark: Any, error: BaseException) -> str | None:
    """What to change when ``error`` is a Parquet write that the session's EXCEPTION rebase
    mode refused (a date before 1582-10-15, a timestamp before 1900-01-01); None otherwise."""
    if ANCIENT_WRITE_CONDITION not in str(error):
        return None
    settings = [
        c for c in (DATE_REBASE_CONF, INT96_REBASE_CONF) if _setting(spark, c) == "EXCEPTION"
    ]
    named = " and ".join(f"{c} = EXCEPTION" for c in settings) or "an EXCEPTION rebase mode"
    return (
        f"This session writes Parquet with {named}, which fails a write of a date before "
        f"1582-10-15 or a timestamp before 1900-01-01 (the calendars of Spark 2 and 3 differ "
        f"there), and the rows written hold one ({ANCIENT_WRITE_CONDITION}, below). Set "
        f"{' and '.join(settings) or 'it'} to CORRECTED (Spark's default, which writes them as "
        f"they are) {HOW_TO_SET}, or filter or cast those values in the model; LEGACY would "
        f"change some of them and is refused."
    )


def _lossy(setting: str, held: str, fix: str) -> ConfigError:
    return ConfigError(
        f"This session writes Parquet with {setting}, in staging and main alike, so main "
        f"could differ from the snapshot with nothing to show it; the model's columns hold "
        f"{held}. {fix} {HOW_TO_SET}, or cast those columns to STRING in the model. Main was "
        f"not touched."
    )


def _setting(spark: Any, conf: str) -> str:
    return str(spark.conf.get(conf)).upper()


def _names_holding(fields: list[StructField], kind: type[DataType]) -> list[str]:
    return list(dict.fromkeys(f.name for f in fields if holds(f.dataType, kind)))
