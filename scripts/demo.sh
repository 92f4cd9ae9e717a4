#!/usr/bin/env bash
# The demo: builds the demo project on the embedded Spark + Delta engine, then changes the
# source and refreshes. Run by `make demo` after `make setup`.
set -euo pipefail
cd "$(dirname "$0")/.."
export REFRESHABLE_HOME=${REFRESHABLE_HOME:-$(pwd)}
export DBT_PROFILES_DIR=${DBT_PROFILES_DIR:-$(pwd)/profiles}
dbt=".venv/bin/dbt"
# DBT_TARGET picks the profile target (local, the default; others are in profiles/profiles.yml)
export DBT_TARGET=${DBT_TARGET:-local}

step() { printf '\n[demo] %s\n' "$*"; }

step "dbt debug: the connection and the engine (target $DBT_TARGET)"
"$dbt" debug --quiet
step "day 1: build everything from scratch (seed, SQL and Python models, refreshable models, tests)"
"$dbt" build --full-refresh --vars 'demo_day: 1'
step "day 2: the source changed (customers left, moved, signed up); refresh writes only that"
"$dbt" build --vars 'demo_day: 2'
step "the state of every refreshable table"
"$dbt" run-operation refreshable_status
step "done: the tables are in .spark/warehouse (analytics schema)"
