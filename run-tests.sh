#!/usr/bin/env bash
# Runs every test: the GoogleTest suite through CTest (in build/py, the tree that
# `./setup.sh --tests` compiled for the Python package), ruff over the Python package
# and its tests (pyproject.toml's [tool.ruff]), and the Python suite with pytest.
# Extra arguments go to pytest (e.g. ./run-tests.sh -k cli).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
py=${PYTHON:-python3}

if [ ! -f build/py/CTestTestfile.cmake ]; then
  echo "run-tests.sh: error: no C++ test build in build/py; run ./setup.sh --tests first" >&2
  exit 2
fi
echo "run-tests.sh: CTest (build/py)"
ctest --test-dir build/py --output-on-failure --no-tests=error -j "$(nproc)"
echo "run-tests.sh: ruff check (python/, tests/python/)"
"$py" -m ruff check
echo "run-tests.sh: pytest (tests/python)"
"$py" -m pytest tests/python -q "$@"
