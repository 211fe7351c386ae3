// The step search (docs/Planning.md, "The step") replaces the cheapest
// pipeline meeting the target only with a plan whose steps reach it. On
// this two-class cluster no plan's steps of 32 micro-batches reach
// 2,445,985 samples/s: the search used to keep a plan 44% dearer per
// sample whose steps were slower (dp) or faster by 0.8% (brute), so the
// two exact strategies answered differently. Both now keep the cheapest
// pipeline, and say that its steps fall short.
//
// RUN: heterps-opt --hps-place="cluster=%S/Inputs/step-search.yaml throughput=2445984.508764778 strategy=dp batch=256" %s 2>&1 | FileCheck %s
// RUN: heterps-opt --hps-place="cluster=%S/Inputs/step-search.yaml throughput=2445984.508764778 strategy=brute batch=256" %s 2>&1 | FileCheck %s
// CHECK-NOT: remark: the cheapest pipeline meeting the target
// CHECK: warning: training steps of 24 micro-batches reach 2319302.8 samples/s, below the target 2445985; the pipeline full reaches 2567806.1
// CHECK: hps.plan = {{{.*}}cost_per_million_samples = 4.478{{[0-9]+}}E-4 : f64
func.func @main(%x: tensor<?x64xf32>) -> tensor<?x16xf32> {
  %w0 = hps.weight "w0" dense<0.01> : tensor<64x64xf32>
  %v0 = hps.gemm %x, %w0 : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32> loc("l0")
  %v1 = hps.relu %v0 : tensor<?x64xf32> loc("l1")
  %w2 = hps.weight "w2" dense<0.01> : tensor<64x16xf32>
  %v2 = hps.gemm %v1, %w2 : (tensor<?x64xf32>, tensor<64x16xf32>) -> tensor<?x16xf32> loc("l2")
  %v3 = hps.relu %v2 : tensor<?x16xf32> loc("l3")
  return %v3 : tensor<?x16xf32>
}
