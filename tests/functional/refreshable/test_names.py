"""Issue 10: names and text the way Spark and users spell them; column names the engine's
own SQL uses; names that Spark's resolver takes for one though they differ in more than
ASCII case, found by asking the JVM."""

from __future__ import annotations

import itertools
import os
import random
import re
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt

from dbt.adapters.spark_refreshable.engine.errors import ConfigError
from dbt.adapters.spark_refreshable.engine.naming import fold_name
from tests.functional.refreshable.engine_harness import EngineModel

SEED = int(os.environ.get("REFRESHABLE_TEST_SEED", "20261202"))
CODE_POINTS = 0x110000

EMOJI_SQL = """
{{ config(materialized='refreshable', unique_key='id', vnodes=8) }}
select 1 as id, 'party 😀' as `mood_🎉`
"""


class TestItem10EmojiSqlModel:
    @pytest.fixture(scope="class")
    def models(self):
        return {"emoji.sql": EMOJI_SQL}

    def test_item10_emoji_in_sql_model_reaches_main_exactly(self, project):
        run_dbt(["run"])
        main = f"{project.test_schema}.emoji"
        got = project.run_sql(f"select id, `mood_🎉` from {main}", fetch="all")
        assert [tuple(r) for r in got] == [(1, "party 😀")]


# Names the engine's generated SQL gives its own columns and subqueries (`... AS n`,
# `(...) s`), read from its source so that a name added there is tried here too, and
# names it used before: beside the keys until they took the reserved prefix, and in
# staging's own summary query until the diff's job summed staging.
ENGINE = Path(__file__).parents[3] / "adapter_plugin/dbt/adapters/spark_refreshable/engine"
SQL_WORDS = {"array", "bigint", "decimal", "double", "of", "select", "string"}
FORMER_ALIASES = ("h", "copies", "present", "n", "vnode")


def engine_aliases() -> list[str]:
    found = set(FORMER_ALIASES)
    for source in ENGINE.glob("*.py"):
        text = source.read_text()
        found |= set(re.findall(r"\bAS\s+([A-Za-z_]\w*)\b", text))
        found |= set(re.findall(r"\)\s+([a-z])\b", text))
    return sorted(n for n in found if n.lower() not in SQL_WORDS)


def test_columns_named_like_the_engines_own_aliases_refresh_exactly(spark):
    names = engine_aliases()
    assert {"s", "m", "d", *FORMER_ALIASES} <= set(names)
    # one model: half the names key columns (one composite key), the others value columns,
    # in upper case; the former aliases are keys, where they broke the diff
    keys = [n for i, n in enumerate(names) if i % 2 == 0 or n in FORMER_ALIASES]
    values = [n.upper() for n in names if n not in keys]
    model = EngineModel(
        spark,
        ", ".join([*(f"`{n}` INT" for n in keys), *(f"`{n}` STRING" for n in values)]),
        unique_key=keys,
    )

    def row(k: int, tag: str) -> tuple:
        return (
            *(k * 100 + i for i in range(len(keys))),
            *(f"{tag}{k}.{i}" for i in range(len(values))),
        )

    days = [
        [row(k, "a") for k in range(6)],
        [row(k, "b" if k % 2 else "a") for k in range(1, 8)],  # 0 deleted, 6-7 inserted
        [row(k, "c" if k % 3 else "b") for k in range(3, 10)],
    ]
    for day in days:
        model.refresh(day)
        assert model.main() == sorted(day)


def java_char(function: str, code_point: str) -> str:
    """SQL calling ``java.lang.Character.<function>(int)`` on ``code_point`` (an INT)."""
    return f"reflect('java.lang.Character', '{function}', {code_point})"


@pytest.fixture(scope="module")
def java_folds(spark) -> dict[int, int]:
    """Every code point the JVM defines whose fold is another code point, as Spark's
    resolver folds it (Java's ``String.equalsIgnoreCase``: ``toLowerCase(toUpperCase(c))``),
    computed by the JVM in one Spark job for the module."""
    cp = "CAST(id AS INT)"
    upper = f"CAST({java_char('toUpperCase', cp)} AS INT)"
    rows = spark.sql(
        f"SELECT id, CAST({java_char('toLowerCase', upper)} AS INT) AS folded "
        f"FROM range({CODE_POINTS}) WHERE {java_char('isDefined', cp)} = 'true'"
    ).where("folded <> id")
    return {int(r["id"]): int(r["folded"]) for r in rows.collect()}


@pytest.fixture(scope="module")
def spark_only_pairs(java_folds) -> list[tuple[str, str]]:
    """Pairs of letters that Spark's resolver takes for one and Python's ``lower()`` does
    not (``ı`` and ``i``, ``ſ`` and ``s``, ``ϑ`` and ``θ``, ...), from :func:`java_folds`."""
    classes: dict[int, set[int]] = {}
    for code_point, folded in java_folds.items():
        classes.setdefault(folded, {folded}).add(code_point)
    return sorted(
        (chr(a), chr(b))
        for members in classes.values()
        for a, b in itertools.combinations(sorted(members), 2)
        if chr(a).lower() != chr(b).lower()
    )


def test_names_fold_as_sparks_resolver_compares_them(spark, java_folds):
    """fold_name agrees with the JVM on every code point either of them folds (Python's
    case tables may know letters the JVM's Unicode version does not: those are left out)."""
    folds = java_folds
    cased = {
        cp for cp in range(CODE_POINTS) if chr(cp).upper() != chr(cp) or chr(cp).lower() != chr(cp)
    }
    unknown = cased - folds.keys()
    defined = spark.createDataFrame([(cp,) for cp in sorted(unknown)], "cp INT")
    known = {
        int(r["cp"]) for r in defined.where(f"{java_char('isDefined', 'cp')} = 'true'").collect()
    }
    checked = folds.keys() | known
    differing = [
        (hex(cp), chr(cp), fold_name(chr(cp)), chr(folds.get(cp, cp)))
        for cp in sorted(checked)
        if fold_name(chr(cp)) != chr(folds.get(cp, cp))
    ]
    assert len(folds) > 1000 and not differing, differing[:20]


def test_columns_that_spark_takes_for_one_are_refused_before_anything_is_written(
    spark, spark_only_pairs
):
    """Two columns (or struct fields) whose names Spark's resolver folds alike: refused by
    name, main untouched. (Python's lower() kept them apart, and the merge wrote one
    column's values into both.)"""
    rng = random.Random(SEED)
    pairs = spark_only_pairs
    assert ("i", "ı") in pairs and ("s", "ſ") in pairs, pairs
    model = EngineModel(spark, "id INT, v STRING", unique_key="id")
    model.refresh([(1, "a")])
    version = model.version()
    for a, b in rng.sample(pairs, 6):
        start, end = rng.choice(["", "c ", "Ü", "x_"]), rng.choice(["", " 🔑", "1"])
        first, second = f"{start}{a}{end}", f"{start}{b}{end}"
        nested = rng.random() < 0.5
        columns = (
            f"named_struct('{first}', 1, '{second}', 2) AS s"
            if nested
            else f"1 AS `{first}`, 2 AS `{second}`"
        )
        message = "is a struct with fields of one name" if nested else "more than one column"
        with pytest.raises(ConfigError, match=message) as refused:
            model.refresh(
                lambda c=columns: spark.sql(
                    f"SELECT CAST(id AS INT) AS id, 'b' AS v, {c} FROM range(1, 3) AS r(id)"
                )
            )
        assert first in str(refused.value) and second in str(refused.value), (SEED, a, b)
    assert model.version() == version and model.main() == [(1, "a")]


def test_columns_respelled_as_spark_folds_them_keep_their_values(spark, spark_only_pairs):
    """Day 2 spells the key and a value column with letters Spark folds alike (``ſ`` for
    ``s``): they are main's columns, as a change of ASCII case is, and main holds day 2's
    values under day 1's names. (Python's lower() took them for a new column and kept
    the old one's values.)"""
    rng = random.Random(SEED + 1)
    (key_a, key_b), (value_a, value_b) = rng.sample(spark_only_pairs, 2)
    day1 = [f"k{key_a}", f"{value_a} v"]
    day2 = [f"k{key_b}", f"{value_b} v"]
    model = EngineModel(spark, f"`{day1[0]}` INT, `{day1[1]}` STRING", unique_key=day1[0])
    model.refresh([(1, "a"), (2, "b")])
    model.ddl = f"`{day2[0]}` INT, `{day2[1]}` STRING"
    model.refresh([(2, "B"), (3, "c")], unique_key=day2[0], on_schema_change="fail")
    assert model.main() == [(2, "B"), (3, "c")], (SEED, day1, day2)
    assert spark.table(model.tables.main).columns == day1


def backticked_name(rng: random.Random) -> str:
    """A column name with one to three backticks among other characters, at its ends too."""
    letters = list(rng.choice(["a", "Ünï", "price €", "🔑 k", "x.y", "n-1"]))
    for _ in range(rng.randint(1, 3)):
        letters.insert(rng.randint(0, len(letters)), "`")
    return "".join(letters)


def test_a_name_with_a_backtick_is_refused_where_the_change_data_feed_breaks_on_it(spark):
    """Delta's MERGE cannot write the change data feed of a column whose name has a
    backtick: with change_data_feed (or a feed a user turned on), every run that updates or
    deletes a row failed with INVALID_ATTRIBUTE_NAME_SYNTAX. Refused by name before anything
    is written; a nested field so named is no problem, nor is the name without a feed."""
    from dbt.adapters.spark_refreshable.engine.sql import ident
    from dbt.adapters.spark_refreshable.engine.tables import table_exists

    rng = random.Random(SEED + 2)
    name, field = backticked_name(rng), backticked_name(rng)
    ddl = f"id INT, {ident(name)} STRING"
    fed = EngineModel(spark, ddl, unique_key="id", change_data_feed=True)
    with pytest.raises(ConfigError, match="backtick in their name, and change_data") as refused:
        fed.refresh([(1, "a")])
    assert repr(name) in str(refused.value), (SEED, name)
    assert not table_exists(spark, fed.tables.main)

    nested = EngineModel(
        spark, f"id INT, s STRUCT<{ident(field)}: STRING>", unique_key="id", change_data_feed=True
    )
    nested.refresh([(1, ("a",)), (2, ("b",))])
    nested.refresh([(1, ("A",)), (3, ("c",))])
    assert nested.main() == [(1, ("A",)), (3, ("c",))], (SEED, field)

    plain = EngineModel(spark, ddl, unique_key="id")
    plain.refresh([(1, "a"), (2, "b")])
    spark.sql(
        f"ALTER TABLE {plain.tables.main} SET TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')"
    )
    version = plain.version()
    with pytest.raises(ConfigError, match="set outside the model's config") as refused:
        plain.refresh([(1, "A")])
    assert repr(name) in str(refused.value) and plain.version() == version
    assert plain.main() == [(1, "a"), (2, "b")] and plain.state().phase == "IDLE"


# pieces of text that Spark's SQL text handling could take for something else
TEXT_PIECES = [
    "${x}",
    "${spark.app.name}",
    "${env:HOME}",
    "${system:java.version}",
    "$${x}",
    "$",
    "{",
    "}",
    "\\",
    "\\u0024",
    "\\n",
    "'",
    '"',
    "`",
    "\n",
    "\t",
    "--",
    "/*",
    "*/",
    ";",
    "😀",
    "é",
    " ",
]


def test_text_reads_back_from_spark_sql_exactly_as_written(spark):
    """The engine writes text (comments, table properties, locations, its state) into SQL as
    literals; each of many generated texts reads back from Spark unchanged, also `${...}`,
    which Spark would otherwise replace with a setting, an environment variable or nothing."""
    from dbt.adapters.spark_refreshable.engine.sql import literal

    rng = random.Random(SEED)
    texts = ["".join(rng.choices(TEXT_PIECES, k=rng.randrange(1, 8))) for _ in range(300)]
    row = spark.sql("SELECT " + ", ".join(literal(t) for t in [*TEXT_PIECES, *texts])).first()
    wrong = [(t, got) for t, got in zip([*TEXT_PIECES, *texts], row, strict=True) if got != t]
    assert not wrong, wrong[:10]
