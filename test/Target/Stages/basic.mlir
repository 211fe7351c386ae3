// RUN: rm -rf %t && heterps-translate --hps-to-stages %s -o %t
// RUN: FileCheck %s --check-prefix=CPU --input-file %t/stage_0.cpp
// RUN: FileCheck %s --check-prefix=GPU --input-file %t/stage_1.cu
// RUN: FileCheck %s --check-prefix=MANIFEST --input-file %t/manifest.json

// Two stages: the embedding lookup is a parameter-server pull on the CPU,
// the gemm + relu run on the GPU with the relu fused into the gemm, the
// reshape is free (it shares its input's buffer).
module attributes {hps.plan = {strategy = "dp", feasible = true, throughput = 10.0 : f64}} {
func.func @main(%ids: tensor<8x3xi64> {hps.name = "ids", hps.batched}) -> (tensor<8x4xf32> {hps.name = "out", hps.batched}) attributes {hps.batch = 8 : i64, hps.pipeline = [@stage_0, @stage_1]} {
  hps.send %ids to "c0" : tensor<8x3xi64>
  %r = hps.recv "c2" : tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
func.func @stage_0() attributes {hps.device = #hps.device<"cpu.xeon">, hps.replicas = 2 : i64, hps.stage = 0 : i64} {
  %i = hps.recv "c0" : tensor<8x3xi64>
  %e = hps.ps_pull "table"[%i] {device = #hps.device<"cpu.xeon">, pooling = #hps<embedding_pooling sum>, table_type = tensor<100x16xf32>} : (tensor<8x3xi64>) -> tensor<8x16xf32>
  hps.send %e to "c1" : tensor<8x16xf32>
  return
}
func.func @stage_1() attributes {hps.device = #hps.device<"gpu.v100">, hps.replicas = 1 : i64, hps.stage = 1 : i64} {
  %e = hps.recv "c1" : tensor<8x16xf32>
  %w = hps.weight "fc.w" dense<0.5> : tensor<16x4xf32>
  %f = hps.reshape %e {device = #hps.device<"gpu.v100">, shape = array<i64: 8, 16>} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %h = hps.gemm %f, %w {device = #hps.device<"gpu.v100">} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %o = hps.relu %h {device = #hps.device<"gpu.v100">} : tensor<8x4xf32>
  hps.send %o to "c2" : tensor<8x4xf32>
  return
}
func.func private @table_holder() {
  %t = hps.weight "table" dense<0.25> : tensor<100x16xf32>
  return
}
}

// CPU: #include "heterps/Runtime/StageSupport.h"
// The bytes of its buffers, which the runtime checks against the manifest's
// channels (stage ABI 6): ids i64 8x3 in, rows f32 8x16 out.
// CPU: struct Stage {
// CPU-NEXT: static constexpr std::array<uint64_t, 1> kInputBytes{{[{][{]}}192{{[}][}]}};
// CPU-NEXT: static constexpr std::array<uint64_t, 1> kOutputBytes{{[{][{]}}512{{[}][}]}};
// CPU: static constexpr size_t kArenaBytes = 704;
// CPU: std::unique_ptr<backend::EmbeddingLookup> kEmbeddingLookup[1];
// CPU: char *out0 = nullptr;
// CPU: const char *in0 = nullptr;
// CPU: tables.push_back(stageTable(ctx, config, "table", 6400, tableCopies));
// CPU: buildKernels0();
// CPU: HPS_RUN_ONCE void buildKernels0() {
// CPU: kEmbeddingLookup[0] = std::make_unique<backend::EmbeddingLookup>(ctx, DType::F32, 100, 16, DType::I64, Shape{8, 3}, EmbeddingPooling::Sum);
// The stage's result is written straight into the caller's buffer on the
// CPU (the arena slot serves a GPU), and its input is read in place.
// CPU: out0 = stageOutput(outputs[0], arena + 192);
// CPU: in0 = stageInput(ctx, inputs[0], (arena + 0), 192);
// CPU: kEmbeddingLookup[0]->run(static_cast<const void *>(tables[0]), static_cast<const void *>(in0), out0);
// CPU: finishOutput(ctx, outputs[0], out0, 512);
// CPU: HPS_DEFINE_STAGE_ENTRY_POINTS(Stage, "stage_0 on cpu.xeon (1 kernels)")

// GPU: Compiled by nvcc for the GPU, or as C++ for the CPU
// GPU: static constexpr std::array<uint64_t, 1> kInputBytes{{[{][{]}}512{{[}][}]}};
// GPU-NEXT: static constexpr std::array<uint64_t, 1> kOutputBytes{{[{][{]}}128{{[}][}]}};
// GPU: kGemm[0] = std::make_unique<backend::Gemm>(ctx, DType::F32, 8, 4, 16, false, false, 1.000000000e+00f, 1.000000000e+00f, nullptr, Activation{UnaryKind::Relu}, true);
// GPU-NOT: backend::Unary
// GPU-NOT: backend::Reshape
// GPU: kGemm[0]->run(static_cast<const void *>(in0), static_cast<const void *>((weights + 0)), nullptr, out0);
// GPU: finishOutput(ctx, outputs[0], out0, 128);

// MANIFEST: "batch": 8,
// MANIFEST: "inputs": [
// MANIFEST: "batched": true,
// MANIFEST: "name": "ids",
// MANIFEST: "stages": [
// MANIFEST: "kind": "cpu",
// MANIFEST: "cpu": "stage_0.so"
// MANIFEST: "replicas": 2,
// MANIFEST: "tables": [
// MANIFEST-NEXT: "table"
// MANIFEST: "kind": "gpu",
// MANIFEST: "cpu": "stage_1.cpu.so",
// MANIFEST-NEXT: "gpu": "stage_1.gpu.so"
// MANIFEST: "tables": [
// MANIFEST: "name": "table",
// MANIFEST: "shape": [
// MANIFEST-NEXT: 100,
// MANIFEST-NEXT: 16
