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

Versions up to 0.2 kept the bookkeeping tables beside main (:meth:`ModelTables.beside_main`);
a run moves them (``refresh.RefreshRun._move_bookkeeping_beside_main``).
"""

from __future__ import annotations

from dataclasses import dataclass

STAGING_SUFFIX = "__staging"
CHANGES_SUFFIX = "__changes"
PROGRESS_SUFFIX = "__progress"
STATE_SUFFIX = "__state"
BOOKKEEPING_SCHEMA_SUFFIX = "_refreshable"

VNODE_COLUMN = "__refreshable_vnode"
HASH_COLUMN = "__refreshable_hash"
OP_COLUMN = "__refreshable_op"
RESERVED_PREFIX = "__refreshable_"


def quote(part: str) -> str:
    return "`" + part.replace("`", "``") + "`"


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

    def _name(self, identifier: str) -> str:
        return f"{quote(self.bookkeeping)}.{quote(identifier)}"

    @property
    def main(self) -> str:
        return f"{quote(self.schema)}.{quote(self.identifier)}"

    @property
    def staging(self) -> str:
        return self._name(self.identifier + STAGING_SUFFIX)

    @property
    def changes(self) -> str:
        return self._name(self.identifier + CHANGES_SUFFIX)

    @property
    def progress(self) -> str:
        return self._name(self.identifier + PROGRESS_SUFFIX)

    @property
    def state(self) -> str:
        return self._name(self.identifier + STATE_SUFFIX)

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
        return {
            "main": self.identifier,
            "staging": self.identifier + STAGING_SUFFIX,
            "changes": self.identifier + CHANGES_SUFFIX,
            "progress": self.identifier + PROGRESS_SUFFIX,
            "state": self.identifier + STATE_SUFFIX,
        }
