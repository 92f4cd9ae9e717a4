"""One SparkSession per pytest process, configured from the shipped profile.

dbt runs in-process (dbt-tests-adapter's `project` fixture) and engine tests share the
session; the warehouse and Derby metastore live in a fresh folder per pytest run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.profiles import SUITE_SESSION_SETTINGS, render_target, with_jvm_options

pytest_plugins = ["dbt.tests.fixtures.project"]

# The files that take minutes (each starts dbt, Spark or a cluster in other processes), longest
# first. `make test` runs files whole on two workers (--dist loadfile) in collection order
# (--no-loadscope-reorder): these start first, side by side, and the many short files fill
# in around them, so that both workers finish together.
LONG_FILES = (
    "functional/refreshable/test_kill.py",
    "functional/connect/test_connect.py",
    "functional/cluster/test_cluster.py",
    "bench/test_bench_smoke.py",
)
TESTS = Path(__file__).parent
# before any JVM starts; inherited by every process the suite starts
os.environ["JDK_JAVA_OPTIONS"] = with_jvm_options(os.environ.get("JDK_JAVA_OPTIONS"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.path.relative_to(TESTS).as_posix()
        return LONG_FILES.index(path) if path in LONG_FILES else len(LONG_FILES)

    items.sort(key=rank)


@pytest.fixture(scope="session")
def spark_data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("spark-data")


@pytest.fixture(scope="session")
def dbt_profile_target(spark_data_dir):
    target = render_target(spark_data_dir, threads=4)
    target["server_side_parameters"].update(SUITE_SESSION_SETTINGS)
    return target


@pytest.fixture(scope="session")
def spark(dbt_profile_target):
    """The process's shared session: the same one dbt's connections use."""
    from dbt.adapters.spark_refreshable.connections import SparkRefreshableCredentials
    from dbt.adapters.spark_refreshable.environments import for_credentials

    credentials = SparkRefreshableCredentials.from_dict(
        {k: v for k, v in dbt_profile_target.items() if k not in ("type", "threads")}
    )
    return for_credentials(credentials).base_session()
