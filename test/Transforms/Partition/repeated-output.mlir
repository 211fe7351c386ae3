// RUN: heterps-opt --hps-partition --hps-verify-partition %s | FileCheck %s

// One value returned twice (ONNX outputs y and Identity(y)) is sent and
// received once and returned twice: a second send on its channel was
// "channel 'c1.to_main' has more than one sender".
module attributes {hps.plan = {stages = [
    {device = #hps.device<"cpu.xeon">, replicas = 1 : i64}]}} {
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %r = hps.relu %x {device = #hps.device<"cpu.xeon">} : tensor<2x3xf32>
  return %r, %r : tensor<2x3xf32>, tensor<2x3xf32>
}
}

// CHECK-LABEL: func.func @main(
// CHECK: %[[Y:.*]] = hps.recv "[[C:.*]]" : tensor<2x3xf32>
// CHECK-NOT: hps.recv
// CHECK: return %[[Y]], %[[Y]]
// CHECK-LABEL: func.func @stage_0()
// CHECK: hps.send %{{.*}} to "[[C]]"
// CHECK-NOT: hps.send
