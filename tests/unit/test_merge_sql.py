"""The chunk's MERGE statement: which rows of main its join may match, and the settings it
is written under."""

from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from dbt.adapters.spark_refreshable.engine.merge import (
    MERGE_DELETION_VECTORS_CONF,
    REWRITE_FILES_BELOW_BYTES,
    Cycle,
    chunk_write_settings,
    merge_sql,
)
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.progress import plan_chunks
from dbt.adapters.spark_refreshable.engine.sql import vnode_expression
from dbt.adapters.spark_refreshable.engine.tables import SchemaPlan
from dbt.adapters.spark_refreshable.engine.vnodes import VnodeLayout

SCHEMA = StructType([StructField("id", IntegerType()), StructField("value", StringType())])
TABLES, PLAN = ModelTables("analytics", "orders"), SchemaPlan(SCHEMA, ("id",))
HASHED = Cycle(TABLES, PLAN, VnodeLayout(16))
# 4 range vnodes: id < 10, 10 <= id < 20, 20 <= id < 30, 30 <= id
RANGES = Cycle(TABLES, PLAN, VnodeLayout(4, "id", "int", ("10", "20", "30")))


def on_clause(statement: str) -> str:
    return statement.split(" ON ", 1)[1].split("WHEN", 1)[0].strip()


def test_the_only_chunk_of_a_cycle_joins_on_the_key_alone():
    for cycle in (HASHED, RANGES):
        [chunk] = plan_chunks({v: 10 for v in range(16)}, cycle.layout.count, 1_000)
        assert on_clause(merge_sql(cycle, chunk, "source")) == "t.`id` = c.`id`"


def test_each_of_several_hash_chunks_matches_only_rows_of_its_vnodes():
    chunks = plan_chunks({v: 10 for v in range(16)}, 16, 40)
    assert len(chunks) == 4
    main_vnode = vnode_expression(("id",), 16, "t")
    for chunk in chunks:
        on = on_clause(merge_sql(HASHED, chunk, "source"))
        assert on == f"t.`id` = c.`id` AND {main_vnode} {chunk.vnode_range}", on


def test_a_range_chunk_matches_a_range_of_the_key_that_file_statistics_can_skip_on():
    chunks = plan_chunks({v: 10 for v in range(4)}, 4, 10)
    ons = [on_clause(merge_sql(RANGES, chunk, "source")) for chunk in chunks]
    assert ons == [
        "t.`id` = c.`id` AND t.`id` < 10",
        "t.`id` = c.`id` AND t.`id` >= 10 AND t.`id` < 20",
        "t.`id` = c.`id` AND t.`id` >= 20 AND t.`id` < 30",
        "t.`id` = c.`id` AND t.`id` >= 30",
    ]


def clauses(statement: str) -> list[str]:
    return [" ".join(c.split()[:3]) for c in statement.split("WHEN ")[1:]]


def test_a_chunk_of_inserts_alone_has_the_insert_clause_alone():
    [chunk] = plan_chunks({v: 10 for v in range(16)}, 16, 1_000)
    assert clauses(merge_sql(HASHED, chunk, "source", {"I": {0: 3}})) == ["NOT MATCHED AND"]
    for ops in ({"I": {0: 3}, "U": {1: 1}}, {"D": {0: 1}}, {"U": {2: 2}}):
        assert clauses(merge_sql(HASHED, chunk, "source", ops)) == [
            "MATCHED AND c.__refreshable_op",
            "MATCHED AND c.__refreshable_op",
            "NOT MATCHED AND",
        ], ops


def test_only_a_main_known_to_be_small_has_its_touched_files_rewritten():
    rewrite = {MERGE_DELETION_VECTORS_CONF: "false"}
    assert chunk_write_settings(0) == rewrite  # main created by this cycle
    assert chunk_write_settings(REWRITE_FILES_BELOW_BYTES - 1) == rewrite
    assert chunk_write_settings(REWRITE_FILES_BELOW_BYTES) == {}
    assert chunk_write_settings(None) == {}  # not known (a resumed cycle): Delta's default
