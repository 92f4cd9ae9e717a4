"""The JVM options of the `dbt` processes the suite starts, as the real `java` reads them
(JDK_JAVA_OPTIONS, from ``subprocess_env``)."""

from __future__ import annotations

import re
import subprocess

from tests.support.profiles import subprocess_env

MIB = 1024 * 1024


def final_flags(env: dict[str, str]) -> dict[str, str]:
    done = subprocess.run(
        ["java", "-XX:+PrintFlagsFinal", "-version"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return dict(re.findall(r"^\s*\S+\s+(\w+)\s+:?=\s+(\S+)", done.stdout, re.MULTILINE))


def test_a_dbt_process_runs_c1_alone_with_room_for_its_code(tmp_path):
    """C1 alone shrinks the code cache to 48 MB; a `dbt run` of two models filled it within
    a minute, and its JVM died of "Out of space in CodeCache"."""
    flags = final_flags(subprocess_env(tmp_path))
    assert flags["TieredStopAtLevel"] == "1"
    assert int(flags["ReservedCodeCacheSize"]) >= 240 * MIB, flags["ReservedCodeCacheSize"]


def test_a_dbt_process_runs_the_throughput_collector_and_the_default_jit_thresholds(tmp_path):
    """The suite's collector reaches every JVM; the raised JIT thresholds of the pytest
    workers' own drivers do not (a short `dbt` process needs its code compiled early)."""
    flags = final_flags(subprocess_env(tmp_path))
    assert flags["UseParallelGC"] == "true"
    assert flags["UseG1GC"] == "false"
    assert flags["Tier4InvocationThreshold"] == "5000"
