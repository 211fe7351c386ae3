// RUN: heterps-opt --hps-lower-to-runtime-calls %s | FileCheck %s

// Pools and reductions become hpsrt.pool (the kind: Max, AvgExcludePad or,
// with count_include_pad, AvgIncludePad; the pads split into begins and
// ends), hpsrt.global_pool (max or mean over the spatial axes) and
// hpsrt.reduce, whose axes are normalized, sorted and, when none are
// given, every axis.

// CHECK-LABEL: func.func @pools
func.func @pools(%x: tensor<2x3x5x6xf32>, %v: tensor<2x3x7xf32>) -> (tensor<2x3x4x3xf32>, tensor<2x3x3x3xf32>, tensor<2x3x3x3xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[MP:.*]] = "hpsrt.pool"(%arg0) <{dilations = array<i64: 2, 1>, kernel = array<i64: 2, 3>, kind = #hpsrt.pool_kind<Max>, padBegin = array<i64: 1, 0>, padEnd = array<i64: 0, 1>, strides = array<i64: 1, 2>, type = f32, x = array<i64: 2, 3, 5, 6>, y = array<i64: 2, 3, 4, 3>}> : (tensor<2x3x5x6xf32>) -> tensor<2x3x4x3xf32>
  %mp = hps.max_pool %x {kernel_shape = array<i64: 2, 3>, strides = array<i64: 1, 2>, pads = array<i64: 1, 0, 0, 1>, dilations = array<i64: 2, 1>} : (tensor<2x3x5x6xf32>) -> tensor<2x3x4x3xf32>
  // CHECK-NEXT: %[[AE:.*]] = "hpsrt.pool"(%arg0) <{dilations = array<i64: 1, 1>, kernel = array<i64: 3, 2>, kind = #hpsrt.pool_kind<AvgExcludePad>, padBegin = array<i64: 1, 0>, padEnd = array<i64: 1, 1>, strides = array<i64: 2, 2>, type = f32, x = array<i64: 2, 3, 5, 6>, y = array<i64: 2, 3, 3, 3>}>
  %ae = hps.avg_pool %x {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<2x3x5x6xf32>) -> tensor<2x3x3x3xf32>
  // CHECK-NEXT: %[[AI:.*]] = "hpsrt.pool"(%arg0) <{{.*}}kind = #hpsrt.pool_kind<AvgIncludePad>
  %ai = hps.avg_pool %x {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 1, 1>, count_include_pad} : (tensor<2x3x5x6xf32>) -> tensor<2x3x3x3xf32>
  // CHECK-NEXT: %[[GM:.*]] = "hpsrt.global_pool"(%arg0) <{max = true, type = f32, x = array<i64: 2, 3, 5, 6>}> : (tensor<2x3x5x6xf32>) -> tensor<2x3x1x1xf32>
  %gm = hps.global_max_pool %x : (tensor<2x3x5x6xf32>) -> tensor<2x3x1x1xf32>
  // CHECK-NEXT: %[[GA:.*]] = "hpsrt.global_pool"(%arg1) <{max = false, type = f32, x = array<i64: 2, 3, 7>}> : (tensor<2x3x7xf32>) -> tensor<2x3x1xf32>
  %ga = hps.global_avg_pool %v : (tensor<2x3x7xf32>) -> tensor<2x3x1xf32>
  // CHECK-NEXT: return %[[MP]], %[[AE]], %[[AI]], %[[GM]], %[[GA]]
  return %mp, %ae, %ai, %gm, %ga : tensor<2x3x4x3xf32>, tensor<2x3x3x3xf32>, tensor<2x3x3x3xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1xf32>
}

// CHECK-LABEL: func.func @reduce
func.func @reduce(%a: tensor<2x3x4xf32>, %i: tensor<2x3x4xi32>) -> (tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<f32>, tensor<2x3x1xi32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // Axis -2 is 1; y without the reduced dim.
  // CHECK-NEXT: %[[S:.*]] = "hpsrt.reduce"(%arg0) <{axes = array<i64: 1>, kind = #hpsrt.reduce_kind<Sum>, type = f32, x = array<i64: 2, 3, 4>, y = array<i64: 2, 4>}> : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  %s = hps.reduce sum %a {axes = array<i64: -2>} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>
  // Axes [2, -3] are [0, 2], sorted; y keeps the unit dims.
  // CHECK-NEXT: %[[M:.*]] = "hpsrt.reduce"(%arg0) <{axes = array<i64: 0, 2>, kind = #hpsrt.reduce_kind<LogSumExp>, type = f32, x = array<i64: 2, 3, 4>, y = array<i64: 1, 3, 1>}> : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %m = hps.reduce log_sum_exp %a {axes = array<i64: 2, -3>, keepdims} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  // No axes: all of them.
  // CHECK-NEXT: %[[ALL:.*]] = "hpsrt.reduce"(%arg0) <{axes = array<i64: 0, 1, 2>, kind = #hpsrt.reduce_kind<Max>, type = f32, x = array<i64: 2, 3, 4>, y = array<i64>}> : (tensor<2x3x4xf32>) -> tensor<f32>
  %all = hps.reduce max %a {axes = array<i64>} : (tensor<2x3x4xf32>) -> tensor<f32>
  // CHECK-NEXT: %[[P:.*]] = "hpsrt.reduce"(%arg1) <{axes = array<i64: 2>, kind = #hpsrt.reduce_kind<Prod>, type = i32, x = array<i64: 2, 3, 4>, y = array<i64: 2, 3, 1>}> : (tensor<2x3x4xi32>) -> tensor<2x3x1xi32>
  %p = hps.reduce prod %i {axes = array<i64: -1>, keepdims} : (tensor<2x3x4xi32>) -> tensor<2x3x1xi32>
  // CHECK-NEXT: return %[[S]], %[[M]], %[[ALL]], %[[P]]
  return %s, %m, %all, %p : tensor<2x4xf32>, tensor<1x3x1xf32>, tensor<f32>, tensor<2x3x1xi32>
}
