// No placement fits in memory (two 1 MiB weights, 1 MiB devices): a plan
// no device can hold is an error naming the stage and both figures, and
// the pass fails (stages built from it would fail only when run).
//
// RUN: not heterps-opt --hps-place="cluster=%S/Inputs/fits-nowhere.yaml throughput=1 strategy=dp inference=1" %s 2>&1 | FileCheck %s
// CHECK: error: strategy dp found no plan that cluster 'fits-nowhere' can run at 256 samples per step: stage 'l0'..'l2' needs 0.003418 GiB on each replica, more than the 0.001 GiB of {{cpu|gpu}}.small (its memory_gib)
// CHECK-NOT: hps.plan
//
// allow-unrunnable keeps the plan, with a warning; its
// best_reachable_throughput is 0, not the throughput of a plan no device
// can hold (907,058 before 2026-12-01).
// RUN: heterps-opt --hps-place="cluster=%S/Inputs/fits-nowhere.yaml throughput=1 strategy=dp inference=1 allow-unrunnable=1" %s 2>&1 | FileCheck %s --check-prefix=KEPT
// KEPT: warning: strategy dp found no plan that cluster 'fits-nowhere' can run
// KEPT: hps.plan = {{{.*}}best_reachable_throughput = 0.000000e+00 : f64
//
// greedy's placement (l0 and l2 on the GPUs, l1 on a CPU) took 2 + 2 of
// the 2 GPUs; its plan now keeps the counts: the fastest placement
// provisioned within them, memory aside.
// RUN: heterps-opt --hps-place="cluster=%S/Inputs/fits-nowhere.yaml throughput=1 strategy=greedy inference=1 allow-unrunnable=1" %s 2>/dev/null | FileCheck %s --check-prefix=GREEDY
// GREEDY: stages = [{device = #hps.device<"gpu.small">, layers = ["l0", "l1", "l2"], {{.*}}replicas = 2 : i64, {{[^{]*}}}]
func.func @main(%x: tensor<?x512xf32>) -> tensor<?x512xf32> {
  %w0 = hps.weight "w0" dense<0.01> : tensor<512x512xf32>
  %v0 = hps.gemm %x, %w0 : (tensor<?x512xf32>, tensor<512x512xf32>) -> tensor<?x512xf32> loc("l0")
  %v1 = hps.relu %v0 : tensor<?x512xf32> loc("l1")
  %w2 = hps.weight "w2" dense<0.01> : tensor<512x512xf32>
  %v2 = hps.gemm %v1, %w2 : (tensor<?x512xf32>, tensor<512x512xf32>) -> tensor<?x512xf32> loc("l2")
  return %v2 : tensor<?x512xf32>
}
