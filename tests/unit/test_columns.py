"""The snapshot's key columns resolved from unique_key (``engine/columns.py``), without Spark."""

from __future__ import annotations

import pytest
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from dbt.adapters.spark_refreshable.engine.columns import resolve_keys
from dbt.adapters.spark_refreshable.engine.errors import ConfigError

SCHEMA = StructType(
    [
        StructField(n, t)
        for n, t in [("Order_Id", IntegerType()), ("line", IntegerType()), ("note", StringType())]
    ]
)


def test_keys_are_spelled_as_the_snapshot_spells_them():
    assert resolve_keys(SCHEMA, ("order_id", "LINE")) == ("Order_Id", "line")


@pytest.mark.parametrize("written", ["order_id,line", "order_id, LINE", " Order_Id ,line"])
def test_several_columns_written_as_one_name_are_shown_as_a_list(written):
    with pytest.raises(ConfigError, match=r"is one name: several columns are a list, \["):
        resolve_keys(SCHEMA, (written,))


@pytest.mark.parametrize("written", ["order_id,nope", "orderid"])
def test_a_missing_key_without_a_list_in_it_gets_no_such_hint(written):
    with pytest.raises(ConfigError, match="are not in the model's result") as raised:
        resolve_keys(SCHEMA, (written,))
    assert "is one name" not in str(raised.value)
