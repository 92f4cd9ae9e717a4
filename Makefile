# The two commands of the README: `make demo` and `make test`. Both bootstrap first.
SHELL := /bin/bash
VENV := $(CURDIR)/.venv
export REFRESHABLE_HOME := $(CURDIR)
export DBT_PROFILES_DIR := $(CURDIR)/profiles
export PATH := $(VENV)/bin:$(PATH)

# Test processes, each with one shared SparkSession; test files are spread over them.
PYTEST_WORKERS ?= 2
PYTEST_ARGS ?=

.PHONY: setup demo test lint clean cluster-start cluster-stop cluster-status demo-cluster

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

test: setup
	@echo "[test] ruff"
	@ruff check adapter_plugin tests python_models
	@echo "[test] pytest"
	@python -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

lint: setup
	@ruff check adapter_plugin tests python_models
	@ruff format --check adapter_plugin tests python_models

clean:
	rm -rf .spark/warehouse .spark/metastore_db target logs
