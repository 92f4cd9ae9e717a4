#!/usr/bin/env bash
# Set-up for a fresh machine, safe to run again: a virtualenv with the pinned packages and the
# adapter plugin (editable), and Delta's jars resolved once from Maven Central into .spark/jars.
# Everything after this runs offline.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv="$root/.venv"
jars="$root/.spark/jars"

say() { printf '[setup] %s\n' "$*"; }
fingerprint() { cat "$@" | sha256sum | cut -d' ' -f1; }

python_bin=${PYTHON:-}
if [ -z "$python_bin" ]; then
  for candidate in python3.11 python3.12 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python_bin=$candidate; break; fi
  done
fi
[ -n "$python_bin" ] || { echo "[setup] no python3 found: install Python 3.11" >&2; exit 1; }
command -v java >/dev/null || { echo "[setup] no java found: install Java 17 (openjdk-17-jdk)" >&2; exit 1; }

if [ ! -x "$venv/bin/python" ]; then
  say "creating virtualenv $venv with $($python_bin --version)"
  "$python_bin" -m venv "$venv"
fi

# REFRESHABLE_EXTRAS: the plugin's optional dependency groups to install, comma-separated
# (default dev: tests, lint and the benchmark). Extras installed before stay installed.
extras=${REFRESHABLE_EXTRAS:-dev}
packages_stamp="$venv/.refreshable-packages"
packages_print=$(fingerprint adapter_plugin/pyproject.toml)
{ read -r stamped_print stamped_extras < "$packages_stamp"; } 2>/dev/null || true
missing=""
for extra in ${extras//,/ }; do
  [[ ",${stamped_extras:-}," == *",$extra,"* ]] || missing="$missing,$extra"
done
if [ "${stamped_print:-}" != "$packages_print" ] || [ -n "$missing" ]; then
  if [ "${stamped_print:-}" = "$packages_print" ] && [ -n "${stamped_extras:-}" ]; then
    extras="$stamped_extras$missing"
  fi
  say "installing pinned packages and the adapter plugin (adapter_plugin/pyproject.toml, extras: $extras)"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  # compat mode puts adapter_plugin/ on sys.path, which dbt's pkgutil namespace needs
  "$venv/bin/python" -m pip install --quiet -e "adapter_plugin[$extras]" --config-settings editable_mode=compat
  echo "$packages_print $extras" > "$packages_stamp"
else
  say "packages up to date ($venv)"
fi

jars_stamp="$jars/.refreshable-jars"
jars_print=$(fingerprint scripts/jars/pom.xml)
if [ "$(cat "$jars_stamp" 2>/dev/null)" != "$jars_print" ]; then
  command -v mvn >/dev/null || { echo "[setup] no mvn found: install Maven to fetch Delta's jars" >&2; exit 1; }
  say "resolving Delta's jars and their dependencies from Maven Central into $jars"
  staging_dir=$(mktemp -d "$root/.spark-jars.XXXXXX")
  trap 'rm -rf "$staging_dir"' EXIT
  mvn -B -q -f scripts/jars/pom.xml dependency:copy-dependencies -DoutputDirectory="$staging_dir"
  rm -rf "$jars"; mkdir -p "$(dirname "$jars")"; mv "$staging_dir" "$jars"
  trap - EXIT
  echo "$jars_print" > "$jars_stamp"
  say "$(ls "$jars"/*.jar | wc -l) jars in $jars"
else
  say "Delta jars up to date ($jars)"
fi

pyspark_jars=$("$venv/bin/python" -c 'import pathlib, pyspark; print(pathlib.Path(pyspark.__file__).resolve().parent / "jars")')

# Hadoop's local file system without a process forked per file and per commit
# (scripts/localfs/), compiled against pyspark's Hadoop into .spark/jars; the profile's
# `local` target puts it on the driver's class path and names it in fs.file.impl (the
# `cluster` target keeps Hadoop's own).
localfs_jar="$jars/refreshable-localfs.jar"
localfs_stamp="$jars/.refreshable-localfs"
hadoop_api=$(ls "$pyspark_jars"/hadoop-client-api-*.jar)
localfs_print=$({ basename "$hadoop_api"; cat scripts/localfs/io/refreshable/localfs/*.java; } \
  | sha256sum | cut -d' ' -f1)
if [ "$(cat "$localfs_stamp" 2>/dev/null)" = "$localfs_print" ] && [ -f "$localfs_jar" ]; then
  say "local file system jar up to date ($localfs_jar)"
else
  command -v javac >/dev/null || { echo "[setup] no javac found: install a Java 17 JDK (openjdk-17-jdk)" >&2; exit 1; }
  say "compiling the local file system jar $localfs_jar"
  classes=$(mktemp -d)
  javac --release 17 -nowarn -cp "$hadoop_api" -d "$classes" scripts/localfs/io/refreshable/localfs/*.java
  jar cf "$localfs_jar" -C "$classes" io
  rm -rf "$classes"
  echo "$localfs_print" > "$localfs_stamp"
fi

# A class-data-sharing archive of the Spark driver's classes (scripts/cds_archive.py), which
# the profile's `local` and `cluster` targets name: each driver JVM then starts ~13 s sooner.
# It fits one JDK and one set of jar files (paths, sizes, times), so it is written again when
# they change.
cds_archive="$root/.spark/cds/driver.jsa"
cds_stamp="$cds_archive.stamp"
cds_print=$({ java -version 2>&1; ls -l --time-style=+%s "$pyspark_jars" "$jars"
  cat scripts/cds_archive.py profiles/profiles.yml; } | sha256sum | cut -d' ' -f1)
cds_stamped=$(cat "$cds_stamp" 2>/dev/null || true)
if [ "$cds_stamped" = "$cds_print failed" ]; then
  say "no class archive: writing it failed for this JDK and these jars (Spark starts without it)"
elif [ "$cds_stamped" = "$cds_print" ] && [ -f "$cds_archive" ]; then
  say "class archive up to date ($cds_archive)"
else
  say "writing the Spark driver's class archive $cds_archive (runs the demo once, ~3 minutes)"
  mkdir -p "$(dirname "$cds_archive")"; rm -f "$cds_stamp"
  # only a speed-up: without it every JVM starts as before, so a failure does not stop set-up,
  # and is not tried again until the JDK or a jar changes
  if "$venv/bin/python" scripts/cds_archive.py "$cds_archive"; then
    echo "$cds_print" > "$cds_stamp"
  else
    rm -f "$cds_archive"
    echo "$cds_print failed" > "$cds_stamp"
    say "WARNING: no class archive written (above: why); Spark starts without it, ~13 s slower"
  fi
fi
