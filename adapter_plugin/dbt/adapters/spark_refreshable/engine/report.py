"""What a refresh tells people: progress lines while it runs, and the run's result."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

from dbt.adapters.events.logging import AdapterLogger

logger = AdapterLogger("Refreshable")


class Stopwatch:
    """Wall time per part of a run: load (the snapshot into staging), diff, fetch (the
    changed rows into the change set), merge, bookkeeping."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._nested: list[float] = []  # per open measure, the seconds its inner ones took

    @contextmanager
    def measure(self, part: str) -> Iterator[None]:
        """Time the block as ``part``, but for what measures opened inside it take."""
        start = time.monotonic()
        self._nested.append(0.0)
        try:
            yield
        finally:
            took = time.monotonic() - start
            self.seconds[part] += took - self._nested.pop()
            if self._nested:
                self._nested[-1] += took


class ProgressReporter:
    """Progress of a merge in dbt's output: chunk k of n, rows, percent, time left; at most
    one line every ``interval`` seconds, and always the last. A cycle whose diff found no
    changed row says nothing of a merge (rows of another writer's that its chunk corrects
    show in the run's result)."""

    def __init__(self, model: str, interval: float = 3.0) -> None:
        self.model = model
        self.interval = interval
        self._last = 0.0

    def say(self, message: str) -> None:
        logger.info(f"{self.model}: {message}")

    def merge_started(
        self, chunks_total: int, chunks_done: int, rows_total: int, rows_done: int
    ) -> None:
        self.chunks_total, self.chunks_done = chunks_total, chunks_done
        self.rows_total, self.rows_at_start = rows_total, rows_done
        self.started = time.monotonic()
        if not rows_total:
            return
        resumed = f", resuming after {chunks_done} done" if chunks_done else ""
        self.say(f"merging {rows_total:,} changed rows in {chunks_total} chunk(s){resumed}")

    def chunk_done(self, rows_done: int, changed: int) -> None:
        self.chunks_done += 1
        if not self.rows_total:
            return
        now = time.monotonic()
        last = self.chunks_done == self.chunks_total
        if not last and now - self._last < self.interval:
            return
        self._last = now
        share = rows_done / self.rows_total if self.rows_total else 1.0
        rate = (rows_done - self.rows_at_start) / max(now - self.started, 1e-6)
        left = "" if last or rate <= 0 else f", ~{(self.rows_total - rows_done) / rate:.0f}s left"
        self.say(
            f"merged chunk {self.chunks_done}/{self.chunks_total}: {rows_done:,}/"
            f"{self.rows_total:,} rows ({share:.0%}), {changed:,} changed so far{left}"
        )
