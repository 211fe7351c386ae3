#!/usr/bin/env bash
# Sets up, builds and runs the main job on a shipped model: import an ONNX
# model into the hps dialect, legalize it, place it on a cluster with the RL
# scheduler, partition it into pipeline stages, and summarize the result.
# Usage: scripts/demo.sh [MODEL.onnx] [CLUSTER.yaml] [TARGET_SAMPLES_PER_S]
#   (defaults: the NCF recommender, clusters/paper.yaml, 100000 samples/s)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-../shared/models/recsys/ncf_neumf_movielens1m_opset7.onnx}
CLUSTER=${2:-clusters/paper.yaml}
TARGET=${3:-100000}
bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
export BUILD_DIR
bash scripts/build.sh >/dev/null
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
bin="$BUILD_DIR/bin"
"$bin/heterps-translate" --mlir-print-debuginfo --import-onnx "$MODEL" \
  -o "$OUT/imported.mlir"
"$bin/heterps-opt" --mlir-print-debuginfo --hps-legalize-onnx "$OUT/imported.mlir" \
  -o "$OUT/legalized.mlir"
python3 scripts/summarize.py "$OUT/legalized.mlir" --model "$MODEL"
"$bin/heterps-opt" --mlir-print-debuginfo \
  --hps-place="cluster=$CLUSTER throughput=$TARGET strategy=rl" \
  --hps-partition --hps-verify-partition "$OUT/legalized.mlir" -o "$OUT/placed.mlir"
"$bin/heterps-translate" --hps-to-plan "$OUT/placed.mlir" -o "$OUT/plan.json"
python3 scripts/summarize_plan.py "$OUT/plan.json"
