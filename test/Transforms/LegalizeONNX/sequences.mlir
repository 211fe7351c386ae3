// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Sequence ops (opsets 11-20) fold into the tensors they hold:
// SequenceEmpty and SequenceInsert (default at the back, or at a constant
// position) build a SequenceConstruct, which SequenceAt, SequenceLength and
// ConcatFromSequence read, and which is erased once nothing reads it.
// CHECK-LABEL: func @insert_at_concat
func.func @insert_at_concat(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<i64>, tensor<2x2x3xf32>) {
  %empty = hps.onnx_node "SequenceEmpty"() {attrs = {dtype = 1 : i64}, domain = "", opset = 11 : i64} : () -> !hps.sequence<tensor<*xf32>>
  %s1 = hps.onnx_node "SequenceInsert"(%empty, %a) {attrs = {}, domain = "", opset = 11 : i64} : (!hps.sequence<tensor<*xf32>>, tensor<2x3xf32>) -> !hps.sequence<tensor<*xf32>>
  %zero = hps.constant dense<0> : tensor<i64>
  %s2 = hps.onnx_node "SequenceInsert"(%s1, %b, %zero) {attrs = {}, domain = "", opset = 11 : i64} : (!hps.sequence<tensor<*xf32>>, tensor<2x3xf32>, tensor<i64>) -> !hps.sequence<tensor<*xf32>>
  %last = hps.constant dense<-1> : tensor<i64>
  %e = hps.onnx_node "SequenceAt"(%s2, %last) {attrs = {}, domain = "", opset = 11 : i64} : (!hps.sequence<tensor<*xf32>>, tensor<i64>) -> tensor<*xf32>
  %r = hps.onnx_node "Relu"(%e) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<*xf32>) -> tensor<2x3xf32>
  %n = hps.onnx_node "SequenceLength"(%s2) {attrs = {}, domain = "", opset = 11 : i64} : (!hps.sequence<tensor<*xf32>>) -> tensor<i64>
  %c = hps.onnx_node "ConcatFromSequence"(%s2) {attrs = {axis = 0 : i64, new_axis = 1 : i64}, domain = "", opset = 11 : i64} : (!hps.sequence<tensor<*xf32>>) -> tensor<2x2x3xf32>
  // CHECK-NOT: hps.onnx_node
  // CHECK-DAG: %[[N:.*]] = hps.constant dense<2> : tensor<i64>
  // CHECK-DAG: %[[R:.*]] = hps.relu %arg0
  // CHECK-DAG: %[[UB:.*]] = hps.unsqueeze %arg1 {axes = array<i64: 0>}
  // CHECK-DAG: %[[UA:.*]] = hps.unsqueeze %arg0 {axes = array<i64: 0>}
  // CHECK: %[[C:.*]] = hps.concat %[[UB]], %[[UA]] {axis = 0 : i64}
  // CHECK: return %[[R]], %[[N]], %[[C]]
  return %r, %n, %c : tensor<2x3xf32>, tensor<i64>, tensor<2x2x3xf32>
}

// -----

// SplitToSequence by a scalar chunk (the last piece shorter), then
// SequenceErase of the first piece and a ConcatFromSequence without a new
// axis.
// CHECK-LABEL: func @split_chunks_erase
func.func @split_chunks_erase(%x: tensor<3x5xf32>) -> tensor<3x3xf32> {
  %two = hps.constant dense<2> : tensor<i64>
  %s = hps.onnx_node "SplitToSequence"(%x, %two) {attrs = {axis = 1 : i64}, domain = "", opset = 11 : i64} : (tensor<3x5xf32>, tensor<i64>) -> !hps.sequence<tensor<3x?xf32>>
  %zero = hps.constant dense<0> : tensor<i64>
  %t = hps.onnx_node "SequenceErase"(%s, %zero) {attrs = {}, domain = "", opset = 11 : i64} : (!hps.sequence<tensor<3x?xf32>>, tensor<i64>) -> !hps.sequence<tensor<3x?xf32>>
  %c = hps.onnx_node "ConcatFromSequence"(%t) {attrs = {axis = 1 : i64}, domain = "", opset = 11 : i64} : (!hps.sequence<tensor<3x?xf32>>) -> tensor<3x3xf32>
  // CHECK: %[[P:.*]]:3 = hps.split %arg0 {axis = 1 : i64, sizes = array<i64: 2, 2, 1>}
  // CHECK: %[[C:.*]] = hps.concat %[[P]]#1, %[[P]]#2 {axis = 1 : i64}
  // CHECK: return %[[C]]
  return %c : tensor<3x3xf32>
}

// -----

// SplitToSequence into ones without keepdims squeezes each piece;
// SequenceMap (17) runs its body once per element with a tensor input too.
// CHECK-LABEL: func @split_ones_map
func.func @split_ones_map(%x: tensor<2x3xf32>, %w: tensor<3xf32>) -> tensor<2x3xf32> {
  %s = hps.onnx_node "SplitToSequence"(%x) {attrs = {axis = 0 : i64, keepdims = 0 : i64}, domain = "", opset = 11 : i64} : (tensor<2x3xf32>) -> !hps.sequence<tensor<3xf32>>
  %m = hps.onnx_node "SequenceMap"(%s, %w) {attrs = {}, domain = "", opset = 17 : i64, subgraphs = ["body"]} : (!hps.sequence<tensor<3xf32>>, tensor<3xf32>) -> !hps.sequence<tensor<3xf32>> {
  ^bb0(%e: tensor<3xf32>, %v: tensor<3xf32>):
    %p = hps.onnx_node "Mul"(%e, %v) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    hps.yield %p : tensor<3xf32>
  }
  %c = hps.onnx_node "ConcatFromSequence"(%m) {attrs = {axis = 0 : i64, new_axis = 1 : i64}, domain = "", opset = 11 : i64} : (!hps.sequence<tensor<3xf32>>) -> tensor<2x3xf32>
  // CHECK: %[[P:.*]]:2 = hps.split %arg0 {axis = 0 : i64, sizes = array<i64: 1, 1>}
  // CHECK-DAG: %[[R0:.*]] = hps.squeeze %[[P]]#0
  // CHECK-DAG: %[[R1:.*]] = hps.squeeze %[[P]]#1
  // CHECK-DAG: %[[M0:.*]] = hps.mul %[[R0]], %arg1
  // CHECK-DAG: %[[M1:.*]] = hps.mul %[[R1]], %arg1
  // CHECK-DAG: %[[U0:.*]] = hps.unsqueeze %[[M0]]
  // CHECK-DAG: %[[U1:.*]] = hps.unsqueeze %[[M1]]
  // CHECK: hps.concat %[[U0]], %[[U1]] {axis = 0 : i64}
  return %c : tensor<2x3xf32>
}

// -----

// A loop appending to a sequence (a TorchScript list) unrolls into one
// SequenceConstruct, which ConcatFromSequence reads.
// CHECK-LABEL: func @loop_append
func.func @loop_append(%x: tensor<2xf32>) -> tensor<3x2xf32> {
  %n = hps.constant dense<3> : tensor<i64>
  %none = hps.none
  %empty = hps.onnx_node "SequenceEmpty"() {attrs = {}, domain = "", opset = 11 : i64} : () -> !hps.sequence<tensor<*xf32>>
  %0:2 = hps.onnx_node "Loop"(%n, %none, %x, %empty) {attrs = {}, domain = "", opset = 13 : i64, subgraphs = ["body"]} : (tensor<i64>, none, tensor<2xf32>, !hps.sequence<tensor<*xf32>>) -> (tensor<2xf32>, !hps.sequence<tensor<*xf32>>) {
  ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %h: tensor<2xf32>, %outs: !hps.sequence<tensor<*xf32>>):
    %e = hps.onnx_node "Exp"(%h) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2xf32>) -> tensor<2xf32>
    %o = hps.onnx_node "SequenceInsert"(%outs, %e) {attrs = {}, domain = "", opset = 11 : i64} : (!hps.sequence<tensor<*xf32>>, tensor<2xf32>) -> !hps.sequence<tensor<*xf32>>
    hps.yield %cond, %e, %o : tensor<i1>, tensor<2xf32>, !hps.sequence<tensor<*xf32>>
  }
  %c = hps.onnx_node "ConcatFromSequence"(%0#1) {attrs = {axis = 0 : i64, new_axis = 1 : i64}, domain = "", opset = 11 : i64} : (!hps.sequence<tensor<*xf32>>) -> tensor<3x2xf32>
  // CHECK-NOT: hps.onnx_node
  // CHECK: %[[E1:.*]] = hps.exp %arg0
  // CHECK: %[[E2:.*]] = hps.exp %[[E1]]
  // CHECK: %[[E3:.*]] = hps.exp %[[E2]]
  // CHECK: hps.concat
  return %c : tensor<3x2xf32>
}
