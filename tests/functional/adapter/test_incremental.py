"""dbt's incremental conformance suites, and dbt-spark's incremental strategies, on Delta."""

import pytest
from dbt.tests.adapter.incremental import test_incremental_unique_id as unique_id
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import (
    BaseMergeExcludeColumns,
)
from dbt.tests.adapter.incremental.test_incremental_microbatch import BaseMicrobatch
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChangeSetup,
)
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.util import check_relations_equal, run_dbt

# dbt-spark's incremental materialization, which the plugin does not touch: `make test-all`
pytestmark = pytest.mark.extended

MERGE_ON_DELTA = {"+file_format": "delta", "+incremental_strategy": "merge"}


def date_literals(sql: str) -> str:
    """Spark's ANSI store assignment does not cast a string into a DATE column on insert."""
    return sql.replace("'2022-02-01'", "date '2022-02-01'")


class TestIncrementalUniqueKey(unique_id.BaseIncrementalUniqueKey):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": MERGE_ON_DELTA, "seeds": {"+file_format": "delta"}}

    @pytest.fixture(scope="class")
    def seeds(self):
        return {
            "duplicate_insert.sql": date_literals(unique_id.seeds__duplicate_insert_sql),
            "seed.csv": unique_id.seeds__seed_csv,
            "add_new_rows.sql": date_literals(unique_id.seeds__add_new_rows_sql),
        }


class OnSchemaChangeSpark(BaseIncrementalOnSchemaChangeSetup):
    """dbt's on_schema_change scenarios as dbt-spark supports them.

    `sync_all_columns` would drop columns, which dbt-spark refuses with a compilation error
    ("... does not support dropping columns from tables"): that is asserted. A source that
    drops a column under `append_new_columns` fails in dbt-spark 1.11's append and merge SQL,
    which still name the dropped column (dbt-spark's own suite leaves it out): strict xfail.
    """

    def test_run_incremental_ignore(self, project):
        self.run_twice_and_assert(
            "model_a incremental_ignore incremental_ignore_target",
            "incremental_ignore",
            "incremental_ignore_target",
            project,
        )

    def test_run_incremental_append_new_columns(self, project):
        self.run_incremental_append_new_columns(project)

    @pytest.mark.xfail(
        strict=True,
        reason="dbt-spark 1.11 inserts/merges the source's dropped column by name",
    )
    def test_run_incremental_append_new_columns_remove_one(self, project):
        self.run_incremental_append_new_columns_remove_one(project)

    @pytest.mark.parametrize(
        "model", ["incremental_sync_all_columns", "incremental_sync_remove_only"]
    )
    def test_run_incremental_sync_refuses_to_drop(self, project, model):
        select = f"model_a {model} {model}_target"
        run_dbt(["run", "--select", select, "--full-refresh"])
        results = run_dbt(["run", "--select", select], expect_pass=False)
        failed = [r for r in results if r.node.name == model][0]
        assert "does not support dropping columns" in failed.message

    def test_run_incremental_fail_on_schema_change(self, project):
        run_dbt(["run", "--select", "model_a incremental_fail", "--full-refresh"])
        results = run_dbt(["run", "--select", "model_a incremental_fail"], expect_pass=False)
        assert "Compilation Error" in results[1].message


class TestIncrementalOnSchemaChangeAppend(OnSchemaChangeSpark):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "delta", "+incremental_strategy": "append"}}


class TestIncrementalOnSchemaChangeMerge(OnSchemaChangeSpark):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {**MERGE_ON_DELTA, "+unique_key": "id"}}


class TestMergeExcludeColumns(BaseMergeExcludeColumns):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": MERGE_ON_DELTA}


# The base model's `1 as id` is an int; the seed's id is a bigint on Spark.
PREDICATES_MODEL = """
{{ config(materialized = 'incremental', unique_key = 'id') }}
{% if not is_incremental() %}
select cast(1 as bigint) as id, 'hello' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'goodbye' as msg, 'red' as color
{% else %}
-- merge will not happen on the above record where id = 2, so it falls to insert
select cast(1 as bigint) as id, 'hey' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'yo' as msg, 'green' as color
union all
select cast(3 as bigint) as id, 'anyway' as msg, 'purple' as color
{% endif %}
"""


class TestIncrementalPredicatesMerge(BaseIncrementalPredicates):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {**MERGE_ON_DELTA, "+incremental_predicates": ["dbt_internal_dest.id != 2"]}
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {"delete_insert_incremental_predicates.sql": PREDICATES_MODEL}


class TestPredicatesMerge(TestIncrementalPredicatesMerge):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {**MERGE_ON_DELTA, "+predicates": ["dbt_internal_dest.id != 2"]}}


MICROBATCH_MODEL = """
{{ config(materialized='incremental', incremental_strategy='microbatch', event_time='event_time',
          batch_size='day', begin=modules.datetime.datetime(2020, 1, 1, 0, 0, 0),
          partition_by=['date_day'], file_format='delta') }}
select *, cast(event_time as date) as date_day from {{ ref('input_model') }}
"""


class TestMicrobatch(BaseMicrobatch):
    """dbt-spark's microbatch is insert_overwrite of the batch's partitions: no unique_key,
    a `partition_by` of the batch's grain."""

    @pytest.fixture(scope="class")
    def microbatch_model_sql(self) -> str:
        return MICROBATCH_MODEL


def strategy_model(config: str, with_color: bool = False) -> str:
    """dbt-spark's incremental strategy fixture: two rows, then (2, 'yo') and (3, 'anyway')."""

    def rows(*values: tuple[int, str, str]) -> str:
        color = ", '{}' as color" if with_color else ""
        return " union all ".join(
            f"select cast({i} as bigint) as id, '{msg}' as msg" + color.format(c)
            for i, msg, c in values
        )

    return (
        f"{{{{ config(materialized='incremental', {config}) }}}}\n"
        f"{{% if not is_incremental() %}}\n{rows((1, 'hello', 'blue'), (2, 'goodbye', 'red'))}\n"
        f"{{% else %}}\n{rows((2, 'yo', 'green'), (3, 'anyway', 'purple'))}\n{{% endif %}}\n"
    )


class TestSparkIncrementalStrategies:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {
            "expected_append.csv": "id,msg\n1,hello\n2,goodbye\n2,yo\n3,anyway\n",
            "expected_overwrite.csv": "id,msg\n2,yo\n3,anyway\n",
            "expected_upsert.csv": "id,msg\n1,hello\n2,yo\n3,anyway\n",
            "expected_partial_upsert.csv": (
                "id,msg,color\n1,hello,blue\n2,yo,red\n3,anyway,purple\n"
            ),
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "default_append.sql": strategy_model("file_format='parquet'"),
            "append_delta.sql": strategy_model(
                "incremental_strategy='append', file_format='delta'"
            ),
            "merge_no_key.sql": strategy_model("incremental_strategy='merge', file_format='delta'"),
            "merge_unique_key.sql": strategy_model(
                "incremental_strategy='merge', file_format='delta', unique_key='id'"
            ),
            "merge_update_columns.sql": strategy_model(
                "incremental_strategy='merge', file_format='delta', unique_key='id', "
                "merge_update_columns=['msg']",
                with_color=True,
            ),
            "insert_overwrite_no_partitions.sql": strategy_model(
                "incremental_strategy='insert_overwrite', file_format='parquet'"
            ),
            "insert_overwrite_partitions.sql": strategy_model(
                "incremental_strategy='insert_overwrite', file_format='parquet', partition_by='id'"
            ),
            "insert_overwrite_partitions_delta.sql": strategy_model(
                "incremental_strategy='insert_overwrite', file_format='delta', partition_by='id'"
            ),
        }

    def test_strategies(self, project):
        run_dbt(["seed"])
        run_dbt(["run"])
        run_dbt(["run"])
        for model, expected in [
            ("default_append", "expected_append"),
            ("append_delta", "expected_append"),
            ("merge_no_key", "expected_append"),
            ("merge_unique_key", "expected_upsert"),
            ("merge_update_columns", "expected_partial_upsert"),
            ("insert_overwrite_no_partitions", "expected_overwrite"),
            ("insert_overwrite_partitions", "expected_upsert"),
            ("insert_overwrite_partitions_delta", "expected_upsert"),
        ]:
            check_relations_equal(project.adapter, [model, expected])


class TestSparkBadStrategies:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "bad_file_format.sql": strategy_model("file_format='something_else'"),
            "bad_merge_not_delta.sql": strategy_model(
                "incremental_strategy='merge', file_format='parquet'"
            ),
            "bad_strategy.sql": strategy_model("incremental_strategy='something_else'"),
        }

    def test_bad_strategies(self, project):
        results = run_dbt(["run"], expect_pass=False)
        assert len(results) == 3
        for result in results:
            assert result.status == "error"
            assert "Compilation Error in model" in result.message
