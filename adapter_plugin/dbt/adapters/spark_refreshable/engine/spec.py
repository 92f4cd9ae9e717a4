"""A refreshable model's config: every key, its default, its check. The one place config
is validated; the materialization calls it before any SQL runs."""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from dbt.adapters.spark_refreshable.engine.errors import ConfigError
from dbt.adapters.spark_refreshable.engine.naming import RESERVED_PREFIX, fold_name
from dbt.adapters.spark_refreshable.engine.sql import ident, unquoted

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
    "compact_after_files": 16,
    "checkpoint_interval": 30,
    "bookkeeping_schema": None,  # None: the model's schema with _refreshable appended
}
# main's layout and properties, as dbt-spark and dbt-databricks users write them (unset:
# none); liquid_clustered_by and cluster_by are two names of one setting
LAYOUT_KEYS = (
    "partition_by",
    "liquid_clustered_by",
    "cluster_by",
    "tblproperties",
    "location_root",
)
# table properties the engine sets on main itself: a model cannot override them
ENGINE_PROPERTIES = {
    "delta.columnmapping.mode": "column mapping by name is what lets main take any column name",
    "delta.minreaderversion": "the engine sets the protocol main needs",
    "delta.minwriterversion": "the engine sets the protocol main needs",
    "delta.enablechangedatafeed": "set the config change_data_feed: true instead",
}
# refresh_every's units, in seconds
DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
# the longest duration a config takes: ten years (a longer one, or infinity, cannot be added
# to a time the clock gives: Python's time functions overflow)
MAX_SECONDS = 10 * 365 * 86400
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
    compact_after_files: int = DEFAULTS["compact_after_files"]
    checkpoint_interval: float = DEFAULTS["checkpoint_interval"]  # seconds
    bookkeeping_schema: str | None = DEFAULTS["bookkeeping_schema"]
    partition_by: tuple[str, ...] = ()
    cluster_by: tuple[str, ...] = ()  # liquid clustering
    tblproperties: dict[str, str] = field(default_factory=dict)
    location_root: str | None = None  # main is then an external table at <root>/<identifier>
    # the CHECK constraints of an enforced contract, as (name, SQL expression)
    constraints: tuple[tuple[str, str], ...] = ()

    @property
    def heartbeat_interval(self) -> float:
        """Renew the lease three times per lock_timeout."""
        return self.lock_timeout / 3

    @classmethod
    def from_model_config(
        cls, config: dict[str, Any], contract: dict[str, Any] | None = None
    ) -> RefreshConfig:
        """Validate a model's config; raise :class:`ConfigError` naming the key, the bad
        value and what is accepted. ``contract``: an enforced contract's ``columns`` and
        ``constraints`` as dbt gives them; without it, the constraints of ``config`` (as
        :meth:`to_dict` wrote them)."""
        values = {k: config.get(k) for k in (*DEFAULTS, *LAYOUT_KEYS, "unique_key")}
        values = {k: (DEFAULTS.get(k) if v is None else v) for k, v in values.items()}
        return cls(
            unique_key=_unique_key(values["unique_key"]),
            vnodes=_integer("vnodes", values["vnodes"], 1, 32768),
            merge_chunk_rows=_integer("merge_chunk_rows", values["merge_chunk_rows"], 1, None),
            lock_timeout=_number("lock_timeout", values["lock_timeout"], 1, MAX_SECONDS),
            max_delete_fraction=_optional_fraction(values["max_delete_fraction"]),
            allow_empty_snapshot=_boolean("allow_empty_snapshot", values["allow_empty_snapshot"]),
            on_schema_change=_choice("on_schema_change", values["on_schema_change"]),
            change_data_feed=_boolean("change_data_feed", values["change_data_feed"]),
            merge_time_budget=_optional_seconds("merge_time_budget", values["merge_time_budget"]),
            refresh_every=_optional_duration("refresh_every", values["refresh_every"]),
            skip_unchanged_inputs=_boolean(
                "skip_unchanged_inputs", values["skip_unchanged_inputs"]
            ),
            compact_after_files=_integer(
                "compact_after_files", values["compact_after_files"], 0, None
            ),
            checkpoint_interval=_number(
                "checkpoint_interval", values["checkpoint_interval"], 0, MAX_SECONDS
            ),
            bookkeeping_schema=_optional_schema_name(
                "bookkeeping_schema", values["bookkeeping_schema"]
            ),
            **_layout(values),
            constraints=(
                contract_constraints(contract.get("columns"), contract.get("constraints"))
                if contract is not None
                else tuple((str(n).lower(), str(e)) for n, e in config.get("constraints") or ())
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["unique_key"] = list(self.unique_key)
        values["partition_by"] = list(self.partition_by)
        values["cluster_by"] = list(self.cluster_by)
        values["constraints"] = [list(c) for c in self.constraints]
        return values


def contract_constraints(columns: Any, constraints: Any) -> tuple[tuple[str, str], ...]:
    """An enforced contract's constraints as Delta CHECK constraints (name, expression):
    ``check`` as written, ``not_null`` as ``<column> IS NOT NULL`` (Delta cannot make an
    existing column NOT NULL). Other types (unique, primary_key, foreign_key, custom) are
    not enforced, as in dbt-spark. Unnamed ones are named after what they check."""
    found: list[tuple[str | None, str]] = []
    for column, spec in (columns or {}).items():
        for constraint in (spec or {}).get("constraints") or ():
            found += _as_checks(constraint, [spec.get("name") or column])
    for constraint in constraints or ():
        found += _as_checks(constraint, constraint.get("columns") or [])
    named: dict[str, str] = {}
    for name, expression in found:
        name = name or f"check_{hashlib.md5(expression.encode()).hexdigest()[:12]}"
        if named.get(name.lower(), expression) != expression:
            raise ConfigError(
                f"The contract names two different constraints {name!r}: "
                f"({named[name.lower()]}) and ({expression}). Give them different names."
            )
        named[name.lower()] = expression
    return tuple(sorted(named.items()))


def _as_checks(constraint: dict[str, Any], columns: list[str]) -> list[tuple[str | None, str]]:
    kind = str(constraint.get("type", "")).lower().rsplit(".", 1)[-1]
    name = constraint.get("name") or None
    if kind == "check":
        expression = (constraint.get("expression") or "").strip()
        if not expression:
            raise ConfigError(
                f"A check constraint of the contract{f' ({name})' if name else ''} has no "
                f'expression: give it one, e.g. `expression: "amount >= 0"`.'
            )
        return [(name, expression)]
    if kind == "not_null":
        if not columns:
            raise ConfigError("A model-level not_null constraint needs `columns: [...]`.")
        return [
            (
                (name if len(columns) == 1 else None) or not_null_name(column),
                f"{ident(column)} IS NOT NULL",
            )
            for column in columns
        ]
    return []


def not_null_name(column: str) -> str:
    """The name of an unnamed ``not_null`` constraint: ``not_null_<column>``, and where the
    column's name has characters other than letters a-z, digits and ``_`` (spaces, emoji),
    those as ``_`` and a hash of the name after it, so that ``a b`` and ``a_b`` stay apart."""
    spelled = re.sub(r"[^0-9a-z_]", "_", column.lower())
    if spelled == column.lower():
        return f"not_null_{spelled}"
    return f"not_null_{spelled}_{hashlib.md5(fold_name(column).encode()).hexdigest()[:8]}"


def _unique_key(value: Any) -> tuple[str, ...]:
    if value is None or value == "" or value == []:
        raise ConfigError(
            "A refreshable model needs `unique_key`: the column (or list of columns) that "
            "identifies a row, e.g. config(materialized='refreshable', unique_key='id') or "
            "unique_key=['order_id', 'line_number']."
        )
    keys = _column_names("unique_key", value)
    reserved = [k for k in keys if fold_name(k).startswith(RESERVED_PREFIX)]
    if reserved:
        raise ConfigError(
            f"unique_key {reserved} uses the engine's reserved prefix {RESERVED_PREFIX}."
        )
    return tuple(keys)


def _layout(values: dict[str, Any]) -> dict[str, Any]:
    """partition_by, liquid clustering (liquid_clustered_by, or its other name cluster_by),
    tblproperties and location_root, checked."""
    partition_by = _column_names("partition_by", values["partition_by"])
    liquid = _column_names("liquid_clustered_by", values["liquid_clustered_by"])
    cluster_by = _column_names("cluster_by", values["cluster_by"])
    if liquid and cluster_by and [*map(fold_name, liquid)] != [*map(fold_name, cluster_by)]:
        raise ConfigError(
            f"liquid_clustered_by {list(liquid)} and cluster_by {list(cluster_by)} are two "
            f"names of one setting and differ: set one of them."
        )
    clustering = liquid or cluster_by
    if partition_by and clustering:
        raise ConfigError(
            f"partition_by {list(partition_by)} and liquid clustering {list(clustering)} are "
            f"both set: a Delta table is either partitioned or clustered. Keep one."
        )
    return {
        "partition_by": partition_by,
        "cluster_by": clustering,
        "tblproperties": _tblproperties(values["tblproperties"]),
        "location_root": _location_root(values["location_root"]),
    }


def _location_root(value: Any) -> str | None:
    """A folder (path or URI) under which main is stored, without a trailing slash."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip().rstrip("/"):
        raise ConfigError(
            f"location_root must be a folder, e.g. 's3://lake/analytics' or '/data/lake', "
            f"under which main is stored as <location_root>/<model alias>; got {value!r}."
        )
    return value.strip().rstrip("/")


def _column_names(name: str, value: Any) -> tuple[str, ...]:
    """A column name or a list of them (none: empty)."""
    if value is None or value == []:
        return ()
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list | tuple) or not all(
        isinstance(n, str) and n.strip() for n in names
    ):
        raise ConfigError(f"{name} must be a column name or a list of them, got {value!r}.")
    names = [unquoted(n) for n in names]
    if len({fold_name(n) for n in names}) != len(names):
        raise ConfigError(f"{name} lists a column twice: {names}.")
    return tuple(names)


def _tblproperties(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(
            f"tblproperties must be a mapping of property names to values, e.g. "
            f"{{'delta.logRetentionDuration': 'interval 60 days'}}; got {value!r}."
        )
    properties = {}
    for key, item in value.items():
        if not isinstance(key, str) or not key.strip() or isinstance(item, dict | list):
            raise ConfigError(
                f"tblproperties: {key!r}: {item!r} is not a property name with a text, number "
                f"or true/false value."
            )
        why = ENGINE_PROPERTIES.get(key.strip().lower())
        if why is not None or key.strip().lower().startswith("dbt_refreshable."):
            raise ConfigError(
                f"tblproperties sets {key!r}, which the engine owns on main "
                f"({why or 'its own marker'}). Remove it from the model's tblproperties."
            )
        text = str(item).lower() if isinstance(item, bool) else str(item)
        if key.strip().lower() == "delta.appendonly" and text.strip().lower() == "true":
            raise ConfigError(
                f"tblproperties sets {key!r} to true, but a refresh updates and deletes "
                f"main's rows (Delta would refuse every chunk's MERGE). Remove it from the "
                f"model's tblproperties."
            )
        properties[key.strip()] = text
    return properties


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


def _number(name: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be a number, got {value!r}.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, got {value!r}.") from None
    if math.isnan(number) or number < low or number > high:
        bounds = f"from {low} to {high}"
        if high == MAX_SECONDS:
            bounds += " seconds (ten years)"
        raise ConfigError(f"{name} must be {bounds}, got {value!r}.")
    return number


def _optional_seconds(name: str, value: Any) -> float | None:
    return None if value is None else _number(name, value, 1, MAX_SECONDS)


def _optional_duration(name: str, value: Any) -> float | None:
    """Seconds, from a number of seconds or a text like '1 hour', '30 minutes', '2h'."""
    if value is None or isinstance(value, int | float) and not isinstance(value, bool):
        return _optional_seconds(name, value)
    found = DURATION.match(value) if isinstance(value, str) else None
    if found is None:
        raise ConfigError(
            f"{name} must be a duration such as '1 hour', '30 minutes', '2h', '1 day' or a "
            f"number of seconds; got {value!r}."
        )
    seconds = float(found[1]) * DURATION_UNITS[(found[2] or "s")[0].lower()]
    return _number(name, seconds, 1, MAX_SECONDS)


def _optional_fraction(value: Any) -> float | None:
    if value is None:
        return None
    return _number("max_delete_fraction", value, 0.0, 1.0)


SCHEMA_NAME = re.compile(r"^[A-Za-z0-9_]+$")


def _optional_schema_name(key: str, value: Any) -> str | None:
    """A schema name the metastore accepts: letters, digits and underscores."""
    if value is None:
        return None
    if not isinstance(value, str) or not SCHEMA_NAME.match(value):
        raise ConfigError(
            f"{key} must be a schema name of letters, digits and underscores, got "
            f"{value!r}. Unset it for the default: the model's schema with _refreshable "
            f"appended."
        )
    return value


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
