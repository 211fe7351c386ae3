// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Arithmetic, opsets 7 (numpy broadcasting) to 17; operands broadcast in
// the hps op itself, so they pass through unchanged.
// CHECK-LABEL: func @arithmetic
func.func @arithmetic(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: hps.add %arg0, %arg1 {device = #hps.device<"cpu.x">} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %0 = hps.onnx_node "Add"(%a, %b) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"cpu.x">} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.sub %arg1, %arg0 : tensor<3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = hps.onnx_node "Sub"(%b, %a) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.mul %arg0, %arg1 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %2 = hps.onnx_node "Mul"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.div %arg0, %arg1 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %3 = hps.onnx_node "Div"(%a, %b) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.pow %arg0, %arg1 : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %4 = hps.onnx_node "Pow"(%a, %b) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.add %arg0, %arg0 : tensor<2x3xf32>
  %5 = hps.onnx_node "Add"(%a, %a) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Both operands broadcast, scalars, dynamic extents.
// CHECK-LABEL: func @broadcasting
func.func @broadcasting(%a: tensor<2x1x4xf32>, %b: tensor<3x1xf32>, %s: tensor<f32>, %d: tensor<?x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x1x4xf32>, tensor<?x4xf32>) {
  // CHECK: hps.mul %arg0, %arg1 : tensor<2x1x4xf32>, tensor<3x1xf32> -> tensor<2x3x4xf32>
  %0 = hps.onnx_node "Mul"(%a, %b) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
  // CHECK: hps.div %arg2, %arg0 : tensor<f32>, tensor<2x1x4xf32> -> tensor<2x1x4xf32>
  %1 = hps.onnx_node "Div"(%s, %a) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<f32>, tensor<2x1x4xf32>) -> tensor<2x1x4xf32>
  // CHECK: hps.sub %arg3, %arg2 : tensor<?x4xf32>, tensor<f32> -> tensor<?x4xf32>
  %2 = hps.onnx_node "Sub"(%d, %s) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  return %0, %1, %2 : tensor<2x3x4xf32>, tensor<2x1x4xf32>, tensor<?x4xf32>
}

// -----

// Integers; Pow 12+ takes an exponent of another type.
// CHECK-LABEL: func @integers
func.func @integers(%a: tensor<4xi32>, %b: tensor<4xi32>, %x: tensor<4xf32>, %e: tensor<i64>) -> (tensor<4xi32>, tensor<4xf32>) {
  // CHECK: hps.div %arg0, %arg1 : tensor<4xi32>
  %0 = hps.onnx_node "Div"(%a, %b) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK: hps.pow %arg2, %arg3 : tensor<4xf32>, tensor<i64> -> tensor<4xf32>
  %1 = hps.onnx_node "Pow"(%x, %e) {attrs = {}, domain = "", opset = 15 : i64} : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  return %0, %1 : tensor<4xi32>, tensor<4xf32>
}

// -----

// PRelu: the slope broadcasts to the input (a per-channel slope here).
// CHECK-LABEL: func @prelu
func.func @prelu(%x: tensor<2x3x4x4xf32>, %c: tensor<3x1x1xf32>, %s: tensor<1xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) {
  // CHECK: hps.prelu %arg0, %arg1 : tensor<2x3x4x4xf32>, tensor<3x1x1xf32> -> tensor<2x3x4x4xf32>
  %0 = hps.onnx_node "PRelu"(%x, %c) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
  // CHECK: hps.prelu %arg0, %arg2 : tensor<2x3x4x4xf32>, tensor<1xf32> -> tensor<2x3x4x4xf32>
  %1 = hps.onnx_node "PRelu"(%x, %s) {attrs = {}, domain = "", opset = 16 : i64} : (tensor<2x3x4x4xf32>, tensor<1xf32>) -> tensor<2x3x4x4xf32>
  return %0, %1 : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>
}

// -----

// Opset 6: no numpy broadcasting. Without broadcast=1 the operands share a
// shape; with it B is broadcast into A, aligned at `axis` (default:
// trailing), which becomes a reshape of B to A's rank. PRelu-6's
// per-channel slope (PyTorch's export) applies along axis 1.
// CHECK-LABEL: func @opset6
func.func @opset6(%a: tensor<2x3x4xf32>, %b: tensor<4xf32>, %c: tensor<3xf32>, %s: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xi1>, tensor<2x3x4xf32>) {
  // CHECK: %[[T:.*]] = hps.add %arg0, %arg1 : tensor<2x3x4xf32>, tensor<4xf32> -> tensor<2x3x4xf32>
  %0 = hps.onnx_node "Add"(%a, %b) {attrs = {broadcast = 1 : i64}, domain = "", opset = 6 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  // CHECK: %[[C:.*]] = hps.reshape %arg2 {shape = array<i64: 3, 1>} : (tensor<3xf32>) -> tensor<3x1xf32>
  // CHECK: %[[M:.*]] = hps.mul %arg0, %[[C]] : tensor<2x3x4xf32>, tensor<3x1xf32> -> tensor<2x3x4xf32>
  %1 = hps.onnx_node "Mul"(%a, %c) {attrs = {axis = 1 : i64, broadcast = 1 : i64}, domain = "", opset = 6 : i64} : (tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  // CHECK: %[[S:.*]] = hps.sub %arg0, %arg0 : tensor<2x3x4xf32>
  %2 = hps.onnx_node "Sub"(%a, %a) {attrs = {}, domain = "", opset = 6 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: %[[E:.*]] = hps.equal %arg0, %arg1 : tensor<2x3x4xf32>, tensor<4xf32> -> tensor<2x3x4xi1>
  %3 = hps.onnx_node "Equal"(%a, %b) {attrs = {broadcast = 1 : i64}, domain = "", opset = 6 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xi1>
  // CHECK: %[[P:.*]] = hps.reshape %arg3 {shape = array<i64: 3, 1>} : (tensor<3xf32>) -> tensor<3x1xf32>
  // CHECK: %[[R:.*]] = hps.prelu %arg0, %[[P]]
  %4 = hps.onnx_node "PRelu"(%a, %s) {attrs = {}, domain = "", opset = 6 : i64} : (tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  // CHECK: return %[[T]], %[[M]], %[[S]], %[[E]], %[[R]]
  return %0, %1, %2, %3, %4 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xi1>, tensor<2x3x4xf32>
}

// -----

// Opset 6, stays generic: shapes differ without broadcast=1; B does not
// fit A at `axis`; numpy broadcasting of A into B, which opset 6 lacks.
// CHECK-LABEL: func @opset6_generic
func.func @opset6_generic(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %one: tensor<1x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: hps.onnx_node "Add"(%arg0, %arg1) {attrs = {}
  %0 = hps.onnx_node "Add"(%a, %b) {attrs = {}, domain = "", opset = 6 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.onnx_node "Add"(%arg0, %arg1) {attrs = {axis = 0 : i64
  %1 = hps.onnx_node "Add"(%a, %b) {attrs = {axis = 0 : i64, broadcast = 1 : i64}, domain = "", opset = 6 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: hps.onnx_node "Div"(%arg2, %arg0)
  %2 = hps.onnx_node "Div"(%one, %a) {attrs = {broadcast = 1 : i64}, domain = "", opset = 6 : i64} : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
