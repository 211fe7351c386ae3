// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// QuantizeLinear: saturate(round(x / scale) + zero point) in f32 (round half
// to even), then a cast to the zero point's type.
// CHECK-LABEL: func @quantize
func.func @quantize(%x: tensor<2x3xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<2x3xui8> {
  // CHECK: %[[Z:.*]] = hps.cast %arg2 : (tensor<ui8>) -> tensor<f32>
  // CHECK: %[[D:.*]] = hps.div %arg0, %arg1
  // CHECK: %[[R:.*]] = hps.round %[[D]]
  // CHECK: %[[A:.*]] = hps.add %[[R]], %[[Z]]
  // CHECK: %[[C:.*]] = hps.clip %[[A]] {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64}
  // CHECK: %[[Y:.*]] = hps.cast %[[C]] : (tensor<2x3xf32>) -> tensor<2x3xui8>
  // CHECK: return %[[Y]]
  %0 = hps.onnx_node "QuantizeLinear"(%x, %s, %z) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

// Per-axis scales and zero points (opset 13) broadcast as [1, C, 1]; i8
// saturates to [-128, 127]. Without a zero point nothing is added.
// CHECK-LABEL: func @quantize_axis
func.func @quantize_axis(%x: tensor<1x3x2xf32>, %s: tensor<3xf32>, %z: tensor<3xi8>) -> tensor<1x3x2xi8> {
  // CHECK-DAG: %[[S:.*]] = hps.reshape %arg1 {shape = array<i64: 1, 3, 1>}
  // CHECK-DAG: %[[ZF:.*]] = hps.cast %arg2 : (tensor<3xi8>) -> tensor<3xf32>
  // CHECK-DAG: %[[Z:.*]] = hps.reshape %[[ZF]] {shape = array<i64: 1, 3, 1>}
  // CHECK: %[[D:.*]] = hps.div %arg0, %[[S]] : tensor<1x3x2xf32>, tensor<1x3x1xf32>
  // CHECK: %[[R:.*]] = hps.round %[[D]]
  // CHECK: %[[A:.*]] = hps.add %[[R]], %[[Z]]
  // CHECK: hps.clip %[[A]] {max = 1.270000e+02 : f64, min = -1.280000e+02 : f64}
  %0 = hps.onnx_node "QuantizeLinear"(%x, %s, %z) {attrs = {axis = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<1x3x2xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<1x3x2xi8>
  return %0 : tensor<1x3x2xi8>
}
// CHECK-LABEL: func @quantize_no_zero_point
func.func @quantize_no_zero_point(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xui8> {
  // CHECK: %[[R:.*]] = hps.round
  // CHECK-NEXT: hps.clip %[[R]]
  %none = hps.none
  %0 = hps.onnx_node "QuantizeLinear"(%x, %s, %none) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<4xf32>, tensor<f32>, none) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// DequantizeLinear: (x - zero point) * scale; u8 and i8 are converted first,
// i32 is subtracted in i32 (where converting first would round).
// CHECK-LABEL: func @dequantize
func.func @dequantize(%x: tensor<4xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4xf32> {
  // CHECK: %[[X:.*]] = hps.cast %arg0 : (tensor<4xui8>) -> tensor<4xf32>
  // CHECK: %[[Z:.*]] = hps.cast %arg2 : (tensor<ui8>) -> tensor<f32>
  // CHECK: %[[D:.*]] = hps.sub %[[X]], %[[Z]]
  // CHECK: %[[Y:.*]] = hps.mul %[[D]], %arg1
  // CHECK: return %[[Y]]
  %0 = hps.onnx_node "DequantizeLinear"(%x, %s, %z) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// CHECK-LABEL: func @dequantize_i32
func.func @dequantize_i32(%x: tensor<4xi32>, %s: tensor<f32>, %z: tensor<i32>) -> tensor<4xf32> {
  // CHECK: %[[D:.*]] = hps.sub %arg0, %arg2 : tensor<4xi32>, tensor<i32> -> tensor<4xi32>
  // CHECK: %[[F:.*]] = hps.cast %[[D]] : (tensor<4xi32>) -> tensor<4xf32>
  // CHECK: hps.mul %[[F]], %arg1
  %0 = hps.onnx_node "DequantizeLinear"(%x, %s, %z) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<4xi32>, tensor<f32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// DynamicQuantizeLinear: scale = (max(0, max x) - min(0, min x)) / 255 and
// zero point = saturate(round(-min(0, min x) / scale)), then QuantizeLinear.
// CHECK-LABEL: func @dynamic
func.func @dynamic(%x: tensor<2x3xf32>) -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) {
  // CHECK-DAG: %[[C255:.*]] = hps.constant dense<2.550000e+02> : tensor<f32>
  // CHECK-DAG: %[[ZERO:.*]] = hps.constant dense<0.000000e+00> : tensor<f32>
  // CHECK-DAG: %[[MIN:.*]] = hps.reduce  min %arg0 {axes = array<i64>}
  // CHECK-DAG: %[[LOW:.*]] = hps.min %[[MIN]], %[[ZERO]]
  // CHECK-DAG: %[[MAX:.*]] = hps.reduce  max %arg0 {axes = array<i64>}
  // CHECK-DAG: %[[HIGH:.*]] = hps.max %[[MAX]], %[[ZERO]]
  // CHECK: %[[RANGE:.*]] = hps.sub %[[HIGH]], %[[LOW]]
  // CHECK: %[[SCALE:.*]] = hps.div %[[RANGE]], %[[C255]]
  // CHECK: %[[Q:.*]] = hps.div %[[LOW]], %[[SCALE]]
  // CHECK: %[[NQ:.*]] = hps.neg %[[Q]]
  // CHECK: %[[RQ:.*]] = hps.round %[[NQ]]
  // CHECK: %[[ZP:.*]] = hps.clip %[[RQ]]
  // CHECK: %[[XS:.*]] = hps.div %arg0, %[[SCALE]]
  // CHECK: %[[XR:.*]] = hps.round %[[XS]]
  // CHECK: %[[XA:.*]] = hps.add %[[XR]], %[[ZP]]
  // CHECK: %[[XC:.*]] = hps.clip %[[XA]]
  // CHECK: %[[Y:.*]] = hps.cast %[[XC]] : (tensor<2x3xf32>) -> tensor<2x3xui8>
  // CHECK: %[[ZP8:.*]] = hps.cast %[[ZP]] : (tensor<f32>) -> tensor<ui8>
  // CHECK: return %[[Y]], %[[SCALE]], %[[ZP8]]
  %0:3 = hps.onnx_node "DynamicQuantizeLinear"(%x) {attrs = {}, domain = "", opset = 11 : i64} : (tensor<2x3xf32>) -> (tensor<2x3xui8>, tensor<f32>, tensor<ui8>)
  return %0#0, %0#1, %0#2 : tensor<2x3xui8>, tensor<f32>, tensor<ui8>
}

// -----

// Stay generic: an i32 x (opset 10 allows it; its reference divides in
// f64), a per-axis scale before opset 13, a zero point of another type than
// the result, a scale whose length differs from the axis.
// CHECK-LABEL: func @generic
func.func @generic(%xi: tensor<4xi32>, %x: tensor<2x3xf32>, %s: tensor<f32>, %s3: tensor<3xf32>, %s2: tensor<2xf32>, %zi: tensor<i8>) -> (tensor<4xui8>, tensor<2x3xui8>, tensor<2x3xui8>, tensor<2x3xui8>) {
  // CHECK-COUNT-4: hps.onnx_node "QuantizeLinear"
  %0 = hps.onnx_node "QuantizeLinear"(%xi, %s) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<4xi32>, tensor<f32>) -> tensor<4xui8>
  %1 = hps.onnx_node "QuantizeLinear"(%x, %s3) {attrs = {}, domain = "", opset = 10 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xui8>
  %2 = hps.onnx_node "QuantizeLinear"(%x, %s, %zi) {attrs = {}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xui8>
  %3 = hps.onnx_node "QuantizeLinear"(%x, %s2) {attrs = {axis = 1 : i64}, domain = "", opset = 13 : i64} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xui8>
  return %0, %1, %2, %3 : tensor<4xui8>, tensor<2x3xui8>, tensor<2x3xui8>, tensor<2x3xui8>
}

// -----

// DequantizeLinear-21 with blocked scales: each scale covers block_size
// elements along the axis, repeated in place (reshape, expand, reshape) and
// cut to x's extent where the last block is shorter.
// CHECK-LABEL: func @dequantize_blocked
func.func @dequantize_blocked(%x: tensor<2x5xi8>, %s: tensor<2x3xf32>) -> tensor<2x5xf32> {
  // CHECK: %[[X:.*]] = hps.cast %arg0 : (tensor<2x5xi8>) -> tensor<2x5xf32>
  // CHECK: %[[R:.*]] = hps.reshape %arg1 {shape = array<i64: 2, 3, 1>}
  // CHECK: %[[E:.*]] = hps.expand %[[R]] {shape = array<i64: 2, 3, 2>}
  // CHECK: %[[F:.*]] = hps.reshape %[[E]] {shape = array<i64: 2, 6>}
  // CHECK: %[[S:.*]] = hps.slice %[[F]] {axes = array<i64: 1>, ends = array<i64: 5>, starts = array<i64: 0>
  // CHECK: hps.mul %[[X]], %[[S]]
  %0 = hps.onnx_node "DequantizeLinear"(%x, %s) {attrs = {axis = 1 : i64, block_size = 2 : i64}, domain = "", opset = 21 : i64} : (tensor<2x5xi8>, tensor<2x3xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// block_size before opset 21, or scales that do not tile x, stay generic.
// CHECK-LABEL: func @blocked_generic
func.func @blocked_generic(%x: tensor<2x5xi8>, %s: tensor<2x3xf32>, %s2: tensor<2x2xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  // CHECK: hps.onnx_node "DequantizeLinear"
  // CHECK: hps.onnx_node "DequantizeLinear"
  %0 = hps.onnx_node "DequantizeLinear"(%x, %s) {attrs = {axis = 1 : i64, block_size = 2 : i64}, domain = "", opset = 19 : i64} : (tensor<2x5xi8>, tensor<2x3xf32>) -> tensor<2x5xf32>
  %1 = hps.onnx_node "DequantizeLinear"(%x, %s2) {attrs = {axis = 1 : i64, block_size = 2 : i64}, domain = "", opset = 21 : i64} : (tensor<2x5xi8>, tensor<2x2xf32>) -> tensor<2x5xf32>
  return %0, %1 : tensor<2x5xf32>, tensor<2x5xf32>
}
