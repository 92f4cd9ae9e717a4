"""Datetimes without a time zone in a Python model's pandas frame, whose time Spark's
conversion would change: outside UTC it reads them as UTC or in the Python process's zone
(by the way it converts the column) and shows them in the session's, hours apart."""

from __future__ import annotations

import datetime
import time
from typing import Any

import numpy
import pandas
from pyspark.sql.types import (
    ArrayType,
    DataType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from dbt.adapters.spark_refreshable.engine.pandas_values import missing, parts, shown_examples
from dbt.adapters.spark_refreshable.engine.sql import holds

# session time zones that are UTC, where (with a Python process in UTC) no conversion moves
# a datetime without a time zone
UTC_ZONES = frozenset({"UTC", "Etc/UTC", "GMT", "Etc/GMT", "Z", "+00:00"})
MICROSECOND = datetime.timedelta(microseconds=1)


def wall_times_moved(frame: Any, pandas_frame: Any) -> list[str]:
    """Datetimes without a time zone whose time Spark's conversion changed, at any depth.
    Spark reads them in the zone of the Python process (row by row) or as UTC (Arrow, some
    columns) and shows them in the session's: outside UTC the time of every value may move,
    and a time a clock change skips in the session's zone always does. Compared with what
    Spark shows for each value (one Spark job collecting their text), only where the
    process or the session is not in UTC: there nothing moves."""
    zone = frame.sparkSession.conf.get("spark.sql.session.timeZone")
    if zone in UTC_ZONES and time.timezone == time.altzone == 0:
        return []
    columns = [
        (i, field)
        for i, field in enumerate(frame.schema.fields)
        if holds(field.dataType, TimestampType)
        and getattr(pandas_frame.dtypes.iloc[i], "tz", None) is None  # aware: exact instants
    ]
    if not columns:
        return []
    renamed = frame.toDF(*(f"c{i}" for i in range(len(frame.columns))))
    rows = renamed.select(*(renamed[f"c{i}"].cast(_as_text(f.dataType)) for i, f in columns))
    held = rows.collect()
    problems = []
    for j, (i, field) in enumerate(columns):
        moved = [
            f"{wall} as {text}"
            for value, row in zip(pandas_frame.iloc[:, i], held, strict=True)
            for wall, text in _moved(value, row[j], field.dataType)
        ]
        if moved:
            problems.append(
                f"- `{field.name}` ({field.dataType.simpleString()}): {len(moved)} datetime(s) "
                f"without a time zone that Spark would show at another time in the session's "
                f"zone ({zone}): it reads them as UTC or in the Python process's zone, and a "
                f"time a clock change skips there does not exist{shown_examples(moved)}. Give "
                f"them the zone they are in (.dt.tz_localize('UTC'), or '{zone}'; "
                f".replace(tzinfo=...) inside lists and dicts), or run Spark and dbt in UTC."
            )
    return problems


def _as_text(dtype: DataType) -> DataType:
    """``dtype`` with each TIMESTAMP in it as STRING: a cast to it shows the time of each
    value in the session's zone."""
    if isinstance(dtype, TimestampType):
        return StringType()
    if isinstance(dtype, ArrayType):
        return ArrayType(_as_text(dtype.elementType), dtype.containsNull)
    if isinstance(dtype, MapType):
        return MapType(_as_text(dtype.keyType), _as_text(dtype.valueType), dtype.valueContainsNull)
    if isinstance(dtype, StructType):
        return StructType(
            [StructField(f.name, _as_text(f.dataType), f.nullable) for f in dtype.fields]
        )
    return dtype


def _moved(value: Any, shown: Any, dtype: DataType) -> list[tuple[datetime.datetime, str]]:
    """The datetimes without a time zone in ``value`` whose time Spark shows otherwise in
    ``shown`` (the value cast by :func:`_as_text`): each with what Spark shows."""
    if isinstance(dtype, TimestampType):
        wall = _wall_time(value)
        if wall is None or shown is None or _shows(shown, wall):
            return []
        return [(wall, shown)]
    return [
        moved
        for (v, t), (s, _) in zip(parts(value, dtype), parts(shown, dtype), strict=False)
        for moved in _moved(v, s, t)
    ]


def _wall_time(value: Any) -> datetime.datetime | None:
    """The time of a datetime without a time zone (a date's midnight; a pandas nanosecond
    dropped); None for one with a zone, which Spark converts as the instant it is."""
    if missing(value):
        return None
    if isinstance(value, numpy.datetime64):
        value = value.astype("datetime64[us]").item()
    if isinstance(value, pandas.Timestamp):
        value = value.to_pydatetime(warn=False)
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo is None else None
    if isinstance(value, datetime.date):
        return datetime.datetime.combine(value, datetime.time())
    return None


def _shows(shown: str, wall: datetime.datetime) -> bool:
    """Whether Spark's text of a timestamp is the time ``wall`` (to the microsecond)."""
    try:
        return abs(datetime.datetime.fromisoformat(shown) - wall) <= MICROSECOND
    except ValueError:  # a year Python cannot hold
        return False
