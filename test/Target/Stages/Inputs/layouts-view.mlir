module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%x: tensor<2x3x8x8xf32> {hps.name = "x", hps.batched}) -> (tensor<2x16x4x16xf32> {hps.name = "a", hps.batched}, tensor<2x16x8x8xf32> {hps.name = "b", hps.batched}) attributes {hps.batch = 2 : i64, hps.pipeline = [@stage_0]} {
  hps.send %x to "c0" : tensor<2x3x8x8xf32>
  %a = hps.recv "c1" : tensor<2x16x4x16xf32>
  %b = hps.recv "c2" : tensor<2x16x8x8xf32>
  return %a, %b : tensor<2x16x4x16xf32>, tensor<2x16x8x8xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %x = hps.recv "c0" : tensor<2x3x8x8xf32>
  %w0 = hps.weight "w0" dense<0.1> : tensor<16x3x3x3xf32>
  %w1 = hps.weight "w1" dense<0.2> : tensor<16x16x1x1xf32>
  %c0 = hps.conv %x, %w0 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<2x16x8x8xf32>
  %v = hps.reshape %c0 {shape = array<i64: 2, 16, 4, 16>} : (tensor<2x16x8x8xf32>) -> tensor<2x16x4x16xf32>
  %a = hps.conv %v, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x4x16xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x4x16xf32>
  %b = hps.conv %c0, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x8x8xf32>
  hps.send %a to "c1" : tensor<2x16x4x16xf32>
  hps.send %b to "c2" : tensor<2x16x8x8xf32>
  return
}
}
