// A training plan takes the step shape the cost model prices best of those
// the options allow (docs/Planning.md, "Step shapes").
//
// With lookups on the GPU, passes through a pass cache in its memory beat
// pulling every step's rows from the host's server.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/h100-host.yaml strategy=gpu-only throughput=1e9 batch=512 pass-steps=32 pass-distinct-fraction=0.05" %s | FileCheck %s --check-prefix=GPU
// GPU: hps.plan = {{{.*}}pass_cache_device = "gpu", pass_memory_bytes = {{[0-9]+}} : i64, pass_steps = 32 : i64, price_per_hour
// GPU-SAME: solve_seconds = {{[^,]+}}, stages
// The plan shows each shape's price: passes about 10x the direct step.
// GPU-SAME: step_shapes = [{cost_per_million_samples = {{[^,]+}}, feasible = false, pass_steps = 0 : i64, sparse_staleness = 0 : i64, throughput = {{1[0-9][0-9][0-9][0-9][0-9]\.[0-9]+}} : f64}, {cost_per_million_samples = {{[^,]+}}, feasible = false, pass_steps = 32 : i64, sparse_staleness = 0 : i64, throughput = {{1[0-9][0-9][0-9][0-9][0-9][0-9]\.[0-9]+}} : f64}]
//
// Without passes on offer, a stale push overlaps the GPU's next step.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/h100-host.yaml strategy=gpu-only throughput=1e9 batch=512 sparse-staleness=1" %s | FileCheck %s --check-prefix=STALE
// STALE: hps.plan = {{{.*}}pass_memory_bytes = {{[0-9]+}} : i64, price_per_hour
// STALE-SAME: solve_seconds = {{[^,]+}}, sparse_staleness = 1 : i64, stages
//
// With lookups on the CPU beside the server, the cache's index costs what the
// server's does and a stale push shares the cores, so the step stays
// direct and exact.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/h100-host.yaml strategy=cpu-only throughput=1e9 batch=512 pass-steps=32 pass-distinct-fraction=0.05 sparse-staleness=1" %s | FileCheck %s --check-prefix=CPU
// CPU: hps.plan = {{{.*}}pass_memory_bytes = {{[0-9]+}} : i64, price_per_hour
// CPU-SAME: solve_seconds = {{[^,]+}}, stages
//
// A class of 1e11 GiB (memory_gib may be up to 1e12): the bound is kept to
// 2^62 bytes; its bytes passed int64 and the plan held a negative bound
// (before 2026-12-02).
// RUN: sed -e 's/memory_gib: [0-9]*/memory_gib: 1e11/' %S/../../../clusters/h100-host.yaml > %t.yaml
// RUN: heterps-opt --hps-place="cluster=%t.yaml strategy=cpu-only throughput=1e9 batch=512" %s | FileCheck %s --check-prefix=HUGE
// HUGE: hps.plan = {{{.*}}pass_memory_bytes = 4611686018427387904 : i64
//
// Inference has one step.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/h100-host.yaml strategy=gpu-only throughput=1e9 batch=512 pass-steps=32 sparse-staleness=1 inference=true" %s | FileCheck %s --check-prefix=INFERENCE
// INFERENCE: hps.plan = {{{.*}}price_per_hour
// INFERENCE-SAME: solve_seconds = {{[^,]+}}, stages
// INFERENCE-NOT: step_shapes
//
// RUN: not heterps-opt --hps-place="cluster=%S/../../../clusters/h100-host.yaml throughput=10 sparse-staleness=2" %s 2>&1 | FileCheck %s --check-prefix=BADSTALE
// BADSTALE: error: hps-place: sparse-staleness must be 0 or 1
// RUN: not heterps-opt --hps-place="cluster=%S/../../../clusters/h100-host.yaml throughput=10 pass-steps=8 pass-distinct-fraction=1.5" %s 2>&1 | FileCheck %s --check-prefix=BADFRACTION
// BADFRACTION: error: hps-place: pass-distinct-fraction must be in (0, 1]
func.func @main(%ids: tensor<512x26xi64>) -> tensor<512x1xf32> {
  %t = hps.weight "emb" dense<0.01> : tensor<2600000x16xf32>
  %w1 = hps.weight "w1" dense<0.01> : tensor<16x256xf32>
  %w2 = hps.weight "w2" dense<0.01> : tensor<256x1xf32>
  %e = hps.embedding_lookup %t, %ids {pooling = #hps<embedding_pooling sum>} : (tensor<2600000x16xf32>, tensor<512x26xi64>) -> tensor<512x16xf32> loc("embedding")
  %h1 = hps.gemm %e, %w1 : (tensor<512x16xf32>, tensor<16x256xf32>) -> tensor<512x256xf32> loc("fc1")
  %r1 = hps.relu %h1 : tensor<512x256xf32> loc("relu1")
  %o = hps.gemm %r1, %w2 : (tensor<512x256xf32>, tensor<256x1xf32>) -> tensor<512x1xf32> loc("fc2")
  %s = hps.sigmoid %o : tensor<512x1xf32> loc("prob")
  return %s : tensor<512x1xf32>
}
