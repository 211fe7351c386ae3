// RUN: heterps-opt --hps-autodiff=loss=bce %s -split-input-file -verify-diagnostics
// Option errors are reported on @main of every part.
// RUN: not heterps-opt --hps-autodiff=loss=hinge %s -split-input-file 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: not heterps-opt --hps-autodiff %s -split-input-file 2>&1 | FileCheck %s --check-prefix=NO-LOSS
// RUN: not heterps-opt '--hps-autodiff=loss=bce optimizer=lion' %s -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: not heterps-opt '--hps-autodiff=loss=bce output=logits' %s -split-input-file 2>&1 | FileCheck %s --check-prefix=OUTPUT
// RUN: not heterps-opt '--hps-autodiff=loss=bce learning-rate=1e39' %s -split-input-file 2>&1 | FileCheck %s --check-prefix=RATE
// LOSS: error: hps-autodiff: loss 'hinge' is not one of: bce, softmax-ce, mse
// NO-LOSS: error: hps-autodiff: the loss option is required (bce, softmax-ce or mse)
// OPTIMIZER: error: hps-autodiff: optimizer 'lion' is not one of: sgd, adam, adagrad
// RATE: error: hps-autodiff: learning-rate 1e+39 must be a finite number of at least 0 (and at most 3.40282e+38, a float's largest)
// OUTPUT: error: hps-autodiff: @main has no result named 'logits'

// An active op without a rule is named: conv_grad_filter only appears in
// backward graphs and is not differentiated again.
func.func @main(%x: tensor<2x3x4x4xf32> {hps.name = "x", hps.batched}) -> (tensor<2x3x4x4xf32> {hps.name = "y", hps.batched}) {
  %s = hps.weight "s" dense<0.5> : tensor<2x3x4x4xf32>
  %h = hps.mul %x, %s : tensor<2x3x4x4xf32>
  // expected-error @+1 {{hps-autodiff: no gradient rule for 'hps.conv_grad_filter'}}
  %f = hps.conv_grad_filter %h, %h {dilations = array<i64: 1, 1>, group = 3 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<3x1x3x3xf32>
  %y = hps.conv %x, %f {dilations = array<i64: 1, 1>, group = 3 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3x1x3x3xf32>) -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}

// -----

// Nothing trainable: the only weight feeds another output.
// expected-error @+1 {{hps-autodiff: no trainable parameter reaches the loss}}
func.func @main(%x: tensor<4x3xf32> {hps.name = "x", hps.batched}) -> (tensor<4x3xf32> {hps.name = "y", hps.batched}, tensor<4x3xf32> {hps.name = "z", hps.batched}) {
  %w = hps.weight "w" dense<0.1> : tensor<4x3xf32>
  %y = hps.sigmoid %x : tensor<4x3xf32>
  %z = hps.add %x, %w : tensor<4x3xf32>
  return %y, %z : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// The label would shadow an input of the same name.
// expected-error @+1 {{hps-autodiff: @main already has an input named 'label'}}
func.func @main(%x: tensor<4x3xf32> {hps.name = "x", hps.batched}, %l: tensor<4x3xf32> {hps.name = "label", hps.batched}) -> (tensor<4x3xf32> {hps.name = "y", hps.batched}) {
  %w = hps.weight "w" dense<0.1> : tensor<4x3xf32>
  %y = hps.mul %x, %w : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// A table also used densely would need two kinds of update.
func.func @main(%ids: tensor<4x3xi64> {hps.name = "ids", hps.batched}) -> (tensor<4x8xf32> {hps.name = "y", hps.batched}) {
  // expected-error @+1 {{hps-autodiff: weight 'emb' is used both as an embedding table and by other ops}}
  %t = hps.weight "emb" dense<0.5> : tensor<4x8xf32>
  %e = hps.embedding_lookup %t, %ids {pooling = #hps<embedding_pooling sum>} : (tensor<4x8xf32>, tensor<4x3xi64>) -> tensor<4x8xf32>
  %y = hps.add %e, %t : tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A rule may refuse an instance: max_pool windows of more than 64 taps.
func.func @main(%x: tensor<1x2x9x9xf32> {hps.name = "x", hps.batched}) -> (tensor<1x2x1x1xf32> {hps.name = "y", hps.batched}) {
  %w = hps.weight "w" dense<0.1> : tensor<1x2x9x9xf32>
  %m = hps.mul %x, %w : tensor<1x2x9x9xf32>
  // expected-error @+1 {{hps-autodiff: no gradient rule for 'hps.max_pool' with a 81-tap window (at most 64 taps are differentiated)}}
  %y = hps.max_pool %m {kernel_shape = array<i64: 9, 9>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x9x9xf32>) -> tensor<1x2x1x1xf32>
  return %y : tensor<1x2x1x1xf32>
}

// -----

// A scatter that multiplies is not differentiated.
func.func @main(%x: tensor<4x6xf32> {hps.name = "x", hps.batched}, %i: tensor<2xi64> {hps.name = "i"}) -> (tensor<4x6xf32> {hps.name = "y", hps.batched}) {
  %w = hps.weight "w" dense<0.1> : tensor<4x6xf32>
  %u = hps.weight "u" dense<0.2> : tensor<4x2xf32>
  %m = hps.mul %x, %w : tensor<4x6xf32>
  // expected-error @+1 {{hps-autodiff: no gradient rule for 'hps.scatter' with reduction 'mul' (only none and add are differentiable here)}}
  %y = hps.scatter %m, %i, %u {axis = 1 : i64, reduction = #hps<scatter_reduction mul>} : (tensor<4x6xf32>, tensor<2xi64>, tensor<4x2xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

// A generic ONNX node says which ONNX op lacks a rule.
func.func @main(%x: tensor<4x6xf32> {hps.name = "x", hps.batched}) -> (tensor<4x6xf32> {hps.name = "y", hps.batched}) {
  %w = hps.weight "w" dense<0.1> : tensor<4x6xf32>
  // expected-error @+1 {{hps-autodiff: no gradient rule for 'hps.onnx_node' (ONNX Hardmax)}}
  %y = hps.onnx_node "Hardmax"(%w) {domain = "", opset = 13 : i64, attrs = {}} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}

// -----

// expected-error @+1 {{hps-autodiff: the module has no @main to train}}
module {
  func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
}

// -----

// A prediction without a batch dim (a model exported for one sample, its
// batch not bound): the runtime cuts steps into samples along the batch.
// expected-error @+1 {{hps-autodiff: the prediction 'y' has no batch dim: the model fixes its leading extent at 1}}
func.func @main(%x: tensor<1x3xf32> {hps.name = "x"}) -> (tensor<1x3xf32> {hps.name = "y"}) {
  %w = hps.weight "w" dense<0.1> : tensor<1x3xf32>
  %y = hps.add %x, %w : tensor<1x3xf32>
  return %y : tensor<1x3xf32>
}
