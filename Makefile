# The two commands of the README: `make demo` and `make test`. Both bootstrap first.
# Also: `make bench`, and the cluster and connect targets' servers and demos.
SHELL := /bin/bash
VENV := $(CURDIR)/.venv
export REFRESHABLE_HOME := $(CURDIR)
export DBT_PROFILES_DIR := $(CURDIR)/profiles
export PATH := $(VENV)/bin:$(PATH)

# Test processes, each with one shared SparkSession; test files are spread over them.
PYTEST_WORKERS ?= 2
PYTEST_ARGS ?=
# `make test` is the gate: every test but those marked `extended` (pytest.ini); `make test-all`
# runs them all.
TEST_SELECTION ?= -m "not extended"
# `make bench`: scale factor of the main runs, and the scaling run's other scale factors.
BENCH_SF ?= 0.1
BENCH_SCALING ?= 0.02,0.05
LINTED := adapter_plugin tests python_models bench scripts

.PHONY: setup demo test test-all soak lint clean bench cluster-start cluster-stop cluster-status demo-cluster \
	connect-start connect-stop connect-status demo-connect

setup:
	@scripts/bootstrap.sh

demo: setup
	@scripts/demo.sh

# A Spark standalone master and two workers on 127.0.0.1 for the `cluster` profile target
# (scripts/cluster.sh; ports from REFRESHABLE_CLUSTER_PORT / REFRESHABLE_CLUSTER_WEBUI_PORT).
cluster-start: setup
	@scripts/cluster.sh start

cluster-stop:
	@scripts/cluster.sh stop

cluster-status:
	@scripts/cluster.sh status

# The demo with executors on the standalone cluster; the cluster is stopped afterwards, also
# when the demo fails.
demo-cluster: setup
	@status=0; scripts/cluster.sh start && DBT_TARGET=cluster scripts/demo.sh || status=$$?; \
	  scripts/cluster.sh stop; exit $$status

# A Spark Connect server on 127.0.0.1 for the `connect` profile target
# (scripts/connect_server.py; port from REFRESHABLE_CONNECT_PORT, default 15002).
connect-start: setup
	@python scripts/connect_server.py start

connect-stop:
	@python scripts/connect_server.py stop

connect-status:
	@python scripts/connect_server.py status

# The demo through the Spark Connect server; the server is stopped afterwards, also when
# the demo fails.
demo-connect: setup
	@status=0; python scripts/connect_server.py start && DBT_TARGET=connect scripts/demo.sh \
	  || status=$$?; python scripts/connect_server.py stop; exit $$status

# TPC-H benchmark (bench/): refreshable against a rebuild, one MERGE and dbt incremental.
# Larger: make bench BENCH_SF=1 BENCH_SCALING=0.1,0.5
bench: setup
	@python bench/run.py --sf $(BENCH_SF) --scaling $(BENCH_SCALING)

test: setup
	@echo "[test] ruff"
	@ruff check $(LINTED)
	@echo "[test] pytest"
	@python -m pytest -n $(PYTEST_WORKERS) --dist loadfile --no-loadscope-reorder $(TEST_SELECTION) \
	  $(PYTEST_ARGS)

test-all:
	@$(MAKE) --no-print-directory test TEST_SELECTION=

# Kill -9 soak (tests/soak): SOAK_ROUNDS `dbt run`s on a Spark Connect server, each SIGKILLed
# at a random moment and run again; main must equal the snapshot after every round.
SOAK_ROUNDS ?= 30
SOAK_SEED ?= 1
soak: setup
	@REFRESHABLE_SOAK_ROUNDS=$(SOAK_ROUNDS) REFRESHABLE_SOAK_SEED=$(SOAK_SEED) \
	  python -m pytest -p no:randomly -s tests/soak

lint: setup
	@ruff check $(LINTED)
	@ruff format --check $(LINTED)

clean:
	rm -rf .spark/warehouse .spark/metastore_db .spark/bench .spark/connect .spark/cluster target logs
