"""A class-data-sharing archive of the Spark driver's classes, written once by `make setup`.

    python scripts/cds_archive.py PATH

A Spark driver's JVM loads, parses and verifies some 20,000 classes before its first query
(Spark, the Hive metastore, Delta). The JVM can map them from an archive instead
(`-XX:SharedArchiveFile`, JDK 13+): the `local` and `cluster` targets of
profiles/profiles.yml name `.spark/cds/driver.jsa`, and the Connect server takes the same
driver options. The archive is written by running the demo project (day 1 built, day 2
refreshed) in this process with `-XX:ArchiveClassesAtExit=PATH` in the driver's options, in
a scratch warehouse, then letting the JVM exit normally (it writes the archive at exit).

The archive fits one JDK, one set of jars and one class path: a JVM that cannot use it (say
after a JDK update) starts without it, as fast as before, and says nothing (the profile
turns the JVM's CDS logging off). `make setup` writes it again when those change.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import yaml
from spark_profile import ROOT, render_target  # this folder: run as a script

DEMO_DAYS = (
    ["build", "--full-refresh", "--vars", "demo_day: 1"],
    ["build", "--vars", "demo_day: 2"],
)
# the profile's own option names the archive to use: here it is being written
USE_OPTION = "-XX:SharedArchiveFile="


def write_profile(profiles_dir: Path, data_dir: Path, archive: Path) -> None:
    """profiles.yml with the `local` target for `data_dir`, its driver writing `archive`."""
    target = render_target(data_dir)
    settings = target["server_side_parameters"]
    options = settings["spark.driver.extraJavaOptions"].split()
    kept = [option for option in options if not option.startswith(USE_OPTION)]
    settings["spark.driver.extraJavaOptions"] = " ".join(
        [*kept, f"-XX:ArchiveClassesAtExit={archive}"]
    )
    profile = {"refreshable": {"target": "local", "outputs": {"local": target}}}
    (profiles_dir / "profiles.yml").write_text(yaml.safe_dump(profile))


def run_demo(profiles_dir: Path, scratch: Path) -> None:
    from dbt.cli.main import dbtRunner

    runner = dbtRunner()
    for args in DEMO_DAYS:
        common = ["--quiet", "--project-dir", str(ROOT), "--profiles-dir", str(profiles_dir)]
        paths = ["--target-path", str(scratch / "target")]
        result = runner.invoke([*args, *common, *paths])
        if not result.success:
            sys.exit(f"[setup] the demo run for the class archive failed: {result.exception}")


def exit_driver() -> None:
    """End the driver's JVM as pyspark does when Python exits (its stdin closed, then a
    normal exit), and wait for it: the archive is written during that exit."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None or getattr(gateway, "proc", None) is None:
        sys.exit("[setup] no Spark driver started in this process: no class archive written")
    gateway.proc.stdin.close()
    gateway.proc.wait(timeout=300)


def main(archive: Path) -> None:
    archive.parent.mkdir(parents=True, exist_ok=True)
    partial = archive.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="cds-", dir=archive.parent) as scratch_name:
        scratch = Path(scratch_name)
        write_profile(scratch, scratch / "data", partial.resolve())
        os.environ["REFRESHABLE_DATA"] = str(scratch / "data")
        os.environ.setdefault("REFRESHABLE_HOME", str(ROOT))
        os.environ["DBT_LOG_PATH"] = str(scratch / "logs")
        run_demo(scratch, scratch)
        exit_driver()
    if not partial.exists():
        sys.exit(f"[setup] the driver exited without writing {partial}")
    partial.replace(archive)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]).resolve())
