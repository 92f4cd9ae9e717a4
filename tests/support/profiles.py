"""The shipped profile for tests: rendered for a test run's own data folder
(scripts/spark_profile.py, one renderer for scripts and tests), and the environment of a
`dbt` subprocess.
"""

from __future__ import annotations

import os
from pathlib import Path

from scripts.spark_profile import PROFILES_DIR, ROOT, render_target

__all__ = ["PROFILES_DIR", "ROOT", "render_target", "subprocess_env"]


def subprocess_env(data_dir: Path) -> dict[str, str]:
    """Environment for a `dbt` subprocess with its own warehouse and metastore."""
    env = dict(os.environ)
    env.update(
        REFRESHABLE_HOME=str(ROOT),
        REFRESHABLE_DATA=str(data_dir),
        DBT_PROFILES_DIR=str(PROFILES_DIR),
    )
    return env
