# Two commands do everything on a fresh machine: `make dev` (local stack) and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Python 3.12 is the Lambda runtime; prefer an explicit interpreter, then pyenv's, then PATH.
PYTHON ?= $(shell for p in $$HOME/.pyenv/versions/3.12*/bin/python3.12 /usr/local/bin/python3.12 /usr/bin/python3.12; do [ -x $$p ] && echo $$p && exit; done; command -v python3.12)
VENV := .venv
BIN := $(VENV)/bin
SAM_VENV := .venv-sam
STAMP := $(VENV)/.installed
# sam finds the runtime's python3.12 on PATH (the venv has one); no telemetry from CI or laptops.
SAM := PATH="$(CURDIR)/$(VENV)/bin:$$PATH" SAM_CLI_TELEMETRY=0 AWS_DEFAULT_REGION=eu-west-1 $(SAM_VENV)/bin/sam

.PHONY: help venv dev test browser-deps spreadsheet-deps smoke deploy-dashboard lint typecheck template-check unit integration bench bench-scale openapi layers build size-check clean

help:
	@echo "make dev    - run the whole service locally: dashboard :3001, API :3000, moto, platform sandbox, demo data"
	@echo "make test   - lint, type-check, template checks and the test suite (what CI runs)"
	@echo "make bench  - benchmarks: prints a table and writes benchmarks/results.json"
	@echo "make bench-scale - the data plane at 100k, 1M and 10M order lines (issue 20): seconds, peak MB, calls"
	@echo "make build  - dependency layers for arm64 + sam build + size check (no Docker)"

$(STAMP): requirements-dev.txt layers/core/requirements.txt layers/ml/requirements.txt layers/numpy/requirements.txt layers/dataplane/requirements.txt
	@test -n "$(PYTHON)" || { echo "Python 3.12 not found: install it (pyenv install 3.12) or pass PYTHON=/path/to/python3.12"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $(STAMP)

venv: $(STAMP)

$(SAM_VENV)/.installed: requirements-sam.txt
	@test -n "$(PYTHON)" || { echo "Python 3.12 not found: install it (pyenv install 3.12) or pass PYTHON=/path/to/python3.12"; exit 1; }
	test -x $(SAM_VENV)/bin/python || $(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-sam.txt
	touch $@

# The local stack turns template.yaml into the functions' IAM roles with the SAM translator, which
# lives in the SAM virtualenv (its pins clash with the service's pydantic).
dev: $(STAMP) $(SAM_VENV)/.installed
	$(BIN)/python -m local

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

template-check: $(STAMP) $(SAM_VENV)/.installed
	$(BIN)/cfn-lint template.yaml
	$(SAM) validate --lint

unit: $(STAMP) $(SAM_VENV)/.installed
	$(BIN)/pytest tests/unit

integration: $(STAMP) $(SAM_VENV)/.installed browser-deps spreadsheet-deps
	$(BIN)/pytest tests/integration

# The dashboard's browser tests drive Debian's Chromium (never a browser Playwright downloads) and
# scan pages with axe-core, pinned by the lockfile beside the tests.
CHROMIUM := /usr/bin/chromium
BROWSER_TESTS := tests/integration/browser
ROOT_CMD := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(CHROMIUM):
	$(ROOT_CMD) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(ROOT_CMD) apt-get install -y -qq chromium

$(BROWSER_TESTS)/node_modules/.installed: $(BROWSER_TESTS)/package.json $(BROWSER_TESTS)/package-lock.json
	npm ci --prefix $(BROWSER_TESTS) --no-audit --no-fund
	touch $@

browser-deps: $(CHROMIUM) $(BROWSER_TESTS)/node_modules/.installed

# Snapshots are opened in a real spreadsheet program by the tests: Debian's LibreOffice Calc without
# its desktop parts (about 80 s to install with apt-get update, 190 MB).
SOFFICE := /usr/bin/soffice

$(SOFFICE):
	$(ROOT_CMD) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(ROOT_CMD) apt-get install -y -qq --no-install-recommends libreoffice-calc-nogui

spreadsheet-deps: $(SOFFICE)

test: lint typecheck template-check browser-deps spreadsheet-deps
	$(BIN)/pytest

$(VENV)/.bench-installed: $(STAMP) requirements-bench.txt
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-bench.txt
	touch $@

bench: $(STAMP) $(SAM_VENV)/.installed $(VENV)/.bench-installed
	$(BIN)/python -m benchmarks

bench-scale: $(STAMP)
	$(BIN)/python -m benchmarks scale

# The contract's calls against a deployed stack (README, "Deploy"): STACK=<name> or URL=<ApiUrl>, with
# SMOKE_API_KEY and SMOKE_USERNAME/SMOKE_PASSWORD (or SMOKE_ID_TOKEN) in the environment.
smoke: $(STAMP)
	$(BIN)/python -m scripts.smoke $(if $(URL),--url $(URL),--stack $(or $(STACK),prediction-service-dev))

deploy-dashboard: $(STAMP)
	$(BIN)/python -m scripts.deploy_dashboard --stack $(or $(STACK),prediction-service-dev)

openapi: $(STAMP)
	$(BIN)/python -m scripts.openapi --write

layers: $(STAMP)
	$(BIN)/python -m scripts.build_layers

build: layers $(SAM_VENV)/.installed
	$(SAM) validate --lint
	$(SAM) build
	$(BIN)/python -m scripts.size_check

clean:
	rm -rf .aws-sam layers/*/python .pytest_cache .mypy_cache .ruff_cache
