"""Commit conflicts are told by Delta's exception classes, as the classic and the Connect
client raise them, or by a Spark error's condition; never by words in a message."""

import delta.connect.exceptions as connect_errors
import delta.exceptions.captured as classic_errors
import pytest
from pyspark.errors.exceptions.connect import SparkConnectGrpcException

from dbt.adapters.spark_refreshable.engine.commits import is_commit_conflict

CONFLICTS = [
    "ConcurrentAppendException",
    "ConcurrentTransactionException",
    "ConcurrentDeleteReadException",
    "MetadataChangedException",
]


@pytest.mark.parametrize("name", CONFLICTS)
def test_delta_conflicts_of_the_classic_client(spark, name):
    """(The classic client's exceptions need its JVM, even built from a message.)"""
    assert is_commit_conflict(getattr(classic_errors, name)("another writer won", "at ..."))


@pytest.mark.parametrize("name", CONFLICTS)
def test_delta_conflicts_of_the_connect_client(name):
    assert is_commit_conflict(getattr(connect_errors, name)(message="another writer won"))


@pytest.mark.parametrize(
    ("condition", "conflict"),
    [
        ("DELTA_CONCURRENT_APPEND.WITHOUT_HINT", True),
        ("DELTA_METADATA_CHANGED", True),
        ("TABLE_OR_VIEW_NOT_FOUND", False),
        (None, False),
    ],
)
def test_a_spark_error_by_its_condition(condition, conflict):
    error = SparkConnectGrpcException(message="DELTA_CONCURRENT in words", errorClass=condition)
    assert is_commit_conflict(error) is conflict


def test_words_in_another_error_are_not_a_conflict():
    assert not is_commit_conflict(RuntimeError("ConcurrentModification DELTA_CONCURRENT_APPEND"))
