// RUN: heterps-opt %s -split-input-file -verify-diagnostics

// The discardable hps.* attributes that passes hand each other are
// verified wherever they appear.

// expected-error @+1 {{'hps.training' needs a non-empty 'prediction' string}}
module attributes {hps.training = {label = "y", loss = "bce", optimizer = "sgd"}} {}

// -----

// expected-error @+1 {{'hps.training' loss 'hinge' is not bce, softmax_ce or mse}}
module attributes {hps.training = {label = "y", loss = "hinge", optimizer = "sgd", prediction = "p"}} {}

// -----

// expected-error @+1 {{'hps.training' optimizer 'lion' is not sgd, adam or adagrad}}
module attributes {hps.training = {label = "y", loss = "mse", optimizer = "lion", prediction = "p"}} {}

// -----

// expected-error @+1 {{'hps.training' learning_rate must be a float}}
module attributes {hps.training = {label = "y", learning_rate = "fast", loss = "mse", optimizer = "adam", prediction = "p"}} {}

// -----

module {
  // expected-error @+1 {{'hps.training' belongs on the module}}
  func.func @f() attributes {hps.training = {label = "y", loss = "mse", optimizer = "adam", prediction = "p"}} {
    return
  }
}

// -----

// expected-error @+1 {{'hps.device' must be a #hps.device}}
func.func @stage_0() attributes {hps.device = "gpu.v100"} {
  return
}

// -----

// expected-error @+1 {{'hps.replicas' must be an integer of at least 1}}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 0 : i64} {
  return
}

// -----

// expected-error @+1 {{'hps.stage' must be an integer of at least 0}}
func.func @stage_0() attributes {hps.stage = -1 : i64} {
  return
}

// -----

// expected-error @+1 {{'hps.pipeline' must list the stage functions (@stage_0, ...)}}
func.func @main() attributes {hps.pipeline = ["stage_0"]} {
  return
}

// -----

// expected-error @+1 {{'hps.plan' must be a dictionary}}
module attributes {hps.plan = "dp"} {}

// -----

func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{'hps.update' must be "moving-average" or "training-flag"}}
  %w = hps.weight "mean" {hps.trainable, hps.update = "sometimes"} dense<0.0> : tensor<2xf32>
  return %w : tensor<2xf32>
}

// -----

func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{a moving-average parameter needs 'hps.momentum'}}
  %w = hps.weight "mean" {hps.trainable, hps.update = "moving-average"} dense<0.0> : tensor<2xf32>
  return %w : tensor<2xf32>
}

// -----

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'hps.trainable' is a unit attribute of hps.weight}}
  %y = hps.relu %x {hps.trainable} : tensor<2xf32>
  return %y : tensor<2xf32>
}
