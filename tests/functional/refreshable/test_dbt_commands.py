"""dbt's own commands on a refreshable model, as a dbt user runs them: `dbt ls` selects it
by its materialization, `dbt retry` after a failed refresh resumes it, `dbt build` runs it
with its tests, `dbt show` previews it, and `dbt docs generate` lists main with its type
and columns and none of the bookkeeping tables, which live in a schema of their own.
`dbt run --empty` keeps a built main's rows; `dbt run --sample` refreshes main to the sample,
and the next run back to the whole. A model with an alias and a custom schema refreshes and
proves as any other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.spark_refreshable.engine.commits import table_version
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from tests.support.faults import injected

# day 2 updates every third id, deletes 0-9 and inserts 40-49; with `small: true` it merges
# in chunks of 5 changed rows
ORDERS_SQL = """
{{ config(materialized='refreshable', unique_key='id', vnodes=4,
          merge_chunk_rows=(5 if var('small', false) else 1000000)) }}
select cast(id as int) as id,
       concat('v', cast(case when id % 3 = 0 then {{ var('day', 1) }} else 1 end as string))
         as value
from range({{ (var('day', 1) | int - 1) * 10 }}, {{ 40 + (var('day', 1) | int - 1) * 10 }})
  as r(id)
"""
SCHEMA_YML = """
version: 2
models:
  - name: orders
    description: the orders, refreshed
    data_tests: [refreshable_matches_snapshot]
    columns:
      - name: id
        data_tests: [unique, not_null]
"""


class TestDbtCommands:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": ORDERS_SQL,
            "plain.sql": "{{ config(materialized='table') }} select 1 as id",
            "schema.yml": SCHEMA_YML,
        }

    def test_ls_selects_refreshable_models_by_materialization(self, project):
        listed = run_dbt(
            ["ls", "--resource-type", "model", "--select", "config.materialized:refreshable"]
        )
        assert [name.split(".")[-1] for name in listed] == ["orders"]

    def test_retry_resumes_a_failed_refresh(self, project):
        run_dbt(["run", "--vars", "day: 1"])
        with injected("chunk_done@1:raise"):
            results = run_dbt(["run", "--vars", "{day: 2, small: true}"], expect_pass=False)
        failed = {r.node.name: r.status for r in results}
        assert failed == {"orders": "error", "plain": "success"}, failed

        results, output = run_dbt_and_capture(["retry"])
        assert [r.node.name for r in results] == ["orders"], "retry reruns what failed"
        response = results[0].adapter_response
        assert response["resumed"] is True and response["_message"].startswith("RESUMED")
        assert "resuming the merge of cycle" in output

        results = run_dbt(["build", "--select", "orders", "--vars", "day: 2"])
        statuses = {r.node.name: str(r.status) for r in results}
        assert len(statuses) == 4 and set(statuses.values()) <= {"success", "pass"}, statuses

    def test_show_previews_the_model(self, project):
        results, output = run_dbt_and_capture(["show", "--select", "orders", "--limit", "3"])
        assert "Previewing node 'orders'" in output, output[-2000:]
        preview = results.results[0].agate_table
        assert list(preview.column_names) == ["id", "value"] and len(preview.rows) == 3

    def test_docs_list_main_and_no_bookkeeping(self, project):
        run_dbt(["docs", "generate"])
        catalog = json.loads((Path(project.project_root) / "target" / "catalog.json").read_text())
        nodes = {key.split(".")[-1]: node for key, node in catalog["nodes"].items()}
        orders = nodes["orders"]
        assert orders["metadata"]["type"] == "table"
        assert [c.lower() for c in orders["columns"]] == ["id", "value"]
        bookkeeping = set(ModelTables(project.test_schema, "orders").identifiers().values())
        bookkeeping.discard("orders")
        listed = {node["metadata"]["name"] for node in catalog["nodes"].values()}
        listed |= {node["metadata"]["name"] for node in catalog["sources"].values()}
        assert not listed & bookkeeping, listed
        # the model's schema holds the models alone; the bookkeeping is in a schema of its own
        shown = project.run_sql(f"show tables in {project.test_schema}", fetch="all")
        in_schema = {row[1] for row in shown if not row[2]}  # not the session's temp views
        assert in_schema == {"orders", "plain"}, in_schema
        own = f"{project.test_schema}_refreshable"
        kept = {row[1] for row in project.run_sql(f"show tables in {own}", fetch="all")}
        assert bookkeeping <= kept, kept


class TestEmpty:
    """`--empty` makes every ref read no rows (dbt's schema-only run): a refresh to that
    would delete all of main, so the run keeps main and commits nothing; with
    `--full-refresh` main is rebuilt empty, as a `table` is, and the next run fills it."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "upstream.sql": "{{ config(materialized='table') }} "
            "select cast(id as int) as id from range({{ var('day', 1) * 10 }}) as r(id)",
            "copied.sql": "{{ config(materialized='refreshable', unique_key='id') }} "
            "select id, concat('v', cast(id as string)) as value from {{ ref('upstream') }}",
        }

    def test_empty_keeps_main_and_full_refresh_rebuilds_it_empty(self, project, spark):
        main = f"{project.test_schema}.copied"

        run_dbt(["run", "--vars", "day: 1"])
        built = table_version(spark, main)
        results = run_dbt(["run", "--empty", "--vars", "day: 2"])
        kept = next(r for r in results if r.node.name == "copied")
        assert kept.adapter_response["_message"] == "SKIPPED (--empty: main kept)"
        assert spark.table(main).count() == 10 and table_version(spark, main) == built

        run_dbt(["run", "--empty", "--full-refresh", "--select", "copied"])
        assert spark.table(main).count() == 0 and spark.table(main).columns == ["id", "value"]
        [filled] = run_dbt(["run", "--select", "copied", "--vars", "day: 2"])
        assert filled.adapter_response["rows_inserted"] == 20 == spark.table(main).count()


class TestSample:
    """`--sample` makes each ref with an `event_time` read a recent slice: main is refreshed
    to the model's sampled result, as a `table` would be rebuilt from it, and the next run
    without it, its inputs unchanged, refreshes main back to the whole result (the sampled
    SQL differs, so the inputs-unchanged skip does not keep the sample)."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "events.sql": "{{ config(materialized='table', event_time='happened_at') }} "
            "select cast(id as int) as id, current_timestamp() - make_interval(0, 0, 0, id) "
            "as happened_at from range(10) as r(id)",
            "recent.sql": "{{ config(materialized='refreshable', unique_key='id') }} "
            "select id, happened_at from {{ ref('events') }}",
        }

    def test_a_sampled_run_refreshes_to_the_sample_and_the_next_run_to_the_whole(
        self, project, spark
    ):
        main = f"{project.test_schema}.recent"
        run_dbt(["run"])
        assert spark.table(main).count() == 10
        [sampled] = run_dbt(["run", "--select", "recent", "--sample", "3 days"])
        assert "REFRESHED" in sampled.adapter_response["_message"]
        assert 0 < spark.table(main).count() < 10
        [whole] = run_dbt(["run", "--select", "recent"])
        assert "REFRESHED" in whole.adapter_response["_message"], whole.adapter_response
        assert spark.table(main).count() == 10


class TestAliasAndCustomSchema:
    """A model with an `alias` in mixed case, a custom `schema`, a key spelled in another
    case and a column named with a space and an emoji: main is the alias in
    `<schema>_marts`, its bookkeeping in `<schema>_marts_refreshable`, and every day's
    refresh proves equal to the snapshot."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": "{{ config(materialized='refreshable', unique_key='ID', "
            "alias='Orders_V2', schema='marts') }} select cast(id as int) as id, "
            "concat('v', cast(id * {{ var('day', 1) }} as string)) as `Value 💥` "
            "from range({{ var('day', 1) }}, 20) as r(id)",
            "schema.yml": "version: 2\nmodels:\n  - name: orders\n"
            "    data_tests: [refreshable_matches_snapshot]\n",
        }

    def test_main_takes_the_alias_in_the_custom_schema(self, project, spark):
        schema = f"{project.test_schema}_marts"
        run_dbt(["run", "--vars", "day: 1"])
        [changed] = run_dbt(["run", "--vars", "day: 2"])
        assert changed.adapter_response["_message"].startswith("REFRESHED +0 ~18 -1")
        rows = spark.sql(f"SELECT * FROM {schema}.orders_v2").collect()
        assert sorted((r[0], r[1]) for r in rows) == [(i, f"v{i * 2}") for i in range(2, 20)]
        assert [c.lower() for c in spark.table(f"{schema}.orders_v2").columns] == [
            "id",
            "value 💥",
        ]
        bookkeeping = {r[1] for r in spark.sql(f"SHOW TABLES IN {schema}_refreshable").collect()}
        assert "orders_v2__state" in bookkeeping, bookkeeping
        [proof] = run_dbt(["test"])
        assert str(proof.status) == "pass"
