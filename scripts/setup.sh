#!/usr/bin/env bash
# Installs every system and Python dependency HeterPS needs. Idempotent: when everything is
# already present it only checks, quietly, and returns within a second or two.
set -euo pipefail

DEB_PACKAGES=(
  cmake ninja-build ccache g++ python3 python3-pip
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libdnnl-dev libgtest-dev libgmock-dev nlohmann-json3-dev librocksdb-dev
  zlib1g-dev libzstd-dev libedit-dev libcurl4-openssl-dev libxml2-dev
  openmpi-bin libopenmpi-dev openssh-client clang-tidy
)
# pybind11 (2.12+, for NumPy 2) builds the Python bindings; pytest runs
# their tests.
PY_PACKAGES=(onnx onnxruntime numpy "pybind11>=2.12" pytest)

missing=()
for pkg in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c "import onnx, onnxruntime, numpy, pytest, pybind11
assert tuple(map(int, pybind11.__version__.split('.')[:2])) >= (2, 12)" 2>/dev/null; then
  echo "setup: installing Python packages: ${PY_PACKAGES[*]}"
  "$PYTHON" -m pip install -q --root-user-action=ignore --disable-pip-version-check "${PY_PACKAGES[@]}"
fi
