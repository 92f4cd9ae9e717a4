"""A Python model's pandas DataFrame: Spark's conversion turns some values into NULL (integers
beyond BIGINT), rounds them (Decimals finer than the type it inferred), replaces their
UTF-16 surrogates with U+FFFD, or converts a value of another kind than its column's type
(``2`` to ``'2'``, ``True`` to ``1.0``, a datetime to its date), without an error.
Generated frames, day after day into one model, converted by Arrow or (a frame with unsigned
columns, which Arrow cannot take) row by row: where Spark's own conversion of a day's frame
differs from the frame's values (the oracle, independent of the engine's check) or fails,
the day is refused and main keeps the last day; elsewhere main holds exactly the frame's
values. ``REFRESHABLE_TEST_SEED`` draws other frames."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import decimal
import math
import numbers
import os
import random
import time
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from dbt.adapters.spark_refreshable.engine.errors import ConfigError
from dbt.adapters.spark_refreshable.engine.python_results import as_spark_frame
from tests.functional.refreshable.engine_harness import EngineModel

# the default seed draws days of most kinds of loss (a set by Arrow, an index, an infinite
# Decimal, nullable integers converted through floats, a bool among floats) and NaN
# converted row by row; others draw the rest
SEED = int(os.environ.get("REFRESHABLE_TEST_SEED", "4477"))
DAYS = 6
ROWS = 5
BIGINT_MAX = 2**63 - 1
LOSSY_COLUMNS = [
    *("u64", "big", "dec", "text", "ints", "decs", "texts", "kinds", "dates", "floats"),
    *("tags", "index", "counts"),
]
# values of another kind than text that Spark converts to text (row by row) or text to
# (Arrow: bytes, and the text beside them to bytes)
OTHER_KINDS = [
    7,
    -2.5,
    True,
    datetime.date(2024, 2, 29),
    datetime.datetime(2024, 2, 29, 13, 5),
    decimal.Decimal("1.50"),
    b"\x00b",
]


def integer(rng: random.Random, lossy: bool) -> int:
    """Within BIGINT's range, or (lossy) beyond it on either side, near it or far."""
    if not lossy:
        return rng.choice([0, -1, BIGINT_MAX, -BIGINT_MAX - 1, rng.randint(-(2**63), 2**63 - 1)])
    beyond = rng.choice([1, 2, rng.randint(1, 2**40), 2 ** rng.randint(64, 100)])
    return rng.choice([BIGINT_MAX + beyond, -BIGINT_MAX - 1 - beyond])


def fine_decimal(rng: random.Random, lossy: bool) -> decimal.Decimal:
    """Up to 19 digits before the point; after it up to 18 (what DECIMAL(38,18) holds), or
    (lossy) 19 to 30 of which the last is not 0, or an infinity (which Spark's conversion
    fails on). Not lossy, it may be written with up to 12 zeros more after the point
    (``1.5000...``, ``0E-25``), which lose nothing."""
    if lossy and rng.random() < 0.2:
        return decimal.Decimal(rng.choice(["Infinity", "-Infinity"]))
    after = rng.randint(19, 30) if lossy else rng.randint(0, 18)
    digits = [rng.randint(0, 9) for _ in range(rng.randint(0, 19) + after)]
    if after:
        digits[-1] = rng.randint(1, 9)
    text = "".join(map(str, digits)) or "0"
    sign = rng.choice(["", "-"])
    written = f"{sign}{text[:-after] or 0}.{text[-after:]}" if after else sign + text
    if not lossy and rng.random() < 0.3:
        written = rng.choice(
            [
                f"{written}{'.' if not after else ''}{'0' * rng.randint(1, 12)}",
                f"0E-{rng.randint(19, 30)}",
            ]
        )
    return decimal.Decimal(written)


def text(rng: random.Random, lossy: bool) -> str:
    """Letters, accents, CJK, emoji (one character each, as Python holds them), or (lossy)
    with UTF-16 surrogates: an emoji split into its pair, or a lone one."""
    alphabet = "aZé ß中文😀🇫🇷\u0301\x00"
    written = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
    if lossy:
        code = ord(rng.choice("😀🎉🧪"))
        pair = chr(0xD800 + ((code - 0x10000) >> 10)) + chr(0xDC00 + (code & 0x3FF))
        spliced = rng.choice([pair, chr(rng.randint(0xD800, 0xDFFF))])
        at = rng.randint(0, len(written))
        written = written[:at] + spliced + written[at:]
    return written


def nested(make):
    """Values of ``make`` one level down: a list of one to three, one of them lossy if asked
    (integers, Decimals), or a dict of text to text (text), lossy in a key or a value."""

    def draw(rng: random.Random, lossy: bool) -> list | dict:
        drawn = [make(rng, False) for _ in range(rng.randint(1, 3))]
        if lossy:
            drawn[rng.randrange(len(drawn))] = make(rng, True)
        if make is not text:
            return drawn
        pairs = [(f"{i}:{make(rng, False)}", v) for i, v in enumerate(drawn)]  # keys apart
        if lossy and rng.random() < 0.5:
            pairs = [(v, k) for k, v in pairs]  # the surrogate in a key
        return dict(pairs)

    return draw


def kinds(rng: random.Random, lossy: bool) -> object:
    """Text, or (lossy) a value of another kind (:data:`OTHER_KINDS`)."""
    return rng.choice(OTHER_KINDS) if lossy else text(rng, False)


def tags(rng: random.Random, lossy: bool) -> list[str] | set[str]:
    """A list of texts, or (lossy) a set of them, which Spark converts to an array in the
    order of its hash (a process's own)."""
    drawn = [text(rng, False) for _ in range(rng.randint(0, 3))]
    return {f"{i}:{t}" for i, t in enumerate(drawn)} if lossy else drawn


def dates(rng: random.Random, lossy: bool) -> datetime.date:
    """A date, or (lossy) a datetime with a time of day, which a DATE column drops."""
    day = datetime.date(2000, 1, 1) + datetime.timedelta(days=rng.randint(0, 20000))
    if not lossy:
        return day
    midnight = datetime.datetime(day.year, day.month, day.day)
    return midnight + datetime.timedelta(minutes=rng.randint(1, 24 * 60 - 1))


def floats(rng: random.Random, lossy: bool) -> float | bool:
    """A float or NaN (pandas' missing value, which Spark's row-by-row conversion keeps as
    NaN and the engine makes NULL), or (lossy) a bool, which Spark's Arrow conversion makes
    1.0 or 0.0."""
    if lossy:
        return rng.choice([True, False])
    return rng.choice([0.0, -1.5, 2.25, 1e300, math.nan])


def counts(rng: random.Random, lossy: bool, row_by_row: bool) -> pd.Series:
    """Integers in pandas' nullable types, with NA (missing) or without. Spark converts
    them through floats (rounding beyond 2**53, NA as NaN) where it converts an Int64
    column with NA row by row, or a UInt64 column with NA either way: lossy draws those;
    the others (Int64 with NA by Arrow, any column without NA) Spark holds."""
    drawn = [rng.randint(0, 2**62) for _ in range(ROWS)]
    with_na = lossy or (not row_by_row and rng.random() < 0.5)
    if with_na:
        drawn[rng.randrange(ROWS)] = None
    return pd.Series(drawn, dtype="UInt64" if lossy and not row_by_row else "Int64")


def day_frame(rng: random.Random, lossy: set[str], row_by_row: bool) -> pd.DataFrame:
    """Five rows: Python ints, Decimals, text, values of mixed kinds, dates, floats, and lists
    of ints, Decimals and text and dicts of text one level down; row by row, also a uint8
    column (which Arrow cannot take, so Spark converts the frame row by row and infers
    DECIMAL(38,18)) and a uint64. A lossy column has one value Spark cannot hold, the others
    none; a lossy index is one or two columns made the frame's index, which Spark drops."""

    def values(make, column):
        drawn = [make(rng, False) for _ in range(ROWS)]
        if column in lossy:
            drawn[rng.randrange(ROWS)] = make(rng, True)
        return pd.Series(drawn, dtype=object)

    unsigned = [rng.randint(0, BIGINT_MAX) for _ in range(ROWS)]
    if "u64" in lossy:
        unsigned[rng.randrange(ROWS)] = rng.randint(2**63, 2**64 - 1)
    columns = {
        "id": list(range(ROWS)),
        "big": values(integer, "big"),
        "dec": values(fine_decimal, "dec"),
        "text": values(text, "text"),
        "ints": values(nested(integer), "ints"),
        "decs": values(nested(fine_decimal), "decs"),
        "texts": values(nested(text), "texts"),
        "kinds": values(kinds, "kinds"),
        "dates": values(dates, "dates"),
        "floats": values(floats, "floats"),
        "tags": values(tags, "tags"),
        "counts": counts(rng, "counts" in lossy, row_by_row),
    }
    if row_by_row:
        columns["u8"] = pd.Series([rng.randint(0, 255) for _ in range(ROWS)], dtype="uint8")
        columns["u64"] = pd.Series(unsigned, dtype="uint64")
    frame = pd.DataFrame(columns)
    if "index" in lossy:
        return frame.set_index(rng.choice([["text"], ["dates", "floats"]]))
    return frame


def same(drawn: object, held: object, nan_held: bool = False) -> bool:
    """Whether Spark holds ``drawn`` as ``held``: the same value of the same kind (a number
    as a number of equal value, a bool as a bool, a date as a date, missing as NULL, or
    where ``nan_held`` also as NaN), at every depth (a dict as a map or a struct, missing
    keys NULL)."""
    if isinstance(drawn, np.generic):  # numpy's numbers compare with floats as floats
        drawn = drawn.item()
    if drawn is None or drawn is pd.NA or (isinstance(drawn, float) and math.isnan(drawn)):
        return held is None or (nan_held and isinstance(held, float) and math.isnan(held))
    if isinstance(drawn, bool):
        return type(held) is bool and held == drawn
    if isinstance(drawn, numbers.Number):
        return (
            isinstance(held, int | float | decimal.Decimal)
            and not isinstance(held, bool)
            and (held == drawn)
        )
    if isinstance(drawn, datetime.date):  # a date is a datetime at midnight
        return isinstance(held, datetime.date) and at_midnight(held) == at_midnight(drawn)
    if isinstance(drawn, list | tuple):
        return isinstance(held, list) and len(held) == len(drawn) and all(map(same, drawn, held))
    if isinstance(drawn, dict):
        held = held.asDict() if hasattr(held, "asDict") else held
        return (
            isinstance(held, dict)
            and set(drawn) <= set(held)
            and all(same(drawn.get(k), v) for k, v in held.items())
        )
    return type(held) is type(drawn) and held == drawn


def at_midnight(value: datetime.date) -> datetime.datetime:
    """A date as the datetime at its midnight; a datetime as it is."""
    if isinstance(value, datetime.datetime):
        return value
    return datetime.datetime.combine(value, datetime.time())


def rows_hold(rows: list, frame: pd.DataFrame, nan_held: bool = False) -> set[str]:
    """The columns of ``frame`` whose values ``rows`` (by id) do not hold (:func:`same`;
    ``nan_held``: a missing value at the top held as NaN too)."""
    by_id = {row[0]: row for row in rows}
    return {
        column
        for i, column in enumerate(frame.columns)
        for drawn in frame.itertuples(index=False)
        if not same(drawn[i], by_id[drawn[0]][i] if drawn[0] in by_id else None, nan_held)
    }


def spark_changes(spark, frame: pd.DataFrame) -> set[str] | None:
    """The columns whose values Spark's conversion does not hold, and the frame's named
    index levels it has no column for; None if it fails."""
    try:
        converted = spark.createDataFrame(frame)
        rows = [tuple(r) for r in converted.collect()]
    except Exception:  # any failure of Spark's own conversion
        return None
    index = {name for name in frame.index.names if name and name not in converted.columns}
    # Spark's row-by-row conversion holds a float column's missing values as NaN, which the
    # engine makes NULL (main must hold NULL): not a change here
    return rows_hold(rows, frame, nan_held=True) | index


def main_and_version(spark, model: EngineModel) -> tuple | None:
    """Main's rows and version; None before it exists."""
    if not spark.catalog.tableExists(model.tables.main):
        return None
    return model.main(), model.version()


def test_pandas_values_spark_would_lose_are_refused_and_the_rest_kept(spark):
    rng = random.Random(SEED)
    # one model per way of converting: row by row the types stay, Arrow infers each day's
    # DECIMAL from its values (so that model is refreshed in full)
    models = {way: EngineModel(spark, "id BIGINT", unique_key="id") for way in (True, False)}
    kept = refused = 0
    warnings.filterwarnings("ignore", message="createDataFrame attempted Arrow optimization")
    for day in range(DAYS):
        # every other day, one or two columns with a value Spark cannot hold
        lossy = set(rng.sample(LOSSY_COLUMNS, rng.randint(1, 2))) if day % 2 else set()
        row_by_row = rng.random() < 0.5
        frame = day_frame(rng, lossy, row_by_row)
        model, context = models[row_by_row], f"day {day}, {row_by_row=}, {lossy=} ({SEED=})"
        changed = spark_changes(spark, frame)
        if changed == set():
            model.refresh(lambda frame=frame: frame, full_refresh=not row_by_row)
            assert not rows_hold(model.main(), frame), context
            kept += 1
            continue
        assert lossy, f"Spark lost values of a frame drawn without any: {changed}, {context}"
        before = main_and_version(spark, model)
        with pytest.raises(ConfigError) as raised:
            model.refresh(lambda frame=frame: frame, full_refresh=not row_by_row)
        message = str(raised.value)
        message.encode("utf-8")  # dbt's log writes it: a surrogate shown raw would fail there
        for column in changed or ():
            assert "would store other values" in message and f"`{column}`" in message, (
                column,
                message,
                context,
            )
        assert main_and_version(spark, model) == before, f"main was written: {context}"
        refused += 1
    assert kept >= DAYS // 2 and refused >= 1, (kept, refused, SEED)


@dataclasses.dataclass
class Point:
    x: int
    label: str


@pytest.mark.parametrize(
    "values, refused",
    [
        # an object Spark reads by its attributes, as a struct: kept
        ([Point(1, "a"), Point(-2, "ü")], None),
        # a pandas Period has no attributes Spark reads: among such objects it became a
        # struct of NULLs (alone, an empty struct)
        ([Point(1, "a"), pd.Period("2024-01", "M")], "other kinds of value than STRUCT"),
        # a tuple shorter than the struct Spark inferred: its conversion failed in the count
        ([(1, "a"), (2, "b", 3)], "tuples of another length"),
    ],
)
def test_struct_values_spark_reads_otherwise_are_refused(spark, values, refused):
    frame = pd.DataFrame({"id": range(len(values)), "v": pd.Series(values, dtype=object)})
    if refused is None:
        held = as_spark_frame(spark, frame).orderBy("id").collect()
        assert [row.v.asDict() for row in held] == [dataclasses.asdict(v) for v in values]
        return
    with pytest.raises(ConfigError) as raised:
        as_spark_frame(spark, frame)
    assert refused in str(raised.value) and "`v`" in str(raised.value), raised.value


def test_a_pandas_on_spark_frame_whose_index_to_spark_drops_is_refused(spark):
    import pyspark.pandas as ps

    sums = ps.DataFrame({"g": ["a", "b", "a"], "v": [1, 2, 3]}).groupby("g").sum()
    with pytest.raises(ConfigError) as raised:
        as_spark_frame(spark, sums)  # to_spark() would keep v alone: [4, 2]
    assert "`g` (the frame's index)" in str(raised.value) and "reset_index()" in str(raised.value)
    kept = as_spark_frame(spark, sums.reset_index()).orderBy("g").collect()
    assert [tuple(row) for row in kept] == [("a", 4), ("b", 2)]


# session zones, and times near their clock changes in 2026 (New York skips 02:00-03:00 on
# 8 March, Paris on 29 March; Kolkata has none), which a datetime without a zone may hold
SESSION_ZONES = ["UTC", "America/New_York", "Asia/Kolkata", "Europe/Paris"]
CLOCK_CHANGES = [datetime.datetime(2026, 3, 8, 2), datetime.datetime(2026, 3, 29, 2)]


@contextlib.contextmanager
def time_zones(spark, process: str, session: str):
    """The Python process's local zone (what Spark's row-by-row conversion reads a datetime
    without a zone in) and the session's (what Spark shows a timestamp in), restored after."""
    before_tz, before_session = os.environ.get("TZ"), spark.conf.get("spark.sql.session.timeZone")
    os.environ["TZ"] = process
    time.tzset()
    spark.conf.set("spark.sql.session.timeZone", session)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", before_session)
        if before_tz is None:
            os.environ.pop("TZ")
        else:
            os.environ["TZ"] = before_tz
        time.tzset()


def wall_time(rng: random.Random) -> datetime.datetime:
    """A datetime without a zone: any time since 1900, or one near a clock change."""
    if rng.random() < 0.4:
        near = rng.choice(CLOCK_CHANGES)
        return near + datetime.timedelta(minutes=rng.randint(-90, 150))
    return datetime.datetime(1900, 1, 1) + datetime.timedelta(
        seconds=rng.randint(0, 150 * 365 * 86400), microseconds=rng.randint(0, 999_999)
    )


def datetimes_frame(rng: random.Random) -> pd.DataFrame:
    """Datetimes without a zone as pandas' datetime64 column, as Python objects and in lists;
    with a zone (exact instants, kept anywhere); row by row where a uint8 column is drawn."""
    naive = [wall_time(rng) for _ in range(ROWS)]
    columns = {
        "id": list(range(ROWS)),
        "at": pd.Series(naive, dtype="datetime64[us]"),
        "objects": pd.Series(naive[::-1], dtype=object),
        "lists": pd.Series([[t, naive[0]] for t in naive], dtype=object),
        "aware": pd.Series(naive).dt.tz_localize("Asia/Tokyo"),
    }
    if rng.random() < 0.5:
        columns["u8"] = pd.Series(np.arange(ROWS), dtype="uint8")
    return pd.DataFrame(columns)


def times_shown(converted) -> dict[str, list]:
    """The times Spark shows (in the session's zone) for the datetimes without a zone of a
    converted frame: per column, per row, a datetime or a list of them."""
    texts = {
        "at": "CAST(at AS STRING)",
        "objects": "CAST(objects AS STRING)",
        "lists": "transform(lists, t -> CAST(t AS STRING))",
    }
    rows = converted.selectExpr(*texts.values()).collect()

    def parsed(text):
        if isinstance(text, list):
            return [parsed(t) for t in text]
        return datetime.datetime.fromisoformat(text)

    return {column: [parsed(row[i]) for row in rows] for i, column in enumerate(texts)}


def times_meant(frame: pd.DataFrame) -> dict[str, list]:
    """The times of the frame's datetimes without a zone, as :func:`times_shown` has them."""

    def wall(value):
        if isinstance(value, list):
            return [wall(v) for v in value]
        return pd.Timestamp(value).to_pydatetime()

    return {column: [wall(v) for v in frame[column]] for column in ("at", "objects", "lists")}


@pytest.mark.parametrize("process_zone", ["UTC", "Europe/Paris"])
def test_datetimes_without_a_zone_that_spark_shows_at_another_time_are_refused(spark, process_zone):
    rng = random.Random(SEED)
    warnings.filterwarnings("ignore", message="createDataFrame attempted Arrow optimization")
    kept = refused = 0
    for case in range(8):
        zone = SESSION_ZONES[case % len(SESSION_ZONES)]
        frame = datetimes_frame(rng)
        with time_zones(spark, process_zone, zone):
            shown, meant = times_shown(spark.createDataFrame(frame)), times_meant(frame)
            moved = {column for column in shown if shown[column] != meant[column]}
            context = f"{process_zone=}, {zone=}, {case=}, {moved=} ({SEED=})"
            if not moved:
                assert times_shown(as_spark_frame(spark, frame)) == meant, context
                kept += 1
                continue
            with pytest.raises(ConfigError) as raised:
                as_spark_frame(spark, frame)
        for column in moved:
            assert f"`{column}`" in str(raised.value), (str(raised.value), context)
        assert "without a time zone" in str(raised.value), context
        refused += 1
    assert refused >= 1 and (kept >= 1 or process_zone != "UTC"), (kept, refused)


@pytest.mark.parametrize(
    "flags, dtype",
    [
        (pd.Series([True, None, False], dtype="boolean"), "boolean"),
        # Arrow's lists: NA is all Spark reads of them (it takes the lists for no type), and
        # astype(object) makes them numpy arrays, which it reads as no type either
        (
            pd.Series([[1, 2], None, []], dtype=pd.ArrowDtype(pa.list_(pa.int64()))),
            "list<item: int64>[pyarrow]",
        ),
    ],
    ids=["boolean", "arrow-list"],
)
def test_pandas_na_in_a_frame_converted_row_by_row_is_refused_with_its_fix(spark, flags, dtype):
    """Spark's row-by-row conversion (here forced by an unsigned column, which Arrow cannot
    take) reads pandas' NA as an object it cannot merge with the column's values, or
    infers no type from it; the message names the column and a fix that works."""
    frame = pd.DataFrame({"id": [1, 2, 3], "flag": flags, "u8": np.arange(3, dtype="uint8")})
    with pytest.raises(ConfigError) as raised:
        as_spark_frame(spark, frame)
    message = str(raised.value)
    assert f"`flag` ({dtype})" in message and ".where(df[c].notna(), None)" in message, message
    # the fix it gives
    frame["flag"] = pd.Series(flags.tolist(), index=frame.index, dtype=object).where(
        flags.notna(), None
    )
    held = as_spark_frame(spark, frame).orderBy("id").collect()
    assert [row.flag for row in held] == [None if v is pd.NA else v for v in flags.tolist()]


def test_an_arrow_map_column_holding_na_is_refused_with_its_fix(spark):
    """Converted row by row, an Arrow map column's NA is not read, and its maps are lists
    of pairs (an array of structs); the fix the message gives (dicts, and a schema that
    names the column a MAP, since Spark infers a dict as a struct) keeps every map."""
    maps = [[("a", 1), ("b", None)], None, []]
    frame = pd.DataFrame(
        {
            "id": [1, 2, 3],
            "m": pd.Series(maps, dtype=pd.ArrowDtype(pa.map_(pa.string(), pa.int64()))),
        }
    )
    with pytest.raises(ConfigError) as raised:
        as_spark_frame(spark, frame)
    message = str(raised.value)
    assert "`m` (map<string, int64>[pyarrow])" in message, message
    assert "schema='... `m` MAP<STRING,BIGINT> ...'" in message, message
    # the fix it gives
    frame["m"] = pd.Series(
        [None if v is pd.NA else dict(v) for v in frame["m"]], index=frame.index, dtype=object
    )
    held = spark.createDataFrame(frame, schema="id BIGINT, `m` MAP<STRING,BIGINT>")
    rows = as_spark_frame(spark, held).orderBy("id").collect()
    assert [row.m for row in rows] == [{"a": 1, "b": None}, None, {}]


@pytest.mark.parametrize(
    "values, refused",
    [
        # 40 digits: no DECIMAL holds them
        (
            [decimal.Decimal("1" * 40), decimal.Decimal(2)],
            "more digits than any DECIMAL holds (over 38",
        ),
        (
            [decimal.Decimal("1." + "1" * 38), decimal.Decimal(2)],
            "more digits than any DECIMAL holds (over 38",
        ),
        # 25 digits before the point: DECIMAL(38,0) holds them, not the DECIMAL(38,18) that
        # the row-by-row conversion infers (forced here by an unsigned column, as below)
        ([decimal.Decimal("1" * 25), decimal.Decimal(2)], "beyond the 20 of DECIMAL(38,18)"),
    ],
)
def test_decimals_spark_cannot_convert_name_what_holds_them(spark, values, refused):
    frame = pd.DataFrame(
        {"id": [1, 2], "d": pd.Series(values, dtype=object), "u8": np.arange(2, dtype="uint8")}
    )
    with pytest.raises(ConfigError) as raised:
        as_spark_frame(spark, frame)
    assert refused in str(raised.value) and "`d`" in str(raised.value), raised.value


TOKYO_TEN = datetime.datetime(2026, 7, 1, 10, tzinfo=datetime.timezone(datetime.timedelta(hours=9)))


@pytest.mark.parametrize(
    "values, refused",
    [
        ([datetime.datetime(2026, 7, 1, 10), datetime.datetime(2026, 3, 8, 2, 30)], False),
        # Spark stored 10:00 in Tokyo as 01:00, its time in UTC, without a zone
        ([datetime.datetime(2026, 7, 1, 10), TOKYO_TEN], True),
        ([[datetime.datetime(2026, 7, 1, 10)], [TOKYO_TEN]], True),
    ],
)
def test_a_datetime_with_a_zone_in_a_timestamp_ntz_column_is_refused(spark, values, refused):
    """Where the session infers TIMESTAMP_NTZ for datetimes (spark.sql.timestampType), Arrow
    converts one with a time zone among them to its time in UTC."""
    frame = pd.DataFrame({"id": [1, 2], "v": pd.Series(values, dtype=object)})
    spark.conf.set("spark.sql.timestampType", "TIMESTAMP_NTZ")
    spark.conf.set("spark.sql.execution.arrow.pyspark.enabled", "true")
    try:
        if refused:
            with pytest.raises(ConfigError) as raised:
                as_spark_frame(spark, frame)
            assert "`v`" in str(raised.value) and "zoned datetimes" in str(raised.value)
            return
        held = as_spark_frame(spark, frame).orderBy("id").collect()
        assert [row.v for row in held] == values
    finally:
        spark.conf.unset("spark.sql.timestampType")
        spark.conf.unset("spark.sql.execution.arrow.pyspark.enabled")
