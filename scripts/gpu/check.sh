#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, run from a pack made by
# scripts/gpu/pack.sh on a machine that has CUDA 13, a C++ compiler and
# Python with numpy, onnx and onnxruntime (docs/GPU.md):
#
#   probe      the machine: GPU, driver, compilers, Python packages
#   unit       the CUDA kernels against host references (heterps_rt_gpu_tests)
#              and the pass cache in GPU memory against the host server, bit
#              for bit (heterps_rt_gpu_pass_cache_tests)
#   models     every shipped model compiled with GPU stages (gpu-only, and
#              mixed CPU/GPU plans), the long RNN/GRU/LSTM cases
#              (hps.recurrence), a generated transformer and quantized
#              models (int8 convolutions), run on the GPU, compared with
#              onnxruntime
#   data-dependent  NonZero, Unique, NonMaxSuppression and Compress models
#              (test/Integration/Inputs/data_dependent_models.py) as GPU
#              stages, and a plan with the selection on a CPU stage between
#              GPU stages, run on the GPU against onnxruntime
#   fused      the fused elementwise loops (test/Integration/Inputs/
#              fused_chains.py) run on the GPU give the CPU's bits
#   gradcheck  every gradient rule's CUDA kernels against finite differences
#   train      Wide & Deep trained with GPU stages (gpu-only and sparse-on-cpu)
#              reaches the ground truth's AUC within 0.01
#   train-passes  the CTR model trained with its dense parameters in GPU
#              memory (the default), in passes through the pass cache in
#              GPU memory (--pass-cache-device gpu), also under a memory
#              bound, across checkpoints, resumed from one and sharded
#              over GPUs (--pass-cache-gpus): every loss
#              and parameter bit of the path through the host
#              (--dense-parameters-on-gpu=false)
#   train-recurrent  an LSTM classifier trained 16 steps on the GPU
#              (Recurrent and RecurrentGrad kernels) ends with the CPU
#              run's parameters (1e-5 relative)
#   bench      training throughput of the CPU-only, GPU-only and
#              heterogeneous plans, each also in passes of 32 steps through
#              the host and the GPU pass cache, and with sparse updates one
#              step late, and with dense parameters through the host
#              instead of GPU memory, plans of several stages also in steps
#              of 4 micro-batches, and rl offered those step shapes,
#              trained as its plan says (bench/training/bench_heterogeneous.py)
#   bench-inference  GPU stages against PyTorch on CUDA
#              (bench/inference/bench_inference.py --gpu; needs onnx2torch,
#              installed from $GPU_WHEELS if Python lacks it)
#
#   scripts/gpu/check.sh [SECTION...]        (default: all but bench)
#
# Environment: GPU_PACK (default .gpupack/pack.tar.xz), MODELS (default
# ../shared/models), GPU_OUT (logs; default /tmp/heterps-gpu-out), JOBS,
# BENCH_FLAGS and INFERENCE_BENCH_FLAGS (extra flags of the two
# benchmarks), GPU_WHEELS (default
# .gpupack/wheels).
# Prints one line per check and `gpu checks: N failed`; exits non-zero on any
# failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pack=${GPU_PACK:-$root/.gpupack/pack.tar.xz}
export MODELS=${MODELS:-$root/../shared/models}
models=$MODELS
out=${GPU_OUT:-/tmp/heterps-gpu-out}
jobs=${JOBS:-$(nproc)}
prefix=/tmp/heterps-gpu
sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(probe unit models data-dependent fused gradcheck train train-passes train-recurrent)
failed=0

say() { printf '%s\n' "$*"; }
verdict() { # NAME STATUS LOG
  if [ "$2" -eq 0 ]; then say "ok    $1"; else
    say "FAIL  $1 (log: $3)"; tail -n 15 "$3" | sed 's/^/      /'
    failed=$((failed + 1))
  fi
}

[ -f "$pack" ] || { say "check.sh: no pack at $pack (run scripts/gpu/pack.sh)"; exit 2; }
[ -d "$models" ] || { say "check.sh: no models at $models (set MODELS)"; exit 2; }
rm -rf "$prefix" && mkdir -p "$prefix/work" "$out"
tar -xJf "$pack" -C "$prefix" || { say "check.sh: cannot unpack $pack"; exit 2; }

# CUDA's libraries where this machine keeps them: the toolkit and, for cuDNN
# and cuBLAS, Python's nvidia-* wheels.
cuda_dirs=""
for name in libcudart.so.13 libcublas.so.13 libcudnn.so.9; do
  found=$(find /usr/local/cuda/lib64/ /usr/local/cuda/lib/ /usr/lib/x86_64-linux-gnu/ \
    /usr/local/lib /opt /usr/lib/python3 -name "$name" 2>/dev/null | head -n 1)
  [ -n "$found" ] && cuda_dirs="$cuda_dirs:$(dirname "$found")"
done
export LD_LIBRARY_PATH="${cuda_dirs#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export HETERPS_RT_INCLUDE="$root/runtime/include" HETERPS_RT_LIB="$prefix/lib"
export PATH="$prefix/bin:/usr/local/cuda/bin:$PATH"
# Stage programs for this GPU's architecture alone: half the nvcc time of
# the default list (80 and 90).
if [ -z "${HETERPS_CUDA_ARCH:-}" ]; then
  capability=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2> /dev/null | head -n 1)
  [ -n "$capability" ] && export HETERPS_CUDA_ARCH=${capability/./}
fi
heterps="$prefix/bin/heterps"
py=python3

section_probe() {
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    $py -c 'import onnxruntime; print("onnxruntime providers:", onnxruntime.get_available_providers())'
    $py -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())' 
    grep PRETTY_NAME /etc/os-release; nproc
    g++ --version | head -n 1; nvcc --version | tail -n 1
    $py -c 'import numpy, onnx, onnxruntime; print("numpy", numpy.__version__, "onnx", onnx.__version__, "onnxruntime", onnxruntime.__version__)'
    say "CUDA libraries: $LD_LIBRARY_PATH"
    say "stage programs for sm_${HETERPS_CUDA_ARCH:-default}"
    ! ldd "$heterps" "$prefix/lib/libheterps_rt_gpu.so" | grep "not found"
  } > "$out/probe.log" 2>&1
  local status=$?
  sed 's/^/      /' "$out/probe.log"
  verdict probe $status "$out/probe.log"
}

section_unit() {
  local test status
  for test in heterps_rt_gpu_tests heterps_rt_gpu_pass_cache_tests; do
    "$prefix/bin/$test" > "$out/$test.log" 2>&1
    status=$?
    grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/$test.log" | sed 's/^/      /'
    grep -q "SKIPPED" "$out/$test.log" && status=1 # a GPU machine skips nothing
    verdict "unit: $test" $status "$out/$test.log"
  done
}

# name | model | compare_with_ort.py flags
model_cases() {
  local paper="--cluster $root/clusters/paper.yaml --throughput 100000"
  cat <<EOF
resnet20-gpu-only|$models/cnn/resnet20_cifar10_opset12.onnx|$paper --strategy gpu-only
resnet20-rl|$models/cnn/resnet20_cifar10_opset12.onnx|$paper --strategy rl
attention-gpu-only|$models/transformer/self_attention_block_ezkl_opset10.onnx|$paper --strategy gpu-only --batch 4 --samples 9
mnist-mlp-gpu-only|$models/mlp/mnist_mlp_onnxmlir_opset13.onnx|$paper --strategy gpu-only
mnist-mlp-rl|$models/mlp/mnist_mlp_onnxmlir_opset13.onnx|$paper --strategy rl
ncf-gpu-only|$models/recsys/ncf_neumf_movielens1m_opset7.onnx|$paper --strategy gpu-only
mnist-8-gpu-only|$models/cnn/mnist-8.onnx|$paper --strategy gpu-only
mnist-8-gpu-only-reference|$models/cnn/mnist-8.onnx|$paper --strategy gpu-only --reference-dir $models/cnn/mnist-8_test_data/test_data_set_0
squeezenet-gpu-only|$models/structure_only/light_squeezenet.onnx|--cluster $root/clusters/paper.yaml --throughput 10000 --strategy gpu-only
EOF
}

run_model_case() { # NAME|MODEL|FLAGS
  IFS='|' read -r name model flags <<< "$1"
  # shellcheck disable=SC2086
  $py "$root/scripts/compare_with_ort.py" "$model" --heterps "$heterps" \
    $flags --expect-gpu-stage > "$out/models-$name.log" 2>&1
  echo "$name $?"
}
export -f run_model_case
section_models() {
  export root models heterps out py
  # A generated CTR model under the dp plan: CPU and GPU stages in one
  # pipeline, embeddings beside the parameter server.
  $py "$root/bench/generate_ctr_model.py" --layers 20 --seed 3 --batch 32 \
    --max-rows 5000 -o "$prefix/work/ctr20.onnx" > /dev/null
  # RNN, GRU and LSTM over 600 steps: one Recurrent kernel per direction.
  $py "$root/test/Integration/Inputs/long_recurrent_cases.py" \
    "$prefix/work/long" > /dev/null
  local cases long
  long=$(for dir in "$prefix"/work/long/test_*; do
    echo "recurrence-${dir##*/test_opset14_}|$dir/model.onnx|--cluster $root/clusters/paper.yaml --throughput 100000 --strategy gpu-only --reference-dir $dir/test_data_set_0"
  done)
  # A transformer block of the opset-24 ops (attention, RMS norm, rotary
  # embedding), and quantized models: int8 convolutions (IntegerConv) and
  # the ResNet-20 quantized by onnxruntime in both formats.
  $py "$root/bench/generate_transformer_model.py" --batch 2 --seq 16 --hidden 64 \
    --heads 4 --kv-heads 2 --mlp 96 --max-position 64 -o "$prefix/work/transformer.onnx" > /dev/null
  $py "$root/test/Integration/Inputs/int8_conv_models.py" "$prefix/work/convs.onnx" > /dev/null
  $py "$root/test/Integration/Inputs/quantize_with_ort.py" "$models/cnn/resnet20_cifar10_opset12.onnx" \
    "$prefix/work/resnet20-int8.onnx" --ops Conv,Add,Gemm > /dev/null
  $py "$root/test/Integration/Inputs/quantize_with_ort.py" "$models/cnn/resnet20_cifar10_opset12.onnx" \
    "$prefix/work/resnet20-qdq.onnx" --ops Conv,Gemm --format qdq --opset 13 > /dev/null
  local gpu="--cluster $root/clusters/paper.yaml --throughput 100000 --strategy gpu-only"
  cases=$(model_cases; echo "ctr20-dp|$prefix/work/ctr20.onnx|--cluster $root/clusters/paper.yaml --throughput 1000000 --strategy dp"; echo "$long"
    echo "transformer-gpu-only|$prefix/work/transformer.onnx|$gpu"
    echo "int8-convs-gpu-only|$prefix/work/convs.onnx|$gpu --max-id 256"
    echo "resnet20-int8-gpu-only|$prefix/work/resnet20-int8.onnx|$gpu"
    echo "resnet20-qdq-gpu-only|$prefix/work/resnet20-qdq.onnx|$gpu")
  while read -r name status; do
    verdict "models: $name" "$status" "$out/models-$name.log"
  done < <(printf '%s\n' "$cases" | xargs -d '\n' -P "$jobs" -I{} bash -c 'run_model_case "$1"' _ {} | sort)
}

section_data-dependent() {
  local cluster="$root/clusters/h100-host.yaml"
  {
    $py "$root/test/Integration/Inputs/data_dependent_models.py" "$prefix/bin" \
      "$root/clusters/local-cpu.yaml" "$prefix/work/data-dependent" --gpu-cluster "$cluster" --gpu-device &&
      $py "$root/test/Integration/Inputs/data_dependent_models.py" "$prefix/bin" \
        "$root/clusters/local-cpu.yaml" "$prefix/work/data-dependent-mixed" \
        --mixed-cluster "$root/clusters/paper.yaml" --gpu-device
  } > "$out/data-dependent.log" 2>&1
  local status=$?
  grep -E "^(ok|FAIL)" "$out/data-dependent.log" | sed 's/^/      /'
  verdict "data-dependent: selections and detections on the GPU" $status "$out/data-dependent.log"
}

section_fused() {
  $py "$root/test/Integration/Inputs/fused_chains.py" "$prefix/bin" \
    "$root/clusters/local-cpu.yaml" "$prefix/work/fused" \
    --gpu-cluster "$root/clusters/h100-host.yaml" --gpu-device > "$out/fused.log" 2>&1
  local status=$?
  grep -q "^failed: 0$" "$out/fused.log" || status=1
  grep -E "FAIL|^failed" "$out/fused.log" | sed 's/^/      /'
  verdict "fused: elementwise loops on the GPU, bit for bit with the CPU" $status "$out/fused.log"
}

section_gradcheck() {
  $py "$root/test/Integration/Inputs/gradcheck_ops.py" "$prefix/bin" \
    "$root/clusters/h100-host.yaml" --strategy gpu-only --jobs "$jobs" > "$out/gradcheck.log" 2>&1
  local status=$?
  grep -q "^failed: 0$" "$out/gradcheck.log" || status=1
  grep -E "FAIL|^failed" "$out/gradcheck.log" | sed 's/^/      /'
  verdict "gradcheck: every gradient rule on CUDA kernels (gpu-only)" $status "$out/gradcheck.log"
}

section_train() {
  local work="$prefix/work/train"
  mkdir -p "$work"
  "$heterps" datagen ctr --rows 300000 --seed 3 --model-seed 7 --max-vocab 200 -o "$work/train.tsv" > /dev/null 2>&1
  "$heterps" datagen ctr --rows 20000 --seed 2 --model-seed 7 --max-vocab 200 -o "$work/eval.tsv" 2> "$work/eval.report" > /dev/null
  $py "$root/bench/generate_ctr_model.py" --layout criteo --hidden 32 --buckets 10000 -o "$work/ctr.onnx" > /dev/null
  for strategy in gpu-only sparse-on-cpu; do
    local log="$out/train-$strategy.log"
    {
      "$heterps" compile "$work/ctr.onnx" --cluster "$root/clusters/h100-host.yaml" \
        --throughput 1 --strategy $strategy --train --loss bce --optimizer adagrad \
        --lr 0.2 --batch 256 -o "$work/$strategy.bundle" &&
        grep -q '"device": "gpu' "$work/$strategy.bundle/manifest.json" &&
        "$heterps" run "$work/$strategy.bundle" --train --data "$work/train.tsv" \
          --eval "$work/eval.tsv" --steps 3510 --batch 256 --log-every 500 \
          --threads 4 2> "$work/$strategy.train.log" &&
        cat "$work/$strategy.train.log" &&
        $py "$root/test/Integration/Inputs/check_auc.py" "$work/eval.report" \
          "$work/$strategy.train.log" 0.01
    } > "$log" 2>&1
    local status=$?
    grep -E "^done:|eval|^ok|FAIL" "$log" | tail -n 3 | sed 's/^/      /'
    verdict "train: Wide & Deep, $strategy plan, AUC within 0.01 of the ground truth" $status "$log"
  done
}

section_train-passes() {
  # Dense parameters and the pass cache in GPU memory: the same losses at
  # every step and the same parameter bits as the path through the host,
  # directly, for passes of 7 steps, and for passes cut short by a memory
  # bound (1 MiB: a step's ~5,400 rows take ~340 KiB in GPU memory) with
  # checkpoints inside passes, resumed from the checkpoint of step 20, and
  # with the pass's keys sharded over GPUs (--pass-cache-gpus).
  local work="$prefix/work/passes" inputs="$root/test/Integration/Inputs"
  mkdir -p "$work"
  local run="--train --data $work/d.tsv --steps 40 --batch 512 --hash-buckets 1000 --log-every 10"
  # Three shards of the pass cache: on devices 0, the last and 0 again
  # (all on device 0 where there is one GPU).
  local gpus shards
  gpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU')
  shards="0,$((${gpus:-1} > 0 ? ${gpus:-1} - 1 : 0)),0"
  {
    # shellcheck disable=SC2086
    $py "$root/bench/generate_ctr_model.py" --layout criteo --hidden 64,32 --buckets 1000 \
      --batch 256 -o "$work/m.onnx" &&
      "$heterps" datagen ctr --rows 30000 --seed 1 --model-seed 7 -o "$work/d.tsv" &&
      "$heterps" compile "$work/m.onnx" --cluster "$root/clusters/h100-host.yaml" \
        --throughput 1 --strategy gpu-only --train --loss bce --optimizer adam --lr 0.05 \
        --batch 256 -o "$work/b" &&
      "$heterps" run "$work/b" $run --loss-log "$work/host.loss" --dump-parameters "$work/host" \
        --dense-parameters-on-gpu=false &&
      "$heterps" run "$work/b" $run --loss-log "$work/direct.loss" --dump-parameters "$work/direct" &&
      "$heterps" run "$work/b" $run --loss-log "$work/gpu.loss" --dump-parameters "$work/gpu" \
        --pass-steps 7 --pass-cache-device gpu &&
      "$heterps" run "$work/b" $run --loss-log "$work/sharded.loss" --dump-parameters "$work/sharded" \
        --pass-steps 7 --pass-cache-device gpu --pass-cache-gpus "$shards" &&
      "$heterps" run "$work/b" $run --loss-log "$work/bound.loss" --dump-parameters "$work/bound" \
        --pass-steps 7 --pass-cache-device gpu --pass-memory 1M --checkpoint-dir "$work/ckpt" \
        --checkpoint-every 10 --keep-checkpoints 5 2> "$work/bound.log" &&
      grep -E "^passes: .* to [1-6] steps" "$work/bound.log" &&
      rm -rf "$work/ckpt/step-30" "$work/ckpt/step-40" &&
      "$heterps" run "$work/b" $run --loss-log "$work/resumed.loss" --dump-parameters "$work/resumed" \
        --checkpoint-dir "$work/ckpt" --resume &&
      diff "$work/host.loss" "$work/direct.loss" && diff "$work/host.loss" "$work/gpu.loss" &&
      diff "$work/host.loss" "$work/bound.loss" && diff "$work/host.loss" "$work/sharded.loss" &&
      diff <(sed -n '21,$p' "$work/host.loss") "$work/resumed.loss" &&
      for run in direct gpu sharded bound resumed; do
        $py "$inputs/compare_training.py" params "$work/host" "$work/$run" || exit 1
      done
  } > "$out/train-passes.log" 2>&1
  local status=$?
  tail -n 3 "$out/train-passes.log" | sed 's/^/      /'
  verdict "train-passes: dense parameters and the pass cache in GPU memory train bit for bit as through the host" $status "$out/train-passes.log"
}

section_train-recurrent() {
  local work="$prefix/work/recurrent" inputs="$root/test/Integration/Inputs"
  mkdir -p "$work"
  local flags="--train --loss softmax-ce --optimizer adam --lr 0.02 --batch 32"
  local data="--data-input x=$work/t40/x.npy --data-input label=$work/t40/label.npy --batch 32 --steps 16"
  {
    # shellcheck disable=SC2086
    $py "$inputs/sequence_classification.py" data "$work/t40" --rows 256 --steps 40 &&
      $py "$inputs/sequence_classification.py" model "$work/lstm.onnx" --steps 40 &&
      "$heterps" compile "$work/lstm.onnx" --cluster "$root/clusters/paper.yaml" \
        --strategy gpu-only --throughput 100000 $flags -o "$work/gpu" &&
      "$heterps" compile "$work/lstm.onnx" --cluster "$root/clusters/local-cpu.yaml" \
        --strategy cpu-only --throughput 1 $flags -o "$work/cpu" &&
      grep -q "RecurrentGrad" "$work/gpu/stage_0.cu" &&
      "$heterps" run "$work/gpu" --train $data --dump-parameters "$work/gpu-params" &&
      "$heterps" run "$work/cpu" --train $data --dump-parameters "$work/cpu-params" &&
      $py "$inputs/compare_training.py" params "$work/gpu-params" "$work/cpu-params" --rtol 1e-5
  } > "$out/train-recurrent.log" 2>&1
  local status=$?
  tail -n 2 "$out/train-recurrent.log" | sed 's/^/      /'
  verdict "train-recurrent: LSTM trained on the GPU ends with the CPU's parameters" $status "$out/train-recurrent.log"
}

section_bench() {
  # shellcheck disable=SC2086
  $py "$root/bench/training/bench_heterogeneous.py" --heterps "$heterps" \
    --cluster "$root/clusters/h100-host.yaml" --threads "$jobs" --pass-steps 32 \
    --pass-cache-devices host,gpu --sparse-staleness --dense-through-host \
    --micro-batches 4 ${BENCH_FLAGS:-} \
    --out "$out/heterogeneous-training.md" > "$out/bench.log" 2>&1
  local status=$?
  tail -n 20 "$out/bench.log" | sed 's/^/      /'
  verdict "bench: heterogeneous training plans" $status "$out/bench.log"
}

section_bench-inference() {
  if ! $py -c "import onnx2torch" 2> /dev/null; then
    $py -m pip install -q --no-index --no-deps --target "$prefix/site" \
      "${GPU_WHEELS:-$root/.gpupack/wheels}"/*.whl > "$out/pip.log" 2>&1
    export PYTHONPATH="$prefix/site${PYTHONPATH:+:$PYTHONPATH}"
  fi
  # shellcheck disable=SC2086
  $py "$root/bench/inference/bench_inference.py" --gpu --heterps "$heterps" \
    --out "$out/inference-gpu.md" ${INFERENCE_BENCH_FLAGS:-} > "$out/bench-inference.log" 2>&1
  local status=$?
  grep -E "^\||FAILED|not applicable" "$out/bench-inference.log" | sed 's/^/      /'
  verdict "bench-inference: GPU stages against PyTorch on CUDA" $status "$out/bench-inference.log"
}

for section in "${sections[@]}"; do
  if declare -F "section_$section" > /dev/null; then
    "section_$section"
  else
    say "check.sh: unknown section '$section'"; failed=$((failed + 1))
  fi
done
say "gpu checks: $failed failed"
[ "$failed" -eq 0 ]
