"""The engine's errors: each says what was wrong and how to fix it."""

from __future__ import annotations

import re

from dbt_common.exceptions import DbtRuntimeError

# a line of a JVM stack trace: a frame, or the count of frames a cause shares with its effect
JVM_FRAME = re.compile(r"\s*(at \S+\(.*\)|\.\.\. \d+ more)")


def message_of(error: BaseException) -> str:
    """An error's message without dbt's "Runtime Error" heading, nor the JVM's stack frames
    that Py4J writes into the message of a JVM error PySpark does not convert (one of
    Delta's, such as a CHECK constraint's violation): what it says, not where."""
    text = str(getattr(error, "msg", None) or error)
    return "\n".join(line for line in text.splitlines() if not JVM_FRAME.fullmatch(line))


def first_line(error: BaseException, limit: int = 300) -> str:
    """The first line of an error's message, cut at ``limit`` characters: what a message of
    the engine's quotes of an error it wraps ("" for an error without a message)."""
    lines = message_of(error).strip().splitlines()
    return lines[0].rstrip()[:limit] if lines else ""


class RefreshError(DbtRuntimeError):
    """Base of the engine's errors."""


class ConfigError(RefreshError):
    """A refreshable model's config is missing a key or has a value that cannot work."""


class LockHeldError(RefreshError):
    """Another live run holds the model's refresh lock."""


class LeaseLostError(RefreshError):
    """This run's lock was taken over by another run; it must stop."""


class SnapshotRejectedError(RefreshError):
    """The snapshot failed validation; main was not touched."""


class SchemaChangeError(RefreshError):
    """The snapshot's columns differ from main's in a way on_schema_change does not allow."""


class RefreshCancelledError(RefreshError):
    """dbt was cancelled; the refresh stopped at a chunk boundary and can be resumed."""


class InjectedFault(RefreshError):
    """Raised at a named crash point when a test asks for it (see ``faults``)."""
