"""The foundation's promises: Delta tables from SQL and Python models, Python models isolated
from each other under `threads: 4`, Python errors with their traceback, `dbt debug`, and a
clear error for missing Delta jars, and a driver that maps its classes from set-up's archive."""

from __future__ import annotations

import subprocess

import pytest
from dbt.tests.util import run_dbt, run_dbt_and_capture
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_refreshable.environments.session import expand_jars


def table_format(project, name: str) -> str:
    detail = project.run_sql(f"describe detail {project.test_schema}.{name}", fetch="one")
    return detail["format"]


class TestModelsBuildDeltaTables:
    @pytest.fixture(scope="class")
    def project_config_update(self):
        # As the shipped dbt_project.yml does.
        return {"models": {"+file_format": "delta"}}

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sql_model.sql": "{{ config(materialized='table') }} select 1 as id, 'a' as name",
            "python_model.py": (
                "def model(dbt, session):\n"
                "    df = dbt.ref('sql_model')\n"
                "    return df.withColumn('doubled', df.id * 2)\n"
            ),
        }

    def test_sql_and_python_models_are_delta(self, project):
        results = run_dbt(["run"])
        assert sorted(r.node.name for r in results) == ["python_model", "sql_model"]
        assert table_format(project, "sql_model") == "delta"
        assert table_format(project, "python_model") == "delta"
        row = project.run_sql(f"select * from {project.test_schema}.python_model", "one")
        assert tuple(row) == (1, "a", 2)


# Each model sets a SQL conf of its own and a shared one to its own value, waits so that the
# two overlap, then reports what its session sees, and when it ran.
CONF_MODEL = """
import time


def model(dbt, session):
    me, other = "{me}", "{other}"
    started = time.time()
    session.conf.set("refreshable.test.owner", me)
    session.conf.set("refreshable.test.only_" + me, "set")
    time.sleep(3)
    return session.createDataFrame(
        [(
            session.conf.get("refreshable.test.owner"),
            session.conf.get("refreshable.test.only_" + other, None),
            started,
            time.time(),
        )],
        "owner string, other_conf string, started double, finished double",
    )
"""


class TestConcurrentPythonModelsAreIsolated:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "conf_a.py": CONF_MODEL.format(me="a", other="b"),
            "conf_b.py": CONF_MODEL.format(me="b", other="a"),
        }

    def test_each_model_sees_only_its_own_confs(self, project, dbt_profile_target, spark):
        assert dbt_profile_target["threads"] >= 2
        run_dbt(["run"])
        seen = {
            name: project.run_sql(f"select * from {project.test_schema}.conf_{name}", "one")
            for name in ("a", "b")
        }
        # They ran at the same time...
        assert seen["a"]["started"] < seen["b"]["finished"]
        assert seen["b"]["started"] < seen["a"]["finished"]
        # ...and each read back its own value, and none of the other's confs.
        assert seen["a"]["owner"] == "a" and seen["b"]["owner"] == "b"
        assert seen["a"]["other_conf"] is None and seen["b"]["other_conf"] is None
        # Nor did they leak into the session dbt's SQL runs on.
        assert spark.conf.get("refreshable.test.owner", None) is None


FAILING_MODEL = """def explode(rows):
    raise ValueError(f"cannot explode {rows} rows")


def model(dbt, session):
    return explode(3)
"""


class TestPythonModelErrors:
    @pytest.fixture(scope="class")
    def models(self):
        return {"failing.py": FAILING_MODEL}

    def test_error_carries_the_python_traceback(self, project):
        results = run_dbt(["run"], expect_pass=False)
        assert results[0].status == "error"
        message = results[0].message
        assert "ValueError: cannot explode 3 rows" in message
        job = "<dbt python job model.test.failing>"
        # The traceback names the model's functions, at their lines in the compiled model
        # (target/compiled/..., which dbt's error points to, and here the model file itself).
        assert f'File "{job}", line 6, in model' in message
        assert f'File "{job}", line 2, in explode' in message
        assert 'raise ValueError(f"cannot explode {rows} rows")' in message


class TestDebug:
    def test_debug_passes(self, project):
        assert run_dbt(["debug"])
        _, output = run_dbt_and_capture(["debug", "--connection"])
        assert "OK connection ok" in output
        assert "All checks passed!" in output


def test_expand_jars_expands_globs(tmp_path):
    for name in ("b.jar", "a.jar"):
        (tmp_path / name).touch()
    remote = "https://repo.example/x.jar"
    assert expand_jars(f"{tmp_path}/*.jar, {remote}") == (
        f"{tmp_path}/a.jar,{tmp_path}/b.jar,{remote}"
    )


def test_expand_jars_names_the_fix_when_nothing_matches(tmp_path):
    pattern = f"{tmp_path}/missing/*.jar"
    with pytest.raises(DbtRuntimeError) as error:
        expand_jars(pattern)
    assert pattern in str(error.value)
    assert "spark.jars" in str(error.value) and "spark.jars.packages" in str(error.value)


def test_the_driver_maps_its_classes_from_the_setup_archive(spark):
    """`make setup` writes .spark/cds/driver.jsa and the profile names it: the driver maps
    ~15,000 classes from it (the JDK's own archive alone holds ~1,250 of them). A stale or
    missing archive is silent at run time, so only this count shows it."""
    pid = spark.sparkContext._gateway.proc.pid
    jcmd = ["jcmd", str(pid), "PerfCounter.print"]
    counters = subprocess.run(jcmd, capture_output=True, text=True, timeout=60, check=True).stdout
    shared = int(counters.split("java.cls.sharedLoadedClasses=")[1].split()[0])
    assert shared > 5000, f"{shared} classes mapped: run `make setup` to write the archive again"
