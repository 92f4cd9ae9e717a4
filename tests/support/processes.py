"""Bounded waits on subprocesses: a process that outlives its bound is killed and the test
fails with the tail of what it printed, instead of hanging the suite."""

from __future__ import annotations

import shlex
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import Any, NoReturn

import pytest

TAIL_CHARS = 4000


def tail(*texts: str | bytes | None) -> str:
    """The last TAIL_CHARS characters of the texts joined (bytes decoded, None as empty)."""
    joined = "".join(t.decode(errors="replace") if isinstance(t, bytes) else t or "" for t in texts)
    return joined[-TAIL_CHARS:]


def fail_with_tail(what: str, args: Sequence[str], output: str) -> NoReturn:
    pytest.fail(f"{shlex.join(args)}: {what}; its output ended with:\n{output}", pytrace=False)


def run_bounded(
    args: Sequence[str], *, timeout: float, **kwargs: Any
) -> subprocess.CompletedProcess:
    """`subprocess.run` with text output captured; past `timeout` seconds the process is
    killed and the test fails with its output's tail."""
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)
    except subprocess.TimeoutExpired as expired:
        fail_with_tail(
            f"still running after {timeout:.0f} s, killed",
            args,
            tail(expired.stdout, expired.stderr),
        )


class Streamed:
    """A process whose stdout and stderr, merged, are read line by line by a thread, so that
    waiting for a line or for the exit can be bounded."""

    def __init__(self, args: Sequence[str], **kwargs: Any) -> None:
        self.args = list(args)
        self.process = subprocess.Popen(
            self.args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs
        )
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._eof = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    @property
    def output(self) -> str:
        with self._changed:
            return "".join(self.lines)

    def _fail(self, what: str) -> NoReturn:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        fail_with_tail(what, self.args, tail(self.output))

    def wait_for_line(self, marker: str, timeout: float) -> None:
        """Until the process prints a line containing `marker`; fails (killing it) if it
        exits first or `timeout` seconds pass."""
        deadline = time.monotonic() + timeout
        checked = 0
        with self._changed:
            while True:
                if any(marker in line for line in self.lines[checked:]):
                    return
                checked = len(self.lines)
                if self._eof:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._changed.wait(remaining)
        if self._eof:
            self._fail(f"printed no line with {marker!r} before its output ended")
        self._fail(f"printed no line with {marker!r} within {timeout:.0f} s, killed")

    def wait(self, timeout: float) -> int:
        """The exit code; fails (killing the process) if it runs past `timeout` seconds.
        The output is complete once the process and whatever inherited its stdout are gone."""
        deadline = time.monotonic() + timeout
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._fail(f"still running after {timeout:.0f} s, killed")
        self._reader.join(max(0.0, deadline - time.monotonic()))
        return code
