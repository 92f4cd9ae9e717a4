"""A Python model's result as a Spark DataFrame: a pandas DataFrame converted by Spark, and
refused where that conversion would store other values than the model returned.

Spark's conversion (``createDataFrame``) loses some values without an error: an integer
beyond BIGINT (a ``uint64`` above 2**63 - 1, a Python int in an object column) becomes
NULL; a ``Decimal`` with more digits after the point than the type Spark inferred is
rounded (Spark infers ``DECIMAL(38,18)`` whenever Arrow cannot take the frame whole); a
string holding UTF-16 surrogates (lone, or a pair where one character was meant) gets
U+FFFD in their place. Main would then differ from what the model returned while every
check of the engine passed, as the snapshot is what Spark holds. Each is found after the
conversion and refused before anything is written (in top-level columns; not inside arrays,
maps or structs). Timestamps keep microseconds, as Spark holds them (a pandas nanosecond is
dropped, as by every Spark write)."""

from __future__ import annotations

import decimal
import numbers
import re
from typing import Any

from pyspark.errors import PySparkTypeError, PySparkValueError
from pyspark.sql import functions as F
from pyspark.sql.types import DecimalType, StringType

from dbt.adapters.spark_refreshable.engine.errors import ConfigError, first_line

BIGINT_RANGE = range(-(2**63), 2**63)
# a Python str may hold UTF-16 surrogates (chr(0xD83D), or a pair of them where one
# character was meant), which UTF-8 cannot encode
SURROGATE = re.compile("[\ud800-\udfff]")
EXAMPLES = 3


def as_spark_frame(spark: Any, result: Any) -> Any:
    """A model's result as a Spark DataFrame (a Python model may return pandas)."""
    if hasattr(result, "schema") and hasattr(result, "write"):
        return result
    if hasattr(result, "to_spark"):  # pandas-on-Spark
        return result.to_spark()
    try:
        import pandas
    except ImportError:
        pandas = None
    if pandas is not None and isinstance(result, pandas.DataFrame):
        try:
            frame = spark.createDataFrame(result)
        except (PySparkTypeError, PySparkValueError) as error:  # types it cannot infer
            raise ConfigError(
                f"The Python model returned a pandas DataFrame whose column types Spark "
                f"cannot infer ({first_line(error)}): return "
                f"session.createDataFrame(df, schema='id INT, name STRING') with its columns' "
                f"types instead (an empty frame has no values to infer them from). Main was "
                f"not touched."
            ) from None
        refuse_lost_values(frame, result)
        return frame
    raise TypeError(
        f"A refreshable Python model must return a Spark or pandas DataFrame, got "
        f"{type(result).__name__}."
    )


def refuse_lost_values(frame: Any, pandas_frame: Any) -> None:
    """Refuse ``frame``, Spark's conversion of ``pandas_frame``, where a value the pandas
    frame holds became NULL, was rounded or had its surrogates replaced (one Spark job: the
    non-NULL values of each column counted)."""
    names = [f"c{i}" for i in range(len(frame.columns))]  # by position: names may repeat
    counted = frame.toDF(*names).select(*(F.count(F.col(n)) for n in names)).first()
    present = pandas_frame.notna().sum().tolist()
    problems = [
        problem
        for i, field in enumerate(frame.schema.fields)
        if (
            problem := _nulled(field, pandas_frame.iloc[:, i], present[i] - counted[i])
            or _surrogates(field, pandas_frame.iloc[:, i])
            or _rounded(field, pandas_frame.iloc[:, i])
        )
    ]
    if problems:
        raise ConfigError(
            "Spark's conversion of the Python model's pandas DataFrame would store other "
            "values than the model returned:\n" + "\n".join(problems) + "\nMain was not touched."
        )


def _nulled(field: Any, column: Any, lost: int) -> str | None:
    """``lost`` values of ``column`` that Spark made NULL: integers beyond BIGINT, as far as
    Spark's conversion goes."""
    if lost <= 0:
        return None
    examples = [v for v in column if isinstance(v, numbers.Integral) and int(v) not in BIGINT_RANGE]
    fix = (
        "Spark's BIGINT holds -2**63 to 2**63 - 1: convert the column to strings "
        "(.astype(str)), or to Decimal values with a schema that says so "
        "(session.createDataFrame(df, schema='... DECIMAL(20,0)'))"
        if examples
        else "Give the column its type (session.createDataFrame(df, schema='...'))"
    )
    return (
        f"- `{field.name}` ({column.dtype}): {lost} value(s) became NULL{_shown(examples)}. {fix}."
    )


def _surrogates(field: Any, column: Any) -> str | None:
    """Strings of ``column`` holding UTF-16 surrogates, which Spark replaces."""
    if not isinstance(field.dataType, StringType):
        return None
    examples = [v for v in column if isinstance(v, str) and SURROGATE.search(v)]
    if not examples:
        return None
    return (
        f"- `{field.name}`: {len(examples)} value(s) hold UTF-16 surrogates, which are not "
        f"text (Spark would store U+FFFD in their place), e.g. "
        f"{', '.join(ascii(v) for v in examples[:EXAMPLES])}. Join surrogate pairs into the "
        f"characters they stand for (.str.encode('utf-16', 'surrogatepass').str.decode("
        f"'utf-16')) and remove lone ones."
    )


def _rounded(field: Any, column: Any) -> str | None:
    """Decimals of ``column`` with more digits after the point than Spark's type holds."""
    if not isinstance(field.dataType, DecimalType) or column.dtype != object:
        return None
    scale = field.dataType.scale
    digits = [_digits_after_point(v) for v in column]
    examples = [v for v, d in zip(column, digits, strict=True) if d > scale]
    if not examples:
        return None
    return (
        f"- `{field.name}` ({field.dataType.simpleString()}, as Spark inferred it): "
        f"{len(examples)} value(s) have more than {scale} digits after the point and would "
        f"be rounded{_shown(examples)}. Give the column its type (session.createDataFrame("
        f"df, schema='... DECIMAL(38,{min(38, max(digits))})'), if the digits before the "
        f"point fit in the rest), or round the values in the model."
    )


def _digits_after_point(value: Any) -> int:
    """A finite Decimal's digits after the point, trailing zeros aside (else 0). Read from
    its digits as written: ``normalize()`` would round to the context's 28 digits first."""
    if not isinstance(value, decimal.Decimal) or not value.is_finite():
        return 0
    _, digits, exponent = value.as_tuple()
    significant = "".join(map(str, digits)).rstrip("0")
    if not significant:  # a zero
        return 0
    return max(0, -int(exponent) - (len(digits) - len(significant)))


def _shown(examples: list[Any]) -> str:
    return f", e.g. {', '.join(str(v) for v in examples[:EXAMPLES])}" if examples else ""
