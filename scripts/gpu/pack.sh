#!/usr/bin/env bash
# Packs a build for a GPU machine that has CUDA (driver, cudart, cuBLAS,
# cuDNN), a C++ compiler and Python with onnxruntime but none of our Debian
# packages: the driver, the runtime libraries, the GPU unit tests and every
# shared library they load except glibc, the C++ runtime and CUDA's own.
# scripts/gpu/check.sh unpacks it there and runs the GPU checks
# (docs/GPU.md).
#
#   scripts/gpu/pack.sh [BUILD_DIR] [OUT_DIR]   (default: build .gpupack)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-.gpupack}
command -v patchelf > /dev/null || { echo "pack.sh: needs patchelf (apt-get install patchelf)" >&2; exit 1; }
[ -x "$build/bin/heterps" ] || { echo "pack.sh: no $build/bin/heterps (build first)" >&2; exit 1; }
[ -f "$build/lib/libheterps_rt_gpu.so" ] || { echo "pack.sh: $build has no GPU runtime (no CUDA toolkit at build time?)" >&2; exit 1; }

staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/bin" "$staging/lib"
cp "$build/bin/heterps" "$staging/bin/"
cp "$build"/lib/libheterps_rt_*.so "$staging/lib/"
for test in heterps_rt_gpu_tests heterps_rt_gpu_pass_cache_tests; do
  [ -x "$build/runtime/$test" ] && cp "$build/runtime/$test" "$staging/bin/"
done
# The machine's own: glibc, the C++ runtime, CUDA (must match its driver).
system='^(libc|libm|libdl|librt|libpthread|ld-linux.*|libstdc\+\+|libgcc_s|libcuda|libcudart|libcublas|libcublasLt|libcudnn.*|libnvidia.*)\.so'
for object in "$staging"/bin/* "$staging"/lib/*; do
  ldd "$object" | awk '/=> \//{print $3}'
done | sort -u | while read -r library; do
  name=$(basename "$library")
  [[ $name =~ $system ]] || cp -L "$library" "$staging/lib/$name"
done
# Each object finds the packed libraries beside it, so nothing needs
# LD_LIBRARY_PATH except CUDA's own (and the compilers that the driver
# starts keep the machine's libraries).
for object in "$staging"/bin/*; do patchelf --set-rpath '$ORIGIN/../lib' "$object"; done
for object in "$staging"/lib/*; do patchelf --set-rpath '$ORIGIN' "$object"; done
mkdir -p "$out"
tar -C "$staging" -cf - bin lib | xz -T0 -9e > "$out/pack.tar.xz"
echo "pack.sh: $out/pack.tar.xz ($(du -h "$out/pack.tar.xz" | cut -f1); $(ls "$staging/lib" | wc -l) libraries)"
