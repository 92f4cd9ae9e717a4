"""The naming scheme: main in the model's schema, the bookkeeping tables in theirs."""

from __future__ import annotations

from dbt.adapters.spark_refreshable.engine.naming import ModelTables


def test_bookkeeping_defaults_to_a_schema_of_its_own():
    tables = ModelTables("shop", "orders")
    assert tables.main == "`shop`.`orders`"
    assert tables.bookkeeping == "shop_refreshable"
    assert tables.staging == "`shop_refreshable`.`orders__staging`"
    assert tables.state == "`shop_refreshable`.`orders__state`"
    assert tables.role_name("main") == tables.main
    assert tables.role_display("progress") == "shop_refreshable.orders__progress"
    assert not tables.bookkeeping_beside_main


def test_a_configured_schema_and_the_layout_beside_main():
    tables = ModelTables("shop", "orders", "ops")
    assert tables.changes == "`ops`.`orders__changes`"
    beside = tables.beside_main()
    assert beside.state == "`shop`.`orders__state`" and beside.main == tables.main
    assert beside.bookkeeping_beside_main
    assert ModelTables("Shop", "orders", "shop").bookkeeping_beside_main


def test_bookkeeping_names_fit_a_file_name_whatever_main_is_called():
    fits = ModelTables("shop", "o" * 245)
    assert fits.bookkeeping_stem == fits.identifier, "kept while __progress fits 255 bytes"
    long = ModelTables("shop", "o" * 250)
    twin = ModelTables("shop", "o" * 249 + "p")  # the same start
    for tables in (long, twin):
        bookkeeping = [n for role, n in tables.identifiers().items() if role != "main"]
        assert all(len(name.encode()) <= 255 for name in bookkeeping), bookkeeping
    assert long.bookkeeping_stem != twin.bookkeeping_stem
    assert long.main == f"`shop`.`{'o' * 250}`", "main keeps its name"
    shouted = ModelTables("shop", "O" * 250)
    assert shouted.bookkeeping_stem.lower() == long.bookkeeping_stem, "one table, as the catalog"
