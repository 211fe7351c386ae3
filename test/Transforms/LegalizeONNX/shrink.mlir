// RUN: heterps-opt --hps-legalize-onnx %s | FileCheck %s

// Shrink (9-17): x + bias below -lambd, x - bias above lambd, else 0.
// CHECK-LABEL: func @shrink
func.func @shrink(%x: tensor<5xf32>, %i: tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>, tensor<5xi32>) {
  // CHECK-DAG: %[[NL:.*]] = hps.constant dense<-1.500000e+00> : tensor<f32>
  // CHECK-DAG: %[[L:.*]] = hps.constant dense<1.500000e+00> : tensor<f32>
  // CHECK-DAG: %[[B:.*]] = hps.constant dense<5.000000e-01> : tensor<f32>
  // CHECK: %[[BELOW:.*]] = hps.less %arg0, %[[NL]]
  // CHECK: %[[ABOVE:.*]] = hps.greater %arg0, %[[L]]
  // CHECK: %[[UP:.*]] = hps.add %arg0, %[[B]]
  // CHECK: %[[DOWN:.*]] = hps.sub %arg0, %[[B]]
  // CHECK: %[[OUT:.*]] = hps.where %[[ABOVE]], %[[DOWN]], %{{.*}}
  // CHECK: hps.where %[[BELOW]], %[[UP]], %[[OUT]]
  %0 = hps.onnx_node "Shrink"(%x) {attrs = {bias = 0.5 : f32, lambd = 1.5 : f32}, domain = "", opset = 9 : i64} : (tensor<5xf32>) -> tensor<5xf32>
  // Integers take whole lambd and bias.
  // CHECK: hps.less %arg1, %{{.*}} : tensor<5xi32>, tensor<i32> -> tensor<5xi1>
  %1 = hps.onnx_node "Shrink"(%i) {attrs = {bias = 1.0 : f32, lambd = 2.0 : f32}, domain = "", opset = 9 : i64} : (tensor<5xi32>) -> tensor<5xi32>
  // Fractional ones on integers stay generic.
  // CHECK: hps.onnx_node "Shrink"(%arg1)
  %2 = hps.onnx_node "Shrink"(%i) {attrs = {}, domain = "", opset = 9 : i64} : (tensor<5xi32>) -> tensor<5xi32>
  return %0, %1, %2 : tensor<5xf32>, tensor<5xi32>, tensor<5xi32>
}
