#!/usr/bin/env bash
# Configures (once) and builds HeterPS into ${BUILD_DIR:-build}.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE:-Release} \
    -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py \
    -DPython3_EXECUTABLE="$(command -v python3)" >/dev/null
fi
cmake --build "$BUILD_DIR" -- ${NINJA_FLAGS:-}
