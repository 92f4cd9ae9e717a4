"""The profile's local file system (scripts/localfs/, the `local` target's fs.file.impl and
fs.AbstractFileSystem.file.impl): Hadoop's, without a process forked per call, and with no
result of its own. Each call is made on it and on Hadoop's RawLocalFileSystem alike, in the
session's JVM, and the two compared; the processes Hadoop forks are seen in the CPU time the
JVM's finished children took (/proc/<pid>/stat), which Hadoop's calls raise and its must
not."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

PERMISSIONS = (0o644, 0o600, 0o755, 0o700, 0o640, 0o777, 0o000, 0o1777)
CALLS = 60  # per file system: enough forked processes for CPU ticks of their own


@pytest.fixture
def file_systems(spark):
    """(the session's local file system, unchecksummed; Hadoop's, initialized alike)."""
    jvm, conf = spark._jvm, spark._jsc.hadoopConfiguration()
    local = jvm.java.net.URI("file:///")
    session_fs = jvm.org.apache.hadoop.fs.FileSystem.get(local, conf)
    assert session_fs.getClass().getName() == "io.refreshable.localfs.ForklessLocalFileSystem"
    file_context_fs = jvm.org.apache.hadoop.fs.AbstractFileSystem.get(local, conf)
    assert file_context_fs.getClass().getName() == "io.refreshable.localfs.ForklessLocalFs"
    hadoops = jvm.org.apache.hadoop.fs.RawLocalFileSystem()
    hadoops.initialize(local, conf)
    return session_fs.getRawFileSystem(), hadoops


def children_cpu_ticks(spark) -> int:
    """CPU ticks of the session JVM's finished child processes (cutime + cstime)."""
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[13]) + int(fields[14])


def link_status(spark, fs, path: str) -> tuple:
    """What ``getFileLinkStatus`` says of ``path``: its fields, or the class and message of
    the exception it throws."""
    try:
        found = fs.getFileLinkStatus(spark._jvm.org.apache.hadoop.fs.Path(path))
    except Exception as error:  # Py4JJavaError: the Java exception is the result
        thrown = error.java_exception  # type: ignore[attr-defined]
        return thrown.getClass().getName(), thrown.getMessage()
    symlink = str(found.getSymlink()) if found.isSymlink() else None
    return (found.isFile(), found.isDirectory(), symlink, found.getLen(), str(found.getPath()))


def test_permissions_set_and_link_statuses_are_hadoops_without_forking(
    spark, file_systems, tmp_path
):
    forkless, hadoops = file_systems
    path = spark._jvm.org.apache.hadoop.fs.Path
    folders = {name: tmp_path / name for name in ("forkless", "hadoops")}
    for folder in folders.values():
        (folder / "sub").mkdir(parents=True)
        (folder / "file").write_text("x")
    for fs, folder in zip(file_systems, folders.values(), strict=True):
        for name in ("file", "sub"):
            for mode in PERMISSIONS:
                fs.setPermission(
                    path(str(folder / name)),
                    spark._jvm.org.apache.hadoop.fs.permission.FsPermission(mode),
                )
                assert stat.S_IMODE(os.stat(folder / name).st_mode) == mode, (fs, name, mode)
            os.chmod(folder / name, 0o755)

    (tmp_path / "link").symlink_to(folders["hadoops"] / "file")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    for name in ("forkless/file", "forkless/sub", "link", "dangling", "missing"):
        for spelled in (str(tmp_path / name), f"file:{tmp_path / name}"):
            assert link_status(spark, forkless, spelled) == link_status(spark, hadoops, spelled)

    target = path(f"file:{folders['forkless'] / 'file'}")
    mode = spark._jvm.org.apache.hadoop.fs.permission.FsPermission(0o644)
    forked = {}
    for name, fs in zip(folders, file_systems, strict=True):
        before = children_cpu_ticks(spark)
        for _ in range(CALLS):
            fs.setPermission(target, mode)
            fs.getFileLinkStatus(target)
        forked[name] = children_cpu_ticks(spark) - before
    assert forked["hadoops"] > 0, "Hadoop's calls forked no process this test could see"
    assert forked["forkless"] == 0, forked
