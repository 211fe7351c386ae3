// Two gemms with one signature but different transposes: keyed by name.
func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %w = hps.weight "w" dense<0.01> : tensor<64x64xf32>
  %a = hps.gemm %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("fc_plain")
  %b = hps.gemm %a, %w {trans_b} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32> loc("fc_transposed")
  return %b : tensor<64x64xf32>
}
