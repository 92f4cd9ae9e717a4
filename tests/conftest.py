"""One SparkSession per pytest process, configured from the shipped profile.

dbt runs in-process (dbt-tests-adapter's `project` fixture) and engine tests share the
session; the warehouse and Derby metastore live in a fresh folder per pytest run.
"""

from __future__ import annotations

import pytest

from tests.support.profiles import render_target

pytest_plugins = ["dbt.tests.fixtures.project"]


@pytest.fixture(scope="session")
def spark_data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("spark-data")


@pytest.fixture(scope="session")
def dbt_profile_target(spark_data_dir):
    return render_target(spark_data_dir, threads=4)


@pytest.fixture(scope="session")
def spark(dbt_profile_target):
    """The process's shared session: the same one dbt's connections use."""
    from dbt.adapters.spark_refreshable.connections import SparkRefreshableCredentials
    from dbt.adapters.spark_refreshable.environments import for_credentials

    credentials = SparkRefreshableCredentials.from_dict(
        {k: v for k, v in dbt_profile_target.items() if k not in ("type", "threads")}
    )
    return for_credentials(credentials).base_session()
