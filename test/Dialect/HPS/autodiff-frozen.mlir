// Weights that stay constants in training: those named in `frozen` (a
// pretrained layer, a scale exported as an initializer), and an exponent,
// whatever its name (`x ** 2` exported with 2 as an initializer; its
// gradient, x^p log x, is NaN wherever x < 0).
// RUN: heterps-opt '--hps-autodiff=loss=mse frozen=scale,fc1.w' %s | FileCheck %s
// RUN: heterps-opt --hps-autodiff=loss=mse %s | FileCheck %s --check-prefix=DEFAULT
// RUN: not heterps-opt '--hps-autodiff=loss=mse frozen=fc9.w' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not heterps-opt '--hps-autodiff=loss=mse frozen=fc1.w,scale,fc2.w' %s 2>&1 | FileCheck %s --check-prefix=NOTHING

func.func @main(%x: tensor<4x3xf32> {hps.name = "x", hps.batched}) -> (tensor<4x1xf32> {hps.name = "y", hps.batched}) {
  %w1 = hps.weight "fc1.w" dense<0.5> : tensor<3x8xf32>
  %two = hps.weight "two" dense<2.0> : tensor<f32>
  %scale = hps.weight "scale" dense<2.0> : tensor<f32>
  %w2 = hps.weight "fc2.w" dense<0.1> : tensor<8x1xf32>
  %h = hps.matmul %x, %w1 : (tensor<4x3xf32>, tensor<3x8xf32>) -> tensor<4x8xf32>
  %p = hps.pow %h, %two : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %s = hps.div %p, %scale : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf32>
  %y = hps.matmul %s, %w2 : (tensor<4x8xf32>, tensor<8x1xf32>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// Only fc2.w trains; h needs no adjoint, so no gradient flows into the
// frozen first layer or the exponent.
// CHECK-DAG: hps.weight "fc1.w" dense
// CHECK-DAG: hps.weight "two" dense
// CHECK-DAG: hps.weight "scale" dense
// CHECK-DAG: hps.weight "fc2.w" {hps.trainable}
// CHECK-NOT: hps.log
// CHECK: hps.dense_push "fc2.w"
// CHECK-NOT: hps.dense_push

// By default every weight but the exponent trains.
// DEFAULT-DAG: hps.weight "fc1.w" {hps.trainable}
// DEFAULT-DAG: hps.weight "two" dense
// DEFAULT-DAG: hps.weight "scale" {hps.trainable}
// DEFAULT-DAG: hps.weight "fc2.w" {hps.trainable}
// DEFAULT-NOT: hps.dense_push "two"

// UNKNOWN: error: hps-autodiff: frozen weight 'fc9.w' (--freeze) is not a weight (initializer) of the model
// NOTHING: error: hps-autodiff: no trainable parameter reaches the loss
