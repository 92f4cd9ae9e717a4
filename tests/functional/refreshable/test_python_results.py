"""A Python model's pandas DataFrame: Spark's conversion turns some values into NULL (integers
beyond BIGINT), rounds them (Decimals finer than the type it inferred) or replaces their
UTF-16 surrogates with U+FFFD, without an error.
Generated frames, day after day into one model: where Spark's own conversion of a day's
frame differs from the frame's values (the oracle, independent of the engine's check) the
day is refused and main keeps the last day; elsewhere main holds exactly the frame's
values. ``REFRESHABLE_TEST_SEED`` draws other frames."""

from __future__ import annotations

import decimal
import os
import random
import warnings

import pandas as pd
import pytest

from dbt.adapters.spark_refreshable.engine.errors import ConfigError
from tests.functional.refreshable.engine_harness import EngineModel

SEED = int(os.environ.get("REFRESHABLE_TEST_SEED", "20261207"))
DAYS = 6
ROWS = 5
BIGINT_MAX = 2**63 - 1
LOSSY_COLUMNS = ["u64", "big", "dec", "text", "ints", "decs", "texts"]


def integer(rng: random.Random, lossy: bool) -> int:
    """Within BIGINT's range, or (lossy) beyond it on either side, near it or far."""
    if not lossy:
        return rng.choice([0, -1, BIGINT_MAX, -BIGINT_MAX - 1, rng.randint(-(2**63), 2**63 - 1)])
    beyond = rng.choice([1, 2, rng.randint(1, 2**40), 2 ** rng.randint(64, 100)])
    return rng.choice([BIGINT_MAX + beyond, -BIGINT_MAX - 1 - beyond])


def fine_decimal(rng: random.Random, lossy: bool) -> decimal.Decimal:
    """Up to 19 digits before the point; after it up to 18 (what DECIMAL(38,18) holds), or
    (lossy) 19 to 30 of which the last is not 0. Not lossy, it may be written with up to 12
    zeros more after the point (``1.5000...``, ``0E-25``), which lose nothing."""
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


def day_frame(rng: random.Random, lossy: set[str]) -> pd.DataFrame:
    """Five rows: a uint8 column (which Arrow cannot take, so Spark converts the frame row by
    row and infers DECIMAL(38,18)), a uint64, Python ints, Decimals, text, and lists of ints
    and Decimals and dicts of text one level down; a lossy column has one value Spark cannot
    hold, the others none."""

    def values(make, column):
        drawn = [make(rng, False) for _ in range(ROWS)]
        if column in lossy:
            drawn[rng.randrange(ROWS)] = make(rng, True)
        return drawn

    unsigned = [rng.randint(0, BIGINT_MAX) for _ in range(ROWS)]
    if "u64" in lossy:
        unsigned[rng.randrange(ROWS)] = rng.randint(2**63, 2**64 - 1)
    return pd.DataFrame(
        {
            "id": list(range(ROWS)),
            "u8": pd.Series([rng.randint(0, 255) for _ in range(ROWS)], dtype="uint8"),
            "u64": pd.Series(unsigned, dtype="uint64"),
            "big": pd.Series(values(integer, "big"), dtype=object),
            "dec": pd.Series(values(fine_decimal, "dec"), dtype=object),
            "text": pd.Series(values(text, "text"), dtype=object),
            "ints": pd.Series(values(nested(integer), "ints"), dtype=object),
            "decs": pd.Series(values(nested(fine_decimal), "decs"), dtype=object),
            "texts": pd.Series(values(nested(text), "texts"), dtype=object),
        }
    )


def as_values(frame: pd.DataFrame) -> list[tuple]:
    """The frame's rows as Python values (numpy integers as ints)."""
    return sorted(
        tuple(int(v) if k in ("id", "u8", "u64", "big") else v for k, v in row.items())
        for _, row in frame.iterrows()
    )


def spark_keeps(spark, frame: pd.DataFrame) -> bool:
    """Whether Spark's conversion holds the frame's values (NULL and rounding show here)."""
    converted = sorted(tuple(r) for r in spark.createDataFrame(frame).collect())
    return converted == as_values(frame)


def test_pandas_values_spark_would_lose_are_refused_and_the_rest_kept(spark):
    rng = random.Random(SEED)
    model = EngineModel(spark, "id BIGINT", unique_key="id")
    kept = refused = 0
    warnings.filterwarnings("ignore", message="createDataFrame attempted Arrow optimization")
    for day in range(DAYS):
        # every other day, one or two columns with a value Spark cannot hold
        lossy = set(rng.sample(LOSSY_COLUMNS, rng.randint(1, 2))) if day % 2 else set()
        frame = day_frame(rng, lossy)
        if spark_keeps(spark, frame):
            model.refresh(lambda frame=frame: frame)
            assert model.main() == as_values(frame), f"day {day} ({SEED=})"
            kept += 1
            continue
        assert lossy, f"day {day}: Spark lost values of a frame drawn without any ({SEED=})"
        before, version = model.main(), model.version()
        with pytest.raises(ConfigError, match="would store other values") as raised:
            model.refresh(lambda frame=frame: frame)
        message = str(raised.value)
        message.encode("utf-8")  # dbt's log writes it: a surrogate shown raw would fail there
        for column in lossy:
            assert f"`{column}`" in message, (column, message)
        assert (model.main(), model.version()) == (before, version), f"day {day} wrote main"
        refused += 1
    assert kept == refused == DAYS // 2, (kept, refused, SEED)
