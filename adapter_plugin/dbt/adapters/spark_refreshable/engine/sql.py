"""Quoting and literals for the Spark SQL the engine generates."""

from __future__ import annotations

from collections.abc import Iterable


def ident(name: str) -> str:
    """A column name as a quoted identifier."""
    return "`" + name.replace("`", "``") + "`"


def qualified(prefix: str, name: str) -> str:
    return f"{prefix}.{ident(name)}"


def literal(value: object) -> str:
    """A Python value as a Spark SQL literal (str, int, float, bool, None)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return f"CAST({value} AS BIGINT)"
    if isinstance(value, float):
        return f"CAST({value!r} AS DOUBLE)"
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    raise TypeError(f"no SQL literal for {type(value).__name__}: {value!r}")


def column_list(names: Iterable[str], prefix: str | None = None) -> str:
    return ", ".join(qualified(prefix, n) if prefix else ident(n) for n in names)


def vnode_expression(keys: Iterable[str], vnodes: int, prefix: str | None = None) -> str:
    """The vnode of a row: pmod(xxhash64(key columns), vnodes). One definition, used for
    staging's layout and for slicing main, so that both always agree."""
    return f"pmod(xxhash64({column_list(keys, prefix)}), {int(vnodes)})"


def row_hash_expression(columns: list[str], prefix: str | None = None) -> str:
    """A 64-bit hash of a row's content. xxhash64 skips NULLs, so the null pattern is hashed
    too: (NULL, 1) and (1, NULL) differ."""
    cols = column_list(columns, prefix)
    nulls = ", ".join(f"isnull({qualified(prefix, c) if prefix else ident(c)})" for c in columns)
    return f"xxhash64({cols}, array({nulls}))"


def checksum_expression(columns: list[str]) -> str:
    """An order-independent checksum of a set of rows: the sum of their row hashes, exact
    in DECIMAL(38,0) (no overflow below ~10^19 rows), as a string."""
    return (
        f"CAST(coalesce(sum(CAST({row_hash_expression(columns)} AS DECIMAL(38,0))), 0) AS STRING)"
    )
