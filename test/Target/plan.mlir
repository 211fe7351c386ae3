// RUN: heterps-opt --hps-place="cluster=%S/../../clusters/local-cpu.yaml throughput=1000 strategy=dp" %s | heterps-translate --hps-to-plan | FileCheck %s
// RUN: heterps-opt --hps-place="cluster=%S/../../clusters/local-cpu.yaml throughput=1000 strategy=dp" --mlir-print-debuginfo %s | heterps-translate --hps-to-dot | FileCheck %s --check-prefix=DOT
// RUN: not heterps-translate --hps-to-plan %s 2>&1 | FileCheck %s --check-prefix=NOPLAN

// CHECK: {
// CHECK-DAG: "strategy": "dp"
// CHECK-DAG: "feasible": true
// CHECK-DAG: "target": 1000
// CHECK-DAG: "throughput":
// CHECK-DAG: "price_per_hour":
// CHECK-DAG: "cost_per_million_samples":
// CHECK-DAG: "solve_seconds":
// CHECK-DAG: "stages": [
// CHECK-DAG: "device": "cpu.
// CHECK-DAG: "replicas": 1
// CHECK-DAG: "layers": [
// CHECK-DAG: "fc"

// DOT: digraph placed {
// DOT: n0 [label="fc\nhps.gemm\ncpu.{{.*}}", fillcolor="#8ecae6"];
// DOT: n1 [label="act\nhps.relu\ncpu.{{.*}}"
// DOT: n0 -> n1;

// NOPLAN: error: the module has no plan: run heterps-opt --hps-place first

func.func @main(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %w = hps.weight "w" dense<0.01> : tensor<256x256xf32>
  %h = hps.gemm %x, %w : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32> loc("fc")
  %r = hps.relu %h : tensor<64x256xf32> loc("act")
  return %r : tensor<64x256xf32>
}
