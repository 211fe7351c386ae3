// RUN: heterps-opt --hps-lower-to-runtime-calls %s | FileCheck %s

// Training losses become hpsrt.loss (Loss::run, per-sample losses) and
// their gradients hpsrt.loss_grad (Loss::runGradient), one kernel class
// with the same parameters: the kind, from_logits, n samples (the
// prediction's first dim) and m elements per sample (the rest of it).

// CHECK-LABEL: func.func @stage_0
func.func @stage_0(%p: tensor<2x5xf32>, %l: tensor<2xi64>, %q: tensor<4x2x3xf32>, %t: tensor<4x2x3xf32>) -> (tensor<2xf32>, tensor<4xf32>, tensor<2x5xf32>, tensor<4x2x3xf32>) attributes {hps.device = #hps.device<"cpu.xeon">} {
  // Class ids against 5 logits per sample.
  // CHECK-NEXT: %[[L:.*]] = "hpsrt.loss"(%arg0, %arg1) <{fromLogits = true, kind = #hpsrt.loss_kind<SoftmaxCE>, m = 5 : i64, n = 2 : i64, type = f32}> : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<2xf32>
  %loss = hps.loss softmax_ce %p, %l {from_logits} : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<2xf32>
  // A [4, 2, 3] prediction: 4 samples of 6 elements.
  // CHECK-NEXT: %[[B:.*]] = "hpsrt.loss"(%arg2, %arg3) <{fromLogits = false, kind = #hpsrt.loss_kind<BCE>, m = 6 : i64, n = 4 : i64, type = f32}> : (tensor<4x2x3xf32>, tensor<4x2x3xf32>) -> tensor<4xf32>
  %bce = hps.loss bce %q, %t : (tensor<4x2x3xf32>, tensor<4x2x3xf32>) -> tensor<4xf32>
  // CHECK-NEXT: %[[DL:.*]] = "hpsrt.loss_grad"(%arg0, %arg1) <{fromLogits = true, kind = #hpsrt.loss_kind<SoftmaxCE>, m = 5 : i64, n = 2 : i64, type = f32}> {hps.backward} : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<2x5xf32>
  %dl = hps.loss_grad softmax_ce %p, %l {from_logits, hps.backward} : (tensor<2x5xf32>, tensor<2xi64>) -> tensor<2x5xf32>
  // CHECK-NEXT: %[[DM:.*]] = "hpsrt.loss_grad"(%arg2, %arg3) <{fromLogits = false, kind = #hpsrt.loss_kind<MSE>, m = 6 : i64, n = 4 : i64, type = f32}> {hps.backward} : (tensor<4x2x3xf32>, tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
  %dm = hps.loss_grad mse %q, %t {hps.backward} : (tensor<4x2x3xf32>, tensor<4x2x3xf32>) -> tensor<4x2x3xf32>
  // CHECK-NEXT: return %[[L]], %[[B]], %[[DL]], %[[DM]]
  return %loss, %bce, %dl, %dm : tensor<2xf32>, tensor<4xf32>, tensor<2x5xf32>, tensor<4x2x3xf32>
}
