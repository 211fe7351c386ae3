// RUN: heterps-opt --hps-legalize-onnx --split-input-file %s | FileCheck %s

// Opset 7: kernel_shape only; strides 1, pads 0, floor mode (elided).
// CHECK-LABEL: func @max_pool_7
func.func @max_pool_7(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK: hps.max_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x4x4xf32>
  %0 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>}, domain = "", opset = 7 : i64} : (tensor<1x2x5x5xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// Opset 7 has no ceil_mode or storage_order: such a node stays generic.
// CHECK-LABEL: func @max_pool_7_unknown
func.func @max_pool_7_unknown(%x: tensor<1x2x5x5xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>) {
  // CHECK: hps.onnx_node "MaxPool"(%arg0) {attrs = {ceil_mode = 1 : i64
  %0 = hps.onnx_node "MaxPool"(%x) {attrs = {ceil_mode = 1 : i64, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}, domain = "", opset = 7 : i64} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  // CHECK: hps.onnx_node "MaxPool"(%arg0) {attrs = {kernel_shape = array<i64: 2, 2>, storage_order = 1 : i64
  %1 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, storage_order = 1 : i64, strides = array<i64: 2, 2>}, domain = "", opset = 7 : i64} : (tensor<1x2x5x5xf32>) -> tensor<1x2x2x2xf32>
  return %0, %1 : tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>
}

// -----

// Opsets 8-9: storage_order only lays out Indices; an unused Indices output
// legalizes to hps.max_pool alone.
// CHECK-LABEL: func @max_pool_8_indices
func.func @max_pool_8_indices(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  // CHECK: hps.max_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  // CHECK-NOT: hps.gather
  %0:2 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, storage_order = 1 : i64, strides = array<i64: 2, 2>}, domain = "", opset = 8 : i64} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  return %0#0 : tensor<1x1x2x2xf32>
}

// -----

// A used Indices output: the windows are gathered from the flattened input
// (-inf past its end for positions outside it), and the first row-major
// position holding the maximum (the least key among the hits) is kept,
// offset by (n * C + c) * H * W.
// CHECK-LABEL: func @max_pool_indices
func.func @max_pool_indices(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>) {
  // CHECK-DAG: %[[OFFSETS:.*]] = hps.constant dense<0> : tensor<1x1x1x1xi64>
  // CHECK-DAG: %[[KEYS:.*]] = hps.constant dense<{{\[\[\[}}0.000000e+00, 1.000000e+00, 4.000000e+00, 5.000000e+00], [2.000000e+00, 3.000000e+00, 6.000000e+00, 7.000000e+00]], {{.*}} : tensor<2x2x4xf32>
  // CHECK-DAG: %[[NONE:.*]] = hps.constant dense<1.600000e+01> : tensor<f32>
  // CHECK-DAG: %[[POSITIONS:.*]] = hps.constant dense<{{\[\[\[}}0, 1, 4, 5], [2, 3, 6, 7]], {{\[\[}}8, 9, 12, 13], [10, 11, 14, 15]]]> : tensor<2x2x4xi64>
  // CHECK-DAG: %[[NEGINF:.*]] = hps.constant dense<0xFF800000> : tensor<1x1x1xf32>
  // CHECK: %[[FLAT:.*]] = hps.reshape %arg0 {shape = array<i64: 1, 1, 16>}
  // CHECK: %[[PADDED:.*]] = hps.concat %[[FLAT]], %[[NEGINF]] {axis = 2 : i64}
  // CHECK: %[[WINDOWS:.*]] = hps.gather %[[PADDED]], %[[POSITIONS]] {axis = 2 : i64} : (tensor<1x1x17xf32>, tensor<2x2x4xi64>) -> tensor<1x1x2x2x4xf32>
  // CHECK: %[[MAX:.*]] = hps.reduce  max %[[WINDOWS]] {axes = array<i64: 4>, keepdims}
  // CHECK: %[[HITS:.*]] = hps.equal %[[WINDOWS]], %[[MAX]]
  // CHECK: %[[CANDIDATES:.*]] = hps.where %[[HITS]], %[[KEYS]], %[[NONE]]
  // CHECK: %[[FIRST:.*]] = hps.reduce  min %[[CANDIDATES]] {axes = array<i64: 4>}
  // CHECK: %[[CHOSEN:.*]] = hps.cast %[[FIRST]] : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xi64>
  // CHECK: %[[INDICES:.*]] = hps.add %[[CHOSEN]], %[[OFFSETS]]
  // CHECK: %[[VALUES:.*]] = hps.max_pool %arg0
  // CHECK: return %[[VALUES]], %[[INDICES]]
  %0:2 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}, domain = "", opset = 9 : i64} : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  return %0#0, %0#1 : tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>
}

// -----

// storage_order = 1: the chosen row-major position is mapped to its
// column-major one through a constant table (the last entry for "none");
// pads put positions outside the 3x3 input (key 9, reading -inf).
// CHECK-LABEL: func @max_pool_indices_column_major
func.func @max_pool_indices_column_major(%x: tensor<1x2x3x3xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) {
  // CHECK-DAG: %[[OFFSETS:.*]] = hps.constant dense<{{\[\[\[\[}}0]], {{\[\[}}9]]]]> : tensor<1x2x1x1xi64>
  // CHECK-DAG: %[[COLUMNS:.*]] = hps.constant dense<[0, 3, 6, 1, 4, 7, 2, 5, 8, 9]> : tensor<10xi64>
  // CHECK-DAG: hps.constant dense<{{\[\[\[}}0, 1, 3, 4], [2, 9, 5, 9]], {{\[\[}}6, 7, 9, 9], [8, 9, 9, 9]]]> : tensor<2x2x4xi64>
  // CHECK: %[[CHOSEN:.*]] = hps.cast
  // CHECK: %[[COLUMN:.*]] = hps.gather %[[COLUMNS]], %[[CHOSEN]] : (tensor<10xi64>, tensor<1x2x2x2xi64>) -> tensor<1x2x2x2xi64>
  // CHECK: hps.add %[[COLUMN]], %[[OFFSETS]]
  %0:2 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, storage_order = 1 : i64, strides = array<i64: 2, 2>}, domain = "", opset = 12 : i64} : (tensor<1x2x3x3xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>)
  return %0#0, %0#1 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>
}

// -----

// A used Indices output stays generic on a non-f32 input.
// CHECK-LABEL: func @max_pool_indices_generic
func.func @max_pool_indices_generic(%x: tensor<1x1x4x4xi8>) -> (tensor<1x1x2x2xi8>, tensor<1x1x2x2xi64>) {
  // CHECK: hps.onnx_node "MaxPool"
  %0:2 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}, domain = "", opset = 12 : i64} : (tensor<1x1x4x4xi8>) -> (tensor<1x1x2x2xi8>, tensor<1x1x2x2xi64>)
  return %0#0, %0#1 : tensor<1x1x2x2xi8>, tensor<1x1x2x2xi64>
}

// -----

// Opset 8-9 still has no ceil_mode; an invalid storage_order stays generic.
// CHECK-LABEL: func @max_pool_9_generic
func.func @max_pool_9_generic(%x: tensor<1x1x5x5xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>) {
  // CHECK: hps.onnx_node "MaxPool"(%arg0) {attrs = {ceil_mode = 1 : i64
  %0 = hps.onnx_node "MaxPool"(%x) {attrs = {ceil_mode = 1 : i64, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}, domain = "", opset = 9 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  // CHECK: hps.onnx_node "MaxPool"(%arg0) {attrs = {kernel_shape = array<i64: 2, 2>, storage_order = 2 : i64
  %1 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, storage_order = 2 : i64, strides = array<i64: 2, 2>}, domain = "", opset = 9 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  return %0, %1 : tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>
}

// -----

// Opset 10: ceil_mode and dilations.
// CHECK-LABEL: func @max_pool_10
func.func @max_pool_10(%x: tensor<1x2x5x5xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>, tensor<1x2x3x3xf32>) {
  // CHECK: hps.max_pool %arg0 {ceil_mode, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  %0 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = 1 : i64}, domain = "", opset = 10 : i64} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  // CHECK: hps.max_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x2x2xf32>
  %1 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = 0 : i64}, domain = "", opset = 10 : i64} : (tensor<1x2x5x5xf32>) -> tensor<1x2x2x2xf32>
  // CHECK: hps.max_pool %arg0 {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  %2 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>}, domain = "", opset = 10 : i64} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  return %0, %1, %2 : tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>, tensor<1x2x3x3xf32>
}

// -----

// Opsets 11-17: dilations with explicit pads; 1-D and 3-D windows.
// CHECK-LABEL: func @max_pool_11
func.func @max_pool_11(%x: tensor<1x2x5x5xf32>, %l: tensor<2x3x8xf32>, %v: tensor<1x1x4x4x4xf32>) -> (tensor<1x2x5x5xf32>, tensor<2x3x4xf32>, tensor<1x1x2x2x2xf32>) {
  // CHECK: hps.max_pool %arg0 {dilations = array<i64: 2, 2>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  %0 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}, domain = "", opset = 12 : i64} : (tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  // CHECK: hps.max_pool %arg1 {dilations = array<i64: 1>, kernel_shape = array<i64: 2>, pads = array<i64: 0, 0>, strides = array<i64: 2>} : (tensor<2x3x8xf32>) -> tensor<2x3x4xf32>
  %1 = hps.onnx_node "MaxPool"(%l) {attrs = {kernel_shape = array<i64: 2>, strides = array<i64: 2>}, domain = "", opset = 11 : i64} : (tensor<2x3x8xf32>) -> tensor<2x3x4xf32>
  // CHECK: hps.max_pool %arg2 {dilations = array<i64: 1, 1, 1>, kernel_shape = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 2, 2, 2>} : (tensor<1x1x4x4x4xf32>) -> tensor<1x1x2x2x2xf32>
  %2 = hps.onnx_node "MaxPool"(%v) {attrs = {kernel_shape = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>}, domain = "", opset = 17 : i64} : (tensor<1x1x4x4x4xf32>) -> tensor<1x1x2x2x2xf32>
  return %0, %1, %2 : tensor<1x2x5x5xf32>, tensor<2x3x4xf32>, tensor<1x1x2x2x2xf32>
}

// -----

// auto_pad: SAME_* pads to output ceil(input / stride), the odd pad at the
// end (UPPER) or the beginning (LOWER); VALID drops the pads.
// CHECK-LABEL: func @max_pool_auto_pad
func.func @max_pool_auto_pad(%x: tensor<1x1x5x5xf32>, %y: tensor<1x1x6x6xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>, tensor<1x1x2x2xf32>) {
  // Input 5, kernel 3, stride 2: output 3, total pad 2.
  // CHECK: hps.max_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  %0 = hps.onnx_node "MaxPool"(%x) {attrs = {auto_pad = "SAME_UPPER", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>}, domain = "", opset = 8 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  // Input 6, kernel 2, stride 1: total pad 1.
  // CHECK: hps.max_pool %arg1 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, strides = array<i64: 1, 1>}
  %1 = hps.onnx_node "MaxPool"(%y) {attrs = {auto_pad = "SAME_UPPER", kernel_shape = array<i64: 2, 2>}, domain = "", opset = 11 : i64} : (tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  // CHECK: hps.max_pool %arg1 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 1, 1>}
  %2 = hps.onnx_node "MaxPool"(%y) {attrs = {auto_pad = "SAME_LOWER", kernel_shape = array<i64: 2, 2>}, domain = "", opset = 7 : i64} : (tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  // CHECK: hps.max_pool %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
  %3 = hps.onnx_node "MaxPool"(%x) {attrs = {auto_pad = "VALID", kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}, domain = "", opset = 10 : i64} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  return %0, %1, %2, %3 : tensor<1x1x3x3xf32>, tensor<1x1x6x6xf32>, tensor<1x1x6x6xf32>, tensor<1x1x2x2xf32>
}

// -----

// Stays generic: SAME over a dynamic spatial extent, no kernel_shape.
// A dynamic extent with explicit pads is fine.
// CHECK-LABEL: func @max_pool_generic
func.func @max_pool_generic(%x: tensor<1x1x?x5xf32>) -> (tensor<1x1x?x3xf32>, tensor<1x1x?x5xf32>, tensor<1x1x?x2xf32>) {
  // CHECK: hps.onnx_node "MaxPool"(%arg0) {attrs = {auto_pad = "SAME_UPPER"
  %0 = hps.onnx_node "MaxPool"(%x) {attrs = {auto_pad = "SAME_UPPER", kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>}, domain = "", opset = 12 : i64} : (tensor<1x1x?x5xf32>) -> tensor<1x1x?x3xf32>
  // CHECK: hps.onnx_node "MaxPool"(%arg0) {attrs = {}
  %1 = hps.onnx_node "MaxPool"(%x) {attrs = {}, domain = "", opset = 12 : i64} : (tensor<1x1x?x5xf32>) -> tensor<1x1x?x5xf32>
  // CHECK: hps.max_pool %arg0 {{.*}} : (tensor<1x1x?x5xf32>) -> tensor<1x1x?x2xf32>
  %2 = hps.onnx_node "MaxPool"(%x) {attrs = {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}, domain = "", opset = 12 : i64} : (tensor<1x1x?x5xf32>) -> tensor<1x1x?x2xf32>
  return %0, %1, %2 : tensor<1x1x?x3xf32>, tensor<1x1x?x5xf32>, tensor<1x1x?x2xf32>
}
