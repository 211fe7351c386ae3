// A training plan says how many micro-batches a step takes
// (docs/Planning.md, "The step"): a step fills and drains the pipeline,
// so a plan of two stages, or of a stage with replicas, needs several
// micro-batches a step to reach the target it was provisioned for.
//
// Two stages on the paper's cluster, the CPU stage on 2 replicas: 4
// micro-batches reach the target of 3e6 (3.5e6 of the pipeline's 4.1e6).
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml strategy=sparse-on-cpu throughput=3e6 batch=512" %s | FileCheck %s --check-prefix=TWO
// TWO: hps.plan = {{{.*}}micro_batches = 4 : i64,
// TWO-SAME: step_throughput = 3{{[0-9][0-9][0-9][0-9][0-9][0-9]}}.{{[0-9]+}} : f64
//
// At a target one device meets, one micro-batch.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml strategy=gpu-only throughput=1e6 batch=512" %s | FileCheck %s --check-prefix=ONE
// ONE: hps.plan = {{{.*}}micro_batches = 1 : i64,
//
// One stage of 2 replicas: each takes a micro-batch.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml strategy=gpu-only throughput=3e6 batch=512" %s | FileCheck %s --check-prefix=REPLICAS
// REPLICAS: hps.plan = {{{.*}}micro_batches = 2 : i64,
// REPLICAS-SAME: replicas = 2
//
// A count the user fixes is priced as given: one micro-batch runs the two
// stages one after another, below the target.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml strategy=sparse-on-cpu throughput=3e6 batch=512 micro-batches=1" %s | FileCheck %s --check-prefix=FIXED
// FIXED: hps.plan = {{{.*}}micro_batches = 1 : i64,
// FIXED-SAME: step_throughput = {{[12][0-9][0-9][0-9][0-9][0-9][0-9]}}.{{[0-9]+}} : f64
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml strategy=sparse-on-cpu throughput=3e6 batch=512 micro-batches=1" %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIXEDWARNING
// FIXEDWARNING: warning: training steps of 1 micro-batch reach {{[0-9.]+}} samples/s, below the target 3000000; the pipeline full reaches 4139574.0
// Steps that reach the target say nothing.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml strategy=sparse-on-cpu throughput=3e6 batch=512" %s -o /dev/null 2>&1 | FileCheck %s --allow-empty --check-prefix=NOWARNING
// NOWARNING-NOT: warning
//
// Inference has no step.
// RUN: heterps-opt --hps-place="cluster=%S/../../../clusters/paper.yaml strategy=sparse-on-cpu throughput=3e6 batch=512 inference=true" %s | FileCheck %s --check-prefix=INFERENCE
// INFERENCE: hps.plan =
// INFERENCE-NOT: micro_batches
// INFERENCE-NOT: step_throughput
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
