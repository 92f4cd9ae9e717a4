"""The naming scheme: one model, five tables, the engine's own columns.

For a model ``analytics.orders``:

=============================== ========================================================
``analytics.orders``            main: serves queries (Delta)
``analytics.orders__staging``   the snapshot being refreshed, with vnode and row hash (Delta)
``analytics.orders__changes``   the snapshot's difference from main, by vnode (Delta)
``analytics.orders__progress``  per-vnode checkpoints of the merge (Delta)
``analytics.orders__state``     one row: phase, lease, last completed snapshot (Delta)
=============================== ========================================================
"""

from __future__ import annotations

from dataclasses import dataclass

STAGING_SUFFIX = "__staging"
CHANGES_SUFFIX = "__changes"
PROGRESS_SUFFIX = "__progress"
STATE_SUFFIX = "__state"

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

    def _name(self, identifier: str) -> str:
        return f"{quote(self.schema)}.{quote(identifier)}"

    @property
    def main(self) -> str:
        return self._name(self.identifier)

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
        return self._name(self.identifiers()[role])

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
