"""The path of a user with a dbt project of their own: the adapter's wheel, built from this
repository, installed into a fresh virtualenv, and a project outside the repository whose
profile gets Delta the way Delta's docs say (`spark.jars` pointing at the jars, here the
ones set-up resolved, so the test stays offline). `dbt debug`, `dbt run` and `dbt test`
work, and the adapter and its materialization come from the wheel, not from the repository.
The project's second model is partitioned by its first column, which a `--full-refresh`
replaces in one commit on the Hive metastore a user's profile gets by default (the suite's
own sessions use Spark's in-memory catalog, where such a main is dropped and built instead:
test_recovery.py). The commands run in one Python process through dbt's programmatic entry
point (as an orchestrator calls dbt), so that Spark starts once, not four times.

The new virtualenv sees the already installed dependencies (dbt-core, dbt-spark, pyspark,
delta-spark) through a path file, but not the repository's editable install: a path added
by a `.pth` line is not searched for further `.pth` files.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.support.processes import run_bounded
from tests.support.profiles import ROOT

pytestmark = pytest.mark.subprocess

MODEL = """{{ config(materialized='refreshable', unique_key='id') }}
select id, concat('v', cast(id * {{ var('day', 1) }} as string)) as value
from range(0, {{ 50 + 10 * var('day', 1) }}) as r(id)
"""
# partitioned by other than its last column
REGIONS = """{{ config(materialized='refreshable', unique_key='id', partition_by='region') }}
select case when id % 3 = 0 then 'eu' else 'us' end as region, id,
       concat('r', cast(id * {{ var('day', 1) }} as string)) as value
from range({{ 5 * var('day', 1) }}, {{ 40 + 5 * var('day', 1) }}) as r(id)
"""
SCHEMA = """version: 2
models:
  - name: orders
    data_tests: [refreshable_matches_snapshot]
  - name: regions
    data_tests: [refreshable_matches_snapshot]
"""
PROFILE = """shop:
  target: dev
  outputs:
    dev:
      type: spark_refreshable
      method: session
      schema: shop
      threads: 2
      server_side_parameters:
        spark.master: "local[2]"
        spark.sql.shuffle.partitions: "2"
        spark.databricks.delta.snapshotPartitions: "2"
        spark.jars: "{jars}"
        spark.sql.extensions: io.delta.sql.DeltaSparkSessionExtension
        spark.sql.catalog.spark_catalog: org.apache.spark.sql.delta.catalog.DeltaCatalog
        spark.sql.warehouse.dir: "{data}/warehouse"
        spark.hadoop.javax.jdo.option.ConnectionURL: "{metastore}"
        spark.driver.extraJavaOptions: "-Dderby.system.home={data}"
"""


# Runs the dbt commands given as a JSON list of argument lists, in order, each announced by a
# marker line; exits non-zero at the first that fails.
RUN_COMMANDS = """
import json, sys
from dbt.cli.main import dbtRunner
for args in json.loads(sys.argv[1]):
    print("@@ dbt " + " ".join(args), flush=True)
    if not dbtRunner().invoke(args).success:
        sys.exit("dbt " + " ".join(args) + " failed")
"""


def build_wheel(work: Path) -> Path:
    """The adapter's wheel, built offline from a copy of adapter_plugin/ (symlinks copied as
    files, so the materialization's macros are in it)."""
    source = work / "adapter_plugin"
    shutil.copytree(
        ROOT / "adapter_plugin",
        source,
        ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "build"),
    )
    dist = work / "dist"
    built = run_bounded(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["-w", str(dist), str(source)],
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("dbt_refreshable-*.whl")
    return wheel


def user_environment() -> dict[str, str]:
    """This process's environment without what points into the repository, nor the suite's
    JVM settings (its project runs Spark as a user's does)."""
    pointing_here = ("PYTHONPATH", "REFRESHABLE_HOME", "REFRESHABLE_DATA", "DBT_PROFILES_DIR")
    suite_only = ("JDK_JAVA_OPTIONS",)
    return {k: v for k, v in os.environ.items() if k not in pointing_here + suite_only}


def fresh_virtualenv(work: Path, wheel: Path) -> Path:
    """A new virtualenv with the wheel installed; its python."""
    venv = work / "venv"
    made = run_bounded([sys.executable, "-m", "venv", "--without-pip", str(venv)], timeout=120)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    installed = run_bounded(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps"]
        + ["--no-index", str(wheel)],
        env=user_environment(),
        timeout=300,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    site = run_bounded(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        timeout=60,
    ).stdout.strip()
    (Path(site) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def user_project(work: Path) -> Path:
    """A dbt project and profile outside the repository: two refreshable models, tested."""
    project = work / "shop"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: shop\nversion: '1.0'\nconfig-version: 2\nprofile: shop\n"
    )
    (project / "models" / "orders.sql").write_text(MODEL)
    (project / "models" / "regions.sql").write_text(REGIONS)
    (project / "models" / "schema.yml").write_text(SCHEMA)
    jars = ",".join(str(j) for j in sorted((ROOT / ".spark" / "jars").glob("*.jar")))
    (project / "profiles.yml").write_text(
        PROFILE.format(
            jars=jars,
            data=work / "spark",
            metastore=f"jdbc:derby:;databaseName={work / 'spark'}/metastore;create=true",
        )
    )
    return project


def test_the_wheel_in_a_fresh_virtualenv_runs_a_project_of_its_own(tmp_path):
    python = fresh_virtualenv(tmp_path, build_wheel(tmp_path))
    project = user_project(tmp_path)
    env = {**user_environment(), "DBT_PROFILES_DIR": str(project)}

    origin = run_bounded(
        [str(python), "-c", "import dbt.adapters.spark_refreshable as a; print(a.__file__)"],
        env=env,
        timeout=60,
    ).stdout
    assert origin.startswith(str(tmp_path / "venv")), f"adapter imported from {origin}"
    with zipfile.ZipFile(next((tmp_path / "dist").glob("*.whl"))) as wheel:
        assert "dbt/include/spark_refreshable/macros/materializations/refreshable.sql" in (
            wheel.namelist()
        )

    commands = [
        ["debug"],
        ["build", "--vars", "{day: 1}"],
        ["build", "--vars", "{day: 2}"],
        ["build", "--full-refresh", "--select", "regions", "--vars", "{day: 3}"],
    ]
    done = run_bounded(
        [str(python), "-c", RUN_COMMANDS, json.dumps(commands)], cwd=project, env=env, timeout=900
    )
    assert done.returncode == 0, f"{done.stdout[-4000:]}{done.stderr[-2000:]}"
    _, debug, first, second, replaced = done.stdout.split("@@ dbt ")
    assert "All checks passed" in debug, debug[-4000:]
    assert "PASS=4" in first, first[-4000:]
    assert "REFRESHED +10 ~" in second and "REFRESHED +5 ~" in second, second[-4000:]
    assert "PASS=4" in second, second[-4000:]
    # main replaced in place, not dropped first; then proved equal to day 3
    assert "replaced main with the snapshot's 40 rows in one commit" in replaced, replaced[-4000:]
    assert "REPLACED +40 ~0 -0 =0" in replaced and "PASS=2" in replaced, replaced[-4000:]
