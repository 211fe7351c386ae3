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
