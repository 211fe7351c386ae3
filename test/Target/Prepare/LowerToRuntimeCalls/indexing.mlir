// RUN: heterps-opt --hps-lower-to-runtime-calls %s | FileCheck %s

// Indexing becomes hpsrt.gather and hpsrt.scatter (data and index types
// and shapes, the axis normalized, scatter's reduction), and the ops with
// data-dependent extents hpsrt.non_zero, hpsrt.unique (the input as
// [outer, extent, inner] around the axis) and hpsrt.non_max_suppression
// (batches, classes and boxes from the scores, the capacity from the
// selected rows), each writing a count.

// CHECK-LABEL: func.func @gather_scatter
func.func @gather_scatter(%d: tensor<2x5x4xf32>, %i: tensor<3xi64>, %j: tensor<2x2xi32>, %u: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x5x2x2xf32>, tensor<2x5x4xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[G:.*]] = "hpsrt.gather"(%arg0, %arg1) <{axis = 1 : i64, data = array<i64: 2, 5, 4>, indexType = i64, indices = array<i64: 3>, type = f32}> : (tensor<2x5x4xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  %g = hps.gather %d, %i {axis = 1 : i64} : (tensor<2x5x4xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  // Axis -1 is 2; i32 indices.
  // CHECK-NEXT: %[[G2:.*]] = "hpsrt.gather"(%arg0, %arg2) <{axis = 2 : i64, data = array<i64: 2, 5, 4>, indexType = i32, indices = array<i64: 2, 2>, type = f32}> : (tensor<2x5x4xf32>, tensor<2x2xi32>) -> tensor<2x5x2x2xf32>
  %g2 = hps.gather %d, %j {axis = -1 : i64} : (tensor<2x5x4xf32>, tensor<2x2xi32>) -> tensor<2x5x2x2xf32>
  // Axis -2 is 1.
  // CHECK-NEXT: %[[SC:.*]] = "hpsrt.scatter"(%arg0, %arg1, %arg3) <{axis = 1 : i64, data = array<i64: 2, 5, 4>, indexType = i64, indices = array<i64: 3>, reduction = #hpsrt.scatter_reduction<Add>, type = f32}> {hps.backward} : (tensor<2x5x4xf32>, tensor<3xi64>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  %sc = hps.scatter %d, %i, %u {axis = -2 : i64, reduction = #hps<scatter_reduction add>, hps.backward} : (tensor<2x5x4xf32>, tensor<3xi64>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  // CHECK-NEXT: return %[[G]], %[[G2]], %[[SC]]
  return %g, %g2, %sc : tensor<2x3x4xf32>, tensor<2x5x2x2xf32>, tensor<2x5x4xf32>
}

// CHECK-LABEL: func.func @data_dependent
func.func @data_dependent(%mask: tensor<3x4xi1>, %x: tensor<2x5x3xf32>, %boxes: tensor<1x10x4xf32>, %scores: tensor<1x3x10xf32>, %max: tensor<1xi64>, %iou: tensor<1xf32>) -> (tensor<2x12xi64>, tensor<i64>, tensor<2x5x3xf32>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<i64>, tensor<6x3xi64>, tensor<i64>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // CHECK-NEXT: %[[NZ0:[^ ,]+]], %[[NZ1:[^ ,]+]] = "hpsrt.non_zero"(%arg0) <{type = i1, x = array<i64: 3, 4>}> : (tensor<3x4xi1>) -> (tensor<2x12xi64>, tensor<i64>)
  %i, %n = hps.non_zero %mask : (tensor<3x4xi1>) -> (tensor<2x12xi64>, tensor<i64>)
  // Slices along axis 1 of [2, 5, 3]: outer 2, extent 5, inner 3.
  // CHECK-NEXT: %[[U0:[^ ,]+]], %[[U1:[^ ,]+]], %[[U2:[^ ,]+]], %[[U3:[^ ,]+]], %[[U4:[^ ,]+]] = "hpsrt.unique"(%arg1) <{extent = 5 : i64, inner = 3 : i64, outer = 2 : i64, sorted = true, type = f32}> : (tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<i64>)
  %v, %f, %inv, %c, %k = hps.unique %x {axis = 1 : i64, sorted} : (tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<i64>)
  // Max per class and the IoU threshold given, no score threshold; a
  // capacity of 6 rows.
  // CHECK-NEXT: %[[S0:[^ ,]+]], %[[S1:[^ ,]+]] = "hpsrt.non_max_suppression"(%arg2, %arg3, %arg4, %arg5) <{batches = 1 : i64, boxes = 10 : i64, capacity = 6 : i64, centerPointBox = true, classes = 3 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}> : (tensor<1x10x4xf32>, tensor<1x3x10xf32>, tensor<1xi64>, tensor<1xf32>) -> (tensor<6x3xi64>, tensor<i64>)
  %sel, %m = hps.non_max_suppression %boxes, %scores max_per_class %max iou_threshold %iou {center_point_box} : (tensor<1x10x4xf32>, tensor<1x3x10xf32>, tensor<1xi64>, tensor<1xf32>) -> (tensor<6x3xi64>, tensor<i64>)
  // CHECK-NEXT: return %[[NZ0]], %[[NZ1]], %[[U0]], %[[U1]], %[[U2]], %[[U3]], %[[U4]], %[[S0]], %[[S1]]
  return %i, %n, %v, %f, %inv, %c, %k, %sel, %m : tensor<2x12xi64>, tensor<i64>, tensor<2x5x3xf32>, tensor<5xi64>, tensor<5xi64>, tensor<5xi64>, tensor<i64>, tensor<6x3xi64>, tensor<i64>
}
