"""Catalog (`dbt docs generate`) and persisted docs (table and column comments) on Delta."""

import getpass

import pytest
from dbt.tests.adapter.basic import expected_catalog
from dbt.tests.adapter.basic.test_docs_generate import BaseDocsGenerate, BaseDocsGenReferences
from dbt.tests.adapter.persist_docs.test_persist_docs import (
    BasePersistDocs,
    BasePersistDocsAllColumnsMissing,
    BasePersistDocsColumnMissing,
    BasePersistDocsCommentOnQuotedColumn,
    BasePersistDocsQuotedColumnCaseSensitive,
)
from dbt.tests.util import AnyInteger, get_connection, run_dbt


class SparkCatalog:
    """Spark's type names and relation types. A Hive metastore records the Spark driver's
    user as every relation's owner and a CTAS's size; the in-memory catalog of the suite's
    sessions neither."""

    @pytest.fixture(scope="class")
    def on_hive(self, project) -> bool:
        settings = project.adapter.config.credentials.server_side_parameters
        return settings.get("spark.sql.catalogImplementation", "hive") == "hive"

    @pytest.fixture(scope="class")
    def profile_user(self, on_hive):
        return getpass.getuser() if on_hive else None

    @pytest.fixture(scope="class")
    def types(self):
        return {
            "id_type": "long",
            "text_type": "string",
            "time_type": "timestamp",
            "view_type": "view",
            "table_type": "table",
            "model_stats": expected_catalog.no_stats(),
        }


class TestDocsGenerate(SparkCatalog, BaseDocsGenerate):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project, profile_user, types):
        return expected_catalog.base_expected_catalog(project, role=profile_user, **types)


def table_stats() -> dict:
    """What Spark's `show table extended` reports for a table built by CTAS, the size a
    Hive metastore keeps for it."""
    stat = {"include": True, "description": None, "value": AnyInteger()}
    has_stats = {**expected_catalog.no_stats()["has_stats"], "value": True}
    return {
        "bytes": {"id": "bytes", "label": "bytes", **stat},
        "rows": {"id": "rows", "label": "rows", **stat},
        "has_stats": has_stats,
    }


def from_zero(catalog: dict) -> dict:
    """The references catalog numbers columns from 1; dbt-spark's catalog from 0."""
    columns = {
        id(column): column
        for section in ("nodes", "sources")
        for node in catalog[section].values()
        for column in node["columns"].values()
    }  # nodes share column dicts: shift each once
    for column in columns.values():
        column["index"] -= 1
    return catalog


@pytest.mark.extended
class TestDocsGenReferences(SparkCatalog, BaseDocsGenReferences):
    @pytest.fixture(scope="class")
    def expected_catalog(self, project, profile_user, types, on_hive):
        model_stats = table_stats() if on_hive else expected_catalog.no_stats()
        return from_zero(
            expected_catalog.expected_references_catalog(
                project,
                role=profile_user,
                bigint_type="long",
                **{**types, "model_stats": model_stats},
                seed_stats=expected_catalog.no_stats(),
                view_summary_stats=expected_catalog.no_stats(),
            )
        )


def persist_docs(relation: bool = True, columns: bool = True, **models: object) -> dict:
    docs = {"+persist_docs": {"relation": relation, "columns": columns}}
    return {
        "models": {"test": {"+file_format": "delta", **docs, **models}},
        "seeds": {"test": {"+file_format": "delta"}},
    }


def described(project, name: str) -> dict:
    """A relation's comments as `describe table extended` shows them, shaped like a catalog
    node. dbt-spark's catalog leaves comments out, so the base classes' catalog reads are
    replaced by this (as dbt-spark's own persist_docs tests do). dbt-spark writes an empty
    comment for an undocumented relation: read as none."""
    rows = project.run_sql(f"describe table extended {project.test_schema}.{name}", "all")
    node: dict = {"metadata": {"comment": None}, "columns": {}}
    in_columns = True
    for col_name, data_type, comment in rows:
        if not col_name or col_name.startswith("#"):
            in_columns = False
        elif in_columns:
            node["columns"][col_name] = {"comment": comment or None}
        elif col_name == "Comment":
            node["metadata"]["comment"] = data_type or None
    return node


class TestPersistDocs(BasePersistDocs):
    """Table, view and column comments, with quotes, comment markers and newlines."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return persist_docs()

    def test_has_comments_pglike(self, project):
        self._assert_has_table_comments(described(project, "table_model"))
        self._assert_has_view_comments(described(project, "view_model"))
        self._assert_has_view_comments(described(project, "no_docs_model"), False, False)


@pytest.mark.extended
class TestPersistDocsColumnMissing(BasePersistDocsColumnMissing):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return persist_docs(relation=False)

    def test_missing_column(self, project):
        comment = described(project, "missing_column")["columns"]["id"]["comment"]
        assert comment.startswith("test id column description")


@pytest.mark.extended
class TestPersistDocsAllColumnsMissing(BasePersistDocsAllColumnsMissing):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return persist_docs(relation=False)


@pytest.mark.extended
class TestPersistDocsQuotedColumnCaseSensitive(BasePersistDocsQuotedColumnCaseSensitive):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return persist_docs(relation=False)


@pytest.mark.extended
class TestPersistDocsCommentOnQuotedColumn(BasePersistDocsCommentOnQuotedColumn):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return persist_docs(materialized="table")

    def test_quoted_column_comments(self, project):
        run_dbt(["run"])
        assert described(project, "quote_model")["columns"]["2id"]["comment"].startswith("XXX")


class TestCatalogWithoutTemporaryViews:
    """An incremental run leaves its `__dbt_tmp` temporary view in the shared Spark session:
    later listings and catalogs of the schema must not include it."""

    @pytest.fixture(scope="class")
    def models(self):
        return {"incremental.sql": "{{ config(materialized='incremental') }} select 1 as id"}

    def test_catalog_of_schema_after_incremental_run(self, project):
        run_dbt(["run"])
        run_dbt(["run"])
        assert project.run_sql("show views", "all")  # the temporary view is still there
        schema = project.adapter.Relation.create(schema=project.test_schema)
        with get_connection(project.adapter):
            relations = project.adapter.list_relations_without_caching(schema)
        assert [r.identifier for r in relations] == ["incremental"]
        catalog = run_dbt(["docs", "generate", "--no-compile"])
        assert list(catalog.nodes) == ["model.test.incremental"]
