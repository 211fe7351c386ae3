// RUN: rm -rf %t && heterps-translate --hps-to-stages %s -o %t
// RUN: FileCheck %s --check-prefix=CPU --input-file %t/stage_0.cpp
// RUN: FileCheck %s --check-prefix=GPU --input-file %t/stage_1.cu
// RUN: rm -rf %t.off && heterps-translate --hps-to-stages %s -o %t.off --stage-fuse-elementwise=false
// RUN: FileCheck %s --check-prefix=OFF --input-file %t.off/stage_0.cpp

// Chains of elementwise ops run as one generated loop each.
// - Between two convolutions a requantization (per-channel scale, round,
//   clip, dequantize) reads and writes the native channel-blocked layout:
//   one functor per block oneDNN may pick, the per-channel scale indexed by
//   the channel block and the lane, the scalar constant inlined exactly.
// - %a is read by the softmax before %b could join its group, so it runs
//   alone (its own kernel); abs .. where fuse into one loop over the
//   flattened 4x6 elements, with a comparison, a float -> i32 -> float round
//   trip and a select. Only the where's result is stored.
// - A GPU stage gets the same loop (device code), a row-broadcast operand
//   strided per row.
module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%x: tensor<2x3x8x8xf32> {hps.name = "x", hps.batched}, %v: tensor<4x6xf32> {hps.name = "v", hps.batched}) -> (tensor<2x16x8x8xf32> {hps.name = "y", hps.batched}, tensor<4x6xf32> {hps.name = "s", hps.batched}, tensor<4x6xf32> {hps.name = "t", hps.batched}) attributes {hps.batch = 2 : i64, hps.pipeline = [@stage_0, @stage_1]} {
  hps.send %x to "c0" : tensor<2x3x8x8xf32>
  hps.send %v to "c1" : tensor<4x6xf32>
  %y = hps.recv "c2" : tensor<2x16x8x8xf32>
  %s = hps.recv "c3" : tensor<4x6xf32>
  %t = hps.recv "c4" : tensor<4x6xf32>
  return %y, %s, %t : tensor<2x16x8x8xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %x = hps.recv "c0" : tensor<2x3x8x8xf32>
  %v = hps.recv "c1" : tensor<4x6xf32>
  %w0 = hps.weight "w0" dense<0.1> : tensor<16x3x3x3xf32>
  %w1 = hps.weight "w1" dense<0.2> : tensor<16x16x3x3xf32>
  %scale = hps.weight "scale" dense<[[[0.5]], [[0.25]], [[0.5]], [[0.25]], [[0.5]], [[0.25]], [[0.5]], [[0.25]], [[0.5]], [[0.25]], [[0.5]], [[0.25]], [[0.5]], [[0.25]], [[0.5]], [[0.25]]]> : tensor<16x1x1xf32>
  %half = hps.constant dense<0.5> : tensor<f32>
  %three = hps.constant dense<3.0> : tensor<f32>
  %c0 = hps.conv %x, %w0 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<2x16x8x8xf32>
  %m = hps.mul %c0, %scale : tensor<2x16x8x8xf32>, tensor<16x1x1xf32> -> tensor<2x16x8x8xf32>
  %r = hps.round %m : tensor<2x16x8x8xf32>
  %q = hps.clip %r {max = 1.270000e+02 : f64, min = -1.280000e+02 : f64} : tensor<2x16x8x8xf32>
  %d = hps.mul %q, %half : tensor<2x16x8x8xf32>, tensor<f32> -> tensor<2x16x8x8xf32>
  %c1 = hps.conv %d, %w1 {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<2x16x8x8xf32>
  %a = hps.neg %v : tensor<4x6xf32>
  %p = hps.softmax %a {axis = -1 : i64} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %b = hps.abs %a : tensor<4x6xf32>
  %e = hps.sub %b, %three : tensor<4x6xf32>, tensor<f32> -> tensor<4x6xf32>
  %pos = hps.greater %e, %p : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xi1>
  %i = hps.cast %e : (tensor<4x6xf32>) -> tensor<4x6xi32>
  %f = hps.cast %i : (tensor<4x6xi32>) -> tensor<4x6xf32>
  %s = hps.where %pos, %f, %p : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  hps.send %c1 to "c2" : tensor<2x16x8x8xf32>
  hps.send %s to "c3" : tensor<4x6xf32>
  hps.send %v to "c5" : tensor<4x6xf32>
  return
}
func.func @stage_1() attributes {hps.device = #hps.device<"gpu.v100">, hps.replicas = 1 : i64, hps.stage = 1 : i64} {
  %v = hps.recv "c5" : tensor<4x6xf32>
  %row = hps.weight "row" dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> : tensor<6xf32>
  %a = hps.mul %v, %row : tensor<4x6xf32>, tensor<6xf32> -> tensor<4x6xf32>
  %t = hps.relu %a : tensor<4x6xf32>
  hps.send %t to "c4" : tensor<4x6xf32>
  return
}
}

// CPU-LABEL: struct FusedLoop0_8 {
// CPU-NEXT:    static constexpr int64_t kRows = 256, kInner = 8;
// CPU:         const int64_t i2 = r % 64;
// CPU-NEXT:    r /= 64;
// CPU-NEXT:    const int64_t i1 = r % 2;
// CPU-NEXT:    r /= 2;
// CPU-NEXT:    const int64_t i0 = r;
// CPU-NEXT:    const float x0 = static_cast<const float *>(p0)[i0 * 1024 + i1 * 512 + i2 * 8 + j];
// CPU-NEXT:    const float x1 = static_cast<const float *>(p1)[i1 * 8 + j];
// CPU-NEXT:    const float v0 = scalar::binaryOp<BinaryKind::Mul, float>(x0, x1);
// CPU-NEXT:    const float v1 = scalar::unaryOp<UnaryKind::Round, float>(v0, scalar::UnaryArgs<float>{});
// CPU-NEXT:    const float v2 = scalar::clipHigh<float>(scalar::clipLow<float>(v1, float(-0x1p+7)), float(0x1.fcp+6));
// CPU-NEXT:    const float v3 = scalar::binaryOp<BinaryKind::Mul, float>(v2, float(0x1p-1));
// CPU-NEXT:    static_cast<float *>(p2)[i0 * 1024 + i1 * 512 + i2 * 8 + j] = v3;
// CPU-LABEL: struct FusedLoop0_16 {
// CPU-NEXT:    static constexpr int64_t kRows = 128, kInner = 16;
// CPU:         const int64_t i0 = row;
// CPU-NEXT:    const float x0 = static_cast<const float *>(p0)[i0 * 16 + j];
// CPU-NEXT:    const float x1 = static_cast<const float *>(p1)[j];
// CPU-LABEL: struct FusedLoop1 {
// CPU-NEXT:    static constexpr int64_t kRows = 1, kInner = 24;
// CPU:         const float v0 = scalar::unaryOp<UnaryKind::Abs, float>(x0, scalar::UnaryArgs<float>{});
// CPU-NEXT:    const float v1 = scalar::binaryOp<BinaryKind::Sub, float>(v0, float(0x1.8p+1));
// CPU-NEXT:    const uint8_t v2 = scalar::binaryOp<BinaryKind::Greater, float>(v1, x1);
// CPU-NEXT:    const int32_t v3 = scalar::convertValue<int32_t>(v1);
// CPU-NEXT:    const float v4 = float(v3);
// CPU-NEXT:    const float v5 = (v2 ? v4 : x1);
// CPU-NEXT:    static_cast<float *>(p2)[j] = v5;
// CPU-NEXT:  }
// CPU-LABEL: struct Stage {
// CPU:       kConv[0] = std::make_unique<backend::Conv>({{.*}}ConvOptions{Layout::Plain, Layout::Native});
// CPU-NEXT:  kConv[1] = std::make_unique<backend::Conv>({{.*}}ConvOptions{Layout::Native});
// CPU-NEXT:  kUnary[0] = std::make_unique<backend::Unary>(ctx, DType::F32, UnaryKind::Neg
// CPU-NEXT:  kSoftmax[0] = std::make_unique<backend::Softmax>({{.*}});
// CPU-NEXT:  }
// CPU:       kConv[0]->run(
// CPU-NEXT:  if (backend::nativeLayoutBlock() == 16)
// CPU-NEXT:    backend::forEachElement(ctx, FusedLoop0_16{
// CPU-NEXT:  else
// CPU-NEXT:    backend::forEachElement(ctx, FusedLoop0_8{
// CPU-NEXT:  kConv[1]->run(
// CPU-NEXT:  kUnary[0]->run(
// CPU-NEXT:  kSoftmax[0]->run(
// CPU-NEXT:  backend::forEachElement(ctx, FusedLoop1{{{.*}}static_cast<void *>(out1)});

// GPU-LABEL: struct FusedLoop0 {
// GPU-NEXT:    static constexpr int64_t kRows = 4, kInner = 6;
// GPU:         HPS_HD void operator()(int64_t row, int64_t j) const {
// GPU-NEXT:      const int64_t i0 = row;
// GPU-NEXT:      const float x0 = static_cast<const float *>(p0)[i0 * 6 + j];
// GPU-NEXT:      const float x1 = static_cast<const float *>(p1)[j];
// GPU-NEXT:      const float v0 = scalar::binaryOp<BinaryKind::Mul, float>(x0, x1);
// GPU-NEXT:      const float v1 = scalar::unaryOp<UnaryKind::Relu, float>(v0, scalar::UnaryArgs<float>{});
// GPU-NEXT:      static_cast<float *>(p2)[i0 * 6 + j] = v1;
// GPU:       backend::forEachElement(ctx, FusedLoop0{

// OFF-NOT: FusedLoop
// OFF: backend::Binary>(ctx, BinaryKind::Mul, DType::F32, Shape{2, 16, 8, 8}, Shape{16, 1, 1}
// OFF-NEXT: backend::Unary>(ctx, DType::F32, UnaryKind::Round
// OFF-NEXT: backend::Unary>(ctx, DType::F32, UnaryKind::Clip
