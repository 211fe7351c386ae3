module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%x: tensor<2x3x8x8xui8> {hps.name = "x", hps.batched}) -> (tensor<2x24x1x1xf32> {hps.name = "y", hps.batched}, tensor<2x24x1x1xf32> {hps.name = "p", hps.batched}) attributes {hps.batch = 2 : i64, hps.pipeline = [@stage_0]} {
  hps.send %x to "c0" : tensor<2x3x8x8xui8>
  %y = hps.recv "c1" : tensor<2x24x1x1xf32>
  %p = hps.recv "c2" : tensor<2x24x1x1xf32>
  return %y, %p : tensor<2x24x1x1xf32>, tensor<2x24x1x1xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %x = hps.recv "c0" : tensor<2x3x8x8xui8>
  %w0 = hps.constant dense<3> : tensor<24x3x3x3xi8>
  %w1 = hps.constant dense<-2> : tensor<24x24x3x3xi8>
  %b = hps.constant dense<-7> : tensor<24xi32>
  %scale = hps.constant dense<0.01> : tensor<1x24x1x1xf32>
  %acc0 = hps.conv %x, %w0, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xui8>, tensor<24x3x3x3xi8>, tensor<24xi32>) -> tensor<2x24x8x8xi32>
  %f0 = hps.cast %acc0 : (tensor<2x24x8x8xi32>) -> tensor<2x24x8x8xf32>
  %m0 = hps.mul %f0, %scale : tensor<2x24x8x8xf32>, tensor<1x24x1x1xf32> -> tensor<2x24x8x8xf32>
  %r0 = hps.round %m0 : tensor<2x24x8x8xf32>
  %c0 = hps.clip %r0 {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64} : tensor<2x24x8x8xf32>
  %q0 = hps.cast %c0 : (tensor<2x24x8x8xf32>) -> tensor<2x24x8x8xui8>
  %acc1 = hps.conv %q0, %w1, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x24x8x8xui8>, tensor<24x24x3x3xi8>, tensor<24xi32>) -> tensor<2x24x8x8xi32>
  %f1 = hps.cast %acc1 : (tensor<2x24x8x8xi32>) -> tensor<2x24x8x8xf32>
  %m1 = hps.mul %f1, %scale : tensor<2x24x8x8xf32>, tensor<1x24x1x1xf32> -> tensor<2x24x8x8xf32>
  %s = hps.add %m1, %c0 : tensor<2x24x8x8xf32>
  %r1 = hps.round %s : tensor<2x24x8x8xf32>
  %c1 = hps.clip %r1 {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64} : tensor<2x24x8x8xf32>
  %y = hps.global_avg_pool %c1 : (tensor<2x24x8x8xf32>) -> tensor<2x24x1x1xf32>
  %p = hps.global_avg_pool %c0 : (tensor<2x24x8x8xf32>) -> tensor<2x24x1x1xf32>
  hps.send %y to "c1" : tensor<2x24x1x1xf32>
  hps.send %p to "c2" : tensor<2x24x1x1xf32>
  return
}
}
