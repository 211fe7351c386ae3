// RUN: heterps-opt --hps-legalize-onnx %s | FileCheck %s

// Tan, Sinh, Cosh, Asinh, Acosh and Atanh composed from ops with kernels.
// CHECK-LABEL: func @elementary
func.func @elementary(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[SIN:.*]] = hps.sin %arg0
  // CHECK: %[[COS:.*]] = hps.cos %arg0
  // CHECK: %[[TAN:.*]] = hps.div %[[SIN]], %[[COS]]
  %0 = hps.onnx_node "Tan"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // sinh = exp(x - ln 2) - exp(-x - ln 2)
  // CHECK: %[[UP:.*]] = hps.sub %arg0, %[[LN2:.*]] : tensor<4xf32>, tensor<f32>
  // CHECK: %[[EUP:.*]] = hps.exp %[[UP]]
  // CHECK: %[[NX:.*]] = hps.neg %arg0
  // CHECK: %[[DOWN:.*]] = hps.sub %[[NX]], %[[LN2]]
  // CHECK: %[[EDOWN:.*]] = hps.exp %[[DOWN]]
  // CHECK: %[[SINH:.*]] = hps.sub %[[EUP]], %[[EDOWN]] : tensor<4xf32>
  %1 = hps.onnx_node "Sinh"(%x) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: %[[COSH:.*]] = hps.add %{{.*}}, %{{.*}} : tensor<4xf32>
  %2 = hps.onnx_node "Cosh"(%x) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // asinh = sign(x) * log(|x| + sqrt(x * x + 1))
  // CHECK: %[[ABS:.*]] = hps.abs %arg0
  // CHECK: %[[SQ:.*]] = hps.mul %arg0, %arg0
  // CHECK: %[[ROOT:.*]] = hps.sqrt
  // CHECK: %[[LOG:.*]] = hps.log
  // CHECK: %[[SIGN:.*]] = hps.sign %arg0
  // CHECK: %[[ASINH:.*]] = hps.mul %[[SIGN]], %[[LOG]]
  %3 = hps.onnx_node "Asinh"(%x) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // acosh = log(x + sqrt(x - 1) * sqrt(x + 1))
  // CHECK: %[[BELOW:.*]] = hps.sqrt
  // CHECK: %[[ABOVE:.*]] = hps.sqrt
  // CHECK: %[[ROOT2:.*]] = hps.mul %[[BELOW]], %[[ABOVE]]
  // CHECK: %[[SUM:.*]] = hps.add %arg0, %[[ROOT2]]
  // CHECK: %[[ACOSH:.*]] = hps.log %[[SUM]]
  %4 = hps.onnx_node "Acosh"(%x) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // atanh = log((1 + x) / (1 - x)) * 0.5
  // CHECK: %[[NUM:.*]] = hps.add %arg0, %[[ONE:.*]] : tensor<4xf32>, tensor<f32>
  // CHECK: %[[DEN:.*]] = hps.sub %[[ONE]], %arg0
  // CHECK: %[[RATIO:.*]] = hps.div %[[NUM]], %[[DEN]]
  // CHECK: %[[LOGR:.*]] = hps.log %[[RATIO]]
  // CHECK: %[[ATANH:.*]] = hps.mul %[[LOGR]], %{{.*}} : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %5 = hps.onnx_node "Atanh"(%x) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: return %[[TAN]], %[[SINH]], %[[COSH]], %[[ASINH]], %[[ACOSH]], %[[ATANH]]
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// Integers stay generic (ONNX defines these on floats only).
// CHECK-LABEL: func @integer
func.func @integer(%x: tensor<4xi32>) -> tensor<4xi32> {
  // CHECK: hps.onnx_node "Tan"
  %0 = hps.onnx_node "Tan"(%x) {attrs = {}, domain = "", opset = 7 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// Mish (18): x * tanh(softplus(x)).
// CHECK-LABEL: func @mish
func.func @mish(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[SP:.*]] = hps.softplus %arg0
  // CHECK: %[[T:.*]] = hps.tanh %[[SP]]
  // CHECK: %[[M:.*]] = hps.mul %arg0, %[[T]] : tensor<4xf32>
  // CHECK: return %[[M]]
  %0 = hps.onnx_node "Mish"(%x) {attrs = {}, domain = "", opset = 18 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// Swish (24): x * sigmoid(alpha * x); alpha 1 needs no product.
// CHECK-LABEL: func @swish
func.func @swish(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[ALPHA:.*]] = hps.constant dense<5.000000e-01> : tensor<f32>
  // CHECK: %[[AX:.*]] = hps.mul %arg0, %[[ALPHA]]
  // CHECK: %[[S:.*]] = hps.sigmoid %[[AX]]
  // CHECK: %[[Y:.*]] = hps.mul %arg0, %[[S]]
  // CHECK: %[[S1:.*]] = hps.sigmoid %arg0
  // CHECK: %[[Y1:.*]] = hps.mul %arg0, %[[S1]]
  // CHECK: return %[[Y]], %[[Y1]]
  %0 = hps.onnx_node "Swish"(%x) {attrs = {alpha = 0.5 : f32}, domain = "", opset = 24 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = hps.onnx_node "Swish"(%x) {attrs = {}, domain = "", opset = 24 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
