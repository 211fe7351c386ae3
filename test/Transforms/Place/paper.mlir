// Under the paper preset a CTR model splits the HeterPS way: the sparse,
// IO-bound embedding lookup (1000 multi-hot ids per sample, sum-pooled) runs
// on cheap CPU units next to the parameter server, the wide GEMMs on a GPU.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml strategy=dp throughput=200000 batch=512" %s | FileCheck %s
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml strategy=dp throughput=200000 batch=512" %s 2>&1 | FileCheck %s --check-prefix=STEP
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml strategy=rl throughput=200000 seed=7 batch=512" %s | FileCheck %s
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml strategy=greedy throughput=200000 batch=512" %s | FileCheck %s --check-prefix=ANY
// An inference plan has no pass cache.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml strategy=dp throughput=200000 batch=512 inference=true" %s | FileCheck %s --check-prefix=INFERENCE

// Each stage says the memory one replica needs (a whole micro-batch of 512:
// replicas add throughput, not memory); a pass cache may take 0.8 of what
// the lookup stage leaves of a cpu.xeon's 32 GiB:
// 0.8 x (34359738368 - 65601536) = 27435309465.
// CHECK: module attributes {hps.plan = {{{.*}}feasible = true{{.*}}pass_memory_bytes = 27435309465 : i64{{.*}}stages = [{device = #hps.device<"cpu.xeon">, layers = ["embedding"], memory_bytes = 65601536 : i64, replicas = 9{{.*}}}, {device = #hps.device<"gpu.v100">, layers = ["squash", "fc1", "relu1", "fc2", "relu2", "fc3", "prob"], memory_bytes = {{[0-9]+}} : i64, replicas = 5
// Training runs steps: the cheapest pipeline meeting 200,000 (7 + 3
// replicas, 202,744 samples/s) reaches only 171,590 in steps of 32
// micro-batches, so the search raised its target until steps did: 9 + 5
// replicas, 257,450 full, steps of 29 micro-batches 200,753, and no
// warning.
// STEP-NOT: warning
// STEP: remark: the cheapest pipeline meeting the target trains steps of at most 32 micro-batches at 171590.2 samples/s; searched again 3 times for steps that reach it, at 21% more per sample
// STEP-NOT: warning
// STEP: micro_batches = 29 : i64{{.*}}step_throughput = 20075{{[0-9]}}.{{[0-9]+}} : f64
// CHECK-LABEL: func @main
// CHECK: hps.embedding_lookup {{.*}}device = #hps.device<"cpu.xeon">
// CHECK: hps.gemm {{.*}}device = #hps.device<"gpu.v100">
// CHECK: hps.gemm {{.*}}device = #hps.device<"gpu.v100">
// ANY: hps.plan = {{{.*}}feasible = true
// INFERENCE: module attributes {hps.plan = {
// INFERENCE-NOT: pass_memory_bytes
func.func @main(%ids: tensor<512x1000xi64>) -> tensor<512x1xf32> {
  %t = hps.weight "emb" dense<0.01> : tensor<200000000x32xf32>
  %w1 = hps.weight "w1" dense<0.01> : tensor<32x4096xf32>
  %w2 = hps.weight "w2" dense<0.01> : tensor<4096x4096xf32>
  %w3 = hps.weight "w3" dense<0.01> : tensor<4096x1xf32>
  %e = hps.embedding_lookup %t, %ids {pooling = #hps<embedding_pooling sum>} : (tensor<200000000x32xf32>, tensor<512x1000xi64>) -> tensor<512x32xf32> loc("embedding")
  %f = hps.tanh %e : tensor<512x32xf32> loc("squash")
  %h1 = hps.gemm %f, %w1 : (tensor<512x32xf32>, tensor<32x4096xf32>) -> tensor<512x4096xf32> loc("fc1")
  %r1 = hps.relu %h1 : tensor<512x4096xf32> loc("relu1")
  %h2 = hps.gemm %r1, %w2 : (tensor<512x4096xf32>, tensor<4096x4096xf32>) -> tensor<512x4096xf32> loc("fc2")
  %r2 = hps.relu %h2 : tensor<512x4096xf32> loc("relu2")
  %o = hps.gemm %r2, %w3 : (tensor<512x4096xf32>, tensor<4096x1xf32>) -> tensor<512x1xf32> loc("fc3")
  %s = hps.sigmoid %o : tensor<512x1xf32> loc("prob")
  return %s : tensor<512x1xf32>
}
