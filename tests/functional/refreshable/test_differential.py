"""Differential test: for generated snapshot sequences (tests/support/snapshots.py), after
each of day 1 -> day 2 -> day 3 main must hold exactly that day's snapshot, compared by
content (collected values in a canonical form: maps unordered, floats by their bits), never
by the engine's own row hash.

Many generated cases share one table under a leading `case_id` key, so a few models cover
hundreds of cases. More or other cases:

    REFRESHABLE_DIFF_CASES=2000 REFRESHABLE_DIFF_SEED=7 python -m pytest \\
        tests/functional/refreshable/test_differential.py

REFRESHABLE_DIFF_FEATURES_OFF (comma-separated `Features` flags, default none) turns
generated features off.
A failure prints the seed, the schema and every differing row with its case.
"""

from __future__ import annotations

import math
import os

import pytest

from tests.functional.refreshable.engine_harness import EngineModel
from tests.support.content import content_problems
from tests.support.snapshots import (
    KEY_KINDS,
    GeneratedModel,
    features_without,
    generate,
)

CASES = int(os.environ.get("REFRESHABLE_DIFF_CASES", "204"))
SEED = int(os.environ.get("REFRESHABLE_DIFF_SEED", "20261122"))
CASES_PER_MODEL = 51
FEATURES_OFF = [f for f in os.environ.get("REFRESHABLE_DIFF_FEATURES_OFF", "").split(",") if f]
MODELS = math.ceil(CASES / CASES_PER_MODEL)
# small chunks: every refresh (400-640 changed rows) applies its changes in two or three chunks
CHUNK_ROWS = 250
# the models whose value columns change between days (by their KEY_KINDS index), and how
COLUMN_CHANGES = {1: "append_new_columns", 2: "sync_all_columns"}
# more shuffle partitions than the suite's sessions have (one, tests/support/profiles.py)
SHUFFLE_PARTITIONS = "3"


def run_days(engine: EngineModel, model: GeneratedModel) -> list[str]:
    """Refresh day 1, 2, 3; every divergence from the snapshot, per day, with its case."""
    report = []
    for day in (1, 2, 3):
        rows = model.day(day)
        engine.ddl = model.ddl(day)
        try:
            engine.refresh(rows)
        except Exception as error:  # reported with the seed and schema
            message = str(error).split("\n", 1)[0][:600]  # not Spark's whole plan
            report.append(f"day {day}: the refresh failed: {type(error).__name__}: {message}")
            break
        for key, what in content_problems(
            engine.spark, engine.tables.main, engine.frame(rows), len(model.unique_key)
        ):
            case = f" case {key[0]} ({model.case(key[0]).scenario})" if key else ""
            report.append(f"day {day}{case}: {what}")
    return report


@pytest.fixture(autouse=True, scope="module")
def spread_over_partitions(spark):
    """The engine's joins and aggregations in several partitions, as on a cluster: code
    right only in one partition fails here."""
    conf = "spark.sql.shuffle.partitions"
    before = spark.conf.get(conf)
    spark.conf.set(conf, SHUFFLE_PARTITIONS)
    yield
    spark.conf.set(conf, before)


def assert_no_divergence(model: GeneratedModel, report: list[str]) -> None:
    shown = "\n".join(report[:25])
    more = f"\n... and {len(report) - 25} more" if len(report) > 25 else ""
    assert not report, f"{model.describe()}\n{len(report)} divergence(s):\n{shown}{more}"


# `make test` runs the models whose value columns change between days (COLUMN_CHANGES: range
# vnodes at a DATE's calendar edges and at BIGINT's extremes, every key type between them);
# `make test-all` all of them (also keys on case_id first, and hash vnodes over a TIMESTAMP)
@pytest.mark.parametrize(
    "index",
    [
        i if i % len(KEY_KINDS) in COLUMN_CHANGES else pytest.param(i, marks=pytest.mark.extended)
        for i in range(MODELS)
    ],
)
def test_generated_snapshots(spark, index: int) -> None:
    """51 generated cases per model, each model its own generated schema and key kinds;
    in two of every four, value columns come, go, come back, move and change case between
    days. Main is compared on the day's columns: under append_new_columns it keeps the
    values of columns the snapshot lost, as documented."""
    cases = min(CASES_PER_MODEL, CASES - index * CASES_PER_MODEL)
    kinds = index % len(KEY_KINDS)
    on_schema_change = COLUMN_CHANGES.get(kinds, "ignore")
    model = generate(
        SEED + index,
        cases,
        features_without(*FEATURES_OFF),
        key_kinds=KEY_KINDS[kinds],
        evolve_columns=kinds in COLUMN_CHANGES,
    )
    # models of KEY_KINDS[0] key on case_id first, the others on their generated
    # columns first, whose kind then chooses the vnode layout (range vnodes for integers
    # and dates, hash vnodes otherwise)
    keys = model.unique_key if kinds == 0 else [*model.unique_key[1:], "case_id"]
    engine = EngineModel(
        spark,
        model.ddl(),
        unique_key=keys,
        merge_chunk_rows=CHUNK_ROWS,
        on_schema_change=on_schema_change,
    )
    assert_no_divergence(model, run_days(engine, model))


def refresh_spelled(engine: EngineModel, ddl: str, rows: list[tuple]) -> list[str]:
    """Refresh from ``rows`` under ``ddl``'s spelling; how main then differs."""
    frame = engine.spark.createDataFrame(rows, ddl)
    engine.refresh(lambda: frame)
    return [what for _, what in content_problems(engine.spark, engine.tables.main, frame, 1)]


@pytest.fixture(params=["false", "true"], ids=["case-insensitive", "case-sensitive"])
def case_sensitive(spark, request):
    """The session's ``spark.sql.caseSensitive``, as a profile may set it."""
    conf = "spark.sql.caseSensitive"
    before = spark.conf.get(conf)
    spark.conf.set(conf, request.param)
    yield
    spark.conf.set(conf, before)


def test_columns_change_case_between_days(spark, case_sensitive) -> None:
    """unique_key `id` is spelled `ID` on day 2 and `Id` on day 3, `Amount` is `AMOUNT` then
    `amount`, `Note` is `note` then `NOTE`: the same columns, with inserts, updates (to and
    from NULL) and deletes every day; also in a session where Spark matches names by case."""
    engine = EngineModel(spark, "id INT, Amount INT, Note STRING", unique_key="id")
    days = [
        ("id INT, Amount INT, Note STRING", [(1, 10, "a"), (2, 20, "b"), (3, None, "c")]),
        ("ID INT, AMOUNT INT, note STRING", [(1, 11, "a"), (2, 20, "B"), (4, 40, None)]),
        ("Id INT, amount INT, NOTE STRING", [(2, None, "B"), (4, 40, "d"), (5, 50, "e")]),
    ]
    report = [
        f"day {day} ({ddl}): {problem}"
        for day, (ddl, rows) in enumerate(days, 1)
        for problem in refresh_spelled(engine, ddl, rows)
    ]
    assert not report, "\n".join(report)
