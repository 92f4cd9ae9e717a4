"""The shipped profile for tests: rendered for a test run's own data folder
(scripts/spark_profile.py, one renderer for scripts and tests), and the environment of a
`dbt` subprocess.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from scripts.spark_profile import PROFILES_DIR, ROOT, render_target

__all__ = [
    "PROFILES_DIR",
    "ROOT",
    "SUBPROCESS_JVM_OPTIONS",
    "SUITE_SESSION_SETTINGS",
    "WORKER_JVM_OPTIONS",
    "render_target",
    "subprocess_env",
    "subprocess_java_options",
    "with_jvm_options",
]

# Settings of every JVM the suite starts (its own Spark drivers, `dbt` processes, the Connect
# server, the cluster's daemons), read by the `java` launcher from JDK_JAVA_OPTIONS. Spark
# evaluates expressions interpreted instead of generating and compiling Java for each
# projection (generated code is for throughput; on a test's few rows its code generation took
# ~40% of a refresh's CPU), and Derby does not sync its metastore to disk at each commit.
# The throughput collector replaces G1, whose concurrent marking and write barriers cost a
# test's small heap more than they save: a warm driver's 16 engine cycles took 175 CPU-s
# against 203 and 219 with G1 (118 s of wall against 132 and 143; two runs each, the JVM's
# threads' CPU read from /proc, and its JIT compiled less with the simpler barriers).
# None of them changes a result. The wheel test's own project runs without them, as a
# user's does.
SUITE_JVM_OPTIONS = (
    "-Dspark.sql.codegen.wholeStage=false",
    "-Dspark.sql.codegen.factoryMode=NO_CODEGEN",
    "-Dderby.system.durability=test",
    "-XX:+UseParallelGC",
)

# Added to the pytest processes' own drivers (spark.driver.extraJavaOptions): each lives the
# whole run and meets code paths for minutes before they settle, so the JIT compiles a
# method only once it is called twice to three times as often as by default. Its compiler
# threads had taken ~40% of a warm driver's CPU; the same 16 engine cycles took 150 CPU-s
# against 175 (116 s of wall against 118), and two engine test files on two workers 414 s
# against 449.
WORKER_JVM_OPTIONS = (
    "-XX:Tier3InvocationThreshold=2000",
    "-XX:Tier3MinInvocationThreshold=1000",
    "-XX:Tier3CompileThreshold=20000",
    "-XX:Tier4InvocationThreshold=15000",
    "-XX:Tier4MinInvocationThreshold=2000",
    "-XX:Tier4CompileThreshold=45000",
    "-XX:Tier4BackEdgeThreshold=120000",
)


# Spark settings of the pytest processes' own sessions, over the shipped `local` target's: one
# partition everywhere (a DataFrame of local rows, a shuffle, Delta's log replay) where the
# target has one per core, and broadcasts not compressed. On a test's few rows each partition
# is a task to plan, serialize and run: a loop of engine cycles in one JVM (a build, a change
# and the same snapshot again, four times) took 12% less CPU with all four, 337 against 382
# CPU-s (two runs each, interleaved; the shuffle and Delta's alone 376, a local DataFrame's
# alone 352). The `dbt` processes, the Connect server and the cluster keep the target's
# settings, and test_differential.py shuffles into three partitions: code that is right only
# in one partition still fails a test. Their tables live in Spark's in-memory catalog, not the
# target's Hive metastore on embedded Derby: a worker's tables live as long as its process,
# and a lookup by name in Derby (through DataNucleus, ~2-3 ms, a few dozen a cycle) took ~12%
# of a small cycle's driver CPU. The `dbt` processes, the Connect server, the cluster and the
# wheel's project stay on the metastore. Adaptive query execution is off: on a test's few rows
# re-planning each stage cost more than it saved, 16 small engine cycles 3.75 s each against
# 3.92 (99-100 CPU-s of the JVM against 104; two runs each, alternated,
# `2026-12-06-suite-without-adaptive-execution.md`). The `dbt` processes and
# test_differential.py keep it on, so code right only in one kind of plan still fails a test.
SUITE_SESSION_SETTINGS = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.catalogImplementation": "in-memory",
    "spark.default.parallelism": "1",
    "spark.sql.shuffle.partitions": "1",
    "spark.databricks.delta.snapshotPartitions": "1",
    "spark.broadcast.compress": "false",
}

# Added for the JVMs the suite starts in other processes that live minutes at most: the `dbt`
# processes (kill, cluster) and the Connect server (its test module), too short for C2's
# optimized code to repay compiling it. C1 alone took 17% less CPU on a cold `dbt run` of
# three small refreshable models (two runs each way, 55-60 against 68-74 CPU-s), and the
# Connect server through test_connect.py 114 CPU-s against 211 (178 with the workers' raised
# thresholds; 201 s of wall against 226), where the pytest workers' long-lived JVMs are
# slower with it (three engine files: 420 s against 362). C1 alone also shrinks the code
# cache to 48 MB, which Spark fills within a minute: the JIT then stops, and a method handle
# that needs the cache kills the JVM ("Out of space in CodeCache"), so the cache gets the
# tiered compiler's default size back.
SUBPROCESS_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m")


def with_jvm_options(java_options: str | None, options: Sequence[str] = SUITE_JVM_OPTIONS) -> str:
    """``java_options`` (JDK_JAVA_OPTIONS) with ``options`` added once: pytest-xdist's
    workers import the conftest again under the environment their controller set, and a
    `dbt` process's environment starts from that one."""
    present = (java_options or "").split()
    return " ".join([*present, *(o for o in options if o not in present)])


def subprocess_java_options(java_options: str | None) -> str:
    """``java_options`` (JDK_JAVA_OPTIONS) for a JVM the suite starts in another process."""
    return with_jvm_options(java_options, (*SUITE_JVM_OPTIONS, *SUBPROCESS_JVM_OPTIONS))


def subprocess_env(data_dir: Path) -> dict[str, str]:
    """Environment for a `dbt` subprocess with its own warehouse and metastore."""
    env = dict(os.environ)
    env.update(
        REFRESHABLE_HOME=str(ROOT),
        REFRESHABLE_DATA=str(data_dir),
        DBT_PROFILES_DIR=str(PROFILES_DIR),
        JDK_JAVA_OPTIONS=subprocess_java_options(env.get("JDK_JAVA_OPTIONS")),
    )
    return env
