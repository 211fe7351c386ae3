// RUN: heterps-opt --hps-pack-weights --verify-diagnostics --split-input-file %s

// Two frozen weights of one name must be one tensor: they share a place in
// weights.bin. Another shape or value is named as such (it was "its place
// in weights.bin overlaps another's" when the stage was printed).
func.func @main() attributes {hps.pipeline = [@stage_0]} {
  return
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">} {
  // expected-note @below {{the first}}
  %w = hps.weight "w" dense<1.0> : tensor<3xf32>
  // expected-error @below {{a second weight named 'w' holds a 'tensor<4xf32>', the first a 'tensor<3xf32>': one name is one weight}}
  %w2 = hps.weight "w" dense<1.0> : tensor<4xf32>
  return
}

// -----

func.func @main() attributes {hps.pipeline = [@stage_0]} {
  return
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">} {
  // expected-note @below {{the first}}
  %w = hps.weight "w" dense<1.0> : tensor<3xf32>
  // expected-error @below {{a second weight named 'w' holds other values than the first: one name is one weight}}
  %w2 = hps.weight "w" dense<2.0> : tensor<3xf32>
  return
}
