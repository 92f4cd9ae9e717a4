"""The adapter: dbt-spark's, plus the `session` Python submission method and the
refreshable engine's entry points for the materialization."""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.base.impl import AdapterTrackingRelationInfo
from dbt.adapters.base.relation import BaseRelation
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt.adapters.spark.impl import SparkAdapter
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_refreshable import environments
from dbt.adapters.spark_refreshable.__version__ import version
from dbt.adapters.spark_refreshable.connections import (
    ADAPTER_TYPE,
    SparkRefreshableConnectionManager,
)
from dbt.adapters.spark_refreshable.python_submissions import SessionPythonJobHelper
from dbt.adapters.spark_refreshable.responses import response_for


class SparkRefreshableAdapter(SparkAdapter):
    ConnectionManager = SparkRefreshableConnectionManager

    @classmethod
    def get_adapter_run_info(cls, config: Any) -> AdapterTrackingRelationInfo:
        # The base class derives a module name from the class name, which is not ours.
        from dbt.adapters.__about__ import version as base_version

        return AdapterTrackingRelationInfo(
            adapter_name=ADAPTER_TYPE,
            base_adapter_version=base_version,
            adapter_version=version,
            model_adapter_details=cls._get_adapter_specific_run_info(config),
        )

    @property
    def default_python_submission_method(self) -> str:
        if self.config.credentials.method == SparkConnectionMethod.SESSION:
            return "session"
        return super().default_python_submission_method

    @property
    def python_submission_helpers(self) -> dict[str, type[PythonJobHelper]]:
        return {**super().python_submission_helpers, "session": SessionPythonJobHelper}

    def generate_python_submission_response(self, submission_result: Any) -> AdapterResponse:
        return response_for(submission_result)

    def list_relations_without_caching(self, schema_relation: BaseRelation) -> list[BaseRelation]:
        """The schema's relations, without the session's temporary views.

        Spark's `show table extended in <schema>` also lists temporary views, which belong to
        no schema. With `method: session` every dbt invocation in a process shares one
        session, so the `__dbt_tmp` views of incremental models outlive their run and would
        show up (schema None) in later catalogs and relation caches.
        """
        relations = super().list_relations_without_caching(schema_relation)
        return [relation for relation in relations if relation.schema]

    @available
    def refreshable_config(
        self, config: dict[str, Any], contract: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Validate a refreshable model's config (and an enforced contract's ``columns``
        and ``constraints``); the normalized config, or a clear error."""
        from dbt.adapters.spark_refreshable.engine.spec import RefreshConfig

        return RefreshConfig.from_model_config(config, contract).to_dict()

    @available
    def refreshable_tables(
        self, relation: Any, bookkeeping_schema: str | None = None
    ) -> dict[str, str]:
        """The identifiers of a refreshable model's tables, by role, and under
        ``bookkeeping_schema`` the schema of all but main (see engine.naming)."""
        tables = self._model_tables(relation, bookkeeping_schema)
        return {**tables.identifiers(), "bookkeeping_schema": tables.bookkeeping}

    @available
    def refreshable_content_difference_sql(
        self, relation: Any, last_snapshot: Any, bookkeeping_schema: str | None = None
    ) -> str:
        """SQL of one row counting the rows main and its last completed snapshot do not
        share; '' when the state row records no snapshot to compare with."""
        from dbt.adapters.spark_refreshable.engine.proof import (
            LastSnapshot,
            content_difference_sql,
        )

        last = LastSnapshot.parse(last_snapshot)
        tables = self._model_tables(relation, bookkeeping_schema)
        return content_difference_sql(tables, last) if last else ""

    @available
    def refreshable_state(
        self, relation: Any, bookkeeping_schema: str | None = None
    ) -> dict[str, Any] | None:
        """A refreshable model's state row, as the engine reads it; None before its first
        run (the proof test's, see engine.operations.newest_state)."""
        from dbt.adapters.spark_refreshable.engine import operations

        tables = self._model_tables(relation, bookkeeping_schema)
        return operations.newest_state(self._engine_session(), tables)

    @available
    def refreshable_status(
        self, relation: Any, format: str = "text", bookkeeping_schema: str | None = None
    ) -> str:
        from dbt.adapters.spark_refreshable.engine import operations

        if format not in ("text", "json"):
            raise DbtRuntimeError(
                f"refreshable_status: format must be text or json, got {format!r}"
            )
        session = self._engine_session()
        tables = self._model_tables(relation, bookkeeping_schema)
        return operations.status(session, tables, format == "json")

    @available
    def refreshable_unlock(
        self, relation: Any, lock_timeout: Any, force: bool, bookkeeping_schema: str | None = None
    ) -> str:
        from dbt.adapters.spark_refreshable.engine import operations

        session = self._engine_session()
        tables = self._model_tables(relation, bookkeeping_schema)
        return operations.unlock(session, tables, lock_timeout, bool(force))

    @available
    def refreshable_persist_docs(
        self, relation: Any, table_comment: str | None, column_comments: dict[str, str]
    ) -> None:
        """Main's table and column comments set from the model's docs where they differ
        (see engine.comments)."""
        from dbt.adapters.spark_refreshable.engine.comments import persist_comments

        main = self._model_tables(relation, None).main
        persist_comments(self._engine_session(), main, table_comment, column_comments)

    @available
    def refreshable_check_grants(self, relation: Any) -> None:
        """Refuse a model's ``grants`` before anything is written when this Spark has no
        SQL access control (Apache Spark's parser refuses GRANT and SHOW GRANTS; dbt-spark
        would fail only after building the table)."""
        from pyspark.errors import ParseException

        from dbt.adapters.spark_refreshable.engine.sql import ident

        try:
            self._engine_session().sql(f"SHOW GRANTS ON SCHEMA {ident(relation.schema)}").collect()
        except ParseException:  # classic and Connect sessions alike
            raise DbtRuntimeError(
                f"{relation} sets `grants`, but this Spark has no SQL access control: it "
                f"does not accept GRANT or SHOW GRANTS (Apache Spark's catalogs have none). "
                f"Nothing was written. Remove `grants` from the model's config (or the "
                f"`+grants` of its folder in dbt_project.yml), or run it on a target whose "
                f"catalog supports GRANT."
            ) from None
        except Exception:
            return  # understood, so supported; another error shows when grants are applied

    def _engine_session(self) -> Any:
        return environments.for_credentials(self.config.credentials).base_session()

    @staticmethod
    def _model_tables(relation: Any, bookkeeping_schema: str | None) -> Any:
        from dbt.adapters.spark_refreshable.engine.naming import ModelTables

        return ModelTables(relation.schema, relation.identifier, bookkeeping_schema or None)
