"""The shipped profile (profiles/profiles.yml), rendered outside dbt: for the scripts that
start Spark servers and for the tests, so that both use the Spark settings users do.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jinja2
import yaml

ROOT = Path(__file__).resolve().parents[1]
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
