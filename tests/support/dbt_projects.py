"""Small dbt projects of refreshable models, written to a folder and run as `dbt`
subprocesses: for tests that kill or race whole processes.

Every model's snapshot is `snapshot_rows(day)`: ids and values that change from day to day
in every vnode (inserts, updates and deletes). The singular test `matches_expected` proves,
for `--vars '{expect: {model: day}}'`, that each model's table holds exactly that day's rows.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.processes import Streamed, run_bounded

# `dbt`, with the fault its environment may name installed (tests/support/faults.py)
DBT = [sys.executable, str(Path(__file__).with_name("dbt_launcher.py"))]

SNAPSHOT_MACRO = """
{% macro snapshot_rows(day) %}
  select cast(id as int) as id,
         concat('v', cast(case when id % 3 = 0 then {{ day }} else 1 end as string)) as value
  from range({{ (day - 1) * 20 }}, {{ 90 + (day - 1) * 20 }}) as r(id)
{% endmacro %}
"""


def expected_rows(day: int) -> set[tuple[int, str]]:
    """`snapshot_rows(day)` of SNAPSHOT_MACRO, in Python: (id, value) each."""
    ids = range((day - 1) * 20, 90 + (day - 1) * 20)
    return {(i, f"v{day if i % 3 == 0 else 1}") for i in ids}


MATCHES_EXPECTED = """
{% if not var('expect', {}) %}
  select 'none' as model, 'none' as problem, 0 as id where false
{% endif %}
{% for model, day in var('expect', {}).items() %}
  {% if not loop.first %} union all {% endif %}
  select '{{ model }}' as model, 'missing' as problem, id from (
    {{ snapshot_rows(day) }} except all select id, value from {{ ref(model) }})
  union all
  select '{{ model }}', 'unexpected', id from (
    select id, value from {{ ref(model) }} except all {{ snapshot_rows(day) }})
{% endfor %}
"""


def refreshable_model(small_chunks: int | None = None, **config: Any) -> str:
    """A refreshable model of `snapshot_rows(var('day'))`, keyed by id. ``small_chunks``:
    chunks of that many changed rows when run with `--vars '{small_chunks: true}'` (a
    refresh that stays mid-merge for long), else one chunk."""
    settings = ", ".join(f"{k}={v!r}" for k, v in {"unique_key": "id", **config}.items())
    if small_chunks:
        settings += (
            f", merge_chunk_rows=({int(small_chunks)} if var('small_chunks', false) else 1000000)"
        )
    return (
        f"{{{{ config(materialized='refreshable', {settings}) }}}}\n"
        "{{ snapshot_rows(var('day', 1) | int) }}\n"
    )


def write_project(
    root: Path, name: str, models: dict[str, str], snapshot_macro: str = SNAPSHOT_MACRO
) -> Path:
    """A dbt project of `models` (name -> SQL), each tested by refreshable_matches_snapshot,
    with `snapshot_macro` defining the `snapshot_rows(day)` they select."""
    for folder in ("models", "macros", "data_tests"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "dbt_project.yml").write_text(
        f"name: {name}\nversion: '1.0'\nconfig-version: 2\nprofile: refreshable\n"
        "test-paths: [data_tests]\n"
    )
    (root / "macros" / "snapshot_rows.sql").write_text(snapshot_macro)
    for model, sql in models.items():
        (root / "models" / f"{model}.sql").write_text(sql)
    tests = "\n".join(
        f"  - name: {model}\n    data_tests: [refreshable_matches_snapshot]" for model in models
    )
    (root / "models" / "schema.yml").write_text(f"version: 2\nmodels:\n{tests}\n")
    (root / "data_tests" / "matches_expected.sql").write_text(MATCHES_EXPECTED)
    return root


# A dbt process on the local target starts its own JVM with Delta: ~20 s idle, a few minutes
# on a machine busy with other Spark work. Past this, it is stuck.
DBT_TIMEOUT = 600


def run_dbt(
    root: Path, env: dict[str, str], *args: str, timeout: float = DBT_TIMEOUT
) -> subprocess.CompletedProcess:
    """`dbt` run to its end; a run past `timeout` seconds fails the test with its log tail."""
    return run_bounded([*DBT, *args], cwd=root, env=env, timeout=timeout)


def _interruptible() -> None:
    """In the child before exec: SIGINT back to its default action, so that dbt's Python
    turns Ctrl-C into KeyboardInterrupt even when the suite runs as a background job of a
    shell (which starts those with SIGINT ignored, an ignore that children inherit)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_dbt(root: Path, env: dict[str, str], *args: str) -> Streamed:
    """A `dbt` process whose output (stdout and stderr) is read line by line, and that a
    test can stop with SIGINT as Ctrl-C would."""
    return Streamed([*DBT, *args], cwd=root, env=env, preexec_fn=_interruptible)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
