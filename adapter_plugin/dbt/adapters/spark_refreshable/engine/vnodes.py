"""The vnode layout: which vnode a row's key falls in, one definition for every use.

Two kinds. *Hash* vnodes, ``pmod(xxhash64(<unique_key>), vnodes)``, spread any key evenly.
*Range* vnodes cut the first key column's values at up to ``RANGE_VNODES - 1`` bounds taken
from the snapshot's quantiles when the layout is chosen: vnode ``v`` holds the keys ``k`` with
``bounds[v-1] <= k < bounds[v]``. A chunk of range vnodes is then a range of that column,
which Delta's file statistics on main can skip on: a chunk's ``MERGE`` reads only the files
that hold its keys (main's chunks write their rows by range, so its files stay narrow),
where a chunk of hash vnodes reads all of main. Range vnodes are used when the first key
column is an integer or a date (exact literals, one total order in Spark and Python);
other keys get hash vnodes.

No bound is a date of the Julian-to-Gregorian gap (1582-10-05 to 1582-10-14): Delta 4.4
reads such a date in its file statistics as 1582-10-04, so ``k >= DATE'1582-10-10'`` skips
a file whose largest key is 1582-10-10, and a chunk's ``MERGE`` would miss that file's rows
and insert its keys again. A bound at 1582-10-15 or later, or at 1582-10-04 or earlier, is
safe: the misread is only ever lower, and within the gap.

A layout is chosen when a cycle loads (the first cycle, or when the key or ``vnodes``
changes) and kept by every later cycle: the vnodes stored in staging and the change set,
and the slice of main each chunk merges, must all come from the same one. Keys beyond the
bounds fall in the first or last vnode; when keys drift or grow past them so far that the
last completed cycle's largest vnode held ``SKEW`` even shares of the snapshot's rows (or
three quarters of them) and more rows than a chunk's worth (``VnodeLayout.skewed``: one
vnode is never split over chunks), the next cycle cuts the bounds again at its snapshot's
quantiles, unless they were that skewed when cut (a first key column of few values).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.types import (
    ByteType,
    DataType,
    DateType,
    IntegerType,
    LongType,
    ShortType,
    StructType,
)

from dbt.adapters.spark_refreshable.engine.naming import fold_name
from dbt.adapters.spark_refreshable.engine.sql import ident, qualified, vnode_expression

RANGE_TYPES = (ByteType, ShortType, IntegerType, LongType, DateType)
# percentile_approx's accuracy: its rank error is at most rows / ACCURACY
ACCURACY = 10000
# At most this many range vnodes: a row's vnode is a binary search of the bounds written
# as nested CASEs, evaluated on every staged row. Over 6M rows 255 bounds cost ~2 s more
# than xxhash64 (a large expression Spark compiles poorly), 31 bounds ~0.2 s.
RANGE_VNODES = 32
# dates Delta's statistics misread (see the module's docstring), and the first date after them
GREGORIAN_GAP = tuple(dt.date(1582, 10, 5) + dt.timedelta(days=d) for d in range(10))
AFTER_GAP = dt.date(1582, 10, 15)
EPOCH = dt.date(1970, 1, 1)  # day 0 of Spark's unix_date (both calendars proleptic Gregorian)
# Range bounds are cut again once one vnode holds this many times an even share of the rows,
# or this share of them where there are too few vnodes for that (fewer than six).
SKEW = 4
SKEW_SHARE_LIMIT = 0.75


@dataclass(frozen=True)
class VnodeLayout:
    """``vnodes`` as configured; ``column`` and ``bounds`` (SQL literals, strictly
    increasing) for range vnodes, none for hash vnodes."""

    vnodes: int
    column: str | None = None
    column_type: str | None = None  # the column's type when the bounds were taken
    bounds: tuple[str, ...] = field(default_factory=tuple)

    @property
    def count(self) -> int:
        """How many vnodes there are: 0 to count - 1."""
        return len(self.bounds) + 1 if self.column is not None else self.vnodes

    def expression(self, keys: tuple[str, ...] | list[str], prefix: str | None = None) -> str:
        """SQL: the vnode of a row, from its key columns (qualified with ``prefix``)."""
        if self.column is None:
            return vnode_expression(keys, self.vnodes, prefix)
        column = qualified(prefix, self.column) if prefix else ident(self.column)
        return _bucket(column, self.bounds, 0, len(self.bounds))

    def slice_predicate(
        self, keys: tuple[str, ...] | list[str], first: int, last: int, prefix: str
    ) -> str | None:
        """SQL true of exactly the rows of vnodes ``first`` to ``last`` (their key columns
        qualified with ``prefix``), in a form Delta's file statistics can skip on; None
        when they are every vnode. For hash vnodes, the vnode expression itself."""
        if first == 0 and last == self.count - 1:
            return None
        if self.column is None:
            return f"{self.expression(keys, prefix)} BETWEEN {first} AND {last}"
        column = qualified(prefix, self.column)
        parts = []
        if first > 0:
            parts.append(f"{column} >= {self.bounds[first - 1]}")
        if last < self.count - 1:
            parts.append(f"{column} < {self.bounds[last]}")
        return " AND ".join(parts)

    def fits(self, keys: tuple[str, ...], schema: StructType, vnodes: int) -> bool:
        """Whether a cycle with these keys, columns and configured ``vnodes`` can keep
        this layout."""
        if self.vnodes != vnodes:
            return False
        if self.column is None:
            return not range_column_type(keys, schema)
        found = range_column_type(keys, schema)
        fitting = fold_name(keys[0]) == fold_name(self.column) and found == self.column_type
        return fitting and not self.misread_bounds

    def skewed(self, vnode_rows: Sequence[int], chunk_rows: int) -> str | None:
        """Why range bounds no longer spread the keys, judged by a cycle's rows per vnode
        under this layout: its largest vnode held more than ``SKEW`` even shares (at most
        ``SKEW_SHARE_LIMIT`` of the rows) and more than ``chunk_rows`` rows. None while they
        do, for hash vnodes (which spread unique keys evenly) and for counts of another
        layout."""
        if self.column is None or len(vnode_rows) != self.count:
            return None
        largest = max(vnode_rows)
        total = sum(vnode_rows)
        if largest <= chunk_rows or largest <= min(SKEW / self.count, SKEW_SHARE_LIMIT) * total:
            return None
        vnode = vnode_rows.index(largest)
        return f"vnode {vnode} of {self.count} held {largest} of the last snapshot's {total} rows"

    @property
    def misread_bounds(self) -> list[str]:
        """Bounds in the Julian-to-Gregorian gap, which earlier versions could choose:
        Delta's statistics misread them (see the module's docstring)."""
        gap = {_date_literal(d.isoformat()) for d in GREGORIAN_GAP}
        return [bound for bound in self.bounds if bound in gap]

    def to_json(self) -> dict[str, Any]:
        return {
            "vnodes": self.vnodes,
            "column": self.column,
            "column_type": self.column_type,
            "bounds": list(self.bounds),
        }

    @classmethod
    def from_json(cls, value: dict[str, Any] | None, vnodes: int) -> VnodeLayout:
        """A stored layout; hash vnodes of ``vnodes`` where none was stored (a cycle of a
        version before range vnodes)."""
        if not value:
            return cls(vnodes)
        return cls(
            int(value["vnodes"]),
            value.get("column"),
            value.get("column_type"),
            tuple(value.get("bounds") or ()),
        )


def _bucket(column: str, bounds: tuple[str, ...], low: int, high: int) -> str:
    """SQL: the vnode in ``low``..``high`` of ``column``, a binary search of ``bounds``:
    the number of bounds at or below the value (``bounds`` sorted)."""
    if low == high:
        return str(low)
    middle = (low + high + 1) // 2  # vnodes from ``middle`` on start at bounds[middle - 1]
    below = _bucket(column, bounds, low, middle - 1)
    at_or_above = _bucket(column, bounds, middle, high)
    return f"CASE WHEN {column} < {bounds[middle - 1]} THEN {below} ELSE {at_or_above} END"


def range_column_type(keys: tuple[str, ...] | list[str], schema: StructType) -> str | None:
    """The type of the first key column if range vnodes can cut it, else None."""
    by_fold = {fold_name(f.name): f.dataType for f in schema.fields}
    found: DataType | None = by_fold.get(fold_name(keys[0])) if keys else None
    return found.simpleString() if isinstance(found, RANGE_TYPES) else None


def choose_layout(
    snapshot: Any, keys: tuple[str, ...], vnodes: int, previous: VnodeLayout | None
) -> VnodeLayout:
    """The layout of a cycle: ``previous`` (the last completed cycle's) while it fits,
    else range vnodes cut at the snapshot's quantiles of the first key column (one narrow
    pass over the snapshot), or hash vnodes."""
    if previous is not None and previous.fits(keys, snapshot.schema, vnodes):
        return previous
    column_type = range_column_type(keys, snapshot.schema)
    if column_type is None or vnodes < 2:
        return VnodeLayout(vnodes)
    column = next(f.name for f in snapshot.schema.fields if fold_name(f.name) == fold_name(keys[0]))
    ranges = min(vnodes, RANGE_VNODES)
    fractions = ", ".join(str(i / ranges) for i in range(1, ranges))
    # each bound's place in the column's order and its SQL spelling, never a Python date:
    # Spark holds dates of years before 1 and after 9999
    is_date = column_type == "date"
    place = "unix_date(b)" if is_date else "b"
    found = snapshot.selectExpr(
        f"transform(percentile_approx({ident(column)}, array({fractions}), {ACCURACY}), "
        f"b -> named_struct('place', {place}, 'text', CAST(b AS STRING))) AS bounds"
    ).collect()[0]["bounds"]
    spelled = {b["place"]: b["text"] for b in found or ()}
    if is_date:  # a bound in the gap moves to the first date after it
        gap = {(day - EPOCH).days for day in GREGORIAN_GAP}
        after = ((AFTER_GAP - EPOCH).days, AFTER_GAP.isoformat())
        spelled = dict(after if day in gap else (day, text) for day, text in spelled.items())
    if not spelled:
        return VnodeLayout(vnodes)
    bounds = tuple(_date_literal(t) if is_date else t for _, t in sorted(spelled.items()))
    return VnodeLayout(vnodes, column, column_type, bounds)


def _date_literal(text: str) -> str:
    """A date as Spark spells it (``CAST(d AS STRING)``, ISO's for years 1 to 9999) as a
    SQL literal."""
    return f"DATE'{text}'"
