// RUN: heterps-translate --hps-to-stage-programs %s | FileCheck %s

// The construction and the run of each kernel class with a data-dependent
// extent, with every argument spelled out (a change of argument order shows
// here): NonZero, Unique and NonMaxSuppression. Each writes its results at
// their capacity and the valid extent as its last output.
module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%x: tensor<2x3x4xf32> {hps.name = "x"}, %boxes: tensor<2x5x4xf32> {hps.name = "boxes"}, %scores: tensor<2x3x5xf32> {hps.name = "scores"})
    -> (tensor<3x24xi64> {hps.name = "nz"}, tensor<i64> {hps.name = "nzc"},
        tensor<2x3x4xf32> {hps.name = "u"}, tensor<3xi64> {hps.name = "uf"}, tensor<3xi64> {hps.name = "ui"}, tensor<3xi64> {hps.name = "uc"}, tensor<i64> {hps.name = "un"},
        tensor<12x3xi64> {hps.name = "sel"}, tensor<i64> {hps.name = "seln"})
    attributes {hps.batch = 2 : i64, hps.pipeline = [@stage_0]} {
  hps.send %x to "c0" : tensor<2x3x4xf32>
  hps.send %boxes to "c1" : tensor<2x5x4xf32>
  hps.send %scores to "c2" : tensor<2x3x5xf32>
  %nz = hps.recv "o0" : tensor<3x24xi64>
  %nzc = hps.recv "o1" : tensor<i64>
  %u = hps.recv "o2" : tensor<2x3x4xf32>
  %uf = hps.recv "o3" : tensor<3xi64>
  %ui = hps.recv "o4" : tensor<3xi64>
  %uc = hps.recv "o5" : tensor<3xi64>
  %un = hps.recv "o6" : tensor<i64>
  %sel = hps.recv "o7" : tensor<12x3xi64>
  %seln = hps.recv "o8" : tensor<i64>
  return %nz, %nzc, %u, %uf, %ui, %uc, %un, %sel, %seln : tensor<3x24xi64>, tensor<i64>, tensor<2x3x4xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<i64>, tensor<12x3xi64>, tensor<i64>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %x = hps.recv "c0" : tensor<2x3x4xf32>
  %boxes = hps.recv "c1" : tensor<2x5x4xf32>
  %scores = hps.recv "c2" : tensor<2x3x5xf32>
  // Weights: 64-byte aligned, at 0, 64, 128 in this order.
  %max = hps.weight "max" dense<2> : tensor<1xi64>
  %iou = hps.weight "iou" dense<0.5> : tensor<1xf32>
  %thr = hps.weight "thr" dense<0.25> : tensor<1xf32>
  %nz, %nzc = hps.non_zero %x : (tensor<2x3x4xf32>) -> (tensor<3x24xi64>, tensor<i64>)
  %u, %uf, %ui, %uc, %un = hps.unique %x {axis = 1 : i64, sorted} : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<i64>)
  %sel, %seln = hps.non_max_suppression %boxes, %scores max_per_class %max iou_threshold %iou score_threshold %thr {center_point_box} : (tensor<2x5x4xf32>, tensor<2x3x5xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> (tensor<12x3xi64>, tensor<i64>)
  hps.send %nz to "o0" : tensor<3x24xi64>
  hps.send %nzc to "o1" : tensor<i64>
  hps.send %u to "o2" : tensor<2x3x4xf32>
  hps.send %uf to "o3" : tensor<3xi64>
  hps.send %ui to "o4" : tensor<3xi64>
  hps.send %uc to "o5" : tensor<3xi64>
  hps.send %un to "o6" : tensor<i64>
  hps.send %sel to "o7" : tensor<12x3xi64>
  hps.send %seln to "o8" : tensor<i64>
  return
}
}

// CHECK: HPS_RUN_ONCE void buildKernels0() {
// CHECK-NEXT: kNonZero[0] = std::make_unique<backend::NonZero>(ctx, DType::F32, Shape{2, 3, 4});
// x as [outer, extent, inner] around axis 1, sorted.
// CHECK-NEXT: kUnique[0] = std::make_unique<backend::Unique>(ctx, DType::F32, 2, 3, 4, true);
// batches, classes, boxes, center_point_box, capacity.
// CHECK-NEXT: kNonMaxSuppression[0] = std::make_unique<backend::NonMaxSuppression>(ctx, 2, 3, 5, true, 12);
// CHECK-NEXT: {{^ *[}]$}}

// Stage inputs: in0 is x, in1 the boxes, in2 the scores; weights max at 0,
// iou at 64, thr at 128.
// CHECK: kNonZero[0]->run(static_cast<const void *>(in0), out0, out1);
// y, firstIndices, inverse, counts, count.
// CHECK-NEXT: kUnique[0]->run(static_cast<const void *>(in0), out2, out3, out4, out5, out6);
// boxes, scores, maxPerClass, iouThreshold, scoreThreshold, selected, count.
// CHECK-NEXT: kNonMaxSuppression[0]->run(static_cast<const void *>(in1), static_cast<const void *>(in2), static_cast<const void *>((weights + 0)), static_cast<const void *>((weights + 64)), static_cast<const void *>((weights + 128)), out7, out8);
