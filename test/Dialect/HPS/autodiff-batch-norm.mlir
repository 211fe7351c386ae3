// Batch norm while training: batch statistics by default, the running
// statistics as constants with batch-norm=running.
// RUN: rm -rf %t && split-file %s %t
// RUN: heterps-opt --hps-autodiff=loss=mse %t/conv.mlir | FileCheck %t/conv.mlir --check-prefix=BATCH
// RUN: heterps-opt '--hps-autodiff=loss=mse batch-norm=running' %t/conv.mlir | FileCheck %t/conv.mlir --check-prefix=RUNNING
// RUN: heterps-opt --hps-autodiff=loss=mse %t/dense.mlir | FileCheck %t/dense.mlir
// RUN: not heterps-opt --hps-autodiff=loss=mse %t/shared.mlir 2>&1 | FileCheck %t/shared.mlir
// RUN: not heterps-opt --hps-autodiff=loss=mse %t/single.mlir 2>&1 | FileCheck %t/single.mlir
// RUN: not heterps-opt '--hps-autodiff=loss=mse batch-norm=later' %t/conv.mlir 2>&1 | FileCheck %t/conv.mlir --check-prefix=BAD

//--- conv.mlir
// conv -> batch_norm on a [2, 2, 3, 3] map (9 * 2 = 18 values per channel).
func.func @main(%x: tensor<2x2x3x3xf32> {hps.name = "x", hps.batched}) -> (tensor<2x2x3x3xf32> {hps.name = "y", hps.batched}) {
  %w = hps.weight "conv.w" dense<0.1> : tensor<2x2x1x1xf32>
  %g = hps.weight "bn.scale" dense<1.0> : tensor<2xf32>
  %beta = hps.weight "bn.bias" dense<0.0> : tensor<2xf32>
  %mean = hps.weight "bn.mean" dense<0.0> : tensor<2xf32>
  %var = hps.weight "bn.var" dense<1.0> : tensor<2xf32>
  %c = hps.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, device = #hps.device<"cpu.0">} : (tensor<2x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<2x2x3x3xf32>
  %n = hps.batch_norm %c, %g, %beta, %mean, %var {epsilon = 1.0e-3 : f32, hps.momentum = 0.75 : f32, device = #hps.device<"cpu.0">} : (tensor<2x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x3x3xf32>
  return %n : tensor<2x2x3x3xf32>
}

// The flag and the running statistics are served by the parameter server
// (hps.trainable) but updated other than by gradient (hps.update).
// BATCH: %[[FLAG:.*]] = hps.weight "hps.batch_statistics" {hps.trainable, hps.update = "training-flag"} dense<1.000000e+00> : tensor<1xf32>
// BATCH-DAG: %[[W:.*]] = hps.weight "conv.w" {hps.trainable}
// BATCH-DAG: %[[SCALE:.*]] = hps.weight "bn.scale" {hps.trainable}
// BATCH-DAG: %[[MEAN:.*]] = hps.weight "bn.mean" {hps.momentum = 7.500000e-01 : f64, hps.trainable, hps.update = "moving-average"} dense<0.000000e+00>
// BATCH-DAG: %[[VAR:.*]] = hps.weight "bn.var" {hps.momentum = 7.500000e-01 : f64, hps.trainable, hps.update = "moving-average"} dense<1.000000e+00>
// BATCH: %[[C:.*]] = hps.conv
// Batch mean and biased variance over N, H, W, on the batch norm's device.
// BATCH: %[[M4:.*]] = hps.reduce mean %[[C]] {axes = array<i64: 0, 2, 3>, device = #hps.device<"cpu.0">, keepdims} : (tensor<2x2x3x3xf32>) -> tensor<1x2x1x1xf32>
// BATCH: %[[D:.*]] = hps.sub %[[C]], %[[M4]] {device = #hps.device<"cpu.0">}
// BATCH: %[[D2:.*]] = hps.mul %[[D]], %[[D]]
// BATCH: %[[V:.*]] = hps.reduce mean %[[D2]] {axes = array<i64: 0, 2, 3>, device = #hps.device<"cpu.0">} : (tensor<2x2x3x3xf32>) -> tensor<2xf32>
// BATCH: %[[M:.*]] = hps.reshape %[[M4]] {{.*}} -> tensor<2xf32>
// running + flag * (batch - running), for the mean and the variance.
// BATCH: %[[MD:.*]] = hps.sub %[[M]], %[[MEAN]]
// BATCH: %[[MF:.*]] = hps.mul %[[FLAG]], %[[MD]]
// BATCH: %[[MU:.*]] = hps.add %[[MEAN]], %[[MF]]
// BATCH: %[[VD:.*]] = hps.sub %[[V]], %[[VAR]]
// BATCH: %[[VF:.*]] = hps.mul %[[FLAG]], %[[VD]]
// BATCH: %[[VU:.*]] = hps.add %[[VAR]], %[[VF]]
// BATCH: %[[Y:.*]] = hps.batch_norm %[[C]], %[[SCALE]], %{{.*}}, %[[MU]], %[[VU]] {device = #hps.device<"cpu.0">, epsilon = 1.000000e-03 : f32}
// The running mean is pushed the batch mean, the running variance the
// unbiased batch variance (18 / 17).
// BATCH: hps.dense_push "bn.mean", %[[M]] {device = #hps.device<"cpu.0">} : tensor<2xf32>
// BATCH: %[[UNBIAS:.*]] = hps.constant dense<1.05882359> : tensor<f32>
// BATCH: %[[VUNB:.*]] = hps.mul %[[V]], %[[UNBIAS]]
// BATCH: hps.dense_push "bn.var", %[[VUNB]] {device = #hps.device<"cpu.0">} : tensor<2xf32>
// BATCH: %[[SEED:.*]] = hps.loss_grad mse
// The batch norm's rule gives the adjoints of the statistics it used:
// dmean = -sum(g) * scale * rstd, dvar = -0.5 sum(g (x - mean)) scale rstd^3.
// BATCH: %[[RSTD:.*]] = hps.reciprocal
// BATCH: %[[CENT:.*]] = hps.sub %[[C]], %{{.*}}
// BATCH: %[[GSUM:.*]] = hps.reduce sum %[[SEED]] {axes = array<i64: 0, 2, 3>
// BATCH: %[[SR:.*]] = hps.mul %[[SCALE]], %[[RSTD]]
// BATCH: %[[DMEANS:.*]] = hps.mul %[[GSUM]], %[[SR]]
// BATCH: %[[DMEAN:.*]] = hps.neg %[[DMEANS]]
// BATCH: %[[R2:.*]] = hps.mul %[[RSTD]], %[[RSTD]]
// BATCH: %[[R3:.*]] = hps.mul %[[RSTD]], %[[R2]]
// BATCH: %[[SR3:.*]] = hps.mul %[[SCALE]], %[[R3]]
// BATCH: %[[GC:.*]] = hps.mul %[[SEED]], %[[CENT]]
// BATCH: %[[GCS:.*]] = hps.reduce sum %[[GC]]
// BATCH: %[[DV1:.*]] = hps.mul %[[GCS]], %[[SR3]]
// BATCH: %[[HALF:.*]] = hps.constant dense<-5.000000e-01>
// BATCH: %[[DVAR:.*]] = hps.mul %[[DV1]], %[[HALF]]
// ... which flow through the flag and the statistics' ops to the conv.
// BATCH: hps.mul %[[DVAR]], %[[FLAG]]
// BATCH: hps.mul %[[DMEAN]], %[[FLAG]]
// BATCH: %[[DW:.*]] = hps.conv_grad_filter
// BATCH: hps.dense_push "conv.w", %[[DW]]
// No gradient for the flag or the running statistics.
// BATCH-NOT: hps.dense_push "hps.batch_statistics"
// BATCH-NOT: hps.dense_push "bn.mean"
// BATCH-NOT: hps.dense_push "bn.var"
// BATCH: return %[[Y]]

// RUNNING-NOT: hps.batch_statistics
// RUNNING-NOT: hps.update
// RUNNING-DAG: %[[MEAN:.*]] = hps.weight "bn.mean" dense
// RUNNING-DAG: %[[VAR:.*]] = hps.weight "bn.var" dense
// RUNNING: %[[C:.*]] = hps.conv
// RUNNING-NOT: hps.reduce mean
// RUNNING: hps.batch_norm %[[C]], %{{.*}}, %{{.*}}, %[[MEAN]], %[[VAR]]
// RUNNING-NOT: hps.dense_push "bn.mean"
// RUNNING-NOT: hps.dense_push "bn.var"
// RUNNING: hps.dense_push "conv.w"
// RUNNING-NOT: hps.dense_push "bn.mean"
// RUNNING-NOT: hps.dense_push "bn.var"
// RUNNING: return

// BAD: for the --batch-norm option: Cannot find option named 'later'!

//--- dense.mlir
// A [4, 3] batch norm after a gemm: statistics over the batch axis only,
// ONNX's default momentum 0.9, 4 / 3 unbiasing.
func.func @main(%x: tensor<4x5xf32> {hps.name = "x", hps.batched}) -> (tensor<4x3xf32> {hps.name = "y", hps.batched}) {
  %w = hps.weight "fc.w" dense<0.1> : tensor<5x3xf32>
  %g = hps.weight "bn.scale" dense<1.0> : tensor<3xf32>
  %beta = hps.weight "bn.bias" dense<0.0> : tensor<3xf32>
  %mean = hps.weight "bn.mean" dense<0.0> : tensor<3xf32>
  %var = hps.weight "bn.var" dense<1.0> : tensor<3xf32>
  %h = hps.gemm %x, %w : (tensor<4x5xf32>, tensor<5x3xf32>) -> tensor<4x3xf32>
  %n = hps.batch_norm %h, %g, %beta, %mean, %var : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %n : tensor<4x3xf32>
}

// CHECK-DAG: hps.weight "bn.mean" {hps.momentum = 9.000000e-01 : f64, hps.trainable, hps.update = "moving-average"}
// CHECK: %[[H:.*]] = hps.gemm
// CHECK: %[[M2:.*]] = hps.reduce mean %[[H]] {axes = array<i64: 0>, keepdims} : (tensor<4x3xf32>) -> tensor<1x3xf32>
// CHECK: %[[V:.*]] = hps.reduce mean %{{.*}} {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK: %[[M:.*]] = hps.reshape %[[M2]] {shape = array<i64: 3>}
// CHECK: hps.batch_norm %[[H]]
// CHECK: hps.dense_push "bn.mean", %[[M]]
// CHECK: hps.constant dense<1.33333337> : tensor<f32>
// CHECK: hps.dense_push "bn.var"
// CHECK: hps.dense_push "fc.w"

//--- shared.mlir
// One running mean read by two batch norms cannot be the moving average
// of both.
func.func @main(%x: tensor<4x3xf32> {hps.name = "x", hps.batched}) -> (tensor<4x3xf32> {hps.name = "y", hps.batched}) {
  %g = hps.weight "bn.scale" dense<1.0> : tensor<3xf32>
  %mean = hps.weight "bn.mean" dense<0.0> : tensor<3xf32>
  %var = hps.weight "bn.var" dense<1.0> : tensor<3xf32>
  %var2 = hps.weight "bn2.var" dense<1.0> : tensor<3xf32>
  %a = hps.batch_norm %x, %g, %g, %mean, %var : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %b = hps.batch_norm %a, %g, %g, %mean, %var2 : (tensor<4x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %b : tensor<4x3xf32>
}
// CHECK: error: hps-autodiff: running statistic 'bn.mean' of a batch norm is used elsewhere too

//--- single.mlir
// One value per channel has no unbiased variance.
func.func @main(%x: tensor<1x3xf32> {hps.name = "x", hps.batched}) -> (tensor<1x3xf32> {hps.name = "y", hps.batched}) {
  %g = hps.weight "bn.scale" dense<1.0> : tensor<3xf32>
  %mean = hps.weight "bn.mean" dense<0.0> : tensor<3xf32>
  %var = hps.weight "bn.var" dense<1.0> : tensor<3xf32>
  %a = hps.batch_norm %x, %g, %g, %mean, %var : (tensor<1x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  return %a : tensor<1x3xf32>
}
// CHECK: error: hps-autodiff: batch norm with batch statistics needs more than one value per channel, got input 'tensor<1x3xf32>' (--batch-norm=running keeps the running statistics)
