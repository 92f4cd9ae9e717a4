"""dbt's Python model conformance suite: models run in-process on `spark.newSession()`."""

import pytest
from dbt.tests.adapter.python_model.test_python_model import (
    BasePythonEmptyTests,
    BasePythonIncrementalTests,
    BasePythonMetaGetTests,
    BasePythonModelTests,
    BasePythonSampleTests,
)
from dbt.tests.adapter.python_model.test_spark import BasePySparkTests
from dbt.tests.util import run_dbt


class TestPythonModel(BasePythonModelTests):
    pass


class TestPythonIncremental(BasePythonIncrementalTests):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "merge", "+file_format": "delta"}}


class TestPythonMetaGet(BasePythonMetaGetTests):
    pass


class TestPythonEmpty(BasePythonEmptyTests):
    pass


class TestPythonSample(BasePythonSampleTests):
    pass


class TestPySpark(BasePySparkTests):
    """`koalas_df` is never run: databricks.koalas does not support Spark >= 3.2, where it
    became pyspark.pandas (which `pandas_on_spark_df` covers)."""

    def test_different_dataframes(self, project):
        results = run_dbt(["run", "--select", "pyspark_df"])
        assert [r.status for r in results] == ["success"]

    def test_pandas_dataframes(self, project):
        results = run_dbt(["run", "--select", "pandas_df", "pandas_on_spark_df"])
        assert len(results) == 2
        for name in ("pandas_df", "pandas_on_spark_df"):
            rows = project.run_sql(f"select count(*) from {project.test_schema}.{name}", "one")
            assert rows[0] == 5
