// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// The unary ops without attributes, each at the first opset it is read at
// and at opset 17, keeping the node's placement.

// CHECK-LABEL: func @relu
func.func @relu(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.relu %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Relu"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.relu %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Relu"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @sigmoid
func.func @sigmoid(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.sigmoid %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Sigmoid"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.sigmoid %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Sigmoid"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @tanh
func.func @tanh(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.tanh %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Tanh"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.tanh %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Tanh"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @exp
func.func @exp(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.exp %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Exp"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.exp %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Exp"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @log
func.func @log(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.log %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Log"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.log %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Log"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @sqrt
func.func @sqrt(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.sqrt %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Sqrt"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.sqrt %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Sqrt"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @abs
func.func @abs(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.abs %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Abs"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.abs %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Abs"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @neg
func.func @neg(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.neg %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Neg"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.neg %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Neg"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @reciprocal
func.func @reciprocal(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.reciprocal %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Reciprocal"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.reciprocal %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Reciprocal"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @floor
func.func @floor(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.floor %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Floor"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.floor %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Floor"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @ceil
func.func @ceil(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.ceil %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Ceil"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.ceil %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Ceil"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @sin
func.func @sin(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.sin %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Sin"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.sin %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Sin"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @cos
func.func @cos(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.cos %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Cos"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.cos %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Cos"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Asin, Acos, Atan (7-17).
// CHECK-LABEL: func @inverse_trigonometric
func.func @inverse_trigonometric(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.asin %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Asin"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.acos %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Acos"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[C:.*]] = hps.atan %arg0 : tensor<2x3xf32>
  %2 = hps.onnx_node "Atan"(%x) {attrs = {}, domain = "", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]], %[[C]]
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @softplus
func.func @softplus(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.softplus %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Softplus"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.softplus %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Softplus"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @softsign
func.func @softsign(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.softsign %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Softsign"(%x) {attrs = {}, domain = "", opset = 7 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.softsign %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Softsign"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @erf
func.func @erf(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.erf %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Erf"(%x) {attrs = {}, domain = "", opset = 9 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.erf %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Erf"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @sign
func.func @sign(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.sign %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Sign"(%x) {attrs = {}, domain = "", opset = 9 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.sign %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Sign"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @round
func.func @round(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.round %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "Round"(%x) {attrs = {}, domain = "", opset = 11 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.round %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "Round"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func @hard_swish
func.func @hard_swish(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: %[[A:.*]] = hps.hard_swish %arg0 {device = #hps.device<"gpu.0">} : tensor<2x3xf32>
  %0 = hps.onnx_node "HardSwish"(%x) {attrs = {}, domain = "", opset = 14 : i64, device = #hps.device<"gpu.0">} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: %[[B:.*]] = hps.hard_swish %arg0 : tensor<2x3xf32>
  %1 = hps.onnx_node "HardSwish"(%x) {attrs = {}, domain = "ai.onnx", opset = 17 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: return %[[A]], %[[B]]
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Not works on booleans.
// CHECK-LABEL: func @not
func.func @not(%b: tensor<4xi1>) -> tensor<4xi1> {
  // CHECK: hps.not %arg0 : tensor<4xi1>
  %0 = hps.onnx_node "Not"(%b) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Integer inputs (Relu 14, Abs, Neg, Sign 13).
// CHECK-LABEL: func @integers
func.func @integers(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  // CHECK: hps.relu %arg0 : tensor<4xi32>
  %0 = hps.onnx_node "Relu"(%x) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  // CHECK: hps.sign %arg0 : tensor<4xi32>
  %1 = hps.onnx_node "Sign"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// Dynamic and unknown shapes pass through.
// CHECK-LABEL: func @dynamic
func.func @dynamic(%x: tensor<?x3xf32>, %y: tensor<*xf32>) -> (tensor<?x3xf32>, tensor<*xf32>) {
  // CHECK: hps.exp %arg0 : tensor<?x3xf32>
  %0 = hps.onnx_node "Exp"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  // CHECK: hps.tanh %arg1 : tensor<*xf32>
  %1 = hps.onnx_node "Tanh"(%y) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<*xf32>) -> tensor<*xf32>
  return %0, %1 : tensor<?x3xf32>, tensor<*xf32>
}

// -----

// Before the version that introduced them, in another domain, or below
// opset 7, the nodes stay generic.
// CHECK-LABEL: func @out_of_range
func.func @out_of_range(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: hps.onnx_node "Erf"{{.*}}opset = 8
  %0 = hps.onnx_node "Erf"(%x) {attrs = {}, domain = "", opset = 8 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.onnx_node "Sign"{{.*}}opset = 8
  %1 = hps.onnx_node "Sign"(%x) {attrs = {}, domain = "", opset = 8 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.onnx_node "Round"{{.*}}opset = 10
  %2 = hps.onnx_node "Round"(%x) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.onnx_node "HardSwish"{{.*}}opset = 13
  %3 = hps.onnx_node "HardSwish"(%x) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.onnx_node "Relu"{{.*}}domain = "com.example"
  %4 = hps.onnx_node "Relu"(%x) {attrs = {}, domain = "com.example", opset = 14 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.onnx_node "Relu"{{.*}}opset = 5
  %5 = hps.onnx_node "Relu"(%x) {attrs = {}, domain = "", opset = 5 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Gelu (20): exact, or tanh-approximated.
// CHECK-LABEL: func @gelu_20
func.func @gelu_20(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: hps.gelu %arg0 : tensor<4xf32>
  %0 = hps.onnx_node "Gelu"(%x) {attrs = {}, domain = "", opset = 20 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.gelu %arg0 {tanh_approximation} : tensor<4xf32>
  %1 = hps.onnx_node "Gelu"(%x) {attrs = {approximate = "tanh"}, domain = "", opset = 20 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: hps.onnx_node "Gelu"
  %2 = hps.onnx_node "Gelu"(%x) {attrs = {approximate = "erf"}, domain = "", opset = 20 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
