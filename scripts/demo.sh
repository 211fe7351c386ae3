#!/usr/bin/env bash
# Sets up, builds and runs the main job on a shipped model: import an ONNX
# model into the hps dialect, legalize it and summarize its layers.
# Usage: scripts/demo.sh [MODEL.onnx]   (default: the NCF recommender)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-../shared/models/recsys/ncf_neumf_movielens1m_opset7.onnx}
bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
export BUILD_DIR
bash scripts/build.sh >/dev/null
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
"$BUILD_DIR/bin/heterps-translate" --import-onnx "$MODEL" -o "$OUT/imported.mlir"
"$BUILD_DIR/bin/heterps-opt" --hps-legalize-onnx "$OUT/imported.mlir" \
  -o "$OUT/legalized.mlir"
python3 scripts/summarize.py "$OUT/legalized.mlir" --model "$MODEL"
