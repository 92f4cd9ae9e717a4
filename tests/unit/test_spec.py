"""RefreshConfig: every key's default and check; errors name the key and what is accepted."""

import os
import random
import re

import pytest

from dbt.adapters.spark_refreshable.engine.errors import ConfigError
from dbt.adapters.spark_refreshable.engine.naming import fold_name
from dbt.adapters.spark_refreshable.engine.spec import DEFAULTS, RefreshConfig, not_null_name
from dbt.adapters.spark_refreshable.engine.sql import ident

SEED = int(os.environ.get("REFRESHABLE_TEST_SEED", "20261203"))


def test_defaults_apply_when_only_unique_key_is_given():
    config = RefreshConfig.from_model_config({"unique_key": "id"})
    assert config.unique_key == ("id",)
    for key, default in DEFAULTS.items():
        assert getattr(config, key) == default
    assert config.heartbeat_interval == config.lock_timeout / 3


def test_composite_key_and_explicit_values():
    config = RefreshConfig.from_model_config(
        {
            "unique_key": ["order_id", " line "],
            "vnodes": "64",
            "merge_chunk_rows": 10,
            "lock_timeout": 30,
            "max_delete_fraction": 0.2,
            "allow_empty_snapshot": "true",
            "on_schema_change": "sync_all_columns",
            "change_data_feed": True,
            "merge_time_budget": 60,
        }
    )
    assert config.unique_key == ("order_id", "line")
    assert (config.vnodes, config.merge_chunk_rows, config.lock_timeout) == (64, 10, 30.0)
    assert config.max_delete_fraction == 0.2 and config.allow_empty_snapshot is True
    assert config.to_dict()["unique_key"] == ["order_id", "line"]


@pytest.mark.parametrize(
    "written, name",
    [("` id `", " id "), ("`a``b`", "a`b"), ("  `x y`  ", "x y"), ("`", "`"), ("`id", "`id")],
)
def test_a_column_name_in_backticks_is_read_as_spark_sql_quotes_it(written, name):
    assert RefreshConfig.from_model_config({"unique_key": written}).unique_key == (name,)
    partitioned = RefreshConfig.from_model_config({"unique_key": "k", "partition_by": [written]})
    assert partitioned.partition_by == (name,)


@pytest.mark.parametrize("missing", [None, "", []])
def test_missing_unique_key_says_how_to_set_it(missing):
    with pytest.raises(ConfigError, match="needs `unique_key`.*unique_key='id'"):
        RefreshConfig.from_model_config({"unique_key": missing})


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("on_schema_change", "explode", "ignore, fail, append_new_columns, sync_all_columns"),
        ("vnodes", 0, "vnodes must be from 1 to 32768"),
        ("vnodes", 1.5, "vnodes must be a whole number"),
        ("vnodes", "many", "vnodes must be a whole number"),
        ("merge_chunk_rows", -1, "merge_chunk_rows must be at least 1"),
        ("lock_timeout", "soon", "lock_timeout must be a number"),
        # durations past ten years (or infinite, as YAML's .inf) overflow the clock's time
        # functions: refused, where the second run (refresh_every) failed with OverflowError
        ("lock_timeout", float("inf"), r"from 1 to 315360000 seconds \(ten years\)"),
        ("lock_timeout", 1e300, "lock_timeout must be from 1 to 315360000"),
        ("checkpoint_interval", float("inf"), "checkpoint_interval must be from 0 to"),
        ("merge_time_budget", float("inf"), "merge_time_budget must be from 1 to"),
        ("refresh_every", float("inf"), "refresh_every must be from 1 to"),
        ("refresh_every", "99999999999999999999 w", "refresh_every must be from 1 to"),
        ("refresh_every", "3651 days", "refresh_every must be from 1 to"),
        ("max_delete_fraction", 1.5, "max_delete_fraction must be from 0.0 to 1.0"),
        ("allow_empty_snapshot", "yes", "allow_empty_snapshot must be true or false"),
        ("change_data_feed", 1, "change_data_feed must be true or false"),
        ("unique_key", ["id", "ID"], "lists a column twice"),
        ("unique_key", [1], "column name or a list"),
        ("unique_key", "__refreshable_vnode", "reserved prefix"),
    ],
)
def test_bad_values_are_named_with_what_is_accepted(key, value, message):
    config = {"unique_key": "id", key: value}
    with pytest.raises(ConfigError, match=message):
        RefreshConfig.from_model_config(config)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("1 hour", 3600),
        ("30 minutes", 1800),
        ("2h", 7200),
        ("1 day", 86400),
        ("3650 days", 315360000),
        ("90", 90),
        (90, 90),
        ("1.5 h", 5400),
        ("10 MIN", 600),
        (None, None),
    ],
)
def test_refresh_every_reads_durations(value, seconds):
    config = RefreshConfig.from_model_config({"unique_key": "id", "refresh_every": value})
    assert config.refresh_every == seconds


@pytest.mark.parametrize("value", ["soon", "1 month", "-1 h", True, [1], "0 s"])
def test_refresh_every_refuses_what_is_not_a_duration(value):
    with pytest.raises(ConfigError, match="refresh_every must be"):
        RefreshConfig.from_model_config({"unique_key": "id", "refresh_every": value})


def test_main_layout_and_properties_are_read_as_dbt_users_write_them():
    config = RefreshConfig.from_model_config(
        {
            "unique_key": "id",
            "partition_by": "region",
            "tblproperties": {"delta.logRetentionDuration": "interval 60 days", "n": 3, "b": True},
        }
    )
    assert config.partition_by == ("region",) and config.cluster_by == ()
    assert config.tblproperties == {
        "delta.logRetentionDuration": "interval 60 days",
        "n": "3",
        "b": "true",
    }
    assert config.to_dict()["partition_by"] == ["region"]
    for name in ("liquid_clustered_by", "cluster_by"):
        clustered = RefreshConfig.from_model_config({"unique_key": "id", name: ["a", " b "]})
        assert clustered.cluster_by == ("a", "b") and clustered.partition_by == ()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"partition_by": "a", "liquid_clustered_by": "b"}, "either partitioned or clustered"),
        ({"liquid_clustered_by": "a", "cluster_by": "b"}, "two names of one setting"),
        ({"partition_by": ["a", "A"]}, "partition_by lists a column twice"),
        ({"partition_by": 3}, "partition_by must be a column name"),
        ({"cluster_by": [""]}, "cluster_by must be a column name"),
        ({"tblproperties": "delta.x=1"}, "tblproperties must be a mapping"),
        ({"tblproperties": {"k": [1]}}, "is not a property name with a text"),
        ({"tblproperties": {"delta.columnMapping.mode": "none"}}, "column mapping by name"),
        ({"tblproperties": {"delta.enableChangeDataFeed": "true"}}, "change_data_feed: true"),
        ({"tblproperties": {"dbt_refreshable.bookkeeping": "true"}}, "its own marker"),
        ({"tblproperties": {"delta.appendOnly": True}}, "updates and deletes main's rows"),
        ({"location_root": " / "}, "location_root must be a folder"),
        ({"location_root": ["/lake"]}, "location_root must be a folder"),
    ],
)
def test_bad_layout_configs_say_what_to_change(config, message):
    with pytest.raises(ConfigError, match=message):
        RefreshConfig.from_model_config({"unique_key": "id", **config})


def test_an_enforced_contracts_constraints_become_check_constraints():
    columns = {
        "id": {"name": "id", "constraints": [{"type": "not_null"}, {"type": "primary_key"}]},
        "order date": {"name": "order date", "constraints": [{"type": "not_null"}]},
        "amount": {
            "name": "amount",
            "constraints": [{"type": "check", "expression": "amount >= 0"}],
        },
    }
    constraints = [
        {"type": "check", "name": "Small", "expression": "amount < 1000", "columns": ["amount"]},
        {"type": "not_null", "columns": ["amount", "id"]},
        {"type": "unique", "columns": ["id"]},
    ]
    config = RefreshConfig.from_model_config(
        {"unique_key": "id"}, {"columns": columns, "constraints": constraints}
    )
    unnamed = [name for name, e in config.constraints if e == "amount >= 0"]
    assert unnamed and unnamed[0].startswith("check_")
    assert dict(config.constraints) == {
        "not_null_id": "`id` IS NOT NULL",
        not_null_name("order date"): "`order date` IS NOT NULL",
        "not_null_amount": "`amount` IS NOT NULL",
        unnamed[0]: "amount >= 0",
        "small": "amount < 1000",
    }
    # what the job receives is read back as it was sent
    again = RefreshConfig.from_model_config(config.to_dict())
    assert again.constraints == config.constraints
    assert RefreshConfig.from_model_config({"unique_key": "id"}).constraints == ()


def test_unnamed_not_null_constraints_of_any_column_names_stay_apart():
    """Column names with spaces, punctuation, emoji and letters of other scripts, which the
    plain `not_null_<column>` spelling would give one name: every column keeps a constraint
    of its own, named in letters, digits and `_` (REFRESHABLE_TEST_SEED draws the names)."""
    rng = random.Random(SEED)
    pieces = ["a", "b", "A", "_", " ", "-", ".", "`", "é", "ß", "ſ", "ı", "🚀", "💥", "日", "1"]
    names: dict[str, str] = {}
    while len(names) < 60:
        name = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 4)))
        names.setdefault(fold_name(name), name)
    columns = {n: {"name": n, "constraints": [{"type": "not_null"}]} for n in names.values()}
    config = RefreshConfig.from_model_config(
        {"unique_key": "id"}, {"columns": columns, "constraints": []}
    )
    assert sorted(e for _, e in config.constraints) == sorted(
        f"{ident(n)} IS NOT NULL" for n in names.values()
    ), f"seed {SEED}: {names}"
    assert all(re.fullmatch(r"not_null_[0-9a-z_]+", n) for n, _ in config.constraints)
    assert not_null_name("order_date") == "not_null_order_date"  # names of earlier releases
    assert not_null_name("Order_Date") == "not_null_order_date"


@pytest.mark.parametrize(
    "columns, constraints, message",
    [
        ({"a": {"constraints": [{"type": "check"}]}}, [], "has no expression"),
        ({}, [{"type": "not_null"}], "needs `columns"),
        (
            {},
            [
                {"type": "check", "name": "c", "expression": "a > 0"},
                {"type": "check", "name": "C", "expression": "a > 1"},
            ],
            "two different constraints",
        ),
    ],
)
def test_bad_contract_constraints_say_what_to_change(columns, constraints, message):
    with pytest.raises(ConfigError, match=message):
        RefreshConfig.from_model_config(
            {"unique_key": "id"}, {"columns": columns, "constraints": constraints}
        )
