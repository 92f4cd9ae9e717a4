"""The `spark_refreshable` dbt adapter: dbt-spark plus the `refreshable` materialization."""

from dbt.adapters.base import AdapterPlugin
from dbt.include import spark_refreshable

from dbt.adapters.spark_refreshable.connections import (
    SparkRefreshableConnectionManager,  # noqa: F401
    SparkRefreshableCredentials,
)
from dbt.adapters.spark_refreshable.impl import SparkRefreshableAdapter

Plugin = AdapterPlugin(
    adapter=SparkRefreshableAdapter,  # type: ignore[arg-type]
    credentials=SparkRefreshableCredentials,
    include_path=spark_refreshable.PACKAGE_PATH,
    dependencies=["spark"],
)
