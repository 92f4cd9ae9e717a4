"""`persist_docs` and `grants` on a refreshable model, through dbt.

persist_docs: main carries the model's description and its columns' as Delta comments after
the first build, after a refresh, after a resume and once the docs change (`${...}` in them
too), and a run with nothing new commits nothing to main. grants: Apache Spark has no SQL
access control, so a model that sets them is refused before anything is written, with what
to change."""

from __future__ import annotations

import json

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture, write_file

from dbt.adapters.spark_refreshable.engine.comments import main_comments
from dbt.adapters.spark_refreshable.engine.commits import table_version
from tests.support.faults import injected

DOCUMENTED_SQL = """
{{ config(materialized='refreshable', unique_key='id', vnodes=4,
          persist_docs={'relation': true, 'columns': true},
          merge_chunk_rows=(5 if var('small', false) else 1000000)) }}
select cast(id as int) as id,
       concat('v', cast(case when id % 3 = 0 then {{ var('day', 1) }} else 1 end as string))
         as `Value Text`
from range({{ (var('day', 1) | int - 1) * 10 }}, {{ 40 + (var('day', 1) | int - 1) * 10 }})
  as r(id)
"""
GRANTED_SQL = """
{{ config(materialized='refreshable', unique_key='id', grants={'select': ['analysts']}) }}
select 1 as id
"""


def schema_yml(table: str, key: str, value: str) -> str:
    """The model's docs; each text a JSON string, which YAML reads as it is."""
    table, key, value = (json.dumps(text, ensure_ascii=False) for text in (table, key, value))
    return f"""
version: 2
models:
  - name: documented
    description: {table}
    columns:
      - name: id
        description: {key}
      - name: "Value Text"
        quote: true
        description: {value}
      - name: not_returned
        description: a column the model does not return
"""


# `${...}`: Spark replaces it in SQL text, quoted or not, unless written as an escape
FIRST_DOCS = (
    "the orders' table — refreshed 🙂",
    "the key in ${currency}",
    'a value\'s "text", with a \\',
)
SECOND_DOCS = ("the orders, described anew", "the key", "the value, described anew")


class TestPersistDocsAndGrants:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "documented.sql": DOCUMENTED_SQL,
            "granted.sql": GRANTED_SQL,
            "schema.yml": schema_yml(*FIRST_DOCS),
        }

    def test_main_carries_the_docs_through_refreshes_and_a_resume(self, project, spark):
        main = f"{project.test_schema}.documented"

        def comments() -> tuple:
            table, columns = main_comments(spark, main)
            return table, columns["id"][1], columns["value text"][1]

        run_dbt(["run", "--select", "documented", "--vars", "day: 1"])
        assert comments() == FIRST_DOCS
        [result] = run_dbt(["run", "--select", "documented", "--vars", "day: 2"])
        assert result.adapter_response["rows_updated"] > 0
        assert comments() == FIRST_DOCS
        before = table_version(spark, main)
        run_dbt(["run", "--select", "documented", "--vars", "day: 2"])
        assert table_version(spark, main) == before, "nothing new: no commit to main"

        write_file(schema_yml(*SECOND_DOCS), project.project_root, "models", "schema.yml")
        run_dbt(["run", "--select", "documented", "--vars", "day: 2"])
        assert comments() == SECOND_DOCS

        with injected("chunk_done@1:raise"):
            run_dbt(
                ["run", "--select", "documented", "--vars", "{day: 3, small: true}"],
                expect_pass=False,
            )
        [resumed] = run_dbt(["run", "--select", "documented", "--vars", "day: 3"])
        assert resumed.adapter_response["resumed"] is True
        assert comments() == SECOND_DOCS

    def test_grants_are_refused_before_anything_is_written(self, project):
        results, output = run_dbt_and_capture(["run", "--select", "granted"], expect_pass=False)
        assert results[0].status == "error"
        assert "sets `grants`, but this Spark has no SQL access control" in output, output
        assert "Remove `grants` from the model's config" in output
        tables = project.run_sql(f"show tables in {project.test_schema}", fetch="all")
        assert "granted" not in {row[1] for row in tables}, "nothing written"
