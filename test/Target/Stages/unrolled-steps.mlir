// RUN: rm -rf %t && heterps-translate --hps-to-stages %s -o %t
// RUN: FileCheck %s --input-file %t/stage_0.cpp

// A recurrence unrolled over 33 steps, as the RNN, LSTM and GRU
// decompositions produce them: each step is a tanh kernel and a
// fused mul + add loop.
// - The 33 loops are the same loop on different buffers: one functor.
// - Kernels are built 32 to a member function (g++ slows down
//   superlinearly on one huge constructor), and each class of kernel is one
//   member array, so the destructor is a loop per class.
// The 33 runs of FusedLoop0 are checked at their places in the run.
module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%x: tensor<4x8xf32> {hps.name = "x", hps.batched}) -> (tensor<4x8xf32> {hps.name = "h", hps.batched}) attributes {hps.batch = 4 : i64, hps.pipeline = [@stage_0]} {
  hps.send %x to "c0" : tensor<4x8xf32>
  %h = hps.recv "c1" : tensor<4x8xf32>
  return %h : tensor<4x8xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 1 : i64, hps.stage = 0 : i64} {
  %h0 = hps.recv "c0" : tensor<4x8xf32>
  %w = hps.weight "w" dense<0.5> : tensor<8xf32>
  %b = hps.weight "b" dense<0.25> : tensor<8xf32>
  %m0 = hps.mul %h0, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a0 = hps.add %m0, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h1 = hps.tanh %a0 : tensor<4x8xf32>
  %m1 = hps.mul %h1, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a1 = hps.add %m1, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h2 = hps.tanh %a1 : tensor<4x8xf32>
  %m2 = hps.mul %h2, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a2 = hps.add %m2, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h3 = hps.tanh %a2 : tensor<4x8xf32>
  %m3 = hps.mul %h3, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a3 = hps.add %m3, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h4 = hps.tanh %a3 : tensor<4x8xf32>
  %m4 = hps.mul %h4, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a4 = hps.add %m4, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h5 = hps.tanh %a4 : tensor<4x8xf32>
  %m5 = hps.mul %h5, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a5 = hps.add %m5, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h6 = hps.tanh %a5 : tensor<4x8xf32>
  %m6 = hps.mul %h6, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a6 = hps.add %m6, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h7 = hps.tanh %a6 : tensor<4x8xf32>
  %m7 = hps.mul %h7, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a7 = hps.add %m7, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h8 = hps.tanh %a7 : tensor<4x8xf32>
  %m8 = hps.mul %h8, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a8 = hps.add %m8, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h9 = hps.tanh %a8 : tensor<4x8xf32>
  %m9 = hps.mul %h9, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a9 = hps.add %m9, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h10 = hps.tanh %a9 : tensor<4x8xf32>
  %m10 = hps.mul %h10, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a10 = hps.add %m10, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h11 = hps.tanh %a10 : tensor<4x8xf32>
  %m11 = hps.mul %h11, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a11 = hps.add %m11, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h12 = hps.tanh %a11 : tensor<4x8xf32>
  %m12 = hps.mul %h12, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a12 = hps.add %m12, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h13 = hps.tanh %a12 : tensor<4x8xf32>
  %m13 = hps.mul %h13, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a13 = hps.add %m13, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h14 = hps.tanh %a13 : tensor<4x8xf32>
  %m14 = hps.mul %h14, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a14 = hps.add %m14, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h15 = hps.tanh %a14 : tensor<4x8xf32>
  %m15 = hps.mul %h15, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a15 = hps.add %m15, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h16 = hps.tanh %a15 : tensor<4x8xf32>
  %m16 = hps.mul %h16, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a16 = hps.add %m16, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h17 = hps.tanh %a16 : tensor<4x8xf32>
  %m17 = hps.mul %h17, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a17 = hps.add %m17, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h18 = hps.tanh %a17 : tensor<4x8xf32>
  %m18 = hps.mul %h18, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a18 = hps.add %m18, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h19 = hps.tanh %a18 : tensor<4x8xf32>
  %m19 = hps.mul %h19, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a19 = hps.add %m19, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h20 = hps.tanh %a19 : tensor<4x8xf32>
  %m20 = hps.mul %h20, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a20 = hps.add %m20, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h21 = hps.tanh %a20 : tensor<4x8xf32>
  %m21 = hps.mul %h21, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a21 = hps.add %m21, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h22 = hps.tanh %a21 : tensor<4x8xf32>
  %m22 = hps.mul %h22, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a22 = hps.add %m22, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h23 = hps.tanh %a22 : tensor<4x8xf32>
  %m23 = hps.mul %h23, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a23 = hps.add %m23, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h24 = hps.tanh %a23 : tensor<4x8xf32>
  %m24 = hps.mul %h24, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a24 = hps.add %m24, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h25 = hps.tanh %a24 : tensor<4x8xf32>
  %m25 = hps.mul %h25, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a25 = hps.add %m25, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h26 = hps.tanh %a25 : tensor<4x8xf32>
  %m26 = hps.mul %h26, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a26 = hps.add %m26, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h27 = hps.tanh %a26 : tensor<4x8xf32>
  %m27 = hps.mul %h27, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a27 = hps.add %m27, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h28 = hps.tanh %a27 : tensor<4x8xf32>
  %m28 = hps.mul %h28, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a28 = hps.add %m28, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h29 = hps.tanh %a28 : tensor<4x8xf32>
  %m29 = hps.mul %h29, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a29 = hps.add %m29, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h30 = hps.tanh %a29 : tensor<4x8xf32>
  %m30 = hps.mul %h30, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a30 = hps.add %m30, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h31 = hps.tanh %a30 : tensor<4x8xf32>
  %m31 = hps.mul %h31, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a31 = hps.add %m31, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h32 = hps.tanh %a31 : tensor<4x8xf32>
  %m32 = hps.mul %h32, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %a32 = hps.add %m32, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  %h33 = hps.tanh %a32 : tensor<4x8xf32>
  hps.send %h33 to "c1" : tensor<4x8xf32>
  return
}
}

// CHECK:     struct FusedLoop0 {
// CHECK-NOT: struct FusedLoop
// CHECK:     std::unique_ptr<backend::Unary> kUnary[33];
// CHECK:     try {
// CHECK-NEXT: buildKernels0();
// CHECK-NEXT: buildKernels1();
// CHECK-NEXT: } catch (const std::exception &error) {
// CHECK-NEXT: rethrowAtNode(node, error);
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NEXT: {{^ *[}]$}}
// CHECK:     HPS_RUN_ONCE void buildKernels0() {
// CHECK-NEXT: kUnary[0] = std::make_unique<backend::Unary>(ctx, DType::F32, UnaryKind::Tanh, UnaryParams{}, 32);
// CHECK:      kUnary[31] = std::make_unique<backend::Unary>
// CHECK-NEXT: {{^ *[}]$}}
// CHECK:     HPS_RUN_ONCE void buildKernels1() {
// CHECK-NEXT: kUnary[32] = std::make_unique<backend::Unary>
// CHECK-NEXT: {{^ *[}]$}}
// The run is cut the same way, 64 statements to a function; the pointers
// it sets (stage inputs and outputs) are members, so every part sees them.
// CHECK:      void run(const void *const *stageInputs, void *const *stageOutputs) {
// CHECK-NEXT: ctx.enterThread();
// CHECK-NEXT: inputs = stageInputs;
// CHECK-NEXT: outputs = stageOutputs;
// CHECK-NEXT: node = nullptr;
// CHECK-NEXT: try {
// CHECK-NEXT: out0 = stageOutput(outputs[0], arena + 0);
// CHECK-NEXT: runSteps0();
// CHECK-NEXT: runSteps1();
// CHECK-NEXT: ctx.synchronize();
// CHECK-NEXT: } catch (const std::exception &error) {
// CHECK-NEXT: rethrowAtNode(node, error);
// CHECK:      HPS_NOINLINE void runSteps0() {
// CHECK-NEXT: in0 = stageInput(ctx, inputs[0], (arena + 0), 128);
// CHECK-COUNT-31: backend::forEachElement(ctx, FusedLoop0{{[{]}}
// CHECK-NEXT: kUnary[30]->run(
// CHECK-NEXT: backend::forEachElement(ctx, FusedLoop0{{[{]}}
// CHECK-NEXT: {{^ *[}]$}}
// CHECK:      HPS_NOINLINE void runSteps1() {
// CHECK-NEXT: kUnary[31]->run(
// CHECK-NEXT: backend::forEachElement(ctx, FusedLoop0{{[{]}}
// CHECK-NEXT: kUnary[32]->run(static_cast<const void *>((arena + 128)), out0);
// CHECK-NEXT: finishOutput(ctx, outputs[0], out0, 128);
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NOT: FusedLoop
// CHECK:     HPS_DEFINE_STAGE_ENTRY_POINTS(Stage, "stage_0 on cpu.xeon (66 kernels)")
