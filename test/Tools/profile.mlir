// heterps-profile times each distinct layer signature on this CPU with the
// runtime's kernels, as a bundle runs the layer, and writes a profile
// database hps-place reads. Times are never asserted: only that
// every signature has an entry with a positive time.
// RUN: rm -f %t.json
// RUN: heterps-profile %S/Inputs/profile-model.mlir --device-class cpu.epyc2 --batch 64 --threads 1 --repeats 3 -o %t.json | FileCheck %s --check-prefix=TABLE
// RUN: FileCheck %s --check-prefix=JSON < %t.json
// RUN: heterps-opt --hps-place="cluster=%S/../../clusters/local-cpu.yaml throughput=1 strategy=dp batch=64 profile=%t.json" %S/Inputs/profile-model.mlir | FileCheck %s --check-prefix=PLACE
// Layers sharing a signature but not attributes are keyed by name.
// RUN: heterps-profile %S/Inputs/profile-variants.mlir --device-class cpu.host --repeats 1 --threads 1 -o %t.variants.json | FileCheck %s --check-prefix=VTABLE
// RUN: FileCheck %s --check-prefix=VARIANTS < %t.variants.json
// --inference writes the same keys.
// RUN: heterps-profile %S/Inputs/profile-model.mlir --device-class cpu.epyc2 --batch 64 --repeats 1 --threads 1 --inference -o %t.inference.json | FileCheck %s --check-prefix=INFERENCE

// TABLE: layer {{ *}}op {{ *}}ms  signature
// TABLE-NEXT: conv {{ *}}hps.conv {{ *}}[[NUM:[0-9]+\.[0-9]+]]  hps.conv(tensor<?x3x16x16xf32>, tensor<8x3x3x3xf32>)->(tensor<?x8x16x16xf32>)
// TABLE-NEXT: relu {{ *}}hps.relu {{ *}}{{[0-9]+\.[0-9]+}}  hps.relu(
// TABLE-NEXT: relu_again {{ *}}hps.relu {{ *}}{{[0-9]+\.[0-9]+}}  hps.relu(
// TABLE-NEXT: pool {{ *}}hps.max_pool {{ *}}{{[0-9]+\.[0-9]+}}  hps.max_pool(
// A view runs no kernel in a bundle: it costs nothing.
// TABLE-NEXT: flatten {{ *}}hps.reshape {{ *}}0.0000  hps.reshape({{.*}})  (a view: runs no kernel)
// TABLE-NEXT: embedding {{ *}}hps.embedding_lookup {{ *}}{{[0-9]+\.[0-9]+}}  hps.embedding_lookup(
// TABLE-NEXT: concat {{ *}}hps.concat {{ *}}{{[0-9]+\.[0-9]+}}  hps.concat(
// TABLE-NEXT: fc {{ *}}hps.gemm {{ *}}{{[0-9]+\.[0-9]+}}  hps.gemm(
// TABLE-NEXT: prob {{ *}}hps.softmax {{ *}}{{[0-9]+\.[0-9]+}}  hps.softmax(
// The two relus share one entry.
// TABLE-NEXT: # wrote 8 entries to

// Entries are sorted by key; a positive time never prints as 0.
// JSON: "entries": [
// JSON: "batch_size": 64,
// JSON-NEXT: "device_class": "cpu.epyc2",
// JSON-NEXT: "key": "hps.concat(tensor<?x512xf32>, tensor<?x16xf32>)->(tensor<?x528xf32>)",
// JSON-NEXT: "seconds_per_batch": {{[1-9][0-9.]*(e-[0-9]+)?|0\.[0-9]+(e-[0-9]+)?}}
// JSON: "key": "hps.conv(tensor<?x3x16x16xf32>, tensor<8x3x3x3xf32>)->(tensor<?x8x16x16xf32>)",
// JSON-NEXT: "seconds_per_batch": {{[1-9][0-9.]*(e-[0-9]+)?|0\.[0-9]+(e-[0-9]+)?}}
// JSON: "key": "hps.embedding_lookup(tensor<1000x16xf32>, tensor<?x4xi64>)->(tensor<?x16xf32>)",
// JSON-NEXT: "seconds_per_batch": {{[1-9][0-9.]*(e-[0-9]+)?|0\.[0-9]+(e-[0-9]+)?}}
// JSON: "key": "hps.gemm(tensor<?x528xf32>, tensor<528x10xf32>, tensor<10xf32>)->(tensor<?x10xf32>)",
// JSON-NEXT: "seconds_per_batch": {{[1-9][0-9.]*(e-[0-9]+)?|0\.[0-9]+(e-[0-9]+)?}}
// JSON: "key": "hps.max_pool(tensor<?x8x16x16xf32>)->(tensor<?x8x8x8xf32>)",
// JSON-NEXT: "seconds_per_batch": {{[1-9][0-9.]*(e-[0-9]+)?|0\.[0-9]+(e-[0-9]+)?}}
// JSON: "key": "hps.relu(tensor<?x8x16x16xf32>)->(tensor<?x8x16x16xf32>)",
// JSON-NEXT: "seconds_per_batch": {{[1-9][0-9.]*(e-[0-9]+)?|0\.[0-9]+(e-[0-9]+)?}}
// JSON: "key": "hps.reshape(tensor<?x8x8x8xf32>)->(tensor<?x512xf32>)",
// JSON-NEXT: "seconds_per_batch": 0{{$}}
// JSON: "key": "hps.softmax(tensor<?x10xf32>)->(tensor<?x10xf32>)",
// JSON-NEXT: "seconds_per_batch": {{[1-9][0-9.]*(e-[0-9]+)?|0\.[0-9]+(e-[0-9]+)?}}
// JSON: "version": 1

// PLACE: module attributes {hps.plan = {{{.*}}feasible = true
// PLACE: hps.conv {{.*}}device = #hps.device<"cpu.epyc2">

// VTABLE: fc_plain {{ *}}hps.gemm
// VTABLE: fc_transposed {{ *}}hps.gemm
// VTABLE: # wrote 2 entries to
// VARIANTS: "key": "fc_plain",
// VARIANTS: "key": "fc_transposed",
// VARIANTS-NOT: "key": "hps.gemm

// INFERENCE: # {{.*}}: batch 64, 1 repeats, 1 threads; ms per batch (forward){{$}}
// INFERENCE: # wrote 8 entries to
