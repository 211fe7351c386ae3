//===- CudaDenseCache.cu - Dense parameters in GPU memory -----------------===//
//
// Built with --fmad=false (runtime/CMakeLists.txt): the optimizer arithmetic
// (OptimizerRules.h) must round as the host's does.
//
//===----------------------------------------------------------------------===//

#include "heterps/Runtime/DenseCache.h"

#include "CudaMemory.cuh"
#include "DenseCacheKernels.h"

#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <vector>

namespace heterps::rt::ps {
namespace {

struct DenseCacheErrors {
  static constexpr const char *name = "dense parameters on the GPU";
  static constexpr const char *memoryHint =
      " (--dense-parameters-on-gpu=false keeps them in host memory)";
};
void check(cudaError_t status, const std::string &what) {
  cuda::check<DenseCacheErrors>(status, what);
}
template <typename T>
using DeviceArray = cuda::DeviceArray<T, DenseCacheErrors>;
using DeviceScope = cuda::DeviceScope<DenseCacheErrors>;

/// The step's update of one dense parameter (DenseCacheKernels.h), a
/// grid-stride loop over its elements.
__global__ void updateDense(float *row, size_t size, const float *staged,
                            const size_t *offsets, size_t count, float divisor,
                            rules::UpdateRule rule) {
  kernels::updateDenseElements(row, size, staged, offsets, count, divisor, rule,
                               blockIdx.x * size_t(blockDim.x) + threadIdx.x,
                               size_t(gridDim.x) * blockDim.x);
}

/// After updateDense: Adam's beta powers one step on.
__global__ void advanceDenseState(float *row, size_t size,
                                  rules::UpdateRule rule) {
  rules::advanceState(row + size, size, rule);
}

class CudaDenseCache : public DenseCache {
public:
  CudaDenseCache(ParameterServer &server, int device)
      : server(server), device(device) {
    stream = cuda::openStream<DenseCacheErrors>(device);
  }
  ~CudaDenseCache() override {
    if (stream)
      cudaStreamDestroy(stream);
  }

  float *adopt(const std::string &name) override {
    std::lock_guard<std::mutex> lock(mutex);
    // Stages read the values in place: they must run on this device.
    int current = 0;
    check(cudaGetDevice(&current), "reading the current device");
    if (current != device)
      throw Error(std::string(DenseCacheErrors::name) +
                  ": a stage on CUDA device " + std::to_string(current) +
                  " asks for '" + name + "', kept on device " +
                  std::to_string(device) +
                  " (one process trains on one GPU; "
                  "--dense-parameters-on-gpu=false reads it from the host)");
    auto found = parameters.find(name);
    if (found != parameters.end())
      return found->second.row.data();
    DeviceScope scope(device);
    Parameter parameter;
    const std::vector<float> row = server.readDense(name);
    parameter.size = server.pullDense(name).size();
    parameter.rowFloats = row.size();
    parameter.row.upload(row.data(), row.size(), stream);
    check(cudaStreamSynchronize(stream),
          "loading dense parameter '" + name + "'");
    return parameters.emplace(name, std::move(parameter))
        .first->second.row.data();
  }

  bool adopted(const std::string &name) const override {
    std::lock_guard<std::mutex> lock(mutex);
    return parameters.count(name) != 0;
  }
  bool onDevice() const override { return true; }

  size_t stageGradient(const std::string &name, const float *gradient,
                       size_t count) override {
    std::lock_guard<std::mutex> lock(mutex);
    DeviceScope scope(device);
    Parameter &parameter = find(name);
    checkGradientSize(name, count, parameter.size);
    const size_t offset = parameter.stagedFloats;
    parameter.staged.grow(offset + count, stream);
    // cudaMemcpyDefault: a GPU stage's buffer or a host stage's gradient.
    if (count)
      check(cudaMemcpyAsync(parameter.staged.data() + offset, gradient,
                            count * sizeof(float), cudaMemcpyDefault, stream),
            "staging the gradient of '" + name + "'");
    // The stage may reuse its buffer once this returns.
    check(cudaStreamSynchronize(stream),
          "staging the gradient of '" + name + "'");
    parameter.stagedFloats = offset + count;
    return offset;
  }

  void update(const std::string &name, const std::vector<size_t> &offsets,
              float divisor) override {
    DeviceScope scope(device);
    Parameter &parameter = find(name);
    struct Forget {
      size_t &floats;
      ~Forget() { floats = 0; }
    } forget{parameter.stagedFloats};
    checkOffsets(name, offsets, parameter.size, parameter.stagedFloats);
    const rules::UpdateRule rule =
        rules::updateRule(server.scaledDenseOptimizer(name));
    if (parameter.size != 0) {
      deviceOffsets.upload(offsets.data(), offsets.size(), stream);
      updateDense<<<cuda::blocksFor(parameter.size, 256), 256, 0, stream>>>(
          parameter.row.data(), parameter.size, parameter.staged.data(),
          deviceOffsets.data(), offsets.size(), divisor, rule);
      check(cudaGetLastError(), "updating '" + name + "'");
    }
    // Adam's powers move on even without values, as on the host.
    advanceDenseState<<<1, 1, 0, stream>>>(parameter.row.data(), parameter.size,
                                           rule);
    check(cudaGetLastError(), "updating '" + name + "'");
    // The next step's stages read the values on their own streams.
    check(cudaStreamSynchronize(stream), "updating '" + name + "'");
  }

  void discardStaged() override {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &[name, parameter] : parameters)
      parameter.stagedFloats = 0;
  }

  void readValues(const std::string &name, float *host) override {
    DeviceScope scope(device);
    Parameter &parameter = find(name);
    parameter.row.download(host, parameter.size, stream);
    check(cudaStreamSynchronize(stream), "reading '" + name + "'");
  }

  void writeBack() override {
    DeviceScope scope(device);
    // Everything is read back before anything is written: a failed copy
    // leaves the server as it was.
    std::map<std::string, std::vector<float>> rows;
    for (auto &[name, parameter] : parameters) {
      std::vector<float> &row = rows[name];
      row.resize(parameter.rowFloats);
      parameter.row.download(row.data(), row.size(), stream);
    }
    check(cudaStreamSynchronize(stream), "reading dense parameters back");
    for (auto &[name, row] : rows)
      server.writeDense(name, row);
  }

  void reload() override {
    DeviceScope scope(device);
    // Same sizes (a checkpoint load checks them), so `row` stays where
    // stages read it.
    std::map<std::string, std::vector<float>> rows;
    for (auto &[name, parameter] : parameters) {
      rows[name] = server.readDense(name);
      checkReloadedSize(name, parameter.rowFloats, rows[name].size());
    }
    for (auto &[name, parameter] : parameters)
      parameter.row.upload(rows[name].data(), rows[name].size(), stream);
    check(cudaStreamSynchronize(stream), "reloading dense parameters");
  }

private:
  struct Parameter {
    size_t size = 0;
    size_t rowFloats = 0; ///< Values, then optimizer state.
    DeviceArray<float> row;
    DeviceArray<float> staged;
    size_t stagedFloats = 0;
  };
  Parameter &find(const std::string &name) {
    auto found = parameters.find(name);
    if (found == parameters.end())
      throw notAdopted(name);
    return found->second;
  }

  ParameterServer &server;
  const int device;
  cudaStream_t stream = nullptr;
  std::map<std::string, Parameter> parameters;
  /// Stage threads adopt and stage concurrently.
  mutable std::mutex mutex;
  DeviceArray<size_t> deviceOffsets;
};

} // namespace

bool cudaDenseCacheBuilt() { return true; }

std::unique_ptr<DenseCache> makeCudaDenseCache(ParameterServer &server,
                                               int device) {
  return std::make_unique<CudaDenseCache>(server, device);
}

} // namespace heterps::rt::ps
