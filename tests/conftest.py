"""One SparkSession per pytest process, configured from the shipped profile.

dbt runs in-process (dbt-tests-adapter's `project` fixture) and engine tests share the
session; the warehouse and Derby metastore live in a fresh folder per pytest run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.profiles import (
    SUITE_SESSION_SETTINGS,
    WORKER_JVM_OPTIONS,
    render_target,
    with_jvm_options,
)

pytest_plugins = ["dbt.tests.fixtures.project"]

# The order in which `make test` hands out files: it runs files whole on two workers (--dist
# loadfile) in collection order (--no-loadscope-reorder). First the files that start `dbt`,
# Spark or a cluster in other processes, longest first, side by side; then dbt's conformance
# files on the workers' fresh sessions, as always; then the engine's longest files, longest
# first (worker-s in `make test` of 2026-11-28: 526 down to 242); the many short files fill
# in around them, so that both workers finish together.
LONG_FILES = (
    "functional/connect/test_connect.py",
    "functional/refreshable/test_kill.py",
    "functional/cluster/test_cluster.py",
    "install/test_wheel.py",
    "bench/test_bench_smoke.py",
    "functional/adapter/test_basic.py",
    "functional/adapter/test_constraints.py",
    "functional/adapter/test_docs.py",
    "functional/adapter/test_incremental.py",
    "functional/adapter/test_other.py",
    "functional/adapter/test_python.py",
    "functional/adapter/test_utils.py",
    "functional/refreshable/test_inputs.py",
    "functional/refreshable/test_concurrency.py",
    "functional/refreshable/test_bad_input.py",
    "functional/refreshable/test_stuck_states.py",
    "functional/refreshable/test_divergence.py",
    "functional/refreshable/test_main_index.py",
    "functional/refreshable/test_recovery.py",
    "functional/refreshable/test_differential.py",
    "functional/refreshable/test_main_layout.py",
    "functional/refreshable/test_contracts.py",
    "functional/refreshable/test_bookkeeping_schema.py",
    "functional/refreshable/test_cycle.py",
    "functional/refreshable/test_dbt_commands.py",
    "functional/refreshable/test_vnode_layout.py",
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
    settings = target["server_side_parameters"]
    settings.update(SUITE_SESSION_SETTINGS)
    driver_options = "spark.driver.extraJavaOptions"
    settings[driver_options] = " ".join([settings[driver_options], *WORKER_JVM_OPTIONS])
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
