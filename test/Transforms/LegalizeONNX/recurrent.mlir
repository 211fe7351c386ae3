// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s
// RUN: heterps-opt --hps-legalize-onnx=recurrence-unroll-limit=1 --split-input-file %s | FileCheck %s --check-prefix=LONG

// LSTM (7-17) unrolled over its two steps: one gemm projects both steps'
// inputs (with Wb), then each step adds H R^T + Rb, splits the gates
// i, o, f, c and applies sigmoid, tanh and tanh.
// CHECK-LABEL: func @lstm
func.func @lstm(%x: tensor<2x3x4xf32>, %w: tensor<1x20x4xf32>, %r: tensor<1x20x5xf32>, %b: tensor<1x40xf32>) -> (tensor<2x1x3x5xf32>, tensor<1x3x5xf32>, tensor<1x3x5xf32>) {
  // CHECK: %[[XF:.*]] = hps.reshape %arg0 {shape = array<i64: 6, 4>}
  // CHECK: %[[PROJ:.*]] = hps.gemm %[[XF]], %{{.*}}, %{{.*}} {trans_b} : (tensor<6x4xf32>, tensor<20x4xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  // CHECK: hps.split %{{.*}} {axis = 0 : i64, sizes = array<i64: 1, 1>}
  // CHECK: hps.gemm %{{.*}}, %{{.*}}, %{{.*}} {trans_b} : (tensor<3x5xf32>, tensor<20x5xf32>, tensor<20xf32>) -> tensor<3x20xf32>
  // CHECK: hps.split %{{.*}} {axis = 1 : i64, sizes = array<i64: 5, 5, 5, 5>}
  // CHECK-COUNT-2: hps.sigmoid
  // CHECK: hps.tanh
  // CHECK: hps.sigmoid
  // CHECK: hps.tanh
  // CHECK: hps.gemm %{{.*}} {trans_b} : (tensor<3x5xf32>, tensor<20x5xf32>, tensor<20xf32>) -> tensor<3x20xf32>
  // CHECK: %[[Y:.*]] = hps.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<1x1x3x5xf32>, tensor<1x1x3x5xf32>) -> tensor<2x1x3x5xf32>
  // CHECK: return %[[Y]]
  // Past the unrolling limit: the same projection, then one hps.recurrence
  // whose y, h and c are reshaped to ONNX's outputs.
  // LONG-LABEL: func @lstm
  // LONG: %[[PROJ:.*]] = hps.gemm %{{.*}} {trans_b} : (tensor<6x4xf32>, tensor<20x4xf32>, tensor<20xf32>) -> tensor<6x20xf32>
  // LONG: %[[P3:.*]] = hps.reshape %[[PROJ]] {shape = array<i64: 2, 3, 20>}
  // LONG: %[[Y:.*]], %{{.*}}, %{{.*}} = hps.recurrence %[[P3]], %{{.*}}, %{{.*}}, %[[H0:.*]] initial_c %[[H0]] {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm"} : (tensor<2x3x20xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<3x5xf32>, tensor<3x5xf32>) -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  // LONG: hps.reshape %[[Y]] {shape = array<i64: 2, 1, 3, 5>}
  // LONG-NOT: hps.sigmoid
  // LONG-NOT: hps.onnx_node
  %n = hps.none
  %0:3 = hps.onnx_node "LSTM"(%x, %w, %r, %b) {attrs = {hidden_size = 5 : i64}, domain = "", opset = 14 : i64} : (tensor<2x3x4xf32>, tensor<1x20x4xf32>, tensor<1x20x5xf32>, tensor<1x40xf32>) -> (tensor<2x1x3x5xf32>, tensor<1x3x5xf32>, tensor<1x3x5xf32>)
  // CHECK-NOT: hps.onnx_node
  return %0#0, %0#1, %0#2 : tensor<2x1x3x5xf32>, tensor<1x3x5xf32>, tensor<1x3x5xf32>
}

// -----

// GRU (linear_before_reset = 0): R_h multiplies r * H after the reset
// gate; sequence_lens masks each step with t < lens.
// CHECK-LABEL: func @gru_masked
func.func @gru_masked(%x: tensor<2x3x4xf32>, %w: tensor<1x15x4xf32>, %r: tensor<1x15x5xf32>, %lens: tensor<3xi32>) -> tensor<1x3x5xf32> {
  %n = hps.none
  // CHECK-DAG: %[[ZERO:.*]] = hps.constant dense<0> : tensor<i32>
  // CHECK: %[[M0:.*]] = hps.greater %arg3, %[[ZERO]] : tensor<3xi32>, tensor<i32> -> tensor<3xi1>
  // CHECK: hps.gemm %{{.*}}, %{{.*}} {trans_b} : (tensor<3x5xf32>, tensor<10x5xf32>) -> tensor<3x10xf32>
  // CHECK: hps.mul
  // CHECK: hps.gemm %{{.*}}, %{{.*}} {trans_b} : (tensor<3x5xf32>, tensor<5x5xf32>) -> tensor<3x5xf32>
  // CHECK: hps.where
  // sequence_lens goes to the recurrence as i64; no bias is a zero Rb.
  // LONG-LABEL: func @gru_masked
  // LONG: %[[LENS:.*]] = hps.cast %arg3 : (tensor<3xi32>) -> tensor<3xi64>
  // LONG: hps.recurrence %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} lengths %[[LENS]] {activations = ["Sigmoid", "Tanh"], cell = "gru"}
  %0:2 = hps.onnx_node "GRU"(%x, %w, %r, %n, %lens) {attrs = {hidden_size = 5 : i64}, domain = "", opset = 7 : i64} : (tensor<2x3x4xf32>, tensor<1x15x4xf32>, tensor<1x15x5xf32>, none, tensor<3xi32>) -> (tensor<2x1x3x5xf32>, tensor<1x3x5xf32>)
  return %0#1 : tensor<1x3x5xf32>
}

// -----

// RNN, bidirectional and batch first: the reverse direction runs from the
// last step; Y is transposed back to [batch, steps, directions, hidden].
// CHECK-LABEL: func @rnn_bidirectional
func.func @rnn_bidirectional(%x: tensor<3x2x4xf32>, %w: tensor<2x5x4xf32>, %r: tensor<2x5x5xf32>) -> tensor<3x2x2x5xf32> {
  // CHECK: hps.transpose %arg0 {perm = array<i64: 1, 0, 2>}
  // CHECK-COUNT-4: hps.tanh
  // CHECK: %[[Y:.*]] = hps.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x1x3x5xf32>, tensor<2x1x3x5xf32>) -> tensor<2x2x3x5xf32>
  // CHECK: hps.transpose %[[Y]] {perm = array<i64: 2, 0, 1, 3>}
  // LONG-LABEL: func @rnn_bidirectional
  // LONG: hps.recurrence {{.*}} {activations = ["Tanh"], cell = "rnn"}
  // LONG: hps.recurrence {{.*}} {activations = ["Tanh"], cell = "rnn", reverse}
  // LONG: hps.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x1x3x5xf32>, tensor<2x1x3x5xf32>) -> tensor<2x2x3x5xf32>
  %0:2 = hps.onnx_node "RNN"(%x, %w, %r) {attrs = {hidden_size = 5 : i64, direction = "bidirectional", layout = 1 : i64}, domain = "", opset = 14 : i64} : (tensor<3x2x4xf32>, tensor<2x5x4xf32>, tensor<2x5x5xf32>) -> (tensor<3x2x2x5xf32>, tensor<3x2x5xf32>)
  return %0#0 : tensor<3x2x2x5xf32>
}

// -----

// Stay generic: activations with parameters, coupled LSTM gates, an
// activation other than Sigmoid, Tanh and Relu, a dynamic sequence.
// CHECK-LABEL: func @generic
func.func @generic(%x: tensor<2x3x4xf32>, %w: tensor<1x5x4xf32>, %r: tensor<1x5x5xf32>, %w4: tensor<1x20x4xf32>, %r4: tensor<1x20x5xf32>, %d: tensor<?x3x4xf32>) -> (tensor<2x1x3x5xf32>, tensor<2x1x3x5xf32>, tensor<2x1x3x5xf32>, tensor<?x1x3x5xf32>) {
  // CHECK: hps.onnx_node "RNN"{{.*}}activation_alpha
  %0 = hps.onnx_node "RNN"(%x, %w, %r) {attrs = {hidden_size = 5 : i64, activations = ["LeakyRelu"], activation_alpha = [0.1 : f32]}, domain = "", opset = 14 : i64} : (tensor<2x3x4xf32>, tensor<1x5x4xf32>, tensor<1x5x5xf32>) -> tensor<2x1x3x5xf32>
  // CHECK: hps.onnx_node "LSTM"{{.*}}input_forget
  %1 = hps.onnx_node "LSTM"(%x, %w4, %r4) {attrs = {hidden_size = 5 : i64, input_forget = 1 : i64}, domain = "", opset = 14 : i64} : (tensor<2x3x4xf32>, tensor<1x20x4xf32>, tensor<1x20x5xf32>) -> tensor<2x1x3x5xf32>
  // CHECK: hps.onnx_node "RNN"{{.*}}Softsign
  %2 = hps.onnx_node "RNN"(%x, %w, %r) {attrs = {hidden_size = 5 : i64, activations = ["Softsign"]}, domain = "", opset = 14 : i64} : (tensor<2x3x4xf32>, tensor<1x5x4xf32>, tensor<1x5x5xf32>) -> tensor<2x1x3x5xf32>
  // CHECK: hps.onnx_node "RNN"(%arg5
  %3 = hps.onnx_node "RNN"(%d, %w, %r) {attrs = {hidden_size = 5 : i64}, domain = "", opset = 14 : i64} : (tensor<?x3x4xf32>, tensor<1x5x4xf32>, tensor<1x5x5xf32>) -> tensor<?x1x3x5xf32>
  // CHECK-NOT: hps.gemm
  return %0, %1, %2, %3 : tensor<2x1x3x5xf32>, tensor<2x1x3x5xf32>, tensor<2x1x3x5xf32>, tensor<?x1x3x5xf32>
}
