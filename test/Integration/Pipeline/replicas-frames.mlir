// REQUIRES: onnx-python
// A three-stage pipeline (CPU -> GPU class -> CPU) with two replicas of the
// middle stage, a skip connection from stage 0 to stage 2 and a
// parameter-server table, run on 11 samples with a compiled batch of 4: three
// micro-batches in flight (the last one padded), frames taken by either
// replica, outputs reassembled in order. numpy computes the expected result.
// RUN: rm -rf %t && mkdir -p %t
// RUN: heterps-translate --hps-to-stages %s -o %t/bundle
// RUN: heterps build %t/bundle
// RUN: %python -c "import numpy as np; r = np.random.default_rng(1); np.save('%t/ids.npy', r.integers(0, 10, (11, 3)).astype(np.int64)); np.save('%t/x.npy', r.uniform(-1, 1, (11, 4)).astype(np.float32))"
// RUN: heterps run %t/bundle --input ids=%t/ids.npy --input x=%t/x.npy --output-dir %t/out --gpu-stages-on-cpu --frames 3
// RUN: %python %S/Inputs/check_pipeline.py %t | FileCheck %s
// CHECK: ok 11x4

module attributes {hps.plan = {strategy = "dp", feasible = true}} {
func.func @main(%ids: tensor<4x3xi64> {hps.name = "ids", hps.batched}, %x: tensor<4x4xf32> {hps.name = "x", hps.batched}) -> (tensor<4x4xf32> {hps.name = "y", hps.batched}) attributes {hps.batch = 4 : i64, hps.pipeline = [@stage_0, @stage_1, @stage_2]} {
  hps.send %ids to "ids" : tensor<4x3xi64>
  hps.send %x to "x" : tensor<4x4xf32>
  %y = hps.recv "y" : tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
// e = sum of table rows (table[i][j] = i + j / 4); s = e + x
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %i = hps.recv "ids" : tensor<4x3xi64>
  %x = hps.recv "x" : tensor<4x4xf32>
  %e = hps.ps_pull "table"[%i] {device = #hps.device<"cpu.xeon">, pooling = #hps<embedding_pooling sum>, table_type = tensor<10x4xf32>} : (tensor<4x3xi64>) -> tensor<4x4xf32>
  %s = hps.add %e, %x {device = #hps.device<"cpu.xeon">} : tensor<4x4xf32>
  hps.send %s to "s1" : tensor<4x4xf32>
  hps.send %s to "s2" : tensor<4x4xf32>
  return
}
// h = relu(s @ w), w = 0.5 everywhere
func.func @stage_1() attributes {hps.device = #hps.device<"gpu.v100">, hps.replicas = 2 : i64, hps.stage = 1 : i64} {
  %s = hps.recv "s1" : tensor<4x4xf32>
  %w = hps.weight "w" dense<0.5> : tensor<4x4xf32>
  %h = hps.gemm %s, %w {device = #hps.device<"gpu.v100">} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = hps.relu %h {device = #hps.device<"gpu.v100">} : tensor<4x4xf32>
  hps.send %r to "h" : tensor<4x4xf32>
  return
}
// y = h - s
func.func @stage_2() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 2 : i64} {
  %h = hps.recv "h" : tensor<4x4xf32>
  %s = hps.recv "s2" : tensor<4x4xf32>
  %y = hps.sub %h, %s {device = #hps.device<"cpu.xeon">} : tensor<4x4xf32>
  hps.send %y to "y" : tensor<4x4xf32>
  return
}
func.func private @parameter_server() attributes {hps.parameter_server} {
  %t = hps.weight "table" dense<[[0.0, 0.25, 0.5, 0.75], [1.0, 1.25, 1.5, 1.75], [2.0, 2.25, 2.5, 2.75], [3.0, 3.25, 3.5, 3.75], [4.0, 4.25, 4.5, 4.75], [5.0, 5.25, 5.5, 5.75], [6.0, 6.25, 6.5, 6.75], [7.0, 7.25, 7.5, 7.75], [8.0, 8.25, 8.5, 8.75], [9.0, 9.25, 9.5, 9.75]]> : tensor<10x4xf32>
  return
}
}
