"""Credentials and connection manager: dbt-spark's, registered as `spark_refreshable`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)
from dbt.adapters.spark.session import SessionConnectionWrapper
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_refreshable import environments
from dbt.adapters.spark_refreshable.environments.session import DELTA_HINT

ADAPTER_TYPE = "spark_refreshable"


@dataclass
class SparkRefreshableCredentials(SparkCredentials):
    """Spark's credentials; `host` is optional for `method: session` (there is none)."""

    @classmethod
    def __pre_deserialize__(cls, data: Any) -> Any:
        data = super().__pre_deserialize__(data)
        if data.get("method") == SparkConnectionMethod.SESSION.value:
            data.setdefault("host", "localhost")
        return data

    @property
    def type(self) -> str:
        return ADAPTER_TYPE


class SparkRefreshableConnectionManager(SparkConnectionManager):
    TYPE = ADAPTER_TYPE

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.state == "open":
            return connection
        if connection.credentials.method == SparkConnectionMethod.SESSION:
            # Build the session ourselves, once, so that a missing jar is a clear error.
            environments.for_credentials(connection.credentials).base_session()
            connection = super().open(connection)
            connection.handle = QuotingSessionConnectionWrapper(connection.handle.handle)
            return connection
        return super().open(connection)

    def cancel_open(self) -> list[str]:
        """Ctrl-C: stop running Python jobs (and their Spark jobs), then the SQL ones."""
        cancelled = []
        if self.profile.credentials.method == SparkConnectionMethod.SESSION:
            cancelled = environments.for_credentials(self.profile.credentials).cancel_all()
        return cancelled + super().cancel_open()

    @contextlib.contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        try:
            with super().exception_handler(sql):
                yield
        except DbtRuntimeError as exc:
            raise translate_spark_error(exc) from exc


class QuotingSessionConnectionWrapper(SessionConnectionWrapper):
    """dbt-spark's session connection, with bindings rendered as valid Spark SQL literals.

    dbt-spark's session method pastes bindings (seed rows) into the SQL text as ``'value'``:
    a quote or backslash in a value breaks the statement, and None becomes the string
    'None' (which ANSI mode then refuses to cast to a number or date).
    """

    @classmethod
    def _fix_binding(cls, value: Any) -> str | float:
        if value is None:
            return "NULL"
        if isinstance(value, str):
            return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return super()._fix_binding(value)


def translate_spark_error(exc: DbtRuntimeError) -> DbtRuntimeError:
    """Say what to do about errors whose Spark text does not."""
    message = str(exc)
    if "DATA_SOURCE_NOT_FOUND" in message and "delta" in message.lower():
        return DbtRuntimeError(
            f"Delta Lake is not on this Spark session's classpath. {DELTA_HINT}; and set "
            f"spark.sql.extensions and spark.sql.catalog.spark_catalog as Delta's docs say."
            f"\n\nSpark said: {message}"
        )
    return exc
