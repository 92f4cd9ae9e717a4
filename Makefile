# The two commands of the README: `make demo` and `make test`. Both bootstrap first.
SHELL := /bin/bash
VENV := $(CURDIR)/.venv
export REFRESHABLE_HOME := $(CURDIR)
export DBT_PROFILES_DIR := $(CURDIR)/profiles
export PATH := $(VENV)/bin:$(PATH)

# Test processes, each with one shared SparkSession; test files are spread over them.
PYTEST_WORKERS ?= 2
PYTEST_ARGS ?=

.PHONY: setup demo test lint clean

setup:
	@scripts/bootstrap.sh

demo: setup
	@scripts/demo.sh

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
