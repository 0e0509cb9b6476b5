#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite. `.ci/run` calls exactly this.
# Order: style (ruff), types (mypy, strict), the import contracts
# (lint-imports), then pytest; the first that fails stops the run. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
# A venv cut short while it was made (no pip in it) is made again.
.venv/bin/python -m pip --version >/dev/null 2>&1 || "$PY" -m venv --clear .venv
# The locked versions (requirements/dev.txt, with hashes; `scripts/lock` refreshes it), then
# elopipe itself with the locked build backend, installed by uv (requirements/tools.txt, which pip
# installs: the same hashes checked, in seconds rather than a minute); `pip check` fails when
# pyproject.toml asks for something the lock lacks.
PIP=(.venv/bin/python -m pip --disable-pip-version-check)
"${PIP[@]}" install -q --require-hashes -r requirements/tools.txt
UV=(.venv/bin/uv pip install --quiet --python .venv/bin/python)
# Compiled to bytecode as pip compiles what it installs: where PYTHONDONTWRITEBYTECODE is set, a
# package installed without it is compiled again by every process that imports it (Prefect: 1.4
# CPU-s more per `elopipe run`, and the tests start hundreds of processes).
"${UV[@]}" --compile-bytecode --require-hashes -r requirements/dev.txt
"${UV[@]}" --no-deps --no-build-isolation -e .
.venv/bin/python -m compileall -q elopipe flows
"${PIP[@]}" check
# The HTML report test renders pages in headless Chromium (Debian's package). Install it when we
# can (root with apt); otherwise that one test is skipped with a message.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "note: could not install chromium; the browser test will be skipped"
fi
export PREFECT_SERVER_ANALYTICS_ENABLED=false DO_NOT_TRACK=1
SRC=(elopipe flows tests bench)

# pytest rewrites the asserts of every test module as it imports it, in each of its two workers
# (about 4.5 CPU-s a worker), and keeps the result in __pycache__ only where bytecode may be
# written. Done once here, while the checks below run on one core: the workers then read it.
# Errors are pytest's own to report, in its run below.
env -u PYTHONDONTWRITEBYTECODE .venv/bin/python -m pytest --collect-only -q -p no:cacheprovider >/dev/null 2>&1 &
REWRITE=$!
trap 'kill "$REWRITE" 2>/dev/null || true' EXIT

echo "== ruff"
.venv/bin/ruff check "${SRC[@]}"
.venv/bin/ruff format --check "${SRC[@]}"

echo "== mypy"
.venv/bin/mypy

echo "== import contracts"
.venv/bin/lint-imports --no-cache

echo "== pytest"
wait "$REWRITE" || true
# Two workers; the tests that need the Prefect server or the Dask cluster share one of them
# (tests/conftest.py), so the session still starts one of each; the other tests of a module run
# in one worker, which makes the module's fixtures once (groups holding a slow test are given
# first, then the others by size).
exec .venv/bin/python -m pytest -n 2 --dist loadgroup "$@"
