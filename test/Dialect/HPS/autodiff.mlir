// Each part below is trained with its own loss and options.
// RUN: rm -rf %t && split-file %s %t
// RUN: heterps-opt --hps-autodiff=loss=bce %t/mlp.mlir | FileCheck %t/mlp.mlir
// RUN: heterps-opt --hps-autodiff=loss=bce %t/embedding.mlir | FileCheck %t/embedding.mlir
// RUN: heterps-opt --hps-autodiff=loss=mse %t/broadcast.mlir | FileCheck %t/broadcast.mlir
// RUN: heterps-opt --hps-autodiff=loss=softmax-ce %t/softmax.mlir | FileCheck %t/softmax.mlir
// RUN: heterps-opt --hps-autodiff=loss=softmax-ce %t/logits.mlir | FileCheck %t/logits.mlir
// RUN: heterps-opt '--hps-autodiff=loss=mse output=value label=target optimizer=sgd learning-rate=0.5 momentum=0.9' %t/mse.mlir | FileCheck %t/mse.mlir
// RUN: heterps-opt --hps-autodiff=loss=bce %t/device.mlir | FileCheck %t/device.mlir
// RUN: heterps-opt --hps-autodiff=loss=mse %t/data.mlir | FileCheck %t/data.mlir
// RUN: heterps-opt '--hps-autodiff=loss=mse batch-norm=running' %t/conv.mlir | FileCheck %t/conv.mlir
// RUN: heterps-opt --hps-autodiff=loss=mse %t/max_pool.mlir | FileCheck %t/max_pool.mlir
// RUN: heterps-opt --hps-autodiff=loss=mse %t/scatter.mlir | FileCheck %t/scatter.mlir
// RUN: heterps-opt --hps-autodiff=loss=mse %t/gather_scatter.mlir | FileCheck %t/gather_scatter.mlir
// RUN: heterps-opt --hps-autodiff=loss=mse %t/recurrence.mlir | FileCheck %t/recurrence.mlir

//--- mlp.mlir
// gemm + relu + gemm + sigmoid with bce: the loss takes the sigmoid's input
// as logits, weight gradients are transposed gemms, bias gradients sums
// over the batch.
func.func @main(%x: tensor<4x3xf32> {hps.name = "x", hps.batched}) -> (tensor<4x1xf32> {hps.name = "prob", hps.batched}) {
  %w1 = hps.weight "fc1.w" dense<0.5> : tensor<3x8xf32>
  %b1 = hps.weight "fc1.b" dense<0.0> : tensor<8xf32>
  %w2 = hps.weight "fc2.w" dense<0.1> : tensor<1x8xf32>
  %b2 = hps.weight "fc2.b" dense<0.0> : tensor<1xf32>
  %h = hps.gemm %x, %w1, %b1 : (tensor<4x3xf32>, tensor<3x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r = hps.relu %h : tensor<4x8xf32>
  %z = hps.gemm %r, %w2, %b2 {trans_b} : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<1xf32>) -> tensor<4x1xf32>
  %p = hps.sigmoid %z : tensor<4x1xf32>
  return %p : tensor<4x1xf32>
}

// CHECK: module attributes {hps.training = {beta1 = 9.000000e-01 : f64, beta2 = {{.*}} : f64, epsilon = 1.000000e-08 : f64, initial_accumulator = 1.000000e-01 : f64, label = "label", learning_rate = 1.000000e-02 : f64, loss = "bce", momentum = 0.000000e+00 : f64, optimizer = "adagrad", prediction = "prob"}}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32> {hps.batched, hps.name = "x"}, %[[LABEL:.*]]: tensor<4x1xf32> {hps.batched, hps.name = "label"})
// CHECK-SAME: -> (tensor<4x1xf32> {hps.batched, hps.name = "prob"}, tensor<4xf32> {hps.batched, hps.name = "loss"})
// CHECK-DAG: %[[W1:.*]] = hps.weight "fc1.w" {hps.trainable}
// CHECK-DAG: %[[B1:.*]] = hps.weight "fc1.b" {hps.trainable}
// CHECK-DAG: %[[W2:.*]] = hps.weight "fc2.w" {hps.trainable}
// CHECK-DAG: %[[B2:.*]] = hps.weight "fc2.b" {hps.trainable}
// CHECK: %[[H:.*]] = hps.gemm %[[X]], %[[W1]], %[[B1]]
// CHECK: %[[R:.*]] = hps.relu %[[H]]
// CHECK: %[[Z:.*]] = hps.gemm %[[R]], %[[W2]], %[[B2]] {trans_b}
// CHECK: %[[P:.*]] = hps.sigmoid %[[Z]]
// CHECK: %[[LOSS:.*]] = hps.loss bce %[[Z]], %[[LABEL]] {from_logits} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4xf32>
// CHECK: %[[SEED:.*]] = hps.loss_grad bce %[[Z]], %[[LABEL]] {from_logits} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
// dR = dZ op(W2)^T = dZ W2; dW2 = (R^T dZ)^T = dZ^T R (W2 is transposed).
// CHECK: %[[DR:.*]] = hps.gemm %[[SEED]], %[[W2]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[DW2:.*]] = hps.gemm %[[SEED]], %[[R]] {trans_a} : (tensor<4x1xf32>, tensor<4x8xf32>) -> tensor<1x8xf32>
// CHECK: %[[DB2:.*]] = hps.reduce sum %[[SEED]] {axes = array<i64: 0>} : (tensor<4x1xf32>) -> tensor<1xf32>
// CHECK: %[[ZERO:.*]] = hps.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[POS:.*]] = hps.greater %[[H]], %[[ZERO]] : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xi1>
// CHECK: %[[DH:.*]] = hps.where %[[POS]], %[[DR]], %[[ZERO]]
// CHECK: %[[DW1:.*]] = hps.gemm %[[X]], %[[DH]] {trans_a} : (tensor<4x3xf32>, tensor<4x8xf32>) -> tensor<3x8xf32>
// CHECK: %[[DB1:.*]] = hps.reduce sum %[[DH]] {axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
// CHECK: hps.dense_push "fc1.w", %[[DW1]] : tensor<3x8xf32>
// CHECK: hps.dense_push "fc1.b", %[[DB1]] : tensor<8xf32>
// CHECK: hps.dense_push "fc2.w", %[[DW2]] : tensor<1x8xf32>
// CHECK: hps.dense_push "fc2.b", %[[DB2]] : tensor<1xf32>
// CHECK: return %[[P]], %[[LOSS]] : tensor<4x1xf32>, tensor<4xf32>

//--- embedding.mlir
// A sum-pooled lookup pushes one row gradient per id: the bag's gradient
// unsqueezed at the ids' last axis and expanded over it. The dense input
// gets no gradient.
func.func @main(%ids: tensor<4x3xi64> {hps.name = "ids", hps.batched}, %dense: tensor<4x8xf32> {hps.name = "dense", hps.batched}) -> (tensor<4x1xf32> {hps.name = "prob", hps.batched}) {
  %t = hps.weight "emb" dense<0.5> : tensor<100x8xf32>
  %w = hps.weight "fc.w" dense<0.1> : tensor<8x1xf32>
  %e = hps.embedding_lookup %t, %ids {pooling = #hps<embedding_pooling sum>} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x8xf32>
  %s = hps.add %e, %dense : tensor<4x8xf32>
  %z = hps.gemm %s, %w : (tensor<4x8xf32>, tensor<8x1xf32>) -> tensor<4x1xf32>
  %p = hps.sigmoid %z : tensor<4x1xf32>
  return %p : tensor<4x1xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<4x3xi64>
// CHECK-DAG: hps.weight "emb" {hps.trainable}
// CHECK-DAG: %[[W:.*]] = hps.weight "fc.w" {hps.trainable}
// CHECK: %[[SEED:.*]] = hps.loss_grad bce
// CHECK: %[[DS:.*]] = hps.gemm %[[SEED]], %[[W]] {trans_b} : (tensor<4x1xf32>, tensor<8x1xf32>) -> tensor<4x8xf32>
// CHECK: %[[BAG:.*]] = hps.unsqueeze %[[DS]] {axes = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x1x8xf32>
// CHECK: %[[ROWS:.*]] = hps.expand %[[BAG]] {shape = array<i64: 4, 3, 8>} : (tensor<4x1x8xf32>) -> tensor<4x3x8xf32>
// CHECK: hps.ps_push "emb"[%[[IDS]]], %[[ROWS]] : tensor<4x3xi64>, tensor<4x3x8xf32>
// CHECK-NOT: hps.dense_push "emb"
// CHECK: hps.dense_push "fc.w"
// CHECK-NOT: hps.dense_push

//--- broadcast.mlir
// A [5, 1] scale broadcast against [4, 5, 6]: its gradient sums over the
// leading and the stretched axis, then reshapes back.
func.func @main(%x: tensor<4x5x6xf32> {hps.name = "x", hps.batched}) -> (tensor<4x5x6xf32> {hps.name = "y", hps.batched}) {
  %s = hps.weight "scale" dense<2.0> : tensor<5x1xf32>
  %y = hps.mul %x, %s : tensor<4x5x6xf32>, tensor<5x1xf32> -> tensor<4x5x6xf32>
  return %y : tensor<4x5x6xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x5x6xf32>
// CHECK: %[[LOSS:.*]] = hps.loss mse %{{.*}}, %{{.*}} : (tensor<4x5x6xf32>, tensor<4x5x6xf32>) -> tensor<4xf32>
// CHECK-NOT: from_logits
// CHECK: %[[SEED:.*]] = hps.loss_grad mse
// CHECK: %[[PRODUCT:.*]] = hps.mul %[[SEED]], %[[X]] : tensor<4x5x6xf32>
// CHECK: %[[SUM:.*]] = hps.reduce sum %[[PRODUCT]] {axes = array<i64: 0, 2>} : (tensor<4x5x6xf32>) -> tensor<5xf32>
// CHECK: %[[GRAD:.*]] = hps.reshape %[[SUM]] {shape = array<i64: 5, 1>} : (tensor<5xf32>) -> tensor<5x1xf32>
// CHECK: hps.dense_push "scale", %[[GRAD]] : tensor<5x1xf32>

//--- softmax.mlir
// softmax-ce on a softmax over the last axis takes the softmax's input as
// logits; the label is a vector of class ids.
func.func @main(%x: tensor<4x3xf32> {hps.name = "x", hps.batched}) -> (tensor<4x10xf32> {hps.name = "probs", hps.batched}) {
  %w = hps.weight "fc.w" dense<0.1> : tensor<3x10xf32>
  %z = hps.gemm %x, %w : (tensor<4x3xf32>, tensor<3x10xf32>) -> tensor<4x10xf32>
  %p = hps.softmax %z {axis = -1 : i64} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  return %p : tensor<4x10xf32>
}

// CHECK: loss = "softmax_ce"
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x3xf32> {hps.batched, hps.name = "x"}, %[[LABEL:[^:]*]]: tensor<4xi64> {hps.batched, hps.name = "label"}
// CHECK: %[[Z:.*]] = hps.gemm
// CHECK: hps.loss softmax_ce %[[Z]], %[[LABEL]] {from_logits} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
// CHECK: %[[SEED:.*]] = hps.loss_grad softmax_ce %[[Z]], %[[LABEL]] {from_logits}
// CHECK-NOT: hps.softmax
// CHECK: %[[DW:.*]] = hps.gemm %[[X]], %[[SEED]] {trans_a}
// CHECK: hps.dense_push "fc.w", %[[DW]] : tensor<3x10xf32>

//--- logits.mlir
// softmax-ce on anything else treats the prediction as logits and
// differentiates through it: tanh' = 1 - y^2.
func.func @main(%x: tensor<4x3xf32> {hps.name = "x", hps.batched}) -> (tensor<4x10xf32> {hps.name = "logits", hps.batched}) {
  %w = hps.weight "fc.w" dense<0.1> : tensor<3x10xf32>
  %z = hps.gemm %x, %w : (tensor<4x3xf32>, tensor<3x10xf32>) -> tensor<4x10xf32>
  %t = hps.tanh %z : tensor<4x10xf32>
  return %t : tensor<4x10xf32>
}

// CHECK: prediction = "logits"
// CHECK: %[[T:.*]] = hps.tanh
// CHECK: hps.loss softmax_ce %[[T]], %{{.*}} {from_logits}
// CHECK: %[[SEED:.*]] = hps.loss_grad softmax_ce %[[T]], %{{.*}} {from_logits}
// CHECK: %[[SQUARE:.*]] = hps.mul %[[T]], %[[T]]
// CHECK: %[[ONE:.*]] = hps.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[SLOPE:.*]] = hps.sub %[[ONE]], %[[SQUARE]]
// CHECK: %[[DZ:.*]] = hps.mul %[[SEED]], %[[SLOPE]]
// CHECK: hps.gemm %{{.*}}, %[[DZ]] {trans_a}

//--- mse.mlir
// mse on a named second output keeps the sigmoid (no fusion); a weight that
// only feeds another output is not trainable. Options reach hps.training.
func.func @main(%x: tensor<4x3xf32> {hps.name = "x", hps.batched}) -> (tensor<4x2xf32> {hps.name = "aux", hps.batched}, tensor<4x2xf32> {hps.name = "value", hps.batched}) {
  %w = hps.weight "fc.w" dense<0.1> : tensor<3x2xf32>
  %v = hps.weight "other" dense<0.1> : tensor<3x2xf32>
  %a = hps.gemm %x, %v : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %z = hps.gemm %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %p = hps.sigmoid %z : tensor<4x2xf32>
  return %a, %p : tensor<4x2xf32>, tensor<4x2xf32>
}

// CHECK: hps.training = {{{.*}}label = "target", learning_rate = 5.000000e-01 : f64, loss = "mse", momentum = 9.000000e-01 : f64, optimizer = "sgd", prediction = "value"}
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %{{[^:]*}}: tensor<4x2xf32> {hps.batched, hps.name = "target"}
// CHECK-SAME: -> (tensor<4x2xf32> {hps.batched, hps.name = "aux"}, tensor<4x2xf32> {hps.batched, hps.name = "value"}, tensor<4xf32> {hps.batched, hps.name = "loss"})
// CHECK: hps.weight "fc.w" {hps.trainable}
// CHECK: hps.weight "other" dense
// CHECK: %[[A:.*]] = hps.gemm
// CHECK: %[[P:.*]] = hps.sigmoid
// CHECK: %[[LOSS:.*]] = hps.loss mse %[[P]], %{{.*}} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4xf32>
// CHECK: %[[SEED:.*]] = hps.loss_grad mse %[[P]]
// CHECK: %[[ONE:.*]] = hps.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[COMPLEMENT:.*]] = hps.sub %[[ONE]], %[[P]]
// CHECK: %[[SLOPE:.*]] = hps.mul %[[P]], %[[COMPLEMENT]]
// CHECK: %[[DZ:.*]] = hps.mul %[[SEED]], %[[SLOPE]]
// CHECK: hps.dense_push "fc.w"
// CHECK-NOT: hps.dense_push
// CHECK: return %[[A]], %[[P]], %[[LOSS]]

//--- device.mlir
// Backward ops run where their forward op was placed; the loss where the
// prediction was produced; pushes where their gradient was finished.
func.func @main(%ids: tensor<4x3xi64> {hps.name = "ids", hps.batched}) -> (tensor<4x1xf32> {hps.name = "prob", hps.batched}) {
  %t = hps.weight "emb" dense<0.5> : tensor<100x8xf32>
  %w = hps.weight "fc.w" dense<0.1> : tensor<8x1xf32>
  %e = hps.embedding_lookup %t, %ids {pooling = #hps<embedding_pooling mean>, device = #hps.device<"cpu.xeon">} : (tensor<100x8xf32>, tensor<4x3xi64>) -> tensor<4x8xf32>
  %r = hps.relu %e {device = #hps.device<"gpu.v100">} : tensor<4x8xf32>
  %z = hps.gemm %r, %w {device = #hps.device<"gpu.v100">} : (tensor<4x8xf32>, tensor<8x1xf32>) -> tensor<4x1xf32>
  %p = hps.sigmoid %z {device = #hps.device<"gpu.v100">} : tensor<4x1xf32>
  return %p : tensor<4x1xf32>
}

// CHECK: hps.loss bce {{.*}} {device = #hps.device<"gpu.v100">, from_logits}
// CHECK: hps.loss_grad bce {{.*}} {device = #hps.device<"gpu.v100">, from_logits}
// CHECK: hps.gemm {{.*}} {device = #hps.device<"gpu.v100">, trans_b}
// CHECK: %[[DW:.*]] = hps.gemm {{.*}} {device = #hps.device<"gpu.v100">, trans_a}
// CHECK: hps.constant dense<0.000000e+00> : tensor<f32>
// CHECK: hps.greater {{.*}} {device = #hps.device<"gpu.v100">}
// CHECK: hps.where {{.*}} {device = #hps.device<"gpu.v100">}
// Mean pooling: the bag's gradient is divided by its 3 ids.
// CHECK: %[[THIRD:.*]] = hps.constant dense<0.333333343> : tensor<f32>
// CHECK: hps.mul %{{.*}}, %[[THIRD]] {device = #hps.device<"cpu.xeon">}
// CHECK: hps.unsqueeze {{.*}}device = #hps.device<"cpu.xeon">
// CHECK: %[[ROWS:.*]] = hps.expand {{.*}}device = #hps.device<"cpu.xeon">
// CHECK: hps.ps_push "emb"[%{{.*}}], %[[ROWS]] {device = #hps.device<"cpu.xeon">}
// CHECK: hps.dense_push "fc.w", %[[DW]] {device = #hps.device<"gpu.v100">}

//--- data.mlir
// Data movement: concat splits the gradient, slice pads it back with zeros,
// reshape and transpose invert, a reduced mean expands and scales.
func.func @main(%x: tensor<4x2xf32> {hps.name = "x", hps.batched}) -> (tensor<4x3xf32> {hps.name = "y", hps.batched}) {
  %w = hps.weight "w" dense<0.5> : tensor<4x4xf32>
  %v = hps.weight "v" dense<0.5> : tensor<3x2x4xf32>
  %c = hps.concat %x, %w {axis = 1 : i64} : (tensor<4x2xf32>, tensor<4x4xf32>) -> tensor<4x6xf32>
  %s = hps.slice %c {starts = array<i64: 1>, ends = array<i64: 4>, axes = array<i64: 1>, steps = array<i64: 1>} : (tensor<4x6xf32>) -> tensor<4x3xf32>
  %t = hps.transpose %v {perm = array<i64: 2, 0, 1>} : (tensor<3x2x4xf32>) -> tensor<4x3x2xf32>
  %m = hps.reduce mean %t {axes = array<i64: 2>} : (tensor<4x3x2xf32>) -> tensor<4x3xf32>
  %y = hps.add %s, %m : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// CHECK: %[[SEED:.*]] = hps.loss_grad mse
// CHECK: %[[KEPT:.*]] = hps.reshape %[[SEED]] {shape = array<i64: 4, 3, 1>}
// CHECK: %[[HALF:.*]] = hps.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[SCALED:.*]] = hps.mul %[[KEPT]], %[[HALF]]
// CHECK: %[[DT:.*]] = hps.expand %[[SCALED]] {shape = array<i64: 4, 3, 2>}
// CHECK: %[[DV:.*]] = hps.transpose %[[DT]] {perm = array<i64: 1, 2, 0>} : (tensor<4x3x2xf32>) -> tensor<3x2x4xf32>
// CHECK: %[[DC:.*]] = hps.pad %[[SEED]] {mode = #hps<pad_mode constant>, pads = array<i64: 0, 1, 0, 2>, value = 0.000000e+00 : f32} : (tensor<4x3xf32>) -> tensor<4x6xf32>
// CHECK: %[[PIECES:.*]]:2 = hps.split %[[DC]] {axis = 1 : i64, sizes = array<i64: 2, 4>}
// CHECK-DAG: hps.dense_push "w", %[[PIECES]]#1 : tensor<4x4xf32>
// CHECK-DAG: hps.dense_push "v", %[[DV]] : tensor<3x2x4xf32>

//--- conv.mlir
// conv + bias -> batch_norm -> grouped strided conv -> avg_pool. The convs'
// adjoints are conv_grad_input / conv_grad_filter with the forward
// geometry, the bias's a reduce-sum over batch and space; avg_pool's is
// conv_grad_input of the gradient scaled by 1/taps through a depthwise
// filter of ones; batch_norm (batch-norm=running; autodiff-batch-norm.mlir
// has the default) scales by scale / sqrt(var + eps) and leaves its running
// statistics untrained. The first conv's input is no
// parameter's function, so it gets no conv_grad_input.
func.func @main(%x: tensor<2x2x6x6xf32> {hps.name = "x", hps.batched}) -> (tensor<2x4x2x2xf32> {hps.name = "y", hps.batched}) {
  %w1 = hps.weight "conv1.w" dense<0.1> : tensor<4x2x3x3xf32>
  %b1 = hps.weight "conv1.b" dense<0.0> : tensor<4xf32>
  %w2 = hps.weight "conv2.w" dense<0.2> : tensor<4x2x3x3xf32>
  %g = hps.weight "bn.scale" dense<1.0> : tensor<4xf32>
  %beta = hps.weight "bn.bias" dense<0.0> : tensor<4xf32>
  %mean = hps.weight "bn.mean" dense<0.5> : tensor<4xf32>
  %var = hps.weight "bn.var" dense<2.0> : tensor<4xf32>
  %c1 = hps.conv %x, %w1, %b1 {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<2x2x6x6xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %n = hps.batch_norm %c1, %g, %beta, %mean, %var : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32>
  %c2 = hps.conv %n, %w2 {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x4x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x3x3xf32>
  %p = hps.avg_pool %c2 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x4x3x3xf32>) -> tensor<2x4x2x2xf32>
  return %p : tensor<2x4x2x2xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK-DAG: %[[W1:.*]] = hps.weight "conv1.w" {hps.trainable}
// CHECK-DAG: %[[W2:.*]] = hps.weight "conv2.w" {hps.trainable}
// CHECK-DAG: %[[SCALE:.*]] = hps.weight "bn.scale" {hps.trainable}
// CHECK-DAG: %[[MEAN:.*]] = hps.weight "bn.mean" dense
// CHECK-DAG: %[[VAR:.*]] = hps.weight "bn.var" dense
// CHECK: %[[C1:.*]] = hps.conv %[[X:.*]], %[[W1]]
// CHECK: %[[N:.*]] = hps.batch_norm %[[C1]], %[[SCALE]]
// CHECK: %[[SEED:.*]] = hps.loss_grad mse
// CHECK: %[[QUARTER:.*]] = hps.constant dense<2.500000e-01> : tensor<1x1x2x2xf32>
// CHECK: %[[ONES:.*]] = hps.constant dense<1.000000e+00> : tensor<4x1x2x2xf32>
// CHECK: %[[SCALED:.*]] = hps.mul %[[SEED]], %[[QUARTER]]
// CHECK: %[[DC2:.*]] = hps.conv_grad_input %[[SCALED]], %[[ONES]] {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x2x2xf32>, tensor<4x1x2x2xf32>) -> tensor<2x4x3x3xf32>
// CHECK: %[[DN:.*]] = hps.conv_grad_input %[[DC2]], %[[W2]] {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x6x6xf32>
// CHECK: %[[DW2:.*]] = hps.conv_grad_filter %[[N]], %[[DC2]] {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x4x6x6xf32>, tensor<2x4x3x3xf32>) -> tensor<4x2x3x3xf32>
// CHECK: %[[SHIFTED:.*]] = hps.add %[[VAR]], %{{.*}} : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
// CHECK: %[[STD:.*]] = hps.sqrt %[[SHIFTED]]
// CHECK: %[[RSTD:.*]] = hps.reciprocal %[[STD]]
// CHECK: %[[RSTD4:.*]] = hps.reshape %[[RSTD]] {shape = array<i64: 1, 4, 1, 1>}
// CHECK: %[[SCALE4:.*]] = hps.reshape %[[SCALE]] {shape = array<i64: 1, 4, 1, 1>}
// CHECK: %[[FACTOR:.*]] = hps.mul %[[SCALE4]], %[[RSTD4]]
// CHECK: %[[DC1:.*]] = hps.mul %[[DN]], %[[FACTOR]]
// CHECK: %[[MEAN4:.*]] = hps.reshape %[[MEAN]] {shape = array<i64: 1, 4, 1, 1>}
// CHECK: %[[CENTERED:.*]] = hps.sub %[[C1]], %[[MEAN4]]
// CHECK: %[[XHAT:.*]] = hps.mul %[[CENTERED]], %[[RSTD4]]
// CHECK: %[[PROD:.*]] = hps.mul %[[DN]], %[[XHAT]]
// CHECK: %[[DSCALE:.*]] = hps.reduce sum %[[PROD]] {axes = array<i64: 0, 2, 3>} : (tensor<2x4x6x6xf32>) -> tensor<4xf32>
// CHECK: %[[DBETA:.*]] = hps.reduce sum %[[DN]] {axes = array<i64: 0, 2, 3>} : (tensor<2x4x6x6xf32>) -> tensor<4xf32>
// CHECK-NOT: hps.conv_grad_input
// CHECK: %[[DW1:.*]] = hps.conv_grad_filter %[[X]], %[[DC1]] {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x2x6x6xf32>, tensor<2x4x6x6xf32>) -> tensor<4x2x3x3xf32>
// CHECK: %[[DB1:.*]] = hps.reduce sum %[[DC1]] {axes = array<i64: 0, 2, 3>} : (tensor<2x4x6x6xf32>) -> tensor<4xf32>
// CHECK: hps.dense_push "conv1.w", %[[DW1]]
// CHECK: hps.dense_push "conv1.b", %[[DB1]]
// CHECK: hps.dense_push "conv2.w", %[[DW2]]
// CHECK: hps.dense_push "bn.scale", %[[DSCALE]]
// CHECK: hps.dense_push "bn.bias", %[[DBETA]]
// CHECK-NOT: hps.dense_push

//--- max_pool.mlir
// max_pool (pads 1/0, stride 2): the input padded with -inf is cut into one
// strided slice per tap; the gradient goes to the taps equal to the result
// (ties share it) and back through conv_grad_input with one-hot depthwise
// filters.
func.func @main(%x: tensor<2x3xf32> {hps.name = "x", hps.batched}) -> (tensor<2x2x2xf32> {hps.name = "y", hps.batched}) {
  %w = hps.weight "w" dense<0.5> : tensor<3x10xf32>
  %h = hps.gemm %x, %w : (tensor<2x3xf32>, tensor<3x10xf32>) -> tensor<2x10xf32>
  %m = hps.reshape %h {shape = array<i64: 2, 2, 5>} : (tensor<2x10xf32>) -> tensor<2x2x5xf32>
  %p = hps.max_pool %m {kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 1, 0>, dilations = array<i64: 1>} : (tensor<2x2x5xf32>) -> tensor<2x2x3xf32>
  %s = hps.slice %p {starts = array<i64: 0>, ends = array<i64: 2>, axes = array<i64: 2>, steps = array<i64: 1>} : (tensor<2x2x3xf32>) -> tensor<2x2x2xf32>
  return %s : tensor<2x2x2xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK: %[[M:.*]] = hps.reshape %{{.*}} {shape = array<i64: 2, 2, 5>}
// CHECK: %[[Y:.*]] = hps.max_pool %[[M]]
// CHECK: %[[G:.*]] = hps.pad %{{.*}} {mode = #hps<pad_mode constant>, pads = array<i64: 0, 0, 0, 0, 0, 1>, value = 0.000000e+00 : f32} : (tensor<2x2x2xf32>) -> tensor<2x2x3xf32>
// CHECK: %[[PADDED:.*]] = hps.pad %[[M]] {mode = #hps<pad_mode constant>, pads = array<i64: 0, 0, 1, 0, 0, 0>, value = 0xFF800000 : f32} : (tensor<2x2x5xf32>) -> tensor<2x2x6xf32>
// CHECK: %[[T0:.*]] = hps.slice %[[PADDED]] {axes = array<i64: 2>, ends = array<i64: 5>, starts = array<i64: 0>, steps = array<i64: 2>} : (tensor<2x2x6xf32>) -> tensor<2x2x3xf32>
// CHECK: %[[T0R:.*]] = hps.reshape %[[T0]] {shape = array<i64: 2, 2, 1, 3>}
// CHECK: %[[T1:.*]] = hps.slice %[[PADDED]] {axes = array<i64: 2>, ends = array<i64: 6>, starts = array<i64: 1>, steps = array<i64: 2>} : (tensor<2x2x6xf32>) -> tensor<2x2x3xf32>
// CHECK: %[[T1R:.*]] = hps.reshape %[[T1]] {shape = array<i64: 2, 2, 1, 3>}
// CHECK: %[[TAPS:.*]] = hps.concat %[[T0R]], %[[T1R]] {axis = 2 : i64} : (tensor<2x2x1x3xf32>, tensor<2x2x1x3xf32>) -> tensor<2x2x2x3xf32>
// CHECK: %[[YR:.*]] = hps.reshape %[[Y]] {shape = array<i64: 2, 2, 1, 3>}
// CHECK: %[[HIT:.*]] = hps.equal %[[TAPS]], %[[YR]]
// CHECK: %[[TIES:.*]] = hps.reduce sum %{{.*}} {axes = array<i64: 2>, keepdims} : (tensor<2x2x2x3xf32>) -> tensor<2x2x1x3xf32>
// CHECK: %[[GR:.*]] = hps.reshape %[[G]] {shape = array<i64: 2, 2, 1, 3>}
// CHECK: %[[SHARE:.*]] = hps.div %[[GR]], %[[TIES]]
// CHECK: %[[ROUTED:.*]] = hps.where %[[HIT]], %[[SHARE]], %{{.*}} : (tensor<2x2x2x3xi1>, tensor<2x2x1x3xf32>, tensor<f32>) -> tensor<2x2x2x3xf32>
// CHECK: %[[ONEHOT:.*]] = hps.constant dense<{{\[\[\[}}1.000000e+00, 0.000000e+00]], {{\[\[}}0.000000e+00, 1.000000e+00]], {{\[\[}}1.000000e+00, 0.000000e+00]], {{\[\[}}0.000000e+00, 1.000000e+00]]]> : tensor<4x1x2xf32>
// CHECK: %[[STACKED:.*]] = hps.reshape %[[ROUTED]] {shape = array<i64: 2, 4, 3>}
// CHECK: %[[DM:.*]] = hps.conv_grad_input %[[STACKED]], %[[ONEHOT]] {dilations = array<i64: 1>, group = 2 : i64, pads = array<i64: 1, 0>, strides = array<i64: 2>} : (tensor<2x4x3xf32>, tensor<4x1x2xf32>) -> tensor<2x2x5xf32>
// CHECK: hps.reshape %[[DM]] {shape = array<i64: 2, 10>}

//--- scatter.mlir
// Adjoints that scatter or fold, built from forward ops. reduce prod: each
// element gets the product of the group's nonzero elements divided by
// itself, and nothing when another element of its group is zero. Reflect
// pad: the middle of the gradient plus each padded run, reversed where its
// sources descend, padded with zeros onto them. A step -2 slice: the
// gradient reversed, spread with a zero after every element (pad of an
// inserted unit axis) and moved to the first position taken (1; the last
// zero cropped).
func.func @main(%x: tensor<4x6xf32> {hps.name = "x", hps.batched}) -> (tensor<4x13xf32> {hps.name = "y", hps.batched}) {
  %w = hps.weight "w" dense<0.5> : tensor<4x6xf32>
  %m = hps.mul %x, %w : tensor<4x6xf32>
  %s = hps.slice %m {starts = array<i64: -1>, ends = array<i64: -100>, axes = array<i64: 1>, steps = array<i64: -2>} : (tensor<4x6xf32>) -> tensor<4x3xf32>
  %p = hps.pad %m {mode = #hps<pad_mode reflect>, pads = array<i64: 0, 2, 0, 1>, value = 0.0 : f32} : (tensor<4x6xf32>) -> tensor<4x9xf32>
  %r = hps.reduce prod %m {axes = array<i64: 1>, keepdims} : (tensor<4x6xf32>) -> tensor<4x1xf32>
  %y = hps.concat %s, %p, %r {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x9xf32>, tensor<4x1xf32>) -> tensor<4x13xf32>
  return %y : tensor<4x13xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK: %[[M:.*]] = hps.mul %{{.*}}, %{{.*}} : tensor<4x6xf32>
// CHECK: %[[G:.*]]:3 = hps.split
// CHECK-DAG: %[[ZERO:.*]] = hps.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[ONE:.*]] = hps.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[ISZERO:.*]] = hps.equal %[[M]], %[[ZERO]]
// CHECK: %[[NONZERO:.*]] = hps.where %[[ISZERO]], %[[ONE]], %[[M]]
// CHECK: %[[FLAGS:.*]] = hps.where %[[ISZERO]], %[[ONE]], %[[ZERO]]
// CHECK: %[[ZEROS:.*]] = hps.reduce sum %[[FLAGS]] {axes = array<i64: 1>, keepdims}
// CHECK: %[[OTHERZEROS:.*]] = hps.sub %[[ZEROS]], %[[FLAGS]]
// CHECK: %[[BLOCKED:.*]] = hps.greater %[[OTHERZEROS]], %[[ZERO]]
// CHECK: %[[PROD:.*]] = hps.reduce prod %[[NONZERO]] {axes = array<i64: 1>, keepdims}
// CHECK: %[[OTHERS:.*]] = hps.div %[[PROD]], %[[NONZERO]]
// CHECK: %[[SCALED:.*]] = hps.mul %[[G]]#2, %[[OTHERS]]
// CHECK: %[[DPROD:.*]] = hps.where %[[BLOCKED]], %[[ZERO]], %[[SCALED]]
// CHECK: %[[MIDDLE:.*]] = hps.slice %[[G]]#1 {axes = array<i64: 1>, ends = array<i64: 8>, starts = array<i64: 2>, steps = array<i64: 1>} : (tensor<4x9xf32>) -> tensor<4x6xf32>
// CHECK: %[[LEFT:.*]] = hps.slice %[[G]]#1 {axes = array<i64: 1>, ends = array<i64: -10>, starts = array<i64: 1>, steps = array<i64: -1>} : (tensor<4x9xf32>) -> tensor<4x2xf32>
// CHECK: %[[LEFTPAD:.*]] = hps.pad %[[LEFT]] {mode = #hps<pad_mode constant>, pads = array<i64: 0, 1, 0, 3>, value = 0.000000e+00 : f32} : (tensor<4x2xf32>) -> tensor<4x6xf32>
// CHECK: %[[SUM1:.*]] = hps.add %[[MIDDLE]], %[[LEFTPAD]]
// CHECK: %[[RIGHT:.*]] = hps.slice %[[G]]#1 {axes = array<i64: 1>, ends = array<i64: 9>, starts = array<i64: 8>, steps = array<i64: 1>} : (tensor<4x9xf32>) -> tensor<4x1xf32>
// CHECK: %[[RIGHTPAD:.*]] = hps.pad %[[RIGHT]] {mode = #hps<pad_mode constant>, pads = array<i64: 0, 4, 0, 1>, value = 0.000000e+00 : f32} : (tensor<4x1xf32>) -> tensor<4x6xf32>
// CHECK: %[[DPAD:.*]] = hps.add %[[SUM1]], %[[RIGHTPAD]]
// CHECK: %[[ACC:.*]] = hps.add %[[DPROD]], %[[DPAD]]
// CHECK: %[[REV:.*]] = hps.slice %[[G]]#0 {axes = array<i64: 1>, ends = array<i64: -4>, starts = array<i64: 2>, steps = array<i64: -1>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK: %[[UNIT:.*]] = hps.reshape %[[REV]] {shape = array<i64: 4, 3, 1, 1>}
// CHECK: %[[SPREAD:.*]] = hps.pad %[[UNIT]] {mode = #hps<pad_mode constant>, pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 0>, value = 0.000000e+00 : f32} : (tensor<4x3x1x1xf32>) -> tensor<4x3x2x1xf32>
// CHECK: %[[MERGED:.*]] = hps.reshape %[[SPREAD]] {shape = array<i64: 4, 6>}
// CHECK: %[[DSLICE:.*]] = hps.pad %[[MERGED]] {mode = #hps<pad_mode constant>, pads = array<i64: 0, 1, 0, -1>, value = 0.000000e+00 : f32} : (tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK: %[[DM:.*]] = hps.add %[[ACC]], %[[DSLICE]]
// CHECK: %[[DW:.*]] = hps.mul %[[DM]], %{{.*}} : tensor<4x6xf32>
// CHECK: hps.dense_push "w", %[[DW]] : tensor<4x6xf32>

//--- gather_scatter.mlir
// A gather by run-time indices: its adjoint adds the gradient into zeros
// along the same axis. A scatter that replaces: data's gradient is the
// gradient with the replaced slices zeroed, the updates' the gathered
// slices. An add scatter passes the gradient to data unchanged.
func.func @main(%x: tensor<4x6xf32> {hps.name = "x", hps.batched}, %i: tensor<2xi64> {hps.name = "i"}) -> (tensor<4x20xf32> {hps.name = "y", hps.batched}) {
  %w = hps.weight "w" dense<0.1> : tensor<4x6xf32>
  %u = hps.weight "u" dense<0.2> : tensor<4x2xf32>
  %m = hps.mul %x, %w : tensor<4x6xf32>
  %g = hps.gather %m, %i {axis = 1 : i64} : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  %z = hps.scatter %m, %i, %u {axis = 1 : i64} : (tensor<4x6xf32>, tensor<2xi64>, tensor<4x2xf32>) -> tensor<4x6xf32>
  %a = hps.scatter %m, %i, %u {axis = 1 : i64, reduction = #hps<scatter_reduction add>} : (tensor<4x6xf32>, tensor<2xi64>, tensor<4x2xf32>) -> tensor<4x6xf32>
  %y = hps.concat %g, %z, %a, %m {axis = 1 : i64} : (tensor<4x2xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x20xf32>
  return %y : tensor<4x20xf32>
}

// CHECK-LABEL: func.func @main(
// CHECK: %[[G:.*]]:4 = hps.split
// CHECK-DAG: %[[ZEROS:.*]] = hps.constant dense<0.000000e+00> : tensor<4x6xf32>
// CHECK-DAG: %[[NOUPDATES:.*]] = hps.constant dense<0.000000e+00> : tensor<4x2xf32>
// CHECK-DAG: %[[DUA:.*]] = hps.gather %[[G]]#2, %arg1 {axis = 1 : i64} : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<4x2xf32>
// CHECK-DAG: %[[DUZ:.*]] = hps.gather %[[G]]#1, %arg1 {axis = 1 : i64} : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<4x2xf32>
// CHECK-DAG: %[[DMZ:.*]] = hps.scatter %[[G]]#1, %arg1, %[[NOUPDATES]] {axis = 1 : i64} : (tensor<4x6xf32>, tensor<2xi64>, tensor<4x2xf32>) -> tensor<4x6xf32>
// CHECK-DAG: %[[DMG:.*]] = hps.scatter %[[ZEROS]], %arg1, %[[G]]#0 {axis = 1 : i64, reduction = #hps<scatter_reduction add>} : (tensor<4x6xf32>, tensor<2xi64>, tensor<4x2xf32>) -> tensor<4x6xf32>
// CHECK-DAG: hps.add %{{[0-9]+}}, %[[DMZ]]
// CHECK-DAG: %[[DU:.*]] = hps.add %[[DUA]], %[[DUZ]]
// CHECK-DAG: hps.add %{{[0-9]+}}, %[[DMG]]
// CHECK: hps.dense_push "w"
// CHECK: hps.dense_push "u", %[[DU]]

//--- recurrence.mlir
// One recurrence_grad gives the adjoints of every operand of an LSTM
// recurrence; only h_last reaches the loss, so grad_y and grad_c_last stay
// absent. The projection's gemm takes grad_projected as its result's adjoint.
func.func @main(%x: tensor<10x3xf32> {hps.name = "x", hps.batched}, %lens: tensor<2xi64> {hps.name = "lens"}) -> (tensor<2x4xf32> {hps.name = "h", hps.batched}) {
  %w = hps.weight "w" dense<0.1> : tensor<3x16xf32>
  %r = hps.weight "r" dense<0.2> : tensor<16x4xf32>
  %rb = hps.weight "rb" dense<0.0> : tensor<16xf32>
  %h0 = hps.weight "h0" dense<0.0> : tensor<2x4xf32>
  %c0 = hps.weight "c0" dense<0.0> : tensor<2x4xf32>
  %peep = hps.weight "peep" dense<0.5> : tensor<12xf32>
  %xw = hps.gemm %x, %w : (tensor<10x3xf32>, tensor<3x16xf32>) -> tensor<10x16xf32>
  %p = hps.reshape %xw {shape = array<i64: 5, 2, 16>} : (tensor<10x16xf32>) -> tensor<5x2x16xf32>
  %y, %hl, %cl = hps.recurrence %p, %r, %rb, %h0 lengths %lens initial_c %c0 peepholes %peep {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm", clip = 3.0 : f32} : (tensor<5x2x16xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<2x4xf32>, tensor<2xi64>, tensor<2x4xf32>, tensor<12xf32>) -> (tensor<5x2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  return %hl : tensor<2x4xf32>
}

// CHECK: %[[P:.*]] = hps.reshape
// CHECK: %[[Y:.*]], %[[HL:.*]], %{{.*}} = hps.recurrence %[[P]], %[[R:[^,]*]], %[[RB:[^ ]*]], %[[H0:[^ ]*]] lengths %[[LENS:[^ ]*]] initial_c %[[C0:[^ ]*]] peepholes %[[PEEP:[^ ]*]] {
// CHECK: %[[SEED:.*]] = hps.loss_grad mse
// CHECK: %[[DP:.*]], %[[DR:.*]], %[[DRB:.*]], %[[DH0:.*]], %[[DC0:.*]]:2 = hps.recurrence_grad %[[P]], %[[R]], %[[RB]], %[[H0]] lengths %[[LENS]] initial_c %[[C0]] peepholes %[[PEEP]] y %[[Y]] grad_h_last %[[SEED]] {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm", clip = 3.000000e+00 : f32} : (tensor<5x2x16xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<2x4xf32>, tensor<2xi64>, tensor<2x4xf32>, tensor<12xf32>, tensor<5x2x4xf32>, tensor<2x4xf32>) -> (tensor<5x2x16xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<12xf32>)
// CHECK: %[[DXW:.*]] = hps.reshape %[[DP]] {shape = array<i64: 10, 16>} : (tensor<5x2x16xf32>) -> tensor<10x16xf32>
// CHECK: hps.gemm %[[X:.*]], %[[DXW]] {trans_a} : (tensor<10x3xf32>, tensor<10x16xf32>) -> tensor<3x16xf32>
// CHECK-DAG: hps.dense_push "r", %[[DR]]
// CHECK-DAG: hps.dense_push "rb", %[[DRB]]
// CHECK-DAG: hps.dense_push "h0", %[[DH0]]
// CHECK-DAG: hps.dense_push "c0", %[[DC0]]#0
// CHECK-DAG: hps.dense_push "peep", %[[DC0]]#1
