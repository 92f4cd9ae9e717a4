"""The rule that says which blind append of a state table's log won (engine.state_log),
checked against generated histories: writers that read the state and append after any
delay, commits that change no row, compactions, and readers that look at every point."""

from __future__ import annotations

import json
import random

import pytest

from dbt.adapters.spark_refreshable.engine.state import State
from dbt.adapters.spark_refreshable.engine.state_log import (
    COMPACTION_TAG,
    LogWindow,
    Mark,
    StateAppend,
    append_tag,
)


class Log:
    """A state table's log in memory: commits as ``recent_commits`` returns them."""

    def __init__(self) -> None:
        first = State(lease_version=100, owner_id="created")
        self.commits = [{"version": 0, "operation": "CREATE TABLE AS SELECT", "userMetadata": None}]
        self.first = first

    def append(self, token: str, state: State, read_at: int) -> int:
        version = len(self.commits)
        tag = append_tag(token, state, rows=version + 1, read_at=read_at)
        self.commits.append({"version": version, "operation": "WRITE", "userMetadata": tag})
        return version

    def other(self, operation: str, tag: str | None = None) -> None:
        self.commits.append(
            {"version": len(self.commits), "operation": operation, "userMetadata": tag}
        )

    def window(self, newest_first_limit: int | None = None) -> LogWindow:
        commits = self.commits[::-1][:newest_first_limit]
        return LogWindow(commits, complete=len(commits) == len(self.commits))

    def state(self) -> tuple[State, int]:
        """What a reader takes: the newest winner, or the table's one created row."""
        winner = self.window().newest_winner()
        assert winner is not Mark.UNDECIDED
        return (self.first if winner is None else winner.state), len(self.commits) - 1


@pytest.mark.parametrize("seed", range(40))
def test_generated_histories_hold_a_chain_of_compare_and_sets(seed):
    """Every winner read the state of the winner before it (no update is lost), a writer's
    own verdict is every later reader's, and a window read only partly either agrees with
    the whole log or says to read further back."""
    rng = random.Random(seed)
    log = Log()
    writers: dict[str, tuple[State, int] | None] = {f"w{i}": None for i in range(rng.randint(2, 5))}
    verdicts: dict[int, bool] = {}  # commit version -> whether its writer was told it won
    parent_of: dict[int, str] = {}  # commit version -> owner_id of the state its writer read
    for _ in range(rng.randint(20, 80)):
        who = rng.choice(sorted(writers))
        roll = rng.random()
        if roll < 0.08:
            log.other(rng.choice(["SET TBLPROPERTIES", "VACUUM START", "ADD COLUMNS"]))
        elif roll < 0.14:
            log.other("DELETE", COMPACTION_TAG)
        elif writers[who] is None or roll < 0.45:
            writers[who] = log.state()
        else:
            read, read_at = writers[who]
            token = f"{who}-{len(log.commits)}"
            new = State(lease_version=read.lease_version + 1, owner_id=token)
            version = log.append(token, new, read_at)
            parent_of[version] = read.owner_id
            mine = log.window().find(token)
            verdicts[version] = log.window().won(mine) is True
            writers[who] = (new, version) if verdicts[version] else None
            if rng.random() < 0.5:  # a stale writer: keeps its old read
                writers[who] = (read, read_at)
        # every reader, at every point, agrees with the writers' verdicts so far
        whole = log.window()
        for version, won in verdicts.items():
            assert whole.won(whole.entries[version]) is won
        # a partial look agrees or asks for more
        for limit in (1, 2, 3, 5):
            partial = log.window(limit).newest_winner()
            assert partial in (Mark.UNDECIDED, whole.newest_winner())
    winners = [v for v, won in sorted(verdicts.items()) if won]
    previous = "created"
    for version in winners:
        assert parent_of[version] == previous, (version, parent_of[version], previous)
        previous = log.window().entries[version].state.owner_id
    assert log.state()[0].owner_id == previous


def test_an_append_of_an_earlier_version_won_once_committed_and_a_foreign_commit_ends_the_walk():
    log = Log()
    record = json.dumps({"state": {"lease_version": 101}, "rows": 2})
    legacy = f"dbt-refreshable-state:old {record}"  # txnAppId's compare-and-set: no read_at
    log.other("WRITE", legacy)
    found = log.window().newest_winner()
    assert isinstance(found, StateAppend) and found.read_at is None and found.state is None
    log.other("UPDATE")  # rows changed by hand: the reader scans the table
    assert log.window().newest_winner() is None
    mine = log.append("mine", State(lease_version=102), read_at=1)  # read before the UPDATE
    assert log.window().won(log.window().entries[mine]) is False
