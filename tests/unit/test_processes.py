"""Bounded subprocess waits fail the test with the process's output tail, and leave no
process behind."""

from __future__ import annotations

import sys

import pytest

from tests.support.processes import Streamed, run_bounded

# Prints a line, then hangs (the point of a bound).
HANGS = [sys.executable, "-u", "-c", "import time; print('started up'); time.sleep(60)"]


def test_a_run_past_its_bound_fails_with_its_output():
    with pytest.raises(pytest.fail.Exception, match=r"still running after 1 s(.|\n)*started up"):
        run_bounded(HANGS, timeout=1)


def test_a_run_within_its_bound_returns_its_result():
    done = run_bounded([sys.executable, "-c", "print('hello')"], timeout=30)
    assert (done.returncode, done.stdout) == (0, "hello\n")


def test_waiting_for_a_line_that_never_comes_fails_and_kills_the_process():
    running = Streamed(HANGS)
    running.wait_for_line("started", timeout=30)
    with pytest.raises(pytest.fail.Exception, match=r"'chunk'(.|\n)*started up"):
        running.wait_for_line("chunk", timeout=1)
    assert running.process.poll() is not None


def test_waiting_for_a_line_after_the_process_ended_fails_at_once():
    running = Streamed([sys.executable, "-c", "print('bye')"])
    with pytest.raises(pytest.fail.Exception, match=r"before its output ended(.|\n)*bye"):
        running.wait_for_line("chunk", timeout=30)
    assert running.wait(timeout=30) == 0 and running.output == "bye\n"


def test_a_process_past_its_exit_bound_fails_and_is_killed():
    running = Streamed(HANGS)
    with pytest.raises(pytest.fail.Exception, match=r"still running after 1 s(.|\n)*started up"):
        running.wait(timeout=1)
    assert running.process.poll() is not None
