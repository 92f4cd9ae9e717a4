"""An enforced model contract on a refreshable model, through dbt: the model's columns and
types are checked against the contract before anything runs, and the contract's not_null
and check constraints end up on main as Delta CHECK constraints (the engine's side, through
refreshes, a resume and changes of the contract, is test_contracts.py)."""

from __future__ import annotations

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture

from dbt.adapters.spark_refreshable.engine.naming import ModelTables

ORDERS_SQL = """
{{ config(materialized='refreshable', unique_key='id', vnodes=4) }}
select cast(id as int) as id, cast(id * {{ var('day', 1) }} as double) as amount
from range(0, 20) as r(id)
"""
MISMATCHED_SQL = """
{{ config(materialized='refreshable', unique_key='id') }}
select cast(id as int) as id from range(0, 3) as r(id)
"""
SCHEMA_YML = """
version: 2
models:
  - name: orders
    config:
      contract: {enforced: true}
    columns:
      - name: id
        data_type: int
        constraints: [{type: not_null}]
      - name: amount
        data_type: double
        constraints: [{type: check, name: amount_not_negative, expression: "amount >= 0"}]
  - name: mismatched
    config:
      contract: {enforced: true}
    columns:
      - name: id
        data_type: string
"""


class TestContract:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "orders.sql": ORDERS_SQL,
            "mismatched.sql": MISMATCHED_SQL,
            "schema.yml": SCHEMA_YML,
        }

    def test_contract_columns_checked_and_constraints_on_main(self, project):
        for day in (1, 2):
            run_dbt(["run", "--select", "orders", "--vars", f"day: {day}"])
            main = ModelTables(project.test_schema, "orders").main
            found = project.run_sql(f"SHOW TBLPROPERTIES {main}", fetch="all")
            constraints = {k for k, _ in found if k.startswith("delta.constraints.")}
            assert constraints == {
                "delta.constraints.not_null_id",
                "delta.constraints.amount_not_negative",
            }, f"day {day}"

        results, output = run_dbt_and_capture(["run", "--select", "mismatched"], expect_pass=False)
        assert "contract" in output.lower() and "data type mismatch" in output.lower(), output
        schema_tables = project.run_sql(f"SHOW TABLES IN {project.test_schema}", fetch="all")
        assert "mismatched" not in {row[1] for row in schema_tables}, "nothing was written"
