"""Issue 10: names and text the way Spark and users spell them; column names the engine's
own SQL uses."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from tests.functional.refreshable.engine_harness import EngineModel

EMOJI_SQL = """
{{ config(materialized='refreshable', unique_key='id', vnodes=8) }}
select 1 as id, 'party 😀' as `mood_🎉`
"""


class TestItem10EmojiSqlModel:
    @pytest.fixture(scope="class")
    def models(self):
        return {"emoji.sql": EMOJI_SQL}

    def test_item10_emoji_in_sql_model_reaches_main_exactly(self, project):
        run_dbt(["run"])
        main = f"{project.test_schema}.emoji"
        got = project.run_sql(f"select id, `mood_🎉` from {main}", fetch="all")
        assert [tuple(r) for r in got] == [(1, "party 😀")]


# Names the engine's generated SQL gives its own columns and subqueries (`... AS n`,
# `(...) s`), read from its source so that a name added there is tried here too, and
# names it used before: beside the keys until they took the reserved prefix, and in
# staging's own summary query until the diff's job summed staging.
ENGINE = Path(__file__).parents[3] / "adapter_plugin/dbt/adapters/spark_refreshable/engine"
SQL_WORDS = {"array", "bigint", "decimal", "double", "of", "select", "string"}
FORMER_ALIASES = ("h", "copies", "present", "n", "vnode")


def engine_aliases() -> list[str]:
    found = set(FORMER_ALIASES)
    for source in ENGINE.glob("*.py"):
        text = source.read_text()
        found |= set(re.findall(r"\bAS\s+([A-Za-z_]\w*)\b", text))
        found |= set(re.findall(r"\)\s+([a-z])\b", text))
    return sorted(n for n in found if n.lower() not in SQL_WORDS)


def test_columns_named_like_the_engines_own_aliases_refresh_exactly(spark):
    names = engine_aliases()
    assert {"s", "m", "d", *FORMER_ALIASES} <= set(names)
    # one model: half the names key columns (one composite key), the others value columns,
    # in upper case; the former aliases are keys, where they broke the diff
    keys = [n for i, n in enumerate(names) if i % 2 == 0 or n in FORMER_ALIASES]
    values = [n.upper() for n in names if n not in keys]
    model = EngineModel(
        spark,
        ", ".join([*(f"`{n}` INT" for n in keys), *(f"`{n}` STRING" for n in values)]),
        unique_key=keys,
    )

    def row(k: int, tag: str) -> tuple:
        return (
            *(k * 100 + i for i in range(len(keys))),
            *(f"{tag}{k}.{i}" for i in range(len(values))),
        )

    days = [
        [row(k, "a") for k in range(6)],
        [row(k, "b" if k % 2 else "a") for k in range(1, 8)],  # 0 deleted, 6-7 inserted
        [row(k, "c" if k % 3 else "b") for k in range(3, 10)],
    ]
    for day in days:
        model.refresh(day)
        assert model.main() == sorted(day)
