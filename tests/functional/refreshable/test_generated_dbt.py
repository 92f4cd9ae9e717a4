"""Generated snapshots through dbt itself: a SQL and a Python refreshable model read a source
table that the test rewrites each day with generated rows (every feature of
``tests/support/snapshots.py``: quoted and emoji column names, nested values, NaN and -0.0,
a key respelled as an equal value, unicode, variants). Each day `dbt run` must leave main equal to
the source by content, and `dbt test`'s `refreshable_matches_snapshot` must pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from tests.support.content import content_problems
from tests.support.snapshots import Features, GeneratedModel, generate

SEED = 20261125
# (model, language, key kinds): a composite key with quoted names in each
MODELS = [
    ("gen_sql", "sql", ("TIMESTAMP", "STRING")),
    ("gen_py", "py", ("DECIMAL(18,2)", "DOUBLE")),
]
GENERATED = {
    name: generate(SEED + i, 12, Features(), key_kinds=kinds)
    for i, (name, _, kinds) in enumerate(MODELS)
}


def config(model: GeneratedModel) -> dict:
    return {"unique_key": model.unique_key, "vnodes": 8, "merge_chunk_rows": 40}


def model_file(name: str, language: str) -> str:
    settings = ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}"
        for key, value in config(GENERATED[name]).items()
    )
    source = f"{name}_source"
    if language == "sql":
        return (
            f"{{{{ config(materialized='refreshable', {settings}) }}}}\n"
            f"select * from {{{{ target.schema }}}}.{source}\n"
        )
    return (
        "def model(dbt, session):\n"
        f"    dbt.config(materialized='refreshable', {settings})\n"
        f"    return session.table(f'{{dbt.this.schema}}.{source}')\n"
    )


SCHEMA_YML = "version: 2\nmodels:\n" + "".join(
    f"  - name: {name}\n    data_tests: [refreshable_matches_snapshot]\n" for name, _, _ in MODELS
)


def failed_tests(project, day: int) -> list[str]:
    """`dbt test`, and what failed, read from run_results.json (run_dbt's failure says
    nothing of which test or why)."""
    try:
        run_dbt(["test"])
        return []
    except AssertionError:
        results = json.loads((Path(project.project_root) / "target/run_results.json").read_text())
        return [
            f"day {day}: {r['unique_id']} {r['status']}: {r['message']}"
            for r in results["results"]
            if r["status"] != "pass"
        ]


# `make test-all`: the engine meets the generator in test_differential.py, and dbt's SQL
# models with spaces, emoji and nested columns in test_names.py and test_materialization.py
@pytest.mark.extended
class TestGeneratedSnapshotsThroughDbt:
    @pytest.fixture(scope="class")
    def models(self):
        files = {f"{name}.{language}": model_file(name, language) for name, language, _ in MODELS}
        return {**files, "schema.yml": SCHEMA_YML}

    def test_every_day_main_equals_the_source_and_the_proof_passes(self, project, spark):
        report = []
        for day in (1, 2, 3):
            sources = {}
            for name, model in GENERATED.items():
                frame = spark.createDataFrame(model.day(day), model.ddl())
                sources[name] = frame
                frame.createOrReplaceTempView("generated_day")
                spark.sql(  # names with spaces need Delta's column mapping
                    f"CREATE OR REPLACE TABLE {project.test_schema}.{name}_source USING delta "
                    f"TBLPROPERTIES ('delta.columnMapping.mode' = 'name') "
                    f"AS SELECT * FROM generated_day"
                )
            run_dbt(["run"])
            for name, model in GENERATED.items():
                main = f"{project.test_schema}.{name}"
                problems = content_problems(spark, main, sources[name], len(model.unique_key))
                report += [f"day {day} {name}: {w}" for _, w in problems]
            report += failed_tests(project, day)
        schemas = "\n".join(f"{name}: {model.describe()}" for name, model in GENERATED.items())
        assert not report, schemas + "\n" + "\n".join(report[:20])
