#!/usr/bin/env bash
# Sets up every dependency, builds HeterPS and runs every test (unit tests
# and the lit suite) through CTest. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
export BUILD_DIR
bash scripts/build.sh
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)"
