"""Issue 9 item 6: a run whose inputs did not change since the last completed cycle is
skipped (`skip_unchanged_inputs`), and never when anything it reads, or main, changed."""

from __future__ import annotations

import itertools
import os
import random
import time
from pathlib import Path

import pytest

from dbt.adapters.spark_refreshable.engine.commits import latest_snapshot, table_id, table_version
from dbt.adapters.spark_refreshable.engine.errors import InjectedFault
from dbt.adapters.spark_refreshable.engine.inputs import (
    Inputs,
    VerifiedMain,
    main_schema,
    read_inputs,
)
from dbt.adapters.spark_refreshable.engine.naming import quote
from dbt.adapters.spark_refreshable.engine.sql import literal
from tests.functional.refreshable.engine_harness import SCHEMA, EngineModel
from tests.support.faults import injected

_names = itertools.count()
ROLES = ("main", "staging", "progress", "state")  # a first cycle writes no change set


class Sources:
    """A Delta table, a view over it and a second Delta table the model reads in a subquery;
    the model reads the view through a CTE."""

    def __init__(self, spark) -> None:
        n = next(_names)
        self.spark = spark
        self.table, self.view, self.excluded = (
            f"{SCHEMA}.src_{n}",
            f"{SCHEMA}.src_view_{n}",
            f"{SCHEMA}.excluded_{n}",
        )
        spark.sql(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
        self.create_table()
        spark.sql(f"CREATE TABLE {self.excluded} (id INT) USING delta")
        spark.sql(f"INSERT INTO {self.excluded} VALUES (3)")
        self.define_view(0)

    def create_table(self, rows: int = 40) -> None:
        self.spark.sql(f"DROP TABLE IF EXISTS {self.table}")
        self.spark.sql(
            f"CREATE TABLE {self.table} USING delta AS SELECT CAST(id AS INT) AS id, "
            f"concat('v', id) AS value, CAST(id % 4 AS INT) AS grp FROM range({rows})"
        )

    def define_view(self, hidden_group: int) -> None:
        self.spark.sql(
            f"CREATE OR REPLACE VIEW {self.view} AS "
            f"SELECT id, value FROM {self.table} WHERE grp <> {hidden_group}"
        )

    @property
    def sql(self) -> str:
        return (
            f"WITH kept AS (SELECT id, value FROM {self.view}) "
            f"SELECT id, value FROM kept WHERE id NOT IN (SELECT id FROM {self.excluded})"
        )

    def expected(self) -> list[tuple]:
        return sorted(tuple(r) for r in self.spark.sql(self.sql).collect())


@pytest.fixture
def sources(spark):
    return Sources(spark)


@pytest.fixture
def model(spark):
    return EngineModel(spark, "id INT, value STRING", unique_key="id", merge_chunk_rows=1000)


def versions(model: EngineModel) -> dict[str, int]:
    return {role: model.table_version(role) for role in ROLES}


def test_unchanged_delta_inputs_skip_the_run_and_commit_nothing(model, sources):
    first = model.refresh(sources.sql)
    assert not first.skipped and model.main() == sources.expected()
    before = versions(model)
    second = model.refresh(sources.sql)
    assert second.skipped is True and second.message == "SKIPPED (inputs unchanged)"
    assert versions(model) == before, "a skipped run commits to none of the model's tables"
    off = model.refresh(sources.sql, skip_unchanged_inputs=False)
    assert not off.skipped and off.message.startswith("REFRESHED")


# Each step changes something the model reads (or main), or nothing that matters to rows;
# True: the run after it may skip.
STEPS = {
    "nothing": True,
    "view redefined the same": True,
    "comment on a main column": True,
    "main compacted": True,
    "insert into the table": False,
    "update the table": False,
    "delete from the table": False,
    "update the table to the same values": False,
    "view redefined": False,
    "insert into the subquery's table": False,
    "table dropped and created again": False,
    "row written into main": False,
    "row deleted from main": False,
    "config changed": False,
}


def min_id(spark, table: str) -> int:
    return spark.sql(f"SELECT min(id) FROM {table}").collect()[0][0]


def apply_step(step: str, sources: Sources, model: EngineModel, state: dict) -> None:
    spark, table, main = sources.spark, sources.table, model.tables.main
    key = state["next_id"]
    state["next_id"] += 1
    statements = {
        "nothing": [],
        "view redefined the same": [],
        "comment on a main column": [f"ALTER TABLE {main} ALTER COLUMN value COMMENT 'c{key}'"],
        "main compacted": [f"OPTIMIZE {main}"],
        "insert into the table": [f"INSERT INTO {table} VALUES ({key}, 'new', 1)"],
        "update the table": [f"UPDATE {table} SET value = concat(value, '+') WHERE id % 5 = 1"],
        "delete from the table": [f"DELETE FROM {table} WHERE id = {min_id(spark, table)}"],
        "update the table to the same values": [f"UPDATE {table} SET value = value"],
        "view redefined": [],
        "insert into the subquery's table": [f"INSERT INTO {sources.excluded} VALUES ({key % 40})"],
        "table dropped and created again": [],
        "row written into main": [f"INSERT INTO {main} VALUES ({key + 1000}, 'sneaked')"],
        "row deleted from main": [f"DELETE FROM {main} WHERE id = {min_id(spark, main)}"],
        "config changed": [],
    }[step]
    for statement in statements:
        spark.sql(statement)
    if step == "view redefined the same":
        sources.define_view(state["hidden_group"])
    elif step == "view redefined":
        state["hidden_group"] = (state["hidden_group"] + 1) % 4
        sources.define_view(state["hidden_group"])
    elif step == "table dropped and created again":
        sources.create_table(rows=30 + key % 20)
    elif step == "config changed":
        state["chunk_rows"] += 1


def test_generated_changes_skip_only_when_nothing_changed(model, sources):
    """Every step once, in an order drawn from REFRESHABLE_TEST_SEED (printed on failure):
    after each, one run; it skips exactly when the step changed nothing the snapshot's rows
    depend on, and main always equals the snapshot."""
    seed = int(os.environ.get("REFRESHABLE_TEST_SEED", "1"))
    state = {"next_id": 100, "hidden_group": 0, "chunk_rows": 1000}
    model.refresh(sources.sql)
    walk = random.Random(seed).sample(sorted(STEPS), k=len(STEPS))
    for step in walk:
        apply_step(step, sources, model, state)
        result = model.refresh(sources.sql, merge_chunk_rows=state["chunk_rows"])
        assert bool(result.skipped) is STEPS[step], (seed, step, result.message)
        assert model.main() == sources.expected(), f"main differs from the snapshot after {step!r}"


def test_a_write_into_main_gone_from_its_history_refreshes(model, sources, spark):
    """Delta's log cleanup deletes the commits a checkpoint covers once they are older than
    the log retention: a row written into main may then be in no commit that history shows,
    and the run cannot vouch for main."""
    model.refresh(sources.sql)
    main = model.tables.main
    spark.sql(f"INSERT INTO {main} VALUES (1000, 'sneaked')")
    written = model.version()
    spark.sql(f"ALTER TABLE {main} SET TBLPROPERTIES ('delta.checkpointInterval' = '1')")
    spark.sql(f"ALTER TABLE {main} ALTER COLUMN value COMMENT 'row-less'")  # a checkpoint
    log = Path(spark.sql(f"DESCRIBE DETAIL {main}").collect()[0]["location"][5:]) / "_delta_log"
    for version in range(written + 1):  # what the cleanup deletes
        for path in log.glob(f"*{version:020d}.*"):
            if not path.name.endswith("checkpoint.parquet"):
                path.unlink()
    result = model.refresh(sources.sql)
    assert not result.skipped, result.message
    assert model.main() == sources.expected()


def test_a_crashed_cycle_records_its_inputs_when_resumed(model, sources, spark):
    model.refresh(sources.sql)
    spark.sql(f"UPDATE {sources.table} SET value = concat(value, '!')")
    with injected("chunk_done@1:raise"), pytest.raises(InjectedFault):
        model.refresh(sources.sql)
    assert model.refresh(sources.sql).resumed is True
    assert model.refresh(sources.sql).skipped is True
    assert model.main() == sources.expected()


@pytest.mark.parametrize(
    "select",
    [
        "SELECT id, value FROM {table} WHERE rand() < 2",
        "SELECT id, value, current_date() AS d FROM {table}",
        "SELECT id, value FROM {table} WHERE id IN (SELECT id FROM {parquet})",
        "SELECT * FROM parquet.`{folder}`",
        "SELECT id, current_user() AS u FROM {table}",
        "SELECT id, uuid() AS u FROM {table}",
        "SELECT id, version() AS v FROM {table}",  # Spark's release, which an upgrade changes
        "SELECT * FROM {inline_view}",
        # a Python function's code is not in the plan (it shows `refreshable_py(id)`)
        "SELECT id, refreshable_py(id) AS u FROM {table}",
        "SELECT id, {sql_function}(refreshable_py(id)) AS u FROM {table}",
        "SELECT id, {clock_function}(id) AS d FROM {table}",  # its body reads the clock
    ],
)
def test_inputs_the_engine_cannot_vouch_for_always_refresh(spark, sources, select, tmp_path):
    spark.udf.register("refreshable_py", lambda x: x + 1, "int")
    sql_function = f"{SCHEMA}.plus_one_{next(_names)}"
    spark.sql(f"CREATE FUNCTION {sql_function}(x INT) RETURNS INT RETURN x + 1")
    clock_function = f"{SCHEMA}.days_on_{next(_names)}"
    spark.sql(
        f"CREATE FUNCTION {clock_function}(x INT) RETURNS DATE RETURN date_add(current_date(), x)"
    )
    parquet, inline_view = f"{SCHEMA}.plain_{next(_names)}", f"{SCHEMA}.inline_{next(_names)}"
    spark.sql(f"CREATE TABLE {parquet} USING parquet AS SELECT 1 AS id")
    # a view's plan shows no inline row: redefined with other rows, it would look the same
    spark.sql(f"CREATE VIEW {inline_view} AS SELECT * FROM VALUES (1, 'a') AS t(id, value)")
    folder = tmp_path / "files"
    spark.range(3).write.parquet(str(folder))
    sql = select.format(
        table=sources.table,
        parquet=parquet,
        folder=folder,
        inline_view=inline_view,
        sql_function=sql_function,
        clock_function=clock_function,
    )
    found = read_inputs(spark, spark.sql(sql), sql, {})
    assert isinstance(found, str), f"{sql} must not be skippable"


def test_a_sql_function_replaced_by_another_body_refreshes(model, sources, spark):
    """A plan shows a SQL function's call, not its body: the fingerprint holds the bodies of
    the functions the model calls, also of those called by another function's body."""
    suffix, inner = f"{SCHEMA}.suffix_{next(_names)}", f"{SCHEMA}.inner_{next(_names)}"

    def define(function: str, body: str) -> None:
        spark.sql(f"CREATE OR REPLACE FUNCTION {function}(v STRING) RETURNS STRING RETURN {body}")

    define(inner, "concat(v, '-a')")
    define(suffix, f"upper({inner}(v))")
    sql = f"SELECT id, {suffix}(value) AS value FROM {sources.table}"
    expected = [(i, f"V{i}-A") for i in range(40)]
    assert not model.refresh(sql).skipped and model.main() == expected
    define(suffix, f"upper({inner}(v))")  # replaced by the same body
    assert model.refresh(sql).skipped is True
    define(suffix, f"lower({inner}(v))")
    assert not model.refresh(sql).skipped
    assert model.main() == [(i, f"v{i}-a") for i in range(40)]
    define(inner, "concat(v, '-b')")  # only the function the other one calls
    assert not model.refresh(sql).skipped
    assert model.main() == [(i, f"v{i}-b") for i in range(40)]
    sessions = (spark.newSession(), spark.newSession())  # each dbt run has one of its own
    found = [read_inputs(s, s.sql(sql), sql, {}) for s in sessions]
    assert isinstance(found[0], Inputs) and found[0] == found[1]


def test_a_session_setting_that_changes_results_refreshes_also_the_jvms_time_zone(
    model, sources, spark
):
    """The same SQL over the same inputs returns other rows under another session time zone
    (here the JVM's, for a session that sets none: two machines running dbt) or another
    result-changing conf (to_json's NULL fields): such a run refreshes. A conf that only
    tunes execution (shuffle partitions) still lets it skip."""
    sql = (
        f"SELECT id, concat(CAST(timestamp_seconds(id * 3600) AS STRING), "
        f"to_json(named_struct('n', CAST(NULL AS INT)))) AS value FROM {sources.table}"
    )
    jvm = spark._jvm
    zone = jvm.java.util.TimeZone.getDefault()
    set_zone = spark.conf.get("spark.sql.session.timeZone", None)
    tuning = spark.conf.get("spark.sql.shuffle.partitions")

    def refreshed() -> bool:
        result = model.refresh(sql)
        assert model.main() == sorted(tuple(r) for r in spark.sql(sql).collect())
        return not result.skipped

    spark.conf.unset("spark.sql.session.timeZone")
    try:
        assert refreshed()
        spark.conf.set("spark.sql.shuffle.partitions", str(int(tuning) + 1))
        assert not refreshed(), "a conf that only tunes execution"
        spark.conf.set("spark.sql.jsonGenerator.ignoreNullFields", "false")
        assert refreshed(), "to_json writes NULL fields now"
        spark.conf.unset("spark.sql.jsonGenerator.ignoreNullFields")
        assert refreshed()
        jvm.java.util.TimeZone.setDefault(jvm.java.util.TimeZone.getTimeZone("Asia/Kathmandu"))
        assert refreshed(), "the session's time zone is the JVM's, which changed"
        assert model.main()[1][1].startswith("1970-01-01 06:30:00")  # +05:30 then
    finally:
        jvm.java.util.TimeZone.setDefault(zone)
        spark.conf.set("spark.sql.shuffle.partitions", tuning)
        spark.conf.unset("spark.sql.jsonGenerator.ignoreNullFields")
        if set_zone is not None:
            spark.conf.set("spark.sql.session.timeZone", set_zone)


def test_a_query_back_in_time_refreshes_when_the_clock_moves_it_to_another_version(model, spark):
    """`TIMESTAMP AS OF current_timestamp() - INTERVAL 2 HOURS` reads the version current
    two hours ago, which changes with the clock, not with the table: the plan shows neither
    the clause nor the version. The commits' times are set through their log files' times
    (Delta's commit timestamps without in-commit timestamps)."""
    table = f"{SCHEMA}.travelled_{next(_names)}"
    spark.sql(f"CREATE TABLE {table} USING delta AS SELECT CAST(id AS INT) AS id FROM range(3)")
    spark.sql(f"INSERT INTO {table} VALUES (7)")
    spark.sql(f"INSERT INTO {table} VALUES (8)")
    log = Path(spark.sql(f"DESCRIBE DETAIL {table}").collect()[0]["location"][5:]) / "_delta_log"

    def committed(version: int, hours_ago: float) -> None:
        moment = time.time() - hours_ago * 3600
        os.utime(log / f"{version:020d}.json", (moment, moment))

    for version, hours_ago in ((0, 3), (1, 1), (2, 0.1)):
        committed(version, hours_ago)
    sql = (
        f"SELECT id, CAST(id AS STRING) AS value FROM {table} "
        f"TIMESTAMP AS OF current_timestamp() - INTERVAL 2 HOURS"
    )
    assert not model.refresh(sql).skipped and [k for k, _ in model.main()] == [0, 1, 2]
    assert model.refresh(sql).skipped is True, "the same version two hours ago"
    committed(1, 2.5)  # version 1 is now the one of two hours ago
    assert not model.refresh(sql).skipped
    assert [k for k, _ in model.main()] == [0, 1, 2, 7]


def test_a_python_model_always_refreshes(model):
    model.refresh(lambda: model.frame([(1, "a")]))
    assert not model.refresh(lambda: model.frame([(1, "a")])).skipped


def test_the_fingerprint_is_the_same_in_another_session(spark, sources):
    """Each dbt run reads the model in a session of its own. (Two new sessions: this
    process's shared one carries whatever the tests before ran; once, in the full suite,
    its fingerprint differed from a new session's, which only makes a run refresh.)"""
    sessions = (spark.newSession(), spark.newSession())
    found = [read_inputs(s, s.sql(sources.sql), sources.sql, {}) for s in sessions]
    assert all(isinstance(f, Inputs) for f in found) and found[0] == found[1]


def test_a_commit_landing_after_mains_version_was_read_does_not_hide_an_earlier_write(spark):
    """Main's version read (``latest``), then a row-less commit lands before its history is:
    the newest commits are then later ones, and the earlier write must still count."""
    main = f"{SCHEMA}.raced_{next(_names)}"
    spark.sql(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    spark.sql(f"CREATE TABLE {main} (id INT) USING delta")
    verified = VerifiedMain(
        table_id(spark, main), main_schema(spark, main), table_version(spark, main)
    )
    spark.sql(f"INSERT INTO {main} VALUES (1)")  # a write since the verified version
    read_then = table_version(spark, main)
    spark.sql(f"ALTER TABLE {main} SET TBLPROPERTIES ('late' = 'true')")  # row-less, landed late
    assert verified.why_changed(spark, main, latest=read_then) == (
        f"{main} was written while this run checked it"
    )
    assert "was written since the last cycle" in verified.why_changed(spark, main)


# names the session catalog takes (letters, digits and _ only): mixed case, a leading _
@pytest.mark.parametrize("table", ["plain", "MiXeD_Case", "_leading_9"])
def test_an_inputs_version_and_id_are_the_tables_whatever_its_name(spark, table):
    """The plan names an input with the session catalog first, quoted: its version and id
    are the ones SQL gives, and a write to it is seen (read from Delta's log, not SQL)."""
    schema = f"{SCHEMA}_Names_{next(_names)}"
    name = f"{quote(schema)}.{quote(table)}"
    spark.sql(f"CREATE SCHEMA IF NOT EXISTS {quote(schema)}")
    spark.sql(f"CREATE TABLE {name} (id INT) USING delta")
    sql = f"SELECT id FROM {name}"

    def read() -> tuple[str, int]:
        found = read_inputs(spark, spark.sql(sql), sql, {})
        assert isinstance(found, Inputs), found
        [(named, versioned)] = found.tables.items()
        assert named.lower().startswith("`spark_catalog`.")
        assert latest_snapshot(spark, named) is not None  # the log is read, not SQL asked
        return versioned

    by_sql = (
        str(spark.sql(f"DESCRIBE DETAIL {name}").collect()[0]["id"]),
        int(spark.sql(f"DESCRIBE HISTORY {name} LIMIT 1").collect()[0]["version"]),
    )
    assert read() == by_sql
    spark.sql(f"INSERT INTO {name} VALUES (1)")
    assert read() == (by_sql[0], by_sql[1] + 1)


# a timestamp and an array with a NULL as text: the time zone and a legacy conf spell them
SPELLED = "concat(CAST(ts AS STRING), CAST(array(1, NULL) AS STRING))"
DEFINITIONS = {
    "view": f"CREATE OR REPLACE VIEW {{view}} AS SELECT id, {SPELLED} AS value FROM {{table}}",
    "scalar function": (
        f"CREATE OR REPLACE FUNCTION {{scalar}}(ts TIMESTAMP) RETURNS STRING RETURN {SPELLED}"
    ),
    "table function": (
        "CREATE OR REPLACE FUNCTION {tabular}() RETURNS TABLE (id INT, value STRING) "
        f"RETURN SELECT id, {SPELLED} FROM {{table}}"
    ),
}
READS_ALL_THREE = (
    "SELECT v.id, concat(v.value, {scalar}(t.ts), f.value) AS value "
    "FROM {view} v JOIN {table} t ON v.id = t.id JOIN {tabular}() f ON f.id = v.id"
)


def test_views_and_functions_defined_again_under_other_settings_refresh(model, spark):
    """Spark analyses a view or SQL function (scalar or table) under the settings captured
    when it was defined, not the session's, and the model's plan shows none of them. Each
    one defined again with the same text under another time zone, or one under another
    result-changing conf, refreshes the model; all defined again under the same settings,
    it skips. Main equals the snapshot after every run, also when the JVM's time zone
    changes after definitions in a session that set none (Spark captures the zone in
    effect)."""
    names = {
        "table": f"{SCHEMA}.spelled_{next(_names)}",
        **{role: f"{SCHEMA}.{role}_{next(_names)}" for role in ("view", "scalar", "tabular")},
    }
    spark.sql(
        f"CREATE TABLE {names['table']} USING delta AS "
        f"SELECT CAST(id AS INT) AS id, timestamp_seconds(id * 3600) AS ts FROM range(5)"
    )
    select = READS_ALL_THREE.format(**names)
    session_zone, jvm = spark.conf.get("spark.sql.session.timeZone"), spark._jvm
    jvm_zone = jvm.java.util.TimeZone.getDefault()
    legacy = "spark.sql.legacy.castComplexTypesToString.enabled"

    def defined_under(kinds, zone: str | None, legacy_cast: str | None = None) -> None:
        for conf, value in (("spark.sql.session.timeZone", zone), (legacy, legacy_cast)):
            spark.conf.unset(conf) if value is None else spark.conf.set(conf, value)
        try:
            for kind in kinds:
                spark.sql(DEFINITIONS[kind].format(**names))
        finally:
            spark.conf.set("spark.sql.session.timeZone", session_zone)
            spark.conf.unset(legacy)

    def skipped(step: str) -> bool:
        result = model.refresh(select)
        assert model.main() == sorted(tuple(r) for r in spark.sql(select).collect()), step
        return bool(result.skipped)

    try:
        defined_under(DEFINITIONS, "UTC")
        assert not skipped("first")
        defined_under(DEFINITIONS, "UTC")
        assert skipped("all defined again under the same settings")
        for kind in DEFINITIONS:
            defined_under([kind], "Asia/Kathmandu")
            assert not skipped(f"the {kind} defined again under another time zone")
        defined_under(["table function"], "Asia/Kathmandu", legacy_cast="true")
        assert not skipped("the table function defined again casting arrays as Spark 2 did")
        defined_under(DEFINITIONS, None)
        jvm.java.util.TimeZone.setDefault(jvm.java.util.TimeZone.getTimeZone("America/Lima"))
        skipped("all defined in a session that sets no time zone, then the JVM's changed")
    finally:
        jvm.java.util.TimeZone.setDefault(jvm_zone)


# Where text cast to a date or timestamp can stand in a model: {text} is a SQL expression
# of known text, {name} a view or function the step defines first
CLOCK_CONTEXTS = {
    "cast": ("", "SELECT id, CAST({text} AS DATE) AS d FROM {table}"),
    "compared": ("", "SELECT id, value FROM {table} WHERE timestamp_seconds(id) < {text}"),
    "to_date": ("", "SELECT id, to_date({text}) AS d FROM {table}"),
    "to_timestamp_ntz": ("", "SELECT id, to_timestamp_ntz({text}) AS t FROM {table}"),
    "date_add": ("", "SELECT id, date_add({text}, id) AS d FROM {table}"),
    "view": (
        "CREATE OR REPLACE VIEW {name} AS SELECT id, CAST({text} AS TIMESTAMP) AS t FROM {table}",
        "SELECT id, t FROM {name}",
    ),
    "function": (
        "CREATE OR REPLACE FUNCTION {name}(x INT) RETURNS DATE RETURN date_add({text}, x)",
        "SELECT id, {name}(id) AS d FROM {table}",
    ),
}


def clock_texts(draw: random.Random) -> list[str]:
    """Text Spark reads as the clock: a word of 'now', 'today', 'yesterday', 'tomorrow' in
    drawn case, after characters Java's trim removes, before spaces or a zone."""
    texts = []
    for word in ("now", "today", "yesterday", "tomorrow"):
        cased = "".join(c.upper() if draw.random() < 0.5 else c for c in word)
        before = "".join(draw.choice(" \t\n\x01") for _ in range(draw.randrange(3)))
        after = draw.choice(["", " ", "\t"] + ([] if word == "now" else [" UTC", " +05:30"]))
        texts.append(before + cased + after)
    return texts


def as_sql(text: str, draw: random.Random) -> str:
    """Known text as a SQL expression: a literal, or two concatenated."""
    cut = draw.randrange(len(text) + 1)
    if draw.random() < 0.5:
        return literal(text)
    return f"concat({literal(text[:cut])}, {literal(text[cut:])})"


def test_text_read_as_the_clock_always_refreshes(spark, sources):
    """Spark reads known text ('today', ' Tomorrow UTC', 'yester' || 'day') cast to a date or
    timestamp as the clock's day or moment, though it calls the cast deterministic and the
    plan shows only the text: such a model must refresh, in every context a cast can take
    (implicit, a function, a view, a SQL function's body); dates and 'epoch' still skip.
    Spellings drawn by REFRESHABLE_TEST_SEED; each is checked to be the clock's to Spark."""
    seed = int(os.environ.get("REFRESHABLE_TEST_SEED", "20261207"))
    draw = random.Random(seed)
    for context, (define, select) in CLOCK_CONTEXTS.items():
        texts = [(t, True) for t in clock_texts(draw)]
        texts += [(t, False) for t in ("2024-02-29", " Epoch", "2024-02-29 10:00:00 UTC")]
        for text, clock in texts:
            spelled = as_sql(text, draw)
            if clock:  # Spark reads it as the clock: within two days of now ('yesterday' is
                # its midnight, up to 48 hours before now; 'tomorrow' up to 24 hours after)
                seconds = f"abs(unix_timestamp(CAST({spelled} AS TIMESTAMP)) - unix_timestamp())"
                assert spark.sql(f"SELECT {seconds}").collect()[0][0] <= 48 * 3600, text
            name = f"{SCHEMA}.clock_{next(_names)}"
            fields = {"text": spelled, "table": sources.table, "name": name}
            if define:
                spark.sql(define.format(**fields))
            sql = select.format(**fields)
            found = read_inputs(spark, spark.sql(sql), sql, {})
            what = f"{context}: {text!r} (REFRESHABLE_TEST_SEED={seed})"
            if clock:
                assert isinstance(found, str) and "reads the clock" in found, what
            else:
                assert isinstance(found, Inputs), (what, found)
