"""Project config shared by the conformance classes: everything on Delta Lake.

dbt-spark creates tables with Spark's default data source (parquet) unless a model says
`file_format`; snapshots, merges, updates and constraints need Delta, which is what this
adapter runs on.
"""

from __future__ import annotations

from typing import Any


def delta_project(name: str | None = None) -> dict[str, Any]:
    """A `project_config_update` with models, seeds and snapshots on Delta."""
    config: dict[str, Any] = {"name": name} if name else {}
    for resource in ("models", "seeds", "snapshots"):
        config[resource] = {"+file_format": "delta"}
    return config
