"""The tests marked `hive_metastore`, in a pytest process whose Spark session keeps its tables
in the Hive metastore on embedded Derby, as the shipped targets do: the suite's other
sessions use Spark's in-memory catalog (`tests/support/profiles.py`)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.profiles import HIVE_METASTORE_ENV, ROOT

TIMEOUT = 600


def test_the_hive_metastore_tests_pass_on_the_metastore(request, tmp_path):
    outer_selection = request.config.option.markexpr  # e.g. `make test`'s "not extended"
    selection = f"hive_metastore and ({outer_selection})" if outer_selection else "hive_metastore"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env[HIVE_METASTORE_ENV] = "1"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-m", selection, f"--basetemp={tmp_path}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    # exit code 5: no test marked, which would leave the metastore's behaviour unproved
    output = run.stdout[-6000:] + run.stderr[-2000:]
    assert run.returncode == 0, f"exit code {run.returncode}:\n{output}"
    assert " passed" in run.stdout.splitlines()[-1], run.stdout[-2000:]
