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

func.func @main(%x: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %w = hps.weight "w" dense<0.01> : tensor<1024x1024xf32>
  %h = hps.gemm %x, %w : (tensor<64x1024xf32>, tensor<1024x1024xf32>) -> tensor<64x1024xf32> loc("fc")
  %r = hps.relu %h : tensor<64x1024xf32> loc("act")
  return %r : tensor<64x1024xf32>
}
