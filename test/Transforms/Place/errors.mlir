// RUN: not heterps-opt --hps-place="throughput=10" %s 2>&1 | FileCheck %s --check-prefix=NOCLUSTER
// NOCLUSTER: error: hps-place needs cluster=FILE
// RUN: not heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml" %s 2>&1 | FileCheck %s --check-prefix=NOTARGET
// NOTARGET: error: hps-place needs a positive throughput=SAMPLES_PER_S
// RUN: not heterps-opt --hps-place="cluster=%t.missing.yaml throughput=10" %s 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: {{.*}}missing.yaml{{.*}}
// RUN: printf 'name: broken\nnetwork: {bandwidth_gbps: 1, latency_us: 1}\ndevice_classes:\n  - name: cpu.a\n    kind: tpu\n' > %t.bad.yaml
// RUN: not heterps-opt --hps-place="cluster=%t.bad.yaml throughput=10" %s 2>&1 | FileCheck %s --check-prefix=BADYAML
// BADYAML: error: {{.*}}bad.yaml:4:5: error: device class 'cpu.a' is missing required field 'peak_gflops'
// RUN: not heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml throughput=10 strategy=magic" %s 2>&1 | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: error: hps-place: {{.*}}magic

// An unreachable target is a warning naming the bottleneck, and the plan
// says so; the module is still placed with the best plan found.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/local-cpu.yaml throughput=1e12 strategy=dp" %s 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN
// WARN: warning: loc("fc"): throughput target 1.000000e+12 samples/s cannot be met: the best reachable is {{[0-9.]+}} samples/s; bottleneck layer 'fc' (hps.gemm)
// The warning is one line: the op (or the whole function) is not echoed.
// WARN-NOT: see current operation
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/local-cpu.yaml throughput=1e12 strategy=dp" %s 2>/dev/null | FileCheck %s --check-prefix=INFEASIBLE
// INFEASIBLE: hps.plan = {{{.*}}bottleneck = "fc"{{.*}}feasible = false
// INFEASIBLE: hps.gemm {{.*}}device = #hps.device<"cpu.

// A preset's placement that misses a target another placement meets: the
// warning says so (it said "no plan fits the cluster" before 2026-12-02),
// and where nothing meets it, which figure is the preset's.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml throughput=1e6 strategy=cpu-only" %s 2>&1 >/dev/null | FileCheck %s --check-prefix=PRESET
// PRESET: warning: strategy cpu-only's plan misses the target at 256 samples per step: the slowest stage, layers 'fc'..'act' on 1 x cpu.xeon, reaches at most {{[0-9.]+}} samples/s (target 1000000.0); its heaviest layer is 'fc'; another placement the cluster can run reaches {{[0-9.]+}} samples/s (strategies dp and rl search for the cheapest that meets the target)
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml throughput=1e9 strategy=cpu-only" %s 2>&1 >/dev/null | FileCheck %s --check-prefix=PRESET-SLOWER
// PRESET-SLOWER: warning: loc("fc"): throughput target 1.000000e+09 samples/s cannot be met: the best reachable is {{[0-9.]+}} samples/s by another placement than strategy cpu-only's ({{[0-9.]+}}); bottleneck layer 'fc'

func.func @main(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %w = hps.weight "w" dense<0.01> : tensor<1024x1024xf32>
  %h = hps.gemm %x, %w : (tensor<64x1024xf32>, tensor<1024x1024xf32>) -> tensor<64x1024xf32> loc("fc")
  %r = hps.relu %h : tensor<64x1024xf32> loc("act")
  return %r : tensor<64x1024xf32>
}
