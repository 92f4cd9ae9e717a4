"""A state table's log: which of its commits holds a model's state.

Every change of the state is a blind append of its next row (lease version v + 1), whose
commit carries that row and the table version at which its writer read the state it
replaces (``read_at``). Delta never fails one blind append for another, so of two writers
that read the same state both commit; one rule, applied alike by a writer to its own
append and by every reader, makes one of them the winner:

    An append wins unless a commit after the version its writer read and before its own
    carries a lease version at least its own, or changes rows without being an append.

Of two appends from one read, the first wins. Winners' lease versions grow with their
commits (an append reads the newest winner's; a later winner that read an older state has
the newer one in its window), so the state is the newest winner. Commits that change no
row (``PASSED_BY_OPERATIONS``, the lease's own compactions) are passed by; any other commit
(a table created, rows updated by hand) ends the walk, and the reader scans the table.
An append of an earlier version of the engine, a compare-and-set by Delta's idempotent
writes (``txnAppId``), carries no ``read_at``: it won once it committed.

A blind append costs a quarter of the idempotent one it replaces (0.38 s against 1.49 s,
``bench/results/history/2026-11-27-state-commit-cost.md``): Delta 4.4 computes a table's
whole state, a log replay in Spark jobs, to read the versions of idempotent writes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, TypeVar

from dbt.adapters.spark_refreshable.engine.commits import ROWLESS_OPERATIONS, recent_commits
from dbt.adapters.spark_refreshable.engine.state import STATE_COLUMNS, State

# What a state append's commit carries: this prefix and a token, a space, then a JSON record
# of the row it appended ("state"), the rows the table then holds ("rows") and the version
# its writer read the state at ("read_at").
APPEND_TAG = "dbt-refreshable-state:"
# What the lease's compaction (a DELETE of the rows below the newest) carries.
COMPACTION_TAG = "dbt-refreshable-state-compaction"
# Commits of a state table the rule passes by: those that change no row, and the columns an
# upgrade of the engine adds (nulls in the rows before it, which a state row reads as unset)
PASSED_BY_OPERATIONS = ROWLESS_OPERATIONS | {"ADD COLUMNS"}
# Commits read at first, and at most, to find the newest winner (each a small file read).
FIRST_LOOK = 3
LONGEST_LOOK = 3 * 4**4


@dataclass(frozen=True)
class StateAppend:
    """A commit that appended a state row."""

    version: int  # the commit's table version
    token: str
    lease_version: int
    rows: int  # rows in the table after it, as its writer counted them
    read_at: int | None  # None: an earlier version's append, a winner once committed
    state: State | None  # None: its row lacks a column of today's state (an earlier version's)


class Mark(Enum):
    """A commit that is not a state append, or an answer the log read so far cannot give."""

    ROWLESS = "changes no row"
    FOREIGN = "changes rows, not by a state append"
    UNDECIDED = "read further back"


Entry = StateAppend | Mark


def append_tag(token: str, state: State, rows: int, read_at: int) -> str:
    """The ``userMetadata`` of a state append."""
    record = {"state": asdict(state), "rows": rows, "read_at": read_at}
    return f"{APPEND_TAG}{token} {json.dumps(record)}"


def classify(commit: Mapping[str, Any]) -> Entry:
    """A commit of the state table as the rule sees it: an append, rowless, or foreign."""
    tag = commit.get("userMetadata") or ""
    if tag == COMPACTION_TAG or commit.get("operation") in PASSED_BY_OPERATIONS:
        return Mark.ROWLESS
    if not tag.startswith(APPEND_TAG) or " " not in tag:
        return Mark.FOREIGN
    token, _, body = tag.partition(" ")
    try:
        record = json.loads(body)
        row = record["state"]
        state = None
        if all(name in row for name in STATE_COLUMNS):
            state = State(**{name: row[name] for name in STATE_COLUMNS})
        return StateAppend(
            version=int(commit["version"]),
            token=token[len(APPEND_TAG) :],
            lease_version=int(row["lease_version"]),
            rows=int(record["rows"]),
            read_at=None if record.get("read_at") is None else int(record["read_at"]),
            state=state,
        )
    except (ValueError, KeyError, TypeError):
        return Mark.FOREIGN


class LogWindow:
    """Commits of a state table, newest first, as far back as read (``complete``: back to
    the table's first commit the log still has)."""

    def __init__(self, commits: Sequence[Mapping[str, Any]], complete: bool) -> None:
        self.entries = {int(c["version"]): classify(c) for c in commits}
        self.newest = max(self.entries, default=-1)
        self.oldest = min(self.entries, default=0)
        self.complete = complete

    def won(self, append: StateAppend) -> bool | Mark:
        """Whether ``append`` wins by the rule; UNDECIDED if its window is not all read."""
        if append.read_at is None:
            return True
        if append.read_at >= append.version:  # read in another table of the same name
            return False
        for version in range(append.version - 1, append.read_at, -1):
            entry = self.entries.get(version)
            if entry is None:
                # not read yet, or gone from the log: then assume the worst
                return Mark.UNDECIDED if version < self.oldest and not self.complete else False
            if entry is Mark.ROWLESS:
                continue
            if entry is Mark.FOREIGN or entry.lease_version >= append.lease_version:
                return False
        return True

    def newest_winner(self) -> StateAppend | Mark | None:
        """The append that holds the state; None: the table must be scanned (a foreign
        commit is newer than any winner); UNDECIDED: read further back."""
        for version in range(self.newest, self.oldest - 1, -1):
            entry = self.entries.get(version)
            if entry is None or entry is Mark.FOREIGN:
                return None
            if entry is Mark.ROWLESS:
                continue
            won = self.won(entry)
            if won is Mark.UNDECIDED:
                return won
            if won:
                return entry
        return None if self.complete else Mark.UNDECIDED

    def find(self, token: str) -> StateAppend | None:
        for entry in self.entries.values():
            if isinstance(entry, StateAppend) and entry.token == token:
                return entry
        return None


Answer = TypeVar("Answer")


def read_log(
    spark: Any, table: str, decided: Callable[[LogWindow], Answer]
) -> tuple[LogWindow, Answer]:
    """Read the state table's log back until ``decided(window)`` returns other than
    ``Mark.UNDECIDED``, or as far as ``LONGEST_LOOK`` commits; the window and that answer."""
    limit = FIRST_LOOK
    while True:
        commits = recent_commits(spark, table, limit)
        complete = len(commits) < limit or min(int(c["version"]) for c in commits) == 0
        window = LogWindow(commits, complete)
        answer = decided(window)
        if answer is not Mark.UNDECIDED or complete or limit >= LONGEST_LOOK:
            return window, answer
        limit *= 4
