"""A refreshable model's config: every key, its default, its check. The one place config
is validated; the materialization calls it before any SQL runs."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any

from dbt.adapters.spark_refreshable.engine.errors import ConfigError
from dbt.adapters.spark_refreshable.engine.naming import RESERVED_PREFIX

ON_SCHEMA_CHANGE = ("ignore", "fail", "append_new_columns", "sync_all_columns")

DEFAULTS: dict[str, Any] = {
    "vnodes": 256,
    "merge_chunk_rows": 1_000_000,
    "lock_timeout": 300,
    "max_delete_fraction": None,
    "allow_empty_snapshot": False,
    "on_schema_change": "ignore",
    "change_data_feed": False,
    "merge_time_budget": None,
    "refresh_every": None,
    "skip_unchanged_inputs": True,
}
# refresh_every's units, in seconds
DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
DURATION = re.compile(
    r"^\s*(\d+(?:\.\d+)?)\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?)?"
    r"\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class RefreshConfig:
    unique_key: tuple[str, ...]
    vnodes: int = DEFAULTS["vnodes"]
    merge_chunk_rows: int = DEFAULTS["merge_chunk_rows"]
    lock_timeout: float = DEFAULTS["lock_timeout"]
    max_delete_fraction: float | None = DEFAULTS["max_delete_fraction"]
    allow_empty_snapshot: bool = DEFAULTS["allow_empty_snapshot"]
    on_schema_change: str = DEFAULTS["on_schema_change"]
    change_data_feed: bool = DEFAULTS["change_data_feed"]
    merge_time_budget: float | None = DEFAULTS["merge_time_budget"]
    refresh_every: float | None = DEFAULTS["refresh_every"]  # seconds
    skip_unchanged_inputs: bool = DEFAULTS["skip_unchanged_inputs"]

    @property
    def heartbeat_interval(self) -> float:
        """Renew the lease three times per lock_timeout."""
        return self.lock_timeout / 3

    @classmethod
    def from_model_config(cls, config: dict[str, Any]) -> RefreshConfig:
        """Validate a model's config; raise :class:`ConfigError` naming the key, the bad
        value and what is accepted."""
        values = {k: config.get(k) for k in (*DEFAULTS, "unique_key")}
        values = {k: (DEFAULTS.get(k) if v is None else v) for k, v in values.items()}
        return cls(
            unique_key=_unique_key(values["unique_key"]),
            vnodes=_integer("vnodes", values["vnodes"], 1, 32768),
            merge_chunk_rows=_integer("merge_chunk_rows", values["merge_chunk_rows"], 1, None),
            lock_timeout=_number("lock_timeout", values["lock_timeout"], 1, None),
            max_delete_fraction=_optional_fraction(values["max_delete_fraction"]),
            allow_empty_snapshot=_boolean("allow_empty_snapshot", values["allow_empty_snapshot"]),
            on_schema_change=_choice("on_schema_change", values["on_schema_change"]),
            change_data_feed=_boolean("change_data_feed", values["change_data_feed"]),
            merge_time_budget=_optional_number("merge_time_budget", values["merge_time_budget"]),
            refresh_every=_optional_duration("refresh_every", values["refresh_every"]),
            skip_unchanged_inputs=_boolean(
                "skip_unchanged_inputs", values["skip_unchanged_inputs"]
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["unique_key"] = list(self.unique_key)
        return values


def _unique_key(value: Any) -> tuple[str, ...]:
    if value is None or value == "" or value == []:
        raise ConfigError(
            "A refreshable model needs `unique_key`: the column (or list of columns) that "
            "identifies a row, e.g. config(materialized='refreshable', unique_key='id') or "
            "unique_key=['order_id', 'line_number']."
        )
    keys = [value] if isinstance(value, str) else value
    if not isinstance(keys, list | tuple) or not all(
        isinstance(k, str) and k.strip() for k in keys
    ):
        raise ConfigError(f"unique_key must be a column name or a list of them, got {value!r}.")
    keys = [k.strip() for k in keys]
    if len(set(k.lower() for k in keys)) != len(keys):
        raise ConfigError(f"unique_key lists a column twice: {keys}.")
    reserved = [k for k in keys if k.lower().startswith(RESERVED_PREFIX)]
    if reserved:
        raise ConfigError(
            f"unique_key {reserved} uses the engine's reserved prefix {RESERVED_PREFIX}."
        )
    return tuple(keys)


def _integer(name: str, value: Any, low: int, high: int | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ConfigError(f"{name} must be a whole number, got {value!r}.")
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(f"{name} must be a whole number, got {value!r}.") from None
    if number < low or (high is not None and number > high):
        bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ConfigError(f"{name} must be {bounds}, got {number}.")
    return number


def _number(name: str, value: Any, low: float, high: float | None) -> float:
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be a number, got {value!r}.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, got {value!r}.") from None
    if math.isnan(number) or number < low or (high is not None and number > high):
        bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ConfigError(f"{name} must be {bounds}, got {value!r}.")
    return number


def _optional_number(name: str, value: Any) -> float | None:
    return None if value is None else _number(name, value, 1, None)


def _optional_duration(name: str, value: Any) -> float | None:
    """Seconds, from a number of seconds or a text like '1 hour', '30 minutes', '2h'."""
    if value is None or isinstance(value, int | float) and not isinstance(value, bool):
        return _optional_number(name, value)
    found = DURATION.match(value) if isinstance(value, str) else None
    if found is None:
        raise ConfigError(
            f"{name} must be a duration such as '1 hour', '30 minutes', '2h', '1 day' or a "
            f"number of seconds; got {value!r}."
        )
    return _number(name, float(found[1]) * DURATION_UNITS[(found[2] or "s")[0].lower()], 1, None)


def _optional_fraction(value: Any) -> float | None:
    if value is None:
        return None
    return _number("max_delete_fraction", value, 0.0, 1.0)


def _boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ConfigError(f"{name} must be true or false, got {value!r}.")


def _choice(name: str, value: Any) -> str:
    if value not in ON_SCHEMA_CHANGE:
        accepted = ", ".join(ON_SCHEMA_CHANGE)
        raise ConfigError(f"{name} must be one of {accepted}; got {value!r}.")
    return value
