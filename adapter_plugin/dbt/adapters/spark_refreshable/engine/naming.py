"""The naming scheme: one model, five tables, the engine's own columns.

For a model ``analytics.orders``, its four bookkeeping tables in a schema of their own
(``bookkeeping_schema``; by default the model's schema with ``_refreshable`` appended), out
of the way of the model's schema, its docs and the tools that list it:

=========================================== ============================================
``analytics.orders``                        main: serves queries (Delta)
``analytics_refreshable.orders__staging``   the snapshot being refreshed, with vnode and
                                            row hash (Delta)
``analytics_refreshable.orders__changes``   the snapshot's difference from main, by vnode
``analytics_refreshable.orders__progress``  per-vnode checkpoints of the merge (Delta)
``analytics_refreshable.orders__state``     phase, lease, last completed snapshot (Delta)
=========================================== ============================================

A bookkeeping name longer than a file name may be (255 bytes: each table is a folder named
after it) takes a shortened identifier, its start and a hash of the whole
(:meth:`ModelTables.bookkeeping_stem`), so that any alias main can have, its bookkeeping
can too.

Versions up to 0.2 kept the bookkeeping tables beside main (:meth:`ModelTables.beside_main`);
a run moves them (``refresh.RefreshRun._move_bookkeeping_beside_main``).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

# each bookkeeping table's role and the suffix its name adds to the model's
BOOKKEEPING_SUFFIXES = {
    "staging": "__staging",
    "changes": "__changes",
    "progress": "__progress",
    "state": "__state",
}
BOOKKEEPING_SCHEMA_SUFFIX = "_refreshable"

VNODE_COLUMN = "__refreshable_vnode"
HASH_COLUMN = "__refreshable_hash"
OP_COLUMN = "__refreshable_op"
RESERVED_PREFIX = "__refreshable_"

# a table's folder is named after it: most file systems allow names of 255 bytes
MAX_NAME_BYTES = 255
STEM_HASH_CHARS = 12


def quote(part: str) -> str:
    return "`" + part.replace("`", "``") + "`"


def fold_name(name: str) -> str:
    """A column or field name as Spark's resolver compares names: case-insensitively, as
    Java's ``String.equalsIgnoreCase`` does, code point by code point, each as the lower case
    of its upper case. Two names whose folds are equal are one column to Spark. Python's
    ``lower()`` tells apart names that Spark takes for one (``ıd`` and ``id``, ``ſ`` and
    ``s``, ``ϑ`` and ``θ``), so the engine compares column and field names through this
    (constraint names, which Delta lower-cases itself, aside)."""
    return "".join(_fold_code_point(c) for c in name)


@functools.cache
def _fold_code_point(c: str) -> str:
    """Java's ``Character.toLowerCase(Character.toUpperCase(c))``: the simple (one code
    point) case mappings, which Python's ``upper()`` and ``lower()`` give wherever their
    full mapping is one code point too (``ß`` upper-cases to ``SS`` in Python, to itself in
    Java; the titlecase is the simple upper case of Greek letters with a ypogegrammeni;
    ``İ`` lower-cases to ``i``)."""
    upper = c.upper()
    if len(upper) != 1:
        title = c.title()
        upper = title if len(title) == 1 else c
    lower = upper.lower()
    if len(lower) != 1:
        return "i" if upper == "\u0130" else upper
    return lower


@dataclass(frozen=True)
class ModelTables:
    schema: str
    identifier: str
    bookkeeping_schema: str | None = None  # None: the default, ``<schema>_refreshable``

    @property
    def bookkeeping(self) -> str:
        """The schema of the bookkeeping tables."""
        return self.bookkeeping_schema or self.schema + BOOKKEEPING_SCHEMA_SUFFIX

    def beside_main(self) -> ModelTables:
        """The same model with its bookkeeping tables in main's schema (the layout of
        versions up to 0.2)."""
        return ModelTables(self.schema, self.identifier, self.schema)

    @property
    def bookkeeping_beside_main(self) -> bool:
        return self.bookkeeping.lower() == self.schema.lower()

    @property
    def bookkeeping_stem(self) -> str:
        """The identifier the bookkeeping names start with: main's, unless its longest
        bookkeeping name would pass MAX_NAME_BYTES; then its start and a hash of the whole
        (lower case, as the catalog compares names)."""
        room = MAX_NAME_BYTES - max(map(len, BOOKKEEPING_SUFFIXES.values()))
        if len(self.identifier.encode()) <= room:
            return self.identifier
        digest = hashlib.sha256(self.identifier.lower().encode()).hexdigest()[:STEM_HASH_CHARS]
        start = self.identifier.encode()[: room - STEM_HASH_CHARS - 1]
        return f"{start.decode(errors='ignore')}_{digest}"

    def _name(self, identifier: str) -> str:
        return f"{quote(self.bookkeeping)}.{quote(identifier)}"

    @property
    def main(self) -> str:
        return f"{quote(self.schema)}.{quote(self.identifier)}"

    @property
    def staging(self) -> str:
        return self.role_name("staging")

    @property
    def changes(self) -> str:
        return self.role_name("changes")

    @property
    def progress(self) -> str:
        return self.role_name("progress")

    @property
    def state(self) -> str:
        return self.role_name("state")

    def role_name(self, role: str) -> str:
        """The quoted name of the table of ``role`` (a key of :meth:`identifiers`)."""
        return self.main if role == "main" else self._name(self.identifiers()[role])

    def role_display(self, role: str) -> str:
        """The unquoted name of the table of ``role``, for messages."""
        schema = self.schema if role == "main" else self.bookkeeping
        return f"{schema}.{self.identifiers()[role]}"

    @property
    def display(self) -> str:
        return f"{self.schema}.{self.identifier}"

    def identifiers(self) -> dict[str, str]:
        """Unquoted identifiers per role, for the Jinja side (tests, operations)."""
        stem = self.bookkeeping_stem
        return {
            "main": self.identifier,
            **{role: stem + suffix for role, suffix in BOOKKEEPING_SUFFIXES.items()},
        }
