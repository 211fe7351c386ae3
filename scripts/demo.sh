#!/usr/bin/env bash
# Sets up, builds and runs the main job on a shipped model: `heterps compile`
# imports the ONNX model, legalizes it, places every layer on the cluster's
# device classes with the RL scheduler for the target throughput, splits it
# into pipeline stages and builds the stage programs (C++ on oneDNN for CPU
# classes, CUDA for GPU classes); `heterps run` runs the bundle on inputs and
# the outputs are checked against onnxruntime.
# Usage: scripts/demo.sh [MODEL.onnx] [CLUSTER.yaml] [TARGET_SAMPLES_PER_S] [BATCH]
#   (defaults: the NCF recommender, clusters/paper.yaml, 100000 samples/s, 256)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-../shared/models/recsys/ncf_neumf_movielens1m_opset7.onnx}
CLUSTER=${2:-clusters/paper.yaml}
TARGET=${3:-100000}
BATCH=${4:-256}
bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
export BUILD_DIR
bash scripts/build.sh >/dev/null
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
bin="$BUILD_DIR/bin"

# What the model is, after import and legalization.
"$bin/heterps-translate" --mlir-print-debuginfo --import-onnx "$MODEL" \
  -o "$OUT/imported.mlir"
"$bin/heterps-opt" --mlir-print-debuginfo --hps-legalize-onnx "$OUT/imported.mlir" \
  -o "$OUT/legalized.mlir"
python3 scripts/summarize.py "$OUT/legalized.mlir" --model "$MODEL"

# Compile: place, partition, generate and build the stage programs.
"$bin/heterps" compile "$MODEL" --cluster "$CLUSTER" --throughput "$TARGET" \
  --strategy rl --batch "$BATCH" -o "$OUT/bundle"
python3 -c "import json,sys; json.dump(json.load(open(sys.argv[1]))['plan'], open(sys.argv[2], 'w'))" \
  "$OUT/bundle/manifest.json" "$OUT/plan.json"
python3 scripts/summarize_plan.py "$OUT/plan.json"
echo
ls "$OUT/bundle"

# Run it on random inputs and compare with onnxruntime. Without a GPU here,
# GPU-class stages run with their CPU build.
gpu_flag=--gpu-stages-on-cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  gpu_flag=
fi
echo
python3 scripts/compare_with_ort.py "$MODEL" --heterps "$bin/heterps" \
  --cluster "$CLUSTER" --batch "$BATCH" --bundle "$OUT/bundle" $gpu_flag
