#!/usr/bin/env bash
# Installs everything semsim needs on Debian 12 and installs semsim itself.
#
#   ./setup.sh           Debian packages (only those missing), then `pip install .`:
#                        the C++ library, the extension semsim._core and the `semsim` command
#   ./setup.sh --tests   the same, plus the test tools (pytest, jsonschema, nbclient, ...),
#                        with the GoogleTest suite built in the same CMake tree (build/py),
#                        so ./run-tests.sh runs CTest there without compiling again
#   --no-pgo             one plain build instead of the profile-guided one (faster to
#                        install, about 10 % slower to simulate)
#
# The profile-guided build (the default) builds the model twice in build/py: first
# instrumented (CMake SEMSIM_PGO=generate), then, after a training run of the bench
# cases and the shipped scenarios (semsim.bench.pgo_training(), ~25 s), again from the
# profile it wrote (SEMSIM_PGO=use). Results are the same bytes either way.
#
# Runs as root or through sudo. PYTHON selects the interpreter (default: python3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

tests=0
pgo=1
for arg in "$@"; do
  case "$arg" in
    --tests) tests=1 ;;
    --no-pgo) pgo=0 ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "setup.sh: error: unknown option '$arg' (allowed: --tests, --no-pgo, --help)" >&2; exit 2 ;;
  esac
done

py=${PYTHON:-python3}
sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi

# --- Debian packages, skipping those already installed --------------------------------
want=(libsimgrid-dev libboost-context1.74-dev libfmt-dev nlohmann-json3-dev libgtest-dev cmake g++ make pkg-config)
if ! command -v "$py" >/dev/null 2>&1; then
  want+=(python3 python3-dev python3-pip)
  py=python3
else
  # The extension needs Python.h; a pyenv/uv/conda Python ships its own, Debian's needs -dev.
  if ! "$py" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
    want+=(python3-dev)
  fi
  if ! "$py" -m pip --version >/dev/null 2>&1; then want+=(python3-pip); fi
fi
missing=()
for pkg in "${want[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup.sh: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup.sh: Debian packages already installed"
fi

# --- Python package -------------------------------------------------------------------
pip=("$py" -m pip install --disable-pip-version-check)
as_pip=()  # whoever installs (and so owns build/py)
# Debian's own Python refuses system-wide installs (PEP 668); this script is the installer.
if "$py" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["stdlib"], "EXTERNALLY-MANAGED")))'; then
  pip+=(--break-system-packages)
  pip=("${sudo[@]}" "${pip[@]}")
  as_pip=("${sudo[@]}")
fi

"${pip[@]}" "scikit-build-core>=0.10" "pybind11>=2.12"
target=.
config=(--config-settings=build-dir=build/py)
if [ "$tests" -eq 1 ]; then
  target=".[test]"
  config+=(--config-settings=cmake.define.SEMSIM_BUILD_TESTS=ON)
else
  config+=(--config-settings=cmake.define.SEMSIM_BUILD_TESTS=OFF)
fi
if [ "$pgo" -eq 1 ]; then
  # Counts from an earlier training would add to this one's.
  "${as_pip[@]}" rm -rf build/py/pgo-profile
  echo "setup.sh: building semsim instrumented for a profile (CMake build tree: build/py)"
  "${pip[@]}" --no-build-isolation --config-settings=build-dir=build/py \
    --config-settings=cmake.define.SEMSIM_BUILD_TESTS=OFF --config-settings=cmake.define.SEMSIM_PGO=generate .
  echo "setup.sh: training run (the profile of the bench cases and shipped scenarios)"
  if "${as_pip[@]}" "$py" -c 'from semsim import bench; bench.pgo_training()'; then
    config+=(--config-settings=cmake.define.SEMSIM_PGO=use)
  else
    echo "setup.sh: warning: the training run failed; building without a profile" >&2
    config+=(--config-settings=cmake.define.SEMSIM_PGO=off)
  fi
else
  config+=(--config-settings=cmake.define.SEMSIM_PGO=off)
fi
echo "setup.sh: building and installing semsim (CMake build tree: build/py)"
"${pip[@]}" --no-build-isolation "${config[@]}" "$target"

# pyenv only sees new console scripts after a rehash.
if command -v pyenv >/dev/null 2>&1; then pyenv rehash || true; fi
if command -v semsim >/dev/null 2>&1; then
  echo "setup.sh: done: $(semsim --version)"
else
  echo "setup.sh: installed, but the 'semsim' command is not on PATH; '$py -m semsim' works the same" >&2
fi
