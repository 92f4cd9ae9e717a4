"""The contract of a place where Python jobs run, and the context a job runs with."""

from __future__ import annotations

import abc
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass
class JobContext:
    """Handed to every Python job as the global ``dbt_job``.

    ``tag`` labels the job's Spark jobs so that they can be interrupted together;
    ``cancelled`` is set when dbt is cancelled (Ctrl-C): long jobs check it at safe points.
    """

    name: str
    tag: str
    cancelled: threading.Event = field(default_factory=threading.Event)


class SparkEnvironment(abc.ABC):
    """Owns the Spark sessions of one dbt process and the Python jobs running on them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, tuple[Any, JobContext]] = {}

    @abc.abstractmethod
    def base_session(self) -> Any:
        """The process-wide session dbt's SQL statements run on (created on first use)."""

    @abc.abstractmethod
    def isolated_session(self) -> Any:
        """A session of its own for one job: separate SQL confs and temporary views."""

    @contextlib.contextmanager
    def job(self, name: str, session: Any) -> Iterator[JobContext]:
        """Run a job's Spark work under a tag of its own, registered for cancellation."""
        context = JobContext(name=name, tag=f"dbt-job-{threading.get_ident()}-{id(session)}")
        session.addTag(context.tag)
        with self._lock:
            self._running[context.tag] = (session, context)
        try:
            yield context
        finally:
            with self._lock:
                self._running.pop(context.tag, None)
            session.removeTag(context.tag)

    def cancel_all(self) -> list[str]:
        """Cancel every running job: flag it, then interrupt its Spark jobs."""
        with self._lock:
            running = list(self._running.values())
        for session, context in running:
            context.cancelled.set()
            session.interruptTag(context.tag)
        return [context.name for _, context in running]
