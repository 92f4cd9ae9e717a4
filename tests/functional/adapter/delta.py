"""Project config shared by the conformance classes: everything on Delta Lake.

dbt-spark creates tables with Spark's default data source (parquet) unless a model says
`file_format`; snapshots, merges, updates and constraints need Delta, which is what this
adapter runs on.
"""

from __future__ import annotations

from typing import Any

DELTA: dict[str, Any] = {"+file_format": "delta"}


def delta_project(name: str | None = None, **sections: dict[str, Any]) -> dict[str, Any]:
    """A `project_config_update` with models, seeds and snapshots on Delta.

    `sections` (models=..., seeds=..., ...) are merged over the Delta defaults.
    """
    config: dict[str, Any] = {"name": name} if name else {}
    for resource in ("models", "seeds", "snapshots"):
        config[resource] = dict(DELTA)
    for resource, values in sections.items():
        config[resource] = {**config.get(resource, {}), **values}
    return config
