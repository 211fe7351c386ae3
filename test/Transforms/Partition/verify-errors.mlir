// RUN: heterps-opt --hps-verify-partition -split-input-file -verify-diagnostics %s

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{layer outside any stage}}
  %0 = hps.relu %x {device = #hps.device<"cpu.xeon">} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @stage_0() attributes {hps.device = #hps.device<"gpu.v100">, hps.replicas = 1 : i64} {
  %0 = hps.recv "in" : tensor<4xf32>
  // expected-error @+1 {{placed on #hps.device<"cpu.xeon"> but its stage runs on #hps.device<"gpu.v100">}}
  %1 = hps.relu %0 {device = #hps.device<"cpu.xeon">} : tensor<4xf32>
  // expected-error @+1 {{channel 'out' has no receiver}}
  hps.send %1 to "out" : tensor<4xf32>
  return
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  hps.send %x to "in" : tensor<4xf32>
  // expected-error @+1 {{channel 'back' has no sender}}
  %0 = hps.recv "back" : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">} {
  // expected-error @+1 {{channel 'in' receives a different type than is sent}}
  %0 = hps.recv "in" : tensor<8xf32>
  return
}
func.func @main(%x: tensor<4xf32>) {
  hps.send %x to "in" : tensor<4xf32>
  return
}
// expected-error @-9 {{stage has no hps.replicas}}
