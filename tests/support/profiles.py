"""The shipped profile (profiles/profiles.yml), rendered for a test run's own data folder.

Tests use the same Spark settings as users do: one source of truth for them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jinja2
import yaml

ROOT = Path(__file__).resolve().parents[2]
PROFILES_DIR = ROOT / "profiles"


def render_target(data_dir: Path, target: str = "local", **overrides: Any) -> dict[str, Any]:
    """The profile's `target`, with REFRESHABLE_HOME=ROOT and REFRESHABLE_DATA=data_dir."""
    values = {"REFRESHABLE_HOME": str(ROOT), "REFRESHABLE_DATA": str(data_dir)}

    def env_var(name: str, default: str | None = None) -> str:
        if name in values:
            return values[name]
        if name in os.environ:
            return os.environ[name]
        if default is None:
            raise KeyError(name)
        return default

    text = (PROFILES_DIR / "profiles.yml").read_text()
    rendered = jinja2.Template(text).render(env_var=env_var)
    output = yaml.safe_load(rendered)["refreshable"]["outputs"][target]
    output.update(overrides)
    return output


def subprocess_env(data_dir: Path) -> dict[str, str]:
    """Environment for a `dbt` subprocess with its own warehouse and metastore."""
    env = dict(os.environ)
    env.update(
        REFRESHABLE_HOME=str(ROOT),
        REFRESHABLE_DATA=str(data_dir),
        DBT_PROFILES_DIR=str(PROFILES_DIR),
    )
    return env
