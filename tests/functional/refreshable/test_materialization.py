"""The materialization as users see it: `dbt run` of SQL and Python refreshable models,
what dbt prints and writes to run_results.json, `dbt test`, --full-refresh, change data
feed, config errors, and the operations."""

from __future__ import annotations

import json

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

ORDERS_SQL = """
{{ config(materialized='refreshable', unique_key=['order_id', 'line'], vnodes=4,
          change_data_feed=true, liquid_clustered_by='order_id',
          tblproperties={'owner_team': 'orders'}) }}
{% set day = var('day', 1) | int %}
select cast(id as int) as order_id, cast(line as int) as line,
       case when {{ day }} = 2 and id = 2 then 'shipped' else 'open' end as status
from values (1, 1), (1, 2), (2, 1), (3, 1) as t(id, line)
where not ({{ day }} = 2 and id = 3)
{% if day == 2 %} union all select 4, 1, 'open' {% endif %}
"""

ORDER_COUNTS_PY = """
def model(dbt, session):
    dbt.config(materialized="refreshable", unique_key="order_id", vnodes=4)
    return dbt.ref("orders").groupBy("order_id").count()
"""

HOURLY_SQL = """
{{ config(materialized='refreshable', unique_key='id', refresh_every='1 hour') }}
select {{ var('day', 1) }} as id
"""

SCHEMA_YML = """
version: 2
models:
  - name: orders
    data_tests: [refreshable_matches_snapshot]
  - name: order_counts
    data_tests: [refreshable_matches_snapshot]
    columns:
      - name: order_id
        data_tests: [unique, not_null]
"""


def assert_orders_layout(project) -> None:
    """orders' liquid clustering and tblproperties are on its table."""
    main = f"{project.test_schema}.orders"
    detail = project.run_sql(f"describe detail {main}", fetch="one")
    assert list(detail["clusteringColumns"]) == ["order_id"]
    properties = dict(project.run_sql(f"show tblproperties {main}", fetch="all"))
    assert properties["owner_team"] == "orders"


def response(results, name):
    return next(r.adapter_response for r in results if r.node.name == name)


class TestRefreshableModels:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": ORDERS_SQL,
            "order_counts.py": ORDER_COUNTS_PY,
            "hourly.sql": HOURLY_SQL,
            "schema.yml": SCHEMA_YML,
        }

    def test_refresh_cycle_as_users_see_it(self, project):
        schema = project.test_schema
        results, output = run_dbt_and_capture(["run"])
        assert response(results, "orders")["rows_inserted"] == 4
        assert response(results, "order_counts")["rows_inserted"] == 3
        assert "REFRESHED +4 ~0 -0 =0 in 1/1 chunk(s)" in output
        assert "merged chunk 1/1" in output, "progress lines in dbt's output"
        assert_orders_layout(project)
        run_dbt(["test"])
        # main's version before day 2 (its CREATE, its clustering and day 1's merge)
        day1 = project.run_sql(f"describe history {schema}.orders limit 1", fetch="one")[0]

        results = run_dbt(["run", "--vars", "day: 2"])
        orders = response(results, "orders")
        assert (orders["rows_inserted"], orders["rows_updated"], orders["rows_deleted"]) == (
            1,
            1,
            1,
        )
        assert orders["rows_unchanged"] == 2 and orders["resumed"] is False
        assert orders["chunks_done"] == orders["chunks_total"] == 1
        assert {"seconds_load", "seconds_merge", "seconds_bookkeeping"} <= set(orders)
        hourly = response(results, "hourly")  # refreshed less than an hour ago: not again
        assert hourly["skipped"] is True and hourly["_message"].startswith(
            "SKIPPED (fresh, next due at "
        )
        assert [
            tuple(r) for r in project.run_sql(f"select * from {schema}.hourly", fetch="all")
        ] == [(1,)]
        rows = project.run_sql(f"select * from {schema}.orders order by 1, 2", fetch="all")
        assert [tuple(r) for r in rows] == [
            (1, 1, "open"),
            (1, 2, "open"),
            (2, 1, "shipped"),
            (4, 1, "open"),
        ]
        run_dbt(["test"])

        changes = project.run_sql(
            f"select _change_type, order_id from table_changes('{schema}.orders', {day1 + 1}) "
            f"order by 1, 2",
            fetch="all",
        )
        assert [tuple(r) for r in changes] == [
            ("delete", 3),
            ("insert", 4),
            ("update_postimage", 2),
            ("update_preimage", 2),
        ]

        # the same compiled SQL and config over unchanged inputs: skipped, nothing committed
        history = f"describe history {schema}.orders"
        main_before = project.run_sql(history, fetch="all")
        results, output = run_dbt_and_capture(["run", "--select", "orders", "--vars", "day: 2"])
        assert response(results, "orders")["skipped"] is True
        assert "SKIPPED (inputs unchanged)" in output
        assert project.run_sql(history, fetch="all") == main_before

        # dbt test notices a main table that no longer matches its last snapshot
        project.run_sql(f"insert into {schema}.orders values (9, 9, 'sneaked in')")
        results = run_dbt(["test", "--select", "orders"], expect_pass=False)
        assert [r.status for r in results if "matches_snapshot" in r.node.name] == ["fail"]
        # and the next run does not skip over it: main was written since the last cycle
        results = run_dbt(["run", "--select", "orders", "--vars", "day: 2"])
        assert response(results, "orders")["rows_deleted"] == 1
        run_dbt(["test", "--select", "orders"])

        # --full-refresh rebuilds all four tables from the snapshot
        results = run_dbt(["run", "--full-refresh", "--select", "orders", "--vars", "day: 2"])
        assert response(results, "orders")["rows_inserted"] == 4
        assert_orders_layout(project)
        run_dbt(["test", "--select", "orders"])

    def test_operations_show_state_and_unlock(self, project):
        _, output = run_dbt_and_capture(["run-operation", "refreshable_status"])
        assert f"{project.test_schema}.orders: IDLE" in output
        assert "last completed refresh" in output
        _, output = run_dbt_and_capture(
            ["run-operation", "refreshable_status", "--args", "{format: json}"]
        )
        found = [
            json.loads(line[line.index("{") :]) for line in output.splitlines() if '"model"' in line
        ]
        orders = next(f for f in found if f["model"].endswith(".orders"))
        assert orders["phase"] == "IDLE" and orders["last_error"] is None
        assert orders["last_completed"]["inserted"] == 4, "the --full-refresh of day 2"
        _, output = run_dbt_and_capture(
            ["run-operation", "refreshable_unlock", "--args", "{model: orders}"]
        )
        assert "not locked (phase IDLE)" in output
        _, output = run_dbt_and_capture(
            ["run-operation", "refreshable_unlock", "--args", "{model: nope}"], expect_pass=False
        )
        assert "no refreshable model named 'nope'" in output and "orders" in output


class TestConfigErrorsComeFirst:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "no_key.sql": "{{ config(materialized='refreshable') }} select 1 as id",
            "bad_mode.sql": (
                "{{ config(materialized='refreshable', unique_key='id', "
                "on_schema_change='merge_everything') }} select 1 as id"
            ),
        }

    def test_bad_config_is_an_error_before_any_sql(self, project):
        results, output = run_dbt_and_capture(["run"], expect_pass=False)
        assert all(r.status == "error" for r in results)
        assert "needs `unique_key`" in output
        assert "on_schema_change must be one of ignore, fail, append_new_columns" in output
        tables = project.run_sql(f"show tables in {project.test_schema}", fetch="all")
        assert [t for t in tables if not t["isTemporary"]] == [], "nothing was created"
