"""A pandas value as Spark's conversion walks it: whether pandas means it as missing, its
parts by the Spark type they convert to, and examples of values for a message."""

from __future__ import annotations

import decimal
from typing import Any

import numpy
import pandas
from pyspark.sql.types import ArrayType, DataType, MapType, StructType

EXAMPLES = 3


def missing(value: Any) -> bool:
    """A value pandas means as missing, which Spark makes NULL."""
    if value is None or value is pandas.NA or value is pandas.NaT:
        return True
    if isinstance(value, numpy.datetime64):
        return bool(numpy.isnat(value))
    if isinstance(value, float | numpy.floating):
        return bool(numpy.isnan(value))
    return isinstance(value, decimal.Decimal) and value.is_nan()


def parts(value: Any, dtype: DataType) -> list[tuple[Any, DataType]]:
    """The parts of a list, dict or tuple ``value`` with the Spark types they convert to."""
    if isinstance(dtype, ArrayType) and isinstance(value, list | tuple | numpy.ndarray):
        return [(v, dtype.elementType) for v in value]
    if isinstance(dtype, MapType) and isinstance(value, dict):
        return [p for k, v in value.items() for p in ((k, dtype.keyType), (v, dtype.valueType))]
    if isinstance(dtype, StructType) and isinstance(value, dict):
        return [(value.get(f.name), f.dataType) for f in dtype.fields]
    if isinstance(dtype, StructType) and isinstance(value, tuple):
        return [(v, f.dataType) for v, f in zip(value, dtype.fields, strict=False)]
    if isinstance(dtype, StructType) and getattr(value, "__dict__", None):
        return [(vars(value).get(f.name), f.dataType) for f in dtype.fields]
    return []


def shown_examples(examples: list[Any]) -> str:
    """A few examples for a message, text that UTF-8 can write: a string's surrogates
    escaped (``\\ud83d``), as a list's or dict's ``repr`` escapes them."""
    texts = [
        v.encode("utf-8", "backslashreplace").decode() if isinstance(v, str) else str(v)
        for v in examples[:EXAMPLES]
    ]
    return f", e.g. {', '.join(texts)}" if texts else ""
