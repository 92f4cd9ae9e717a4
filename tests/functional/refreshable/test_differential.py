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

import contextlib
import math
import os
import random
from typing import Any

import pytest

from dbt.adapters.spark_refreshable.engine.errors import InjectedFault
from tests.functional.refreshable.engine_harness import EngineModel
from tests.support.content import content_problems
from tests.support.faults import acting_at, injected
from tests.support.snapshots import (
    KEY_KINDS,
    Atom,
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
    """The engine's joins and aggregations in several partitions and adaptively planned, as
    on a cluster: code right only in one partition, or only in a plan fixed before it runs
    (the suite's other sessions), fails here."""
    settings = {
        "spark.sql.shuffle.partitions": SHUFFLE_PARTITIONS,
        "spark.sql.adaptive.enabled": "true",
    }
    before = {conf: spark.conf.get(conf) for conf in settings}
    for conf, value in settings.items():
        spark.conf.set(conf, value)
    yield
    for conf, value in before.items():
        spark.conf.set(conf, value)


def assert_no_divergence(model: GeneratedModel, report: list[str]) -> None:
    assert_no_divergence_in(model.describe(), report)


def assert_no_divergence_in(described: str, report: list[str]) -> None:
    shown = "\n".join(report[:25])
    more = f"\n... and {len(report) - 25} more" if len(report) > 25 else ""
    assert not report, f"{described}\n{len(report)} divergence(s):\n{shown}{more}"


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


# the engine's named points where a drawn run crashes (engine/faults.py), to be resumed
CRASH_POINTS = ["loading", "finishing", "chunk_committed", "chunk_done", "merged"]
CONFIG_CASES = 12  # cases per model of the test below: each model is its own table config
EVOLVING = ["append_new_columns", "sync_all_columns"]
FULL_REFRESH_SHARE = 0.4  # of the days after the first, refreshed with --full-refresh


def drawn_table_config(rng: random.Random, model: GeneratedModel) -> dict[str, Any]:
    """A table config drawn for ``model``: vnodes, chunk size, checkpoints, compaction, the
    change data feed, on_schema_change where columns evolve, and main partitioned (by a key
    column of few values or case_id) or clustered (by one or two key columns), or neither.
    Names Delta 4.4's MERGE cannot take in a layout or with a feed (refused, as
    test_main_layout.py and test_names.py prove) are not drawn for them."""
    config: dict[str, Any] = {
        "vnodes": rng.choice([1, 3, 64, 1024, 32768]),
        "merge_chunk_rows": rng.choice([15, 60, 250]),
        "checkpoint_interval": rng.choice([0, 30]),
        "compact_after_files": rng.choice([0, 1, 16]),
        "change_data_feed": rng.random() < 0.4
        and not any("`" in c.name for c in model.all_columns),
        "on_schema_change": rng.choice(EVOLVING) if model.column_days else "ignore",
    }
    keys = [c for c in model.all_columns[: 1 + len(model.keys)] if isinstance(c.type, Atom)]
    layout = rng.choice(["none", "partition", "cluster"])
    few = [
        c.name
        for c in keys
        if (c.name == "case_id" or c.type.kind in ("bool", "tinyint", "date"))
        and not ("." in c.name or "`" in c.name)
    ]
    clusterable = [c.name for c in keys if c.type.kind not in ("binary", "bool")]
    if layout == "partition" and few:
        config["partition_by"] = rng.sample(few, 1)
    elif layout == "cluster":
        config["liquid_clustered_by"] = rng.sample(clusterable, min(2, len(clusterable)))
    return config


def problems(engine: EngineModel, rows: list[tuple], model: GeneratedModel) -> list[str]:
    """How main differs from ``rows``, by content."""
    found = content_problems(
        engine.spark, engine.tables.main, engine.frame(rows), len(model.unique_key)
    )
    return [what for _, what in found]


def refreshed(
    engine: EngineModel, rows: list[tuple], model: GeneratedModel, **config: Any
) -> list[str]:
    """Refresh to ``rows``; where a --full-refresh replaced main, how main then differed
    from them (before the cycle that verifies it)."""
    as_replaced: list[str] = []
    with acting_at("replaced", lambda: as_replaced.extend(problems(engine, rows, model))):
        replaced = engine.refresh(rows, **config).main_replaced
    return as_replaced if replaced else []


def redrawn_table_config(rng: random.Random, model: GeneratedModel, keys: list[list[str]]) -> dict:
    """A day's config: another draw (``drawn_table_config``), the unique_key one of
    ``keys`` (the same columns in another order: another vnode layout), and no layout
    config unless drawn (main keeps the partitioning it was created with, and says so; a
    drawn clustering is applied to a main not partitioned)."""
    config = {"partition_by": None, "liquid_clustered_by": None}
    return {**config, **drawn_table_config(rng, model), "unique_key": rng.choice(keys)}


# `make test` runs a draw with the change data feed on days 1 and 3, columns that evolve and a
# crash mid-merge once a chunk is done (few draws turn the feed on: a model with a backtick in
# a column name cannot have it); `make test-all` five more
@pytest.mark.parametrize(
    "index", [39, *(pytest.param(i, marks=pytest.mark.extended) for i in range(5))]
)
def test_generated_snapshots_under_generated_table_configs(spark, index: int) -> None:
    """Generated snapshots (also columns that come and go) under a table config drawn
    anew each day (``redrawn_table_config``), some days with --full-refresh, one refresh
    of day 2 or 3 crashed at a drawn point and resumed by the next under yet another: main
    equals each day's snapshot, also where a --full-refresh replaced it, before the cycle
    that verifies it. Drawing configs found a clustering that Delta's CREATE could not
    parse after an emoji, partition and feed column names that made every MERGE fail, and
    partitioned and fed mains whose replace failed (see test_recovery.py)."""
    seed = SEED + 1000 + index
    rng = random.Random(seed)
    full_refreshes = random.Random(-seed)  # apart from ``rng``: its draws stay as they were
    kinds = rng.randrange(len(KEY_KINDS))
    model = generate(
        seed, CONFIG_CASES, features_without(*FEATURES_OFF), KEY_KINDS[kinds], rng.random() < 0.6
    )
    keys = [model.unique_key, [*model.unique_key[1:], "case_id"]]
    crash_day, point = rng.choice([2, 3]), rng.choice(CRASH_POINTS)
    engine = EngineModel(spark, model.ddl())
    report, configs = [], []
    for day in (1, 2, 3):
        engine.ddl, rows = model.ddl(day), model.day(day)
        config = redrawn_table_config(rng, model, keys)
        full = day > 1 and full_refreshes.random() < FULL_REFRESH_SHARE
        if day == crash_day:
            crashed_at = "replaced" if full and full_refreshes.random() < 0.5 else point
            said = f"day {day}{' --full-refresh' * full}, crashed at {crashed_at}: {config}"
            configs.append(said)
            with injected(f"{crashed_at}:raise"), contextlib.suppress(InjectedFault):
                engine.refresh(rows, full_refresh=full, **config)
            config = redrawn_table_config(rng, model, keys)
            full = full_refreshes.random() < FULL_REFRESH_SHARE
        configs.append(f"day {day}{' --full-refresh' * full}: {config}")
        as_replaced = refreshed(engine, rows, model, full_refresh=full, **config)
        report += [f"day {day}, as replaced: {what}" for what in as_replaced]
        report += [f"day {day}: {what}" for what in problems(engine, rows, model)]
    assert_no_divergence_in("\n".join([model.describe(), *configs]), report)
