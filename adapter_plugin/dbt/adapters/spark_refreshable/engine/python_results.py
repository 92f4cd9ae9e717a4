"""A Python model's result as a Spark DataFrame: a pandas DataFrame converted by Spark, and
refused where that conversion would store other values than the model returned.

Spark's conversion (``createDataFrame``) loses some values without an error: an integer
beyond BIGINT (a ``uint64`` above 2**63 - 1, a Python int in an object column) becomes
NULL; a ``Decimal`` with more digits after the point than the type Spark inferred is
rounded (Spark infers ``DECIMAL(38,18)`` whenever Arrow cannot take the frame whole); a
string holding UTF-16 surrogates (lone, or a pair where one character was meant) gets
U+FFFD in their place; a value of another kind than the type Spark inferred for its column
is converted to it (``2`` to ``'2'``, ``True`` to ``1.0``, ``b'a'`` to ``"b'a'"``, a
``datetime`` to its date, a set to an array in the order of its hash, an object to a struct
of its attributes); and it reads the frame's columns alone, so a named index (what
``set_index`` and ``groupby`` leave) is dropped. Outside UTC it reads a datetime without a
time zone as UTC or in the Python process's zone and shows it in the session's, hours
apart. Main would then differ from what the model returned while every check of the engine
passed, as the snapshot is what Spark holds. Each is found after the conversion, at any
depth of lists, dicts and tuples (by the type Spark inferred for them), and refused before
anything is written. Timestamps keep microseconds, as Spark holds them (a pandas
nanosecond is dropped, as by every Spark write)."""

from __future__ import annotations

import datetime
import decimal
import numbers
import re
from typing import Any

import numpy
import pandas
from py4j.protocol import Py4JError
from pyspark.errors import PySparkException
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegralType,
    MapType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from dbt.adapters.spark_refreshable.engine.errors import ConfigError, first_line
from dbt.adapters.spark_refreshable.engine.pandas_values import missing, parts, shown_examples
from dbt.adapters.spark_refreshable.engine.sql import ident
from dbt.adapters.spark_refreshable.engine.wall_times import wall_times_moved

# a Python str may hold UTF-16 surrogates (chr(0xD83D), or a pair of them where one
# character was meant), which UTF-8 cannot encode
SURROGATE = re.compile("[\ud800-\udfff]")
INTEGER_BITS = {"byte": 8, "short": 16, "integer": 32, "long": 64}
# pandas columns of numbers, booleans and datetimes (numpy's or pandas' nullable types):
# their values are not walked one by one, as Spark holds each of them or makes it NULL
# (a uint64 beyond BIGINT, found by the count of non-NULL values); where Spark converts
# them through floats, or to a list, map or struct, the column is refused or walked
NUMPY_SCALAR_KINDS = frozenset("biufcmM")
# the Python values each Spark type holds as they are (a bool is not a number here); a
# value of another kind, which Spark converts (and so changes), is refused
KINDS: dict[type, tuple[type, ...]] = {
    StringType: (str,),
    BinaryType: (bytes, bytearray),
    BooleanType: (bool, numpy.bool_),
    IntegralType: (numbers.Integral,),
    FloatType: (numbers.Real,),
    DoubleType: (numbers.Real,),
    DecimalType: (decimal.Decimal, numbers.Integral),
    DateType: (datetime.date,),
    TimestampType: (datetime.date, numpy.datetime64),
    TimestampNTZType: (datetime.date, numpy.datetime64),
    ArrayType: (list, tuple, numpy.ndarray),  # not a set: its order is its hash's
    MapType: (dict,),
    StructType: (dict, tuple),  # an object Spark reads by its attributes: see _other_kind
}
# how Spark's conversion of a pandas frame fails: types it cannot infer, and on Spark
# Connect (Arrow alone) the server's refusals and the client's overflows
CONVERSION_ERRORS = (PySparkException, OverflowError, ValueError, NotImplementedError)
DECIMAL_DIGITS = 38  # the most digits a Spark DECIMAL holds
# what to do, by the first word of what _why_changed found
FIXES = {
    "integers": "Spark's BIGINT holds -2**63 to 2**63 - 1: convert the values to strings "
    "(.astype(str)), or to Decimals with a schema that says so "
    "(session.createDataFrame(df, schema='... DECIMAL(20,0)'))",
    "digits": "Give the column its type (session.createDataFrame(df, schema='... DECIMAL(38,"
    "<digits after the point>) ...')), or round the values in the model",
    "other": "Give the column values of one kind in the model (e.g. .astype(str) for text, "
    "pd.to_datetime(...) for datetimes and .dt.date for dates, float(...) for numbers, "
    "sorted(...) for a set, a dict for an object)",
    "infinite": "Spark's DECIMAL holds finite numbers: make the infinite ones None, or the "
    "column float",
    "tuples": "Give every tuple of the column as many values as the struct has fields, or "
    "return dicts, whose missing keys are NULL",
    "missing": "Give the column Python values with None where missing (pandas.Series("
    "df[c].tolist(), index=df.index, dtype=object).where(df[c].notna(), None))",
    "maps": "Give such a column dicts, with None where missing (pandas.Series([None if v is "
    "pandas.NA else dict(v) for v in df[c]], index=df.index, dtype=object)), and the frame a "
    "schema that names it a MAP (Spark infers a dict as a struct)",
    "more": "Spark's DECIMAL holds at most 38 digits: convert the values to strings "
    "(.astype(str)), or to floats (float(...), rounded to about 16 digits)",
    "zoned": "Give the column datetimes of one kind: all without a time zone (convert them to "
    "the zone you mean, then .replace(tzinfo=None)), or all with one (a TIMESTAMP column)",
    "surrogates": "Join surrogate pairs into the characters they stand for (.encode("
    "'utf-16', 'surrogatepass').decode('utf-16')) and remove lone ones",
}


def as_spark_frame(spark: Any, result: Any) -> Any:
    """A model's result as a Spark DataFrame (a Python model may return pandas)."""
    if hasattr(result, "schema") and hasattr(result, "write"):
        return result
    if hasattr(result, "to_spark"):  # pandas-on-Spark, whose to_spark() drops the index too
        _refuse(_index_dropped(result), "pandas-on-Spark")
        return result.to_spark()
    if isinstance(result, pandas.DataFrame):
        try:
            frame = spark.createDataFrame(result)
            frame.schema  # noqa: B018 - a Spark Connect server reads the frame only then
        except CONVERSION_ERRORS as error:
            raise ConfigError(
                f"The Python model returned a pandas DataFrame that Spark cannot convert "
                f"({first_line(error)}).{_columns_arrow_refuses(error, result)}"
                f"{_columns_holding_pandas_na(error, result)} Return "
                f"session.createDataFrame(df, schema='id INT, name STRING') with its columns' "
                f"types instead (an empty frame has no values to infer them from). Main was "
                f"not touched."
            ) from None
        frame = _missing_as_null(frame, result)
        refuse_lost_values(frame, result)
        return frame
    raise TypeError(
        f"A refreshable Python model must return a Spark or pandas DataFrame, got "
        f"{type(result).__name__}."
    )


def _missing_as_null(frame: Any, pandas_frame: Any) -> Any:
    """``frame`` with NULL for pandas' missing values where Spark kept them as NaN: Arrow
    makes a float column's NaN NULL, the row-by-row conversion keeps it NaN, so the same
    model's main held NULL one day and NaN the next. A float column also holding NaN that
    pandas does not call missing (an Arrow-backed column's) is left as it is."""
    floats = {
        i
        for i, field in enumerate(frame.schema.fields)
        if isinstance(field.dataType, FloatType | DoubleType)
        and _missing_values_only_nan(pandas_frame.iloc[:, i])
    }
    if not floats:
        return frame
    names = [f"c{i}" for i in range(len(frame.columns))]
    return (
        frame.toDF(*names)
        .selectExpr(*(f"nanvl({n}, NULL)" if i in floats else n for i, n in enumerate(names)))
        .toDF(*frame.columns)
    )


def _missing_values_only_nan(column: Any) -> bool:
    """Whether the column has values pandas calls missing and every NaN in it is one."""
    missing = column.isna()
    return bool(missing.any()) and not bool((~missing & (column != column)).any())


def _columns_holding_pandas_na(error: BaseException, frame: Any) -> str:
    """What to change where Spark, converting the frame row by row, took pandas' NA (the
    missing value of its nullable types: Int64, boolean, string, Arrow's) for a struct it
    cannot merge with the column's values, or inferred no type from it (a column of Arrow
    lists holds nothing else Spark reads); "" otherwise."""
    text = str(error)
    took_for_struct = "CANNOT_MERGE_TYPE" in text and "StructType" in text
    if not (took_for_struct or "CANNOT_INFER_TYPE_FOR_FIELD" in text):
        return ""
    holding = [
        (name, dtype)
        for (name, dtype), (_, column) in zip(frame.dtypes.items(), frame.items(), strict=True)
        if any(value is pandas.NA for value in column)
    ]
    maps = [(name, dtype) for name, dtype in holding if _arrow_map_type(dtype) is not None]
    others = [column for column in holding if column not in maps]
    said = ""
    if others:
        said += (
            f" Spark converted the frame row by row, which cannot read pandas' NA, held by "
            f"{_shown(others)}. {FIXES['missing']}."
        )
    if maps:
        said += (
            f" Spark converted the frame row by row, which reads neither the missing values "
            f"of an Arrow map column (pandas' NA) nor its maps (as lists of pairs): "
            f"{_shown(maps)}. {FIXES['maps']}: "
            f"session.createDataFrame(df, schema='... "
            f"{', '.join(f'{ident(name)} {_arrow_map_type(dtype)}' for name, dtype in maps)} "
            f"...')."
        )
    return said


def _shown(columns: list[tuple[Any, Any]]) -> str:
    """Columns (name, pandas dtype) as a message names them."""
    return ", ".join(f"`{name}` ({dtype})" for name, dtype in columns)


def _arrow_map_type(dtype: Any) -> str | None:
    """The Spark type of a pandas column of Arrow maps, spelled for a schema; else None."""
    arrow = getattr(dtype, "pyarrow_dtype", None)  # pandas.ArrowDtype: pyarrow is there
    if arrow is None:
        return None
    import pyarrow
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(arrow).simpleString().upper() if pyarrow.types.is_map(arrow) else None


def _columns_arrow_refuses(error: BaseException, frame: Any) -> str:
    """What to change where Spark Connect, which sends a pandas frame through Arrow alone,
    refused it: a column of unsigned integers, float16 or complex numbers, or a Python int
    beyond BIGINT; "" otherwise."""
    if isinstance(error, OverflowError):
        return f" It holds a Python int beyond BIGINT: {FIXES['integers']}."
    if "ARROWTYPE" not in str(error) and not isinstance(error, NotImplementedError):
        return ""
    untakeable = [
        (name, dtype)
        for name, dtype in frame.dtypes.items()
        if dtype.kind in "uc" or dtype == numpy.float16
    ]
    if not untakeable:
        return ""
    return (
        f" Spark Connect takes no column of unsigned integers, float16 or complex numbers: "
        f"{_shown(untakeable)}. Convert them in the model (.astype('int64'), or "
        f"'float64'; a complex number as two float columns)."
    )


def refuse_lost_values(frame: Any, pandas_frame: Any) -> None:
    """Refuse ``frame``, Spark's conversion of ``pandas_frame``, where a value the pandas
    frame holds became NULL, was rounded, had its surrogates replaced or was converted to
    another kind, at any depth, or where the frame's named index was dropped (one Spark
    job: the non-NULL values of each column counted)."""
    counted = _non_null_counts(frame, pandas_frame)
    present = pandas_frame.notna().sum().tolist()
    problems = [
        problem
        for i, field in enumerate(frame.schema.fields)
        if (
            problem := _nulled(field, pandas_frame.iloc[:, i], present[i] - counted[i])
            or _integers_as_floats(field, pandas_frame.iloc[:, i])
            or _changed_inside(field, pandas_frame.iloc[:, i])
        )
    ]
    problems += wall_times_moved(frame, pandas_frame)
    _refuse(problems + _index_dropped(pandas_frame), "pandas")


def _refuse(problems: list[str], kind: str) -> None:
    """Refuse the model's ``kind`` DataFrame for ``problems`` (lines of what and how to fix),
    if any."""
    if problems:
        raise ConfigError(
            f"Spark's conversion of the Python model's {kind} DataFrame would store other "
            "values than the model returned:\n" + "\n".join(problems) + "\nMain was not touched."
        )


def _non_null_counts(frame: Any, pandas_frame: Any) -> list[int]:
    """The non-NULL values of each column of ``frame``, counted by one Spark job (by
    position: names may repeat). The job is where Spark converts the values; a value it
    fails on (an infinite Decimal, a tuple shorter than its struct) is refused with the
    values :func:`_why_changed` finds."""
    names = [f"c{i}" for i in range(len(frame.columns))]
    try:
        return list(frame.toDF(*names).selectExpr(*(f"count({n})" for n in names)).first())
    except (PySparkException, Py4JError) as error:
        found = [
            problem
            for i, field in enumerate(frame.schema.fields)
            if (problem := _changed_inside(field, pandas_frame.iloc[:, i]))
        ]
        told = (
            f"Spark's conversion of the Python model's pandas DataFrame failed "
            f"({first_line(error)})"
        )
        if found:
            told += ":\n" + "\n".join(found)
        else:
            told += (
                ". Give the columns their types in a schema (session.createDataFrame(df, "
                "schema='...')), or their values one kind."
            )
        raise ConfigError(f"{told}\nMain was not touched.") from None


def _index_dropped(frame: Any) -> list[str]:
    """A pandas (or pandas-on-Spark) frame's named index, which Spark's conversion drops (it
    reads columns alone): what ``set_index`` and ``groupby`` leave, values the model
    returned. An unnamed index (row numbers, or what a filter kept of them) means nothing
    and is not refused."""
    named = [name for name in frame.index.names if name is not None]
    if not named:
        return []
    shown = ", ".join(f"`{name}`" for name in named)
    return [
        f"- {shown} (the frame's index): Spark converts columns alone and would drop its "
        f"values. Return df.reset_index() to keep them as columns, or "
        f"df.reset_index(drop=True) to drop them."
    ]


def _nulled(field: Any, column: Any, lost: int) -> str | None:
    """``lost`` values of ``column`` that Spark made NULL: integers beyond the column's type
    (:func:`_why_changed`), as far as Spark's conversion goes."""
    if lost <= 0:
        return None
    examples = [v for v in column if _why_changed(v, field.dataType) is not None]
    fix = (
        FIXES["integers"]
        if examples
        else "Give the column its type in a schema (session.createDataFrame(df, schema='...'))"
    )
    became = f"{lost} value(s) became NULL{shown_examples(examples)}"
    return f"- `{field.name}` ({column.dtype}): {became}. {fix}."


def _integers_as_floats(field: Any, column: Any) -> str | None:
    """A column of integers Spark converted to floats: a nullable integer column with
    missing values, converted row by row, or one of unsigned integers with missing values.
    Floats round integers beyond 2**53 and hold missing values as NaN."""
    if column.dtype.kind not in "iu" or not isinstance(field.dataType, FloatType | DoubleType):
        return None
    return (
        f"- `{field.name}` ({column.dtype}): integers that Spark converts to "
        f"{field.dataType.simpleString().upper()}, which rounds those beyond 2**53 and holds "
        f"missing values as NaN. {FIXES['missing']}, which Spark converts to BIGINT."
    )


def _changed_inside(field: Any, column: Any) -> str | None:
    """Values of an object column (text, Decimals, lists, dicts) that Spark would hold
    otherwise at some depth: :func:`_why_changed` of each, with examples and fixes. A
    column of numbers or datetimes is looked at only where Spark made it a list, map or
    struct (a datetime with a time zone, converted row by row, became an empty struct)."""
    containers = ArrayType | MapType | StructType
    if column.dtype.kind in NUMPY_SCALAR_KINDS and not isinstance(field.dataType, containers):
        return None
    found: dict[str, list[Any]] = {}
    for value in column:
        if (why := _why_changed(value, field.dataType)) is not None:
            found.setdefault(why, []).append(value)
    if not found:
        return None
    return "\n".join(
        f"- `{field.name}` ({field.dataType.simpleString()}, as Spark inferred it): "
        f"{len(values)} value(s) hold {why}{shown_examples(values)}. {FIXES[why.split()[0]]}."
        for why, values in found.items()
    )


def _why_changed(value: Any, dtype: DataType) -> str | None:
    """What in ``value``, converted to Spark's ``dtype``, Spark would store otherwise (its
    kind, the first word a key of ``FIXES``); None if nothing."""
    if (why := _other_kind(value, dtype)) is not None:
        return why
    if isinstance(dtype, StructType) and isinstance(value, tuple) and len(value) != len(dtype):
        return f"tuples of another length than the struct's {len(dtype)} fields"
    if isinstance(dtype, ArrayType | MapType | StructType):
        return next(
            (why for v, t in parts(value, dtype) if (why := _why_changed(v, t)) is not None),
            None,
        )
    if isinstance(dtype, IntegralType) and isinstance(value, numbers.Integral):
        bits = INTEGER_BITS[dtype.typeName()]
        if int(value) not in range(-(2 ** (bits - 1)), 2 ** (bits - 1)):
            return f"integers beyond {dtype.simpleString().upper()}"
    if isinstance(dtype, DecimalType) and isinstance(value, decimal.Decimal):
        if value.is_infinite():
            return "infinite Decimals, which DECIMAL cannot hold (Spark's conversion fails)"
        whole, fraction = _digits_before_point(value), _digits_after_point(value)
        if whole + fraction > DECIMAL_DIGITS:
            return (
                f"more digits than any DECIMAL holds (over {DECIMAL_DIGITS}: Spark's "
                f"conversion fails)"
            )
        if whole > dtype.precision - dtype.scale:
            return (
                f"digits before the point beyond the {dtype.precision - dtype.scale} of "
                f"{dtype.simpleString().upper()} (Spark's conversion fails)"
            )
        if fraction > dtype.scale:
            return f"digits past the {dtype.scale} after the point that Spark keeps (rounded)"
    if (
        isinstance(dtype, TimestampNTZType)
        and isinstance(value, datetime.datetime)
        and value.tzinfo is not None
    ):
        return "zoned datetimes, which TIMESTAMP_NTZ stores as their time in UTC"
    if isinstance(dtype, StringType) and isinstance(value, str) and SURROGATE.search(value):
        return "surrogates (UTF-16 halves, which are not text: Spark stores U+FFFD)"
    return None


def _other_kind(value: Any, dtype: DataType) -> str | None:
    """A value that is not of a kind ``dtype`` holds as it is (:data:`KINDS`), which Spark
    converts: a number or a date to text, a bool to a number, a datetime to its date.
    Missing values (None, NaN, NA, NaT) become NULL, as pandas means them."""
    kinds = next((k for t, k in KINDS.items() if isinstance(dtype, t)), None)
    if kinds is None or missing(value):
        return None
    held = isinstance(value, kinds) and not (
        isinstance(value, bool | numpy.bool_) and not isinstance(dtype, BooleanType)
    )
    if isinstance(dtype, StructType) and not held:
        held = bool(getattr(value, "__dict__", None))  # read by its attributes, as Spark does
    if held and isinstance(dtype, DateType) and isinstance(value, datetime.datetime):
        held = value.tzinfo is None and value.time() == datetime.time()  # nothing dropped
    if held:
        return None
    name = dtype.simpleString().upper()
    return f"other kinds of value than {name} (Python {type(value).__name__}), which Spark converts"


def _digits_before_point(value: decimal.Decimal) -> int:
    """A finite Decimal's digits before the point (0 for a zero, and below 1)."""
    return 0 if value.is_zero() else max(0, value.adjusted() + 1)


def _digits_after_point(value: decimal.Decimal) -> int:
    """A finite Decimal's digits after the point, trailing zeros aside (else 0). Read from
    its digits as written: ``normalize()`` would round to the context's 28 digits first."""
    if not value.is_finite():
        return 0
    _, digits, exponent = value.as_tuple()
    significant = "".join(map(str, digits)).rstrip("0")
    if not significant:  # a zero
        return 0
    return max(0, -int(exponent) - (len(digits) - len(significant)))
