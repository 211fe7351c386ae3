#!/usr/bin/env bash
# Sets up, builds and runs the main job.
#
# Without arguments: what HeterPS is for. A CTR model (26 embedding tables
# and a 512-256-128 tower) is planned for the paper's heterogeneous cluster
# at 1,000,000 samples/s; the plan splits it across CPU servers (the
# embedding side) and GPUs (the tower), and is printed beside the CPU-only
# and GPU-only plans with their prices; the training bundle is compiled
# through that plan, trained on generated click data with progress lines and
# eval AUC, and the plan picture is written (Graphviz).
#
# With arguments: any model's inference path, checked against onnxruntime.
# Usage: scripts/demo.sh [MODEL.onnx [CLUSTER.yaml [TARGET_SAMPLES_PER_S [BATCH]]]]
#   (cluster clusters/paper.yaml, 100000 samples/s, batch 256 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
export BUILD_DIR
bash scripts/build.sh >/dev/null
bin="$BUILD_DIR/bin"

# Without a GPU here, GPU-class stages run with their CPU build.
gpu_flag=--gpu-stages-on-cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  gpu_flag=
fi

inference_demo() {
  local model=$1 cluster=${2:-clusters/paper.yaml} target=${3:-100000}
  local batch=${4:-256} out
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
  # What the model is, after import and legalization.
  "$bin/heterps-translate" --mlir-print-debuginfo --import-onnx "$model" \
    -o "$out/imported.mlir"
  "$bin/heterps-opt" --mlir-print-debuginfo --hps-legalize-onnx \
    "$out/imported.mlir" -o "$out/legalized.mlir"
  python3 scripts/summarize.py "$out/legalized.mlir" --model "$model"
  # Compile: place, partition, generate and build the stage programs.
  "$bin/heterps" compile "$model" --cluster "$cluster" --throughput "$target" \
    --strategy rl --batch "$batch" -o "$out/bundle"
  python3 -c "import json,sys; json.dump(json.load(open(sys.argv[1]))['plan'], open(sys.argv[2], 'w'))" \
    "$out/bundle/manifest.json" "$out/plan.json"
  python3 scripts/summarize_plan.py "$out/plan.json"
  echo
  python3 scripts/compare_with_ort.py "$model" --heterps "$bin/heterps" \
    --cluster "$cluster" --batch "$batch" --bundle "$out/bundle" $gpu_flag
}

training_demo() {
  local cluster=clusters/paper.yaml target=1000000 batch=512
  local out="$BUILD_DIR/demo"
  rm -rf "$out" && mkdir -p "$out"
  echo "== the model: a CTR recommender (criteo layout: 13 dense features, 26"
  echo "   embedding tables of 100,000 rows x 16, tower 512-256-128)"
  python3 bench/generate_ctr_model.py --layout criteo --hidden 512,256,128 \
    --dim 16 --buckets 100000 --batch "$batch" -o "$out/ctr.onnx"
  "$bin/heterps-translate" --import-onnx --onnx-batch "$batch" "$out/ctr.onnx" \
    -o "$out/imported.mlir"
  "$bin/heterps-opt" --hps-legalize-onnx "$out/imported.mlir" \
    -o "$out/legalized.mlir"

  echo
  echo "== the plan for $cluster at $target samples/s (training), against"
  echo "   running everything on one kind of device"
  local strategy
  for strategy in rl cpu-only gpu-only; do
    # A plan that misses the target warns; the table says so.
    "$bin/heterps-opt" --hps-place="cluster=$cluster throughput=$target strategy=$strategy batch=$batch" \
      "$out/legalized.mlir" -o "$out/placed-$strategy.mlir" 2> "$out/place-$strategy.log"
    "$bin/heterps-translate" --hps-to-plan "$out/placed-$strategy.mlir" \
      -o "$out/plan-$strategy.json"
  done
  python3 scripts/summarize_plan.py "$out/plan-rl.json" \
    --against cpu-only="$out/plan-cpu-only.json" \
    --against gpu-only="$out/plan-gpu-only.json"
  "$bin/heterps-translate" --hps-to-dot "$out/placed-rl.mlir" -o "$out/plan.dot"
  local picture="$out/plan.dot"
  if command -v dot >/dev/null 2>&1 && dot -Tsvg "$out/plan.dot" -o "$out/plan.svg"; then
    picture="$out/plan.svg"
  fi
  echo "   plan picture: $picture (one colour per device class)"

  echo
  echo "== compile the training bundle through that plan"
  "$bin/heterps" compile "$out/ctr.onnx" --cluster "$cluster" \
    --throughput "$target" --strategy rl --batch "$batch" --train --loss bce \
    --optimizer adagrad --lr 0.05 -o "$out/bundle"

  echo
  echo "== train on generated clicks (datagen: a known click model, so the best"
  echo "   reachable AUC is known)"
  "$bin/heterps" datagen ctr --rows 110000 --seed 1 --model-seed 7 \
    -o "$out/train.tsv" > /dev/null 2>&1
  echo "   eval data: $("$bin/heterps" datagen ctr --rows 5000 --seed 2 \
    --model-seed 7 -o "$out/eval.tsv" 2>&1 | tail -1)"
  if [ -n "$gpu_flag" ]; then
    echo "   (no GPU here: the GPU-class stages run their CPU build, so the speed"
    echo "   below is this machine's, not the plan's)"
  fi
  # Steps of the plan's micro-batches (its step line above): 100 of them
  # go over the data about twice.
  "$bin/heterps" run "$out/bundle" --train --data "$out/train.tsv" \
    --eval "$out/eval.tsv" --steps 100 --hash-buckets 100000 --log-every 20 \
    --eval-every 50 $gpu_flag
  echo
  echo "Bundle, plans and data are in $out."
}

if [ $# -eq 0 ]; then
  training_demo
else
  inference_demo "$@"
fi
