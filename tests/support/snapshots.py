"""A seeded generator of adversarial snapshot sequences for differential tests.

A :class:`GeneratedModel` is one table: a schema (a leading ``case_id`` key, generated key
columns, generated value columns) and many independent *cases*, each a day 1 -> day 2 ->
day 3 sequence of rows under its own ``case_id``. Between days a case's rows are inserted,
updated (one leaf changed, possibly deep inside a nested value, possibly to or from NULL),
re-keyed under an equal spelling of their key (a double 0.0 as -0.0),
moved between adjacent columns of one type, deleted, or left alone; some cases empty
themselves or grow many rows. Everything follows from ``seed``: the same seed, features and
sizes give the same model, so a failure reproduces from the seed printed with it.

:class:`Features` says what may be generated; each flag is a kind of input the engine
claims to support, so what a release documents as unsupported can be turned off.
Python ``random`` only, no other dependency.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import struct
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from pyspark.sql.types import VariantVal

from dbt.adapters.spark_refreshable.engine.naming import fold_name


@dataclass(frozen=True)
class Features:
    """What the generator may produce (all on by default: nothing is documented as
    unsupported)."""

    nested: bool = True  # ARRAY, STRUCT and MAP columns, nested in each other
    maps: bool = True  # MAP types (unordered; compared as such)
    nested_nulls: bool = True  # NULL elements, fields and map values inside nested values
    empty_collections: bool = True  # [] and {} besides NULL
    binary: bool = True
    decimals: bool = True  # several precisions and scales, changed by one unit in the last place
    timestamps: bool = True  # TIMESTAMP (session time zone)
    timestamp_ntz: bool = True  # TIMESTAMP_NTZ
    dates: bool = True
    special_floats: bool = True  # NaN, +inf, -inf
    signed_zero: bool = True  # 0.0 changed to -0.0 and back
    unicode: bool = True  # emoji, combining marks, RTL, NUL-free control-ish whitespace
    moves: bool = True  # a value moved between adjacent columns of one type
    quoted_names: bool = True  # column names with spaces, punctuation, emoji, mixed case
    variants: bool = True  # VARIANT values (JSON documents), also inside nested types
    # value columns that appear late, go, come back, change places and change case between
    # days (a model run under on_schema_change append_new_columns or sync_all_columns)
    column_changes: bool = True


# ---------------------------------------------------------------------------------------
# Types: a DDL spelling, a value generator and a one-leaf mutation.


@dataclass(frozen=True)
class Atom:
    ddl: str
    kind: str  # int, bigint, smallint, tinyint, double, float, bool, string, binary, decimal,
    # date, ts


@dataclass(frozen=True)
class ArrayT:
    element: Any

    @property
    def ddl(self) -> str:
        return f"ARRAY<{self.element.ddl}>"


@dataclass(frozen=True)
class StructT:
    fields: tuple[tuple[str, Any], ...]

    @property
    def ddl(self) -> str:
        return "STRUCT<" + ", ".join(f"`{n}`: {t.ddl}" for n, t in self.fields) + ">"


@dataclass(frozen=True)
class MapT:
    key: Atom
    value: Any

    @property
    def ddl(self) -> str:
        return f"MAP<{self.key.ddl}, {self.value.ddl}>"


@dataclass(frozen=True)
class VariantT:
    """A VARIANT: values are ``VariantVal``s parsed from generated JSON documents."""

    @property
    def ddl(self) -> str:
        return "VARIANT"


@dataclass(frozen=True)
class Column:
    name: str
    type: Any


@dataclass
class Case:
    """One independent day 1 -> 2 -> 3 sequence; rows without the leading case_id."""

    case_id: int
    scenario: str
    days: list[list[tuple]] = field(default_factory=list)


@dataclass(frozen=True)
class DayColumns:
    """The value columns of one day's snapshot: which (indices into the model's
    ``columns``) in their order, and every column's spelling that day (``case_id`` and the
    keys first, then those value columns)."""

    present: tuple[int, ...]
    names: tuple[str, ...]


@dataclass
class GeneratedModel:
    seed: int
    features: Features
    keys: list[Column]
    columns: list[Column]
    cases: list[Case]
    column_days: list[DayColumns] | None = None  # None: every day has every column

    @property
    def all_columns(self) -> list[Column]:
        return [Column("case_id", Atom("INT", "int")), *self.keys, *self.columns]

    @property
    def unique_key(self) -> list[str]:
        return ["case_id", *(k.name for k in self.keys)]

    def ddl(self, day: int | None = None) -> str:
        """The schema of day ``day``'s snapshot (None: of all columns, in their order)."""
        fixed = len(self.keys) + 1
        if day is None or self.column_days is None:
            columns, names = self.all_columns, [c.name for c in self.all_columns]
        else:
            on = self.column_days[day - 1]
            columns = [*self.all_columns[:fixed], *(self.columns[i] for i in on.present)]
            names = list(on.names)
        return ", ".join(f"{quote(n)} {c.type.ddl}" for n, c in zip(names, columns, strict=True))

    def day(self, n: int) -> list[tuple]:
        """Day ``n`` (1-based) of every case, as rows of that day's schema."""
        rows = [(case.case_id, *row) for case in self.cases for row in case.days[n - 1]]
        if self.column_days is None:
            return rows
        fixed, present = len(self.keys) + 1, self.column_days[n - 1].present
        return [(*row[:fixed], *(row[fixed + i] for i in present)) for row in rows]

    def case(self, case_id: int) -> Case:
        return next(c for c in self.cases if c.case_id == case_id)

    def describe(self) -> str:
        days = (
            ""
            if self.column_days is None
            else "".join(f"\nday {n}: {self.ddl(n)}" for n in (1, 2, 3))
        )
        return f"seed={self.seed} features={self.features} schema: {self.ddl()}{days}"


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# ---------------------------------------------------------------------------------------

PLAIN_NAMES = ["amount", "Label", "createdAt", "note", "flags", "payload", "score", "tags"]
QUOTED_NAMES = ["Col A", "prix (€)", "ünïcödé", "🚀 launch", "a.b", "x`y", "MiXeD Case", "n-1"]
# nested key columns: a struct and an array of doubles, whose fields and elements may be
# NULL, NaN or a zero of either sign (Spark compares, groups and hashes them as it does
# top-level values: NULL fields equal, -0.0 equal to 0.0); the key as a whole is never NULL
NESTED_KEY_TYPES: dict[str, Any] = {
    "STRUCT<`x y`: DOUBLE, `S`: STRING>": StructT(
        (("x y", Atom("DOUBLE", "double")), ("S", Atom("STRING", "string")))
    ),
    "ARRAY<DOUBLE>": ArrayT(Atom("DOUBLE", "double")),
}
STRUCT_KEY, ARRAY_KEY = NESTED_KEY_TYPES
# key column types, composite; together every type a key may have here, and each of the two
# models that `make test` runs (the differential test's COLUMN_CHANGES) draws every type but
# one of each: range vnodes cut at DATE's calendar edges and at BIGINT's extremes. The others
# key on case_id first (range vnodes of an INT) and on a TIMESTAMP first (hash vnodes).
KEY_KINDS: list[tuple[str, ...]] = [
    ("INT", "BINARY", "BOOLEAN", "TINYINT"),
    # dates at the calendar's edges (CALENDAR_EDGES) among them; a struct key
    ("DATE", "STRING", "SMALLINT", "BOOLEAN", "TIMESTAMP", "INT", STRUCT_KEY),
    # a double key: 0.0 and -0.0, NaN, infinities; an array key
    ("BIGINT", "DECIMAL(18,2)", "DOUBLE", "BINARY", "FLOAT", "TIMESTAMP_NTZ", ARRAY_KEY),
    ("TIMESTAMP", "FLOAT", "TIMESTAMP_NTZ"),
]
# dates that trip calendars: the first and last Spark holds, the Julian-to-Gregorian gap
# (dates a hybrid calendar lacks; Delta's statistics misread them) and its edges, leap days
CALENDAR_EDGES = [
    dt.date(1, 1, 1),
    dt.date(1582, 10, 4),
    *(dt.date(1582, 10, 5) + dt.timedelta(days=d) for d in range(10)),
    dt.date(1582, 10, 15),
    dt.date(1900, 2, 28),
    dt.date(2000, 2, 29),
    dt.date(9999, 12, 31),
]
UNICODE = [
    "",
    " ",
    "  ",
    "\t",
    "é",
    "e\u0301",
    "ß",
    "ΣΑΣ",
    "日本語",
    "😀",
    "👩‍👩‍👧",
    "עברית",
    "\u200b",
]
# the largest value of each integer type (its smallest is -bound - 1)
INTEGER_BOUNDS = {"int": 2**31 - 1, "bigint": 2**63 - 1, "smallint": 2**15 - 1, "tinyint": 2**7 - 1}
# letters Spark's resolver takes for others that Python's lower() does not (test_names.py
# finds them all from the JVM)
ALIKE = str.maketrans({"s": "ſ", "i": "ı"})
NAN = float("nan")  # the one NaN of keys: NaN keys are equal in Spark, so in `taken` too
SCENARIOS = ["mixed", "mixed", "mixed", "nested_leaf", "moves", "empties", "crowded", "reinsert"]


class Generator:
    """Values and mutations drawn from one seeded ``random.Random``."""

    def __init__(self, seed: int, features: Features) -> None:
        self.rng = random.Random(seed)
        self.f = features

    # --- types -------------------------------------------------------------------------

    def atoms(self) -> list[Atom]:
        f = self.f
        atoms = [
            Atom("INT", "int"),
            Atom("BIGINT", "bigint"),
            Atom("SMALLINT", "smallint"),
            Atom("TINYINT", "tinyint"),
            Atom("DOUBLE", "double"),
            Atom("FLOAT", "float"),
            Atom("BOOLEAN", "bool"),
            Atom("STRING", "string"),
        ]
        if f.binary:
            atoms.append(Atom("BINARY", "binary"))
        if f.decimals:
            atoms += [
                Atom(d, "decimal") for d in ("DECIMAL(5,2)", "DECIMAL(18,6)", "DECIMAL(38,10)")
            ]
        if f.dates:
            atoms.append(Atom("DATE", "date"))
        if f.timestamps:
            atoms.append(Atom("TIMESTAMP", "ts"))
        if f.timestamp_ntz:
            atoms.append(Atom("TIMESTAMP_NTZ", "ts"))
        return atoms

    def type(self, depth: int = 0) -> Any:
        rng = self.rng
        if not self.f.nested or depth >= 3 or rng.random() < 0.5 + 0.2 * depth:
            return rng.choice(self.atoms() + ([VariantT(), VariantT()] if self.f.variants else []))
        shapes = ["array", "struct"] + (["map"] if self.f.maps else [])
        shape = rng.choice(shapes)
        if shape == "array":
            return ArrayT(self.type(depth + 1))
        if shape == "map":
            return MapT(
                rng.choice([Atom("INT", "int"), Atom("STRING", "string")]), self.type(depth + 1)
            )
        names = rng.sample(["a", "B", "c_1", "Dd", "e"], rng.randint(1, 3))
        return StructT(tuple((n, self.type(depth + 1)) for n in names))

    def key_columns(self, kinds: tuple[str, ...]) -> list[Column]:
        plain = ["k", "k2", "k3", "k4", "k5", "k6", "k7"]
        quoted = ["key ü", "Key-2", "KEY 3 🔑", "k.4", "K 5 (x)", "k`6", "k{7}"]
        names = quoted if self.f.quoted_names else plain
        return [Column(names[i], key_type(ddl)) for i, ddl in enumerate(kinds)]

    def value_columns(self, count: int) -> list[Column]:
        names = list(PLAIN_NAMES) + (QUOTED_NAMES if self.f.quoted_names else [])
        names += [f"c{i}" for i in range(count)]
        self.rng.shuffle(names)
        columns = [Column(names[i], self.type()) for i in range(count)]
        if self.f.moves:
            # adjacent columns of one type, so that values can move between them
            for i, t in enumerate((ArrayT(Atom("INT", "int")), Atom("STRING", "string"))):
                at = self.rng.randrange(len(columns) + 1)
                columns[at:at] = [Column(f"move{i}_l", t), Column(f"move{i}_r", t)]
        return columns

    # --- values ------------------------------------------------------------------------

    def atom(self, t: Atom) -> Any:
        rng, f, kind = self.rng, self.f, t.kind
        if kind in INTEGER_BOUNDS:
            bound = INTEGER_BOUNDS[kind]
            return rng.choice([0, 1, -1, bound, -bound - 1, rng.randint(-bound - 1, bound)])
        if kind in ("double", "float"):
            specials = [float("nan"), float("inf"), float("-inf")] if f.special_floats else []
            zeros = [0.0, -0.0] if f.signed_zero else [0.0]
            plain = rng.choice([1.5, -2.25, 1e-30, 3.0e30, round(rng.uniform(-1e3, 1e3), 3)])
            return rng.choice([plain, plain, *zeros, *specials])
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "string":
            return self.string()
        if kind == "binary":
            return bytearray(rng.randbytes(rng.choice([0, 1, 3, 8])))
        if kind == "decimal":
            precision, scale = decimal_shape(t.ddl)
            digits = rng.randint(0, 10 ** min(precision, 18) - 1) * rng.choice([1, -1])
            return Decimal(digits).scaleb(-scale)
        if kind == "date":
            if rng.random() < 0.2:
                return rng.choice(CALENDAR_EDGES)
            return dt.date(1970, 1, 1) + dt.timedelta(days=rng.randint(-20000, 30000))
        if kind == "ts":
            seconds = rng.randint(0, 2_000_000_000)
            return dt.datetime(1970, 1, 2) + dt.timedelta(
                seconds=seconds, microseconds=rng.randint(0, 999_999)
            )
        raise ValueError(f"no generator for {t.ddl}")

    def string(self) -> str:
        rng = self.rng
        if self.f.unicode and rng.random() < 0.5:
            return "".join(rng.choice(UNICODE) for _ in range(rng.randint(0, 3)))
        return "".join(rng.choice("abcXYZ019 _'\"\\%") for _ in range(rng.randint(0, 6)))

    def value(self, t: Any, null_rate: float = 0.15, depth: int = 0) -> Any:
        """A value of ``t``; NULL with ``null_rate`` (inside nested values only with
        ``nested_nulls``)."""
        if self.rng.random() < null_rate and (depth == 0 or self.f.nested_nulls):
            return None
        if isinstance(t, Atom):
            return self.atom(t)
        if isinstance(t, VariantT):
            return to_variant(self.document())
        low = 0 if self.f.empty_collections else 1
        if isinstance(t, ArrayT):
            return [
                self.value(t.element, null_rate, depth + 1) for _ in range(self.rng.randint(low, 3))
            ]
        if isinstance(t, StructT):
            return tuple(self.value(ft, null_rate, depth + 1) for _, ft in t.fields)
        keys = {self.atom(t.key) for _ in range(self.rng.randint(low, 3))}
        return {k: self.value(t.value, null_rate, depth + 1) for k in keys}

    def mutate(self, t: Any, v: Any, depth: int = 0) -> Any:
        """``v`` with one leaf changed: a new value, NULL, or a non-NULL for a NULL; in a
        nested value, one element, field or map entry deep inside."""
        rng = self.rng
        nested_null_ok = depth == 0 or self.f.nested_nulls
        if v is None:
            return self.value(t, null_rate=0.0, depth=depth)
        if nested_null_ok and rng.random() < 0.2:
            return None
        if isinstance(t, Atom):
            return self.changed_atom(t, v)
        if isinstance(t, VariantT):
            return to_variant(self.changed_document(from_variant(v)))
        if isinstance(t, ArrayT):
            if not v or rng.random() < 0.2:
                return [*v, self.value(t.element, depth=depth + 1)]
            i = rng.randrange(len(v))
            return [*v[:i], self.mutate(t.element, v[i], depth + 1), *v[i + 1 :]]
        if isinstance(t, StructT):
            i = rng.randrange(len(t.fields))
            return (*v[:i], self.mutate(t.fields[i][1], v[i], depth + 1), *v[i + 1 :])
        if not v or rng.random() < 0.2:
            return {**v, self.atom(t.key): self.value(t.value, depth=depth + 1)}
        k = rng.choice(sorted(v, key=repr))
        return {**v, k: self.mutate(t.value, v[k], depth + 1)}

    def changed_atom(self, t: Atom, v: Any) -> Any:
        if t.kind in ("double", "float") and v == 0.0 and self.f.signed_zero:
            return -v  # 0.0 <-> -0.0: equal by SQL `=`, different content
        if t.kind == "decimal" and self.rng.random() < 0.5:
            precision, scale = decimal_shape(t.ddl)
            step = Decimal(1).scaleb(-scale)  # one unit in the last place
            return v - step if v + step >= Decimal(10) ** (precision - scale) else v + step
        if t.kind == "string" and self.rng.random() < 0.3:
            return v.swapcase() if v.swapcase() != v else v + " "
        for _ in range(50):
            new = self.atom(t)
            if not same(new, v):
                return new
        raise ValueError(f"could not draw a value of {t.ddl} other than {v!r}")

    # --- variants: JSON documents of tagged scalars --------------------------------------
    # A scalar is (kind, value), kind one of VARIANT_KINDS; an array holds scalars of one
    # kind, of mixed kinds, or documents, and its elements change kind under the same JSON
    # (`[1, 1.0]` to `[1.0, 1]`: one merged array type, the same JSON text) or swap places.

    def document(self, depth: int = 0) -> Any:
        rng = self.rng
        shape = rng.choice(["scalar", "scalar", "array", "object"] if depth < 2 else ["scalar"])
        if shape != "scalar" and rng.random() < 0.3:
            # one number as an integer and a DECIMAL: the same JSON text either way round
            value = rng.choice([0.0, 1.0, -2.0, 10.0])
            return [(kind, NUMERIC_KINDS[kind](value)) for kind in ONE_NUMBER_TWICE]
        if shape == "scalar":
            return self.scalar(rng.choice(VARIANT_KINDS))
        if shape == "array":
            kind = rng.choice(VARIANT_KINDS)
            mixed = rng.random() < 0.5
            return [
                self.document(depth + 1)
                if mixed and rng.random() < 0.3
                else self.scalar(rng.choice(VARIANT_KINDS) if mixed else kind)
                for _ in range(rng.randint(0, 3))
            ]
        names = rng.sample(VARIANT_FIELDS, rng.randint(0, 3))
        return {name: self.document(depth + 1) for name in names}

    def scalar(self, kind: str) -> tuple[str, Any]:
        """A JSON scalar of ``kind``; numbers that print alike in several kinds (1, 1.0,
        1.0e0; 0 and -0.0) are common, so that a kind changed under the same JSON is too."""
        rng = self.rng
        if kind == "int":
            return kind, rng.choice([0, 1, -1, 2**31, -(2**63), 2**63 - 1, rng.randint(-999, 999)])
        if kind == "decimal":
            text = rng.choice(["0.0", "1.0", "1.50", "-2.25", "1.000", "123456789.123456789"])
            return kind, Decimal(text)
        if kind == "double":
            return kind, rng.choice([0.0, -0.0, 1.0, 1.5, -2.25, 1e-30, 3.0e30])
        if kind == "string":
            return kind, rng.choice([self.string(), "1", "2024-01-01", "true", "null"])
        if kind == "bool":
            return kind, rng.random() < 0.5
        return "null", None

    def changed_document(self, doc: Any, in_array: bool = False) -> Any:
        """``doc`` with one thing changed: a scalar's value, or its kind under the same
        number; an element added, dropped or moved to the end; a field added, dropped or
        changed; or the fields in another order (the same content)."""
        rng = self.rng
        if isinstance(doc, tuple):
            kind, value = doc
            if kind in NUMERIC_KINDS and rng.random() < 0.5:
                other = rng.choice([k for k in NUMERIC_KINDS if k != kind])
                return other, NUMERIC_KINDS[other](value)
            if in_array and kind == "null":
                return doc
            for _ in range(50):
                new = self.scalar(kind if in_array else rng.choice(VARIANT_KINDS))
                if not same(to_variant(new), to_variant(doc)):
                    return new
            return self.document()
        if isinstance(doc, list):
            if _one_number_twice(doc) and rng.random() < 0.7:
                return doc[::-1]  # the same JSON text, the types swapped
            kind = doc[0][0] if doc and isinstance(doc[0], tuple) else rng.choice(VARIANT_KINDS)
            if not doc or rng.random() < 0.2:
                return [*doc, self.scalar(kind)]
            i = rng.randrange(len(doc))
            if rng.random() < 0.2:
                return doc[:i] + doc[i + 1 :]
            if len(doc) > 1 and rng.random() < 0.5:
                return [*doc[1:], doc[0]]
            return [*doc[:i], self.changed_document(doc[i], in_array=True), *doc[i + 1 :]]
        choice = rng.random()
        if not doc or choice < 0.2:
            name = rng.choice(VARIANT_FIELDS)
            return {**doc, name: self.document(1)}
        if choice < 0.3:
            return dict(reversed(list(doc.items())))
        name = rng.choice(list(doc))
        if choice < 0.4:
            return {k: v for k, v in doc.items() if k != name}
        return {**doc, name: self.changed_document(doc[name])}

    def key(self, kinds: tuple[str, ...], taken: set[tuple]) -> tuple:
        """A fresh key (never NULL) for ``kinds``."""
        for _ in range(1000):
            parts = tuple(self.key_part(kind) for kind in kinds)
            if parts not in taken:
                taken.add(parts)
                return parts
        raise ValueError(f"no fresh key of {kinds} after 1000 draws")

    def key_part(self, ddl: str) -> Any:
        if ddl in NESTED_KEY_TYPES:
            return self.nested_key_part(NESTED_KEY_TYPES[ddl])
        kind = key_kind(ddl)
        if kind == "string":
            return self.string() + str(self.rng.randint(0, 99))  # never empty
        value = self.atom(Atom(ddl, kind))
        if kind == "binary":
            return bytes(value)  # hashable, for ``taken``
        if kind == "float":  # as FLOAT holds it: two doubles may round to one key
            value = struct.unpack("f", struct.pack("f", value))[0]
        return NAN if value != value else value

    def nested_key_part(self, t: StructT | ArrayT) -> tuple:
        """A struct or array key as a hashable tuple: fields and elements drawn as key parts,
        a fifth of them NULL; an array of 0 to 3 elements."""

        def leaf(atom: Atom) -> Any:
            return None if self.rng.random() < 0.2 else self.key_part(atom.ddl)

        if isinstance(t, StructT):
            return tuple(leaf(field) for _, field in t.fields)
        return tuple(leaf(t.element) for _ in range(self.rng.randint(0, 3)))

    def respelled(self, values: tuple, n: int) -> tuple:
        """The row under the same key spelled otherwise, where a key allows it: a double
        key part 0.0 as -0.0 and back, also inside a struct or array key (Spark compares
        them equal)."""
        if not self.f.signed_zero:
            return values
        return (*(sign_flipped(v) for v in values[:n]), *values[n:])

    def column_days(self, keys: list[Column], columns: list[Column]) -> list[DayColumns]:
        """Day 1 lacks a few value columns that come on day 2; day 2 drops a few others,
        day 3 brings some of them back; from day 2 the columns change places and the case
        of their names (the keys' too: Spark resolves names case-insensitively)."""
        rng, n = self.rng, len(columns)
        late = set(rng.sample(range(n), rng.randint(0, 2)))
        gone = set(rng.sample(sorted(set(range(n)) - late), rng.randint(1, 3)))
        back = set(rng.sample(sorted(gone), rng.randint(1, len(gone))))
        days = [
            [i for i in range(n) if i not in late],
            [i for i in range(n) if i not in gone],
            [i for i in range(n) if i not in gone or i in back],
        ]
        fixed = ["case_id", *(k.name for k in keys)]
        out = [DayColumns(tuple(days[0]), tuple(fixed + [columns[i].name for i in days[0]]))]
        for present in days[1:]:
            rng.shuffle(present)
            names = [*fixed, *(columns[i].name for i in present)]
            out.append(DayColumns(tuple(present), tuple(self.recased(m) for m in names)))
        return out

    def recased(self, name: str) -> str:
        """``name`` in another case, as Spark's resolver folds it (``fold_name``): its case
        where it maps both ways (not ß, for one), or with letters only Spark takes for its
        own (ſ for s, ı for i)."""
        spellings = [name, name.upper(), name.lower(), name.swapcase(), name.translate(ALIKE)]
        return self.rng.choice([s for s in spellings if fold_name(s) == fold_name(name)])

    # --- cases -------------------------------------------------------------------------

    def case(self, case_id: int, kinds: tuple[str, ...], columns: list[Column]) -> Case:
        rng = self.rng
        scenario = rng.choice(SCENARIOS)
        taken: set[tuple] = set()
        size = 40 if scenario == "crowded" else rng.randint(1, 8)

        def row(key: tuple) -> tuple:
            return (*key, *(self.value(c.type) for c in columns))

        day1 = {key: row(key) for key in (self.key(kinds, taken) for _ in range(size))}
        days = [day1]
        for _ in (2, 3):
            days.append(self.next_day(scenario, days[-1], days[0], kinds, taken, columns, row))
        return Case(case_id, scenario, [list(d.values()) for d in days])

    def next_day(
        self,
        scenario: str,
        before: dict[tuple, tuple],
        first: dict[tuple, tuple],
        kinds: tuple[str, ...],
        taken: set[tuple],
        columns: list[Column],
        row: Any,
    ) -> dict[tuple, tuple]:
        rng, n = self.rng, len(kinds)
        if scenario == "empties" and before:
            return {}  # this case's rows all go (the table keeps other cases' rows)
        if scenario == "reinsert" and len(before) == len(first):
            return {}
        if scenario == "reinsert":
            return dict(first)  # the very rows deleted the day before come back
        after: dict[tuple, tuple] = {}
        for key, values in before.items():
            op = rng.choices(["keep", "update", "delete"], [4, 4, 1])[0]
            if op == "delete":
                continue
            if op == "update" or scenario in ("nested_leaf", "moves"):
                values = self.update(scenario, values, n, columns)
            if rng.random() < 0.3:
                values = self.respelled(values, n)
            after[key] = values
        for _ in range(rng.randint(0, 3)):
            key = self.key(kinds, taken)
            after[key] = row(key)
        return after

    def update(self, scenario: str, values: tuple, n: int, columns: list[Column]) -> tuple:
        rng = self.rng
        out = list(values)
        pairs = [i for i in range(len(columns) - 1) if is_move_pair(columns[i], columns[i + 1])]
        if pairs and (scenario == "moves" or rng.random() < 0.2):
            i = rng.choice(pairs)
            as_list = isinstance(columns[i].type, ArrayT)
            out[n + i], out[n + i + 1] = move(out[n + i], out[n + i + 1], as_list)
            return tuple(out)
        nested = [i for i, c in enumerate(columns) if not isinstance(c.type, Atom)]
        i = (
            rng.choice(nested)
            if scenario == "nested_leaf" and nested
            else rng.randrange(len(columns))
        )
        out[n + i] = self.mutate(columns[i].type, out[n + i])
        return tuple(out)


VARIANT_KINDS = ["int", "decimal", "double", "string", "bool", "null"]
# the numeric kinds, each with how it spells a number of another kind (1 -> 1.0 -> 1.0e0)
NUMERIC_KINDS = {
    "int": int,
    "decimal": lambda v: Decimal(f"{int(v)}.0"),  # from a string: exact at any size
    "double": float,
}
VARIANT_FIELDS = ["a", "B", "id", "ü", "🚀", "a b", "", "x.y"]


# kinds whose numbers Spark's to_json spells alike (1 and 1.0 as `1`) and schema_of_variant
# merges in an array: an array of one number in both kinds, then swapped, keeps its JSON text
ONE_NUMBER_TWICE = ("int", "decimal")


def _one_number_twice(doc: list) -> bool:
    """An array of one number in the kinds ONE_NUMBER_TWICE (``document`` makes them)."""
    kinds = tuple(sorted(e[0] if isinstance(e, tuple) else "" for e in doc))
    return kinds == tuple(sorted(ONE_NUMBER_TWICE)) and doc[0][1] == doc[1][1]


def to_variant(doc: Any) -> VariantVal:
    """A generated document as a VARIANT (parsed from its JSON, as ``parse_json`` does)."""
    return VariantVal.parseJson(_json(doc))


def _json(doc: Any) -> str:
    if isinstance(doc, list):
        return "[" + ", ".join(_json(d) for d in doc) + "]"
    if isinstance(doc, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_json(v)}" for k, v in doc.items()) + "}"
    kind, value = doc
    if kind == "decimal":
        return format(value, "f")  # digits and a point: a DECIMAL, never a DOUBLE
    if kind == "double":
        return f"{value!r}e0" if "e" not in repr(value) else repr(value)  # an exponent: DOUBLE
    return json.dumps(value)


def from_variant(value: VariantVal) -> Any:
    """The generated document a VARIANT holds again (numbers by their variant type)."""
    return _document(value.toPython())


def _document(value: Any) -> Any:
    if isinstance(value, list):
        return [_document(v) for v in value]
    if isinstance(value, dict):
        return {k: _document(v) for k, v in value.items()}
    if value is None:
        return ("null", None)
    kinds = {bool: "bool", int: "int", Decimal: "decimal", float: "double", str: "string"}
    return kinds.get(type(value), type(value).__name__), value  # dates, binary: by type


def move(left: Any, right: Any, as_list: bool) -> tuple[Any, Any]:
    """Move the boundary between two adjacent values of one type (lists or strings): (ab,
    c) -> (a, bc), or back when ``left`` is empty; both concatenate the same. NULLs become
    empty first."""
    if as_list:
        left, right = list(left or []), list(right or [])
    else:
        left, right = left or "", right or ""
    if left:
        return left[:-1], left[-1:] + right
    return left + right[:1], right[1:]


def is_move_pair(left: Column, right: Column) -> bool:
    return (
        left.name.endswith("_l") and right.name == left.name[:-2] + "_r" and left.type == right.type
    )


def decimal_shape(ddl: str) -> tuple[int, int]:
    """(precision, scale) of ``DECIMAL(p,s)``."""
    precision, scale = ddl[len("DECIMAL(") : -1].split(",")
    return int(precision), int(scale)


def key_type(ddl: str) -> Any:
    """The type of a key column of ``ddl`` (a ``KEY_KINDS`` entry)."""
    return NESTED_KEY_TYPES.get(ddl) or Atom(ddl, key_kind(ddl))


def sign_flipped(value: Any) -> Any:
    """``value`` with every zero double in it, nested in tuples too, of the other sign."""
    if isinstance(value, float) and value == 0.0:
        return -value
    if isinstance(value, tuple):
        return tuple(sign_flipped(v) for v in value)
    return value


def key_kind(ddl: str) -> str:
    return {
        "INT": "int",
        "BIGINT": "bigint",
        "SMALLINT": "smallint",
        "TINYINT": "tinyint",
        "STRING": "string",
        "BINARY": "binary",
        "BOOLEAN": "bool",
        "DATE": "date",
        "DOUBLE": "double",
        "FLOAT": "float",
    }.get(ddl, "decimal" if ddl.startswith("DECIMAL") else "ts")


def same(a: Any, b: Any) -> bool:
    """Equal as content: NaN equals NaN, -0.0 differs from 0.0."""
    return canonical(a) == canonical(b)


def canonical(value: Any) -> Any:
    """A hashable, comparable form of a collected value: maps unordered, floats by their
    bits (NaN == NaN, -0.0 != 0.0), rows and lists as tuples, binary as bytes, a variant by
    its document with each scalar's type (objects unordered; a decimal without trailing
    zeros, which no SQL function shows)."""
    if isinstance(value, VariantVal):
        return ("variant", _canonical_document(from_variant(value)))
    if isinstance(value, float):
        return ("float", value.hex() if value == value else "nan")
    if isinstance(value, dict):
        return ("map", frozenset((canonical(k), canonical(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(canonical(v) for v in value)
    if isinstance(value, (bytes, bytearray)):
        return ("binary", bytes(value))
    return value


def _canonical_document(doc: Any) -> Any:
    if isinstance(doc, list):
        return ("array", tuple(_canonical_document(d) for d in doc))
    if isinstance(doc, dict):
        return ("object", frozenset((k, _canonical_document(v)) for k, v in doc.items()))
    kind, value = doc
    if kind == "decimal":
        return kind, str(value.normalize()) if value else "0"
    return kind, canonical(value)


def generate(
    seed: int,
    cases: int,
    features: Features = Features(),
    key_kinds: tuple[str, ...] = ("INT",),
    evolve_columns: bool = False,
) -> GeneratedModel:
    """A model of ``cases`` independent cases under one generated schema; with
    ``evolve_columns`` (and the ``column_changes`` feature), its value columns change
    between days (``GeneratedModel.column_days``)."""
    g = Generator(seed, features)
    keys = g.key_columns(key_kinds)
    columns = g.value_columns(g.rng.randint(6, 10))
    generated = [g.case(i, key_kinds, columns) for i in range(cases)]
    days = g.column_days(keys, columns) if evolve_columns and features.column_changes else None
    return GeneratedModel(seed, features, keys, columns, generated, days)


def features_without(*names: str) -> Features:
    """All features but ``names`` (e.g. ``features_without("quoted_names")``)."""
    return replace(Features(), **{n: False for n in names})
