// RUN: heterps-opt --hps-lower-to-runtime-calls %s | FileCheck %s

// Recurrences become hpsrt.recurrent and their adjoints
// hpsrt.recurrent_grad, with one #hpsrt.recurrent_params: the cell, steps
// T, batch B and hidden H from the shapes, reverse, the activations (the
// runtime's defaults Sigmoid, Tanh, Tanh where ONNX names fewer), clip,
// linear_before_reset, and which optional operands there are. An
// hpsrt.projected_recurrence becomes one hpsrt.recurrent that takes X, W
// and Wb and projects itself (input = I, X's last dim); its gemm and views
// are gone.

// An LSTM with lengths, c0 and peepholes, clipped and reversed: operands
// in the kernel's order (projected, r, rb, lengths, h0, c0, peepholes), and
// three results.
// CHECK-LABEL: func.func @lstm
func.func @lstm(%p: tensor<6x2x12xf32>, %r: tensor<12x3xf32>, %rb: tensor<12xf32>, %h: tensor<2x3xf32>, %lens: tensor<2xi64>, %c: tensor<2x3xf32>, %peep: tensor<9xf32>) -> (tensor<6x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[R0:[^ ,]+]], %[[R1:[^ ,]+]], %[[R2:[^ ,]+]] = "hpsrt.recurrent"(%arg0, %arg1, %arg2, %arg4, %arg3, %arg5, %arg6) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0, 0>, params = #hpsrt.recurrent_params<cell = <LSTM>, steps = 6 : i64, batch = 2 : i64, hidden = 3 : i64, reverse = true, activations = [#hpsrt.unary_kind<Sigmoid>, #hpsrt.unary_kind<Tanh>, #hpsrt.unary_kind<Tanh>], hasClip = true, clip = 2.000000e+00 : f32, linearBeforeReset = false, hasRecurrentBias = true, hasLengths = true, hasPeepholes = true, input = 0 : i64>}> : (tensor<6x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2xi64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<9xf32>) -> (tensor<6x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  %y, %hl, %cl = hps.recurrence %p, %r, %rb, %h lengths %lens initial_c %c peepholes %peep {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm", clip = 2.0 : f32, reverse} : (tensor<6x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2xi64>, tensor<2x3xf32>, tensor<9xf32>) -> (tensor<6x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  // CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]]
  return %y, %hl, %cl : tensor<6x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// A GRU naming two activations (the third is the default Tanh), with
// linear_before_reset; no cLast.
// CHECK-LABEL: func.func @gru
func.func @gru(%q: tensor<6x2x9xf32>, %r: tensor<9x3xf32>, %rb: tensor<9xf32>, %h: tensor<2x3xf32>) -> (tensor<6x2x3xf32>, tensor<2x3xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[R0:[^ ,]+]], %[[R1:[^ ,]+]] = "hpsrt.recurrent"(%arg0, %arg1, %arg2, %arg3) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0, 0, 0>, params = #hpsrt.recurrent_params<cell = <GRU>, steps = 6 : i64, batch = 2 : i64, hidden = 3 : i64, reverse = false, activations = [#hpsrt.unary_kind<Sigmoid>, #hpsrt.unary_kind<Relu>, #hpsrt.unary_kind<Tanh>], hasClip = false, clip = 0.000000e+00 : f32, linearBeforeReset = true, hasRecurrentBias = true, hasLengths = false, hasPeepholes = false, input = 0 : i64>}> : (tensor<6x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>) -> (tensor<6x2x3xf32>, tensor<2x3xf32>)
  %y, %hl = hps.recurrence %q, %r, %rb, %h {activations = ["Sigmoid", "Relu"], cell = "gru", linear_before_reset} : (tensor<6x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>) -> (tensor<6x2x3xf32>, tensor<2x3xf32>)
  // CHECK-NEXT: return %[[R0]], %[[R1]]
  return %y, %hl : tensor<6x2x3xf32>, tensor<2x3xf32>
}

// The projection X W^T + Wb moves into the kernel: it reads X (%arg0) and
// gets W and Wb as inputWeights and inputBias, with input = 8.
// CHECK-LABEL: func.func @projected
func.func @projected(%x: tensor<6x8xf32>, %w: tensor<20x8xf32>, %wb: tensor<20xf32>, %r: tensor<20x5xf32>, %rb: tensor<20xf32>, %h0: tensor<3x5xf32>) -> (tensor<2x3x5xf32>, tensor<3x5xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[R0:[^ ,]+]], %[[R1:[^ ,]+]], %[[R2:[^ ,]+]] = "hpsrt.recurrent"(%arg0, %arg3, %arg4, %arg5, %arg5, %arg1, %arg2) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1, 0, 1, 1>, params = #hpsrt.recurrent_params<cell = <LSTM>, steps = 2 : i64, batch = 3 : i64, hidden = 5 : i64, {{.*}}, hasLengths = false, hasPeepholes = false, input = 8 : i64>}> : (tensor<6x8xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<20x8xf32>, tensor<20xf32>) -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
  %y:3 = hpsrt.projected_recurrence -> tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32> {
    %p = hps.gemm %x, %w, %wb {trans_b} : (tensor<6x8xf32>, tensor<20x8xf32>, tensor<20xf32>) -> tensor<6x20xf32>
    %p3 = hps.reshape %p {shape = array<i64: 2, 3, 20>} : (tensor<6x20xf32>) -> tensor<2x3x20xf32>
    %ry, %rh, %rc = hps.recurrence %p3, %r, %rb, %h0 initial_c %h0 {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm"} : (tensor<2x3x20xf32>, tensor<20x5xf32>, tensor<20xf32>, tensor<3x5xf32>, tensor<3x5xf32>) -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>)
    hpsrt.yield %ry, %rh, %rc : tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
  }
  // CHECK-NOT: hps.gemm
  // CHECK-NOT: hps.reshape
  // CHECK-NOT: hpsrt.yield
  // CHECK-NEXT: return %[[R0]], %[[R1]]
  return %y#0, %y#1 : tensor<2x3x5xf32>, tensor<3x5xf32>
}

// Backpropagation through time of an LSTM with lengths and peepholes:
// inputs are the forward's plus y, dy and dcLast (no dhLast); outputs dProjected,
// dR, dRb, dh0, dc0 and dPeepholes. hps.backward is kept.
// CHECK-LABEL: func.func @lstm_grad
func.func @lstm_grad(%p: tensor<6x2x12xf32>, %r: tensor<12x3xf32>, %rb: tensor<12xf32>, %h: tensor<2x3xf32>, %lens: tensor<2xi64>, %peep: tensor<9xf32>, %y: tensor<6x2x3xf32>, %dy: tensor<6x2x3xf32>, %dc: tensor<2x3xf32>) -> (tensor<6x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<9xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[G0:[^ ,]+]], %[[G1:[^ ,]+]], %[[G2:[^ ,]+]], %[[G3:[^ ,]+]], %[[G4:[^ ,]+]], %[[G5:[^ ,]+]] = "hpsrt.recurrent_grad"(%arg0, %arg1, %arg2, %arg4, %arg3, %arg3, %arg5, %arg6, %arg7, %arg8) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1>, params = #hpsrt.recurrent_params<cell = <LSTM>, steps = 6 : i64, batch = 2 : i64, hidden = 3 : i64, reverse = true, {{.*}}, hasLengths = true, hasPeepholes = true, input = 0 : i64>, resultSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1>}> {hps.backward} : (tensor<6x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2xi64>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<9xf32>, tensor<6x2x3xf32>, tensor<6x2x3xf32>, tensor<2x3xf32>) -> (tensor<6x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<9xf32>)
  %dp, %dr, %drb, %dh, %dcell:2 = hps.recurrence_grad %p, %r, %rb, %h lengths %lens initial_c %h peepholes %peep y %y grad_y %dy grad_c_last %dc {activations = ["Sigmoid", "Tanh", "Tanh"], cell = "lstm", reverse, hps.backward} : (tensor<6x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2xi64>, tensor<2x3xf32>, tensor<9xf32>, tensor<6x2x3xf32>, tensor<6x2x3xf32>, tensor<2x3xf32>) -> (tensor<6x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<9xf32>)
  // CHECK-NEXT: return %[[G0]], %[[G1]], %[[G2]], %[[G3]], %[[G4]], %[[G5]]
  return %dp, %dr, %drb, %dh, %dcell#0, %dcell#1 : tensor<6x2x12xf32>, tensor<12x3xf32>, tensor<12xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<9xf32>
}

// A GRU's adjoint has no dc0 nor dPeepholes (four results); only dhLast.
// CHECK-LABEL: func.func @gru_grad
func.func @gru_grad(%q: tensor<6x2x9xf32>, %r: tensor<9x3xf32>, %rb: tensor<9xf32>, %h: tensor<2x3xf32>, %y: tensor<6x2x3xf32>, %dh: tensor<2x3xf32>) -> (tensor<6x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[G0:[^ ,]+]], %[[G1:[^ ,]+]], %[[G2:[^ ,]+]], %[[G3:[^ ,]+]] = "hpsrt.recurrent_grad"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0, 1, 0, 1, 0>, params = #hpsrt.recurrent_params<cell = <GRU>, steps = 6 : i64, batch = 2 : i64, hidden = 3 : i64, reverse = false, activations = [#hpsrt.unary_kind<Sigmoid>, #hpsrt.unary_kind<Tanh>, #hpsrt.unary_kind<Tanh>], {{.*}}>, resultSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0>}> : {{.*}} -> (tensor<6x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>)
  %dq, %dr, %drb, %dh0 = hps.recurrence_grad %q, %r, %rb, %h y %y grad_h_last %dh {activations = ["Sigmoid", "Tanh"], cell = "gru"} : (tensor<6x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>, tensor<6x2x3xf32>, tensor<2x3xf32>) -> (tensor<6x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>)
  // CHECK-NEXT: return %[[G0]], %[[G1]], %[[G2]], %[[G3]]
  return %dq, %dr, %drb, %dh0 : tensor<6x2x9xf32>, tensor<9x3xf32>, tensor<9xf32>, tensor<2x3xf32>
}
