"""Issue 10: names and text the way Spark and users spell them."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt

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
