"""The chunk's MERGE statement: which rows of main its join may match."""

from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from dbt.adapters.spark_refreshable.engine.merge import Cycle, merge_sql
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.progress import plan_chunks
from dbt.adapters.spark_refreshable.engine.sql import vnode_expression
from dbt.adapters.spark_refreshable.engine.tables import SchemaPlan

SCHEMA = StructType([StructField("id", IntegerType()), StructField("value", StringType())])
CYCLE = Cycle(ModelTables("analytics", "orders"), SchemaPlan(SCHEMA, ("id",)), vnodes=16)
MAIN_VNODE = vnode_expression(("id",), 16, "t")


def on_clause(statement: str) -> str:
    return statement.split(" ON ", 1)[1].split("WHEN", 1)[0].strip()


def test_the_only_chunk_of_a_cycle_joins_on_the_key_alone():
    [chunk] = plan_chunks({v: 10 for v in range(16)}, 16, 1_000)
    assert chunk.covers_all(16)
    assert on_clause(merge_sql(CYCLE, chunk, "source")) == "t.`id` = c.`id`"


def test_each_of_several_chunks_matches_only_rows_of_its_vnodes():
    chunks = plan_chunks({v: 10 for v in range(16)}, 16, 40)
    assert len(chunks) == 4
    for chunk in chunks:
        assert not chunk.covers_all(16)
        on = on_clause(merge_sql(CYCLE, chunk, "source"))
        assert on == f"t.`id` = c.`id` AND {MAIN_VNODE} {chunk.vnode_range}", on
