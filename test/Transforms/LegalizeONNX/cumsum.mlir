// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// CumSum (11-14) with a constant axis: a log-step scan, x += x shifted by
// 1, 2, 4, ... along the axis (each shift a pad that crops the far side).
// exclusive shifts by one first; reverse shifts towards the start.
// CHECK-LABEL: func @cumsum
func.func @cumsum(%x: tensor<2x5xf32>, %i: tensor<4xi64>) -> (tensor<2x5xf32>, tensor<4xi64>) {
  %a = hps.constant dense<-1> : tensor<i64>
  %b = hps.constant dense<0> : tensor<i32>
  // CHECK: %[[P1:.*]] = hps.pad %arg0 {{.*}}pads = array<i64: 0, 1, 0, -1>, value = 0.000000e+00 : f32}
  // CHECK: %[[S1:.*]] = hps.add %arg0, %[[P1]]
  // CHECK: %[[P2:.*]] = hps.pad %[[S1]] {{.*}}pads = array<i64: 0, 2, 0, -2>
  // CHECK: %[[S2:.*]] = hps.add %[[S1]], %[[P2]]
  // CHECK: %[[P4:.*]] = hps.pad %[[S2]] {{.*}}pads = array<i64: 0, 4, 0, -4>
  // CHECK: %[[S4:.*]] = hps.add %[[S2]], %[[P4]]
  %0 = hps.onnx_node "CumSum"(%x, %a) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<2x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  // CHECK: %[[E:.*]] = hps.pad %arg1 {{.*}}pads = array<i64: -1, 1>, value = 0 : i64}
  // CHECK: %[[Q1:.*]] = hps.pad %[[E]] {{.*}}pads = array<i64: -1, 1>
  // CHECK: %[[T1:.*]] = hps.add %[[E]], %[[Q1]]
  // CHECK: %[[Q2:.*]] = hps.pad %[[T1]] {{.*}}pads = array<i64: -2, 2>
  // CHECK: %[[T2:.*]] = hps.add %[[T1]], %[[Q2]]
  // CHECK: return %[[S4]], %[[T2]]
  %1 = hps.onnx_node "CumSum"(%i, %b) {attrs = {exclusive = 1 : i64, reverse = 1 : i64}, domain = "", opset = 11 : i64} : (tensor<4xi64>, tensor<i32>) -> tensor<4xi64>
  return %0, %1 : tensor<2x5xf32>, tensor<4xi64>
}

// -----

// Stays generic: the axis from a graph input, or a dynamic extent.
// CHECK-LABEL: func @cumsum_generic
func.func @cumsum_generic(%x: tensor<2x5xf32>, %axis: tensor<i64>, %y: tensor<?x5xf32>) -> (tensor<2x5xf32>, tensor<?x5xf32>) {
  %c = hps.constant dense<0> : tensor<i64>
  // CHECK-COUNT-2: hps.onnx_node "CumSum"
  %0 = hps.onnx_node "CumSum"(%x, %axis) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<2x5xf32>, tensor<i64>) -> tensor<2x5xf32>
  %1 = hps.onnx_node "CumSum"(%y, %c) {attrs = {}, domain = "", opset = 14 : i64} : (tensor<?x5xf32>, tensor<i64>) -> tensor<?x5xf32>
  return %0, %1 : tensor<2x5xf32>, tensor<?x5xf32>
}
