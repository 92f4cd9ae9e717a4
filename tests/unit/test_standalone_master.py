"""The `cluster` target's early check: a spark:// master that does not answer is a clear
error naming the profile's spark.master, at once instead of after Spark's minute of retries."""

from __future__ import annotations

import socket

import pytest
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_refreshable.environments.session import check_standalone_master


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_other_masters_are_not_checked() -> None:
    for master in ["local[*]", "yarn", "k8s://https://127.0.0.1:1", ""]:
        check_standalone_master(master)


def test_a_listening_master_passes() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        check_standalone_master(f"spark://127.0.0.1:{port}")
        check_standalone_master(f"spark://127.0.0.1:{free_port()},127.0.0.1:{port}")


def test_a_missing_master_names_the_fix() -> None:
    with pytest.raises(DbtRuntimeError, match="spark.master in the profile"):
        check_standalone_master(f"spark://127.0.0.1:{free_port()}", timeout=1)


def test_a_malformed_master_is_refused() -> None:
    with pytest.raises(DbtRuntimeError, match="expected spark://host:port"):
        check_standalone_master("spark://127.0.0.1")
