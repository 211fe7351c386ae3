//===- DenseCache.cpp - Dense parameters in the cache's memory ------------===//

#include "heterps/Runtime/DenseCache.h"

#include "Optimizers.h"

#include <cstring>
#include <map>
#include <mutex>

namespace heterps::rt::ps {

DenseCache::~DenseCache() = default;

Error DenseCache::notAdopted(const std::string &name) {
  return Error("dense cache: parameter '" + name + "' was not adopted");
}

void DenseCache::checkReloadedSize(const std::string &name, size_t rowFloats,
                                   size_t reloaded) {
  if (reloaded != rowFloats)
    throw Error("dense cache: '" + name + "' changed size from " +
                std::to_string(rowFloats) + " to " + std::to_string(reloaded) +
                " floats");
}

void DenseCache::checkGradientSize(const std::string &name, size_t count,
                                   size_t size) {
  if (count != size)
    throw Error("dense cache: parameter '" + name + "' has " +
                std::to_string(size) + " values but its gradient has " +
                std::to_string(count));
}

void DenseCache::checkOffsets(const std::string &name,
                              const std::vector<size_t> &offsets, size_t size,
                              size_t stagedFloats) {
  if (offsets.empty())
    throw Error("dense cache: an update of parameter '" + name +
                "' without a staged gradient");
  for (size_t offset : offsets)
    if (offset % (size ? size : 1) != 0 || offset + size > stagedFloats)
      throw Error("dense cache: parameter '" + name +
                  "' has no staged gradient at offset " +
                  std::to_string(offset) + " (" + std::to_string(stagedFloats) +
                  " floats staged)");
}

struct HostDenseCache::Impl {
  explicit Impl(ParameterServer &server) : server(server) {}
  struct Parameter {
    size_t size = 0;
    /// Values, then optimizer state (ParameterServer::readDense's layout).
    std::vector<float> row;
    std::vector<float> staged;
  };
  Parameter &parameter(const std::string &name) {
    auto found = parameters.find(name);
    if (found == parameters.end())
      throw notAdopted(name);
    return found->second;
  }

  ParameterServer &server;
  std::map<std::string, Parameter> parameters;
  /// Stage threads adopt and stage concurrently.
  mutable std::mutex mutex;
  std::vector<float> gradient;
};

HostDenseCache::HostDenseCache(ParameterServer &server)
    : impl(std::make_unique<Impl>(server)) {}
HostDenseCache::~HostDenseCache() = default;

float *HostDenseCache::adopt(const std::string &name) {
  std::lock_guard<std::mutex> lock(impl->mutex);
  auto found = impl->parameters.find(name);
  if (found != impl->parameters.end())
    return found->second.row.data();
  Impl::Parameter parameter;
  parameter.row = impl->server.readDense(name);
  parameter.size = impl->server.pullDense(name).size();
  return impl->parameters.emplace(name, std::move(parameter))
      .first->second.row.data();
}

bool HostDenseCache::adopted(const std::string &name) const {
  std::lock_guard<std::mutex> lock(impl->mutex);
  return impl->parameters.count(name) != 0;
}

size_t HostDenseCache::stageGradient(const std::string &name,
                                     const float *gradient, size_t count) {
  std::lock_guard<std::mutex> lock(impl->mutex);
  Impl::Parameter &parameter = impl->parameter(name);
  checkGradientSize(name, count, parameter.size);
  const size_t offset = parameter.staged.size();
  parameter.staged.insert(parameter.staged.end(), gradient, gradient + count);
  return offset;
}

void HostDenseCache::update(const std::string &name,
                            const std::vector<size_t> &offsets, float divisor) {
  Impl::Parameter &parameter = impl->parameter(name);
  struct Forget {
    std::vector<float> &staged;
    ~Forget() { staged.clear(); }
  } forget{parameter.staged};
  checkOffsets(name, offsets, parameter.size, parameter.staged.size());
  // As TrainingServer::finishStep and ParameterServer::pushDense.
  std::vector<float> &gradient = impl->gradient;
  gradient.assign(parameter.staged.begin() + offsets[0],
                  parameter.staged.begin() + offsets[0] + parameter.size);
  for (size_t k = 1; k < offsets.size(); ++k) {
    const float *values = parameter.staged.data() + offsets[k];
    for (size_t i = 0; i < parameter.size; ++i)
      gradient[i] += values[i];
  }
  for (float &value : gradient)
    value /= divisor;
  applyOptimizer(impl->server.scaledDenseOptimizer(name), parameter.size,
                 parameter.row.data(), parameter.row.data() + parameter.size,
                 gradient.data());
}

void HostDenseCache::discardStaged() {
  std::lock_guard<std::mutex> lock(impl->mutex);
  for (auto &[name, parameter] : impl->parameters)
    parameter.staged.clear();
}

void HostDenseCache::readValues(const std::string &name, float *host) {
  const Impl::Parameter &parameter = impl->parameter(name);
  std::memcpy(host, parameter.row.data(), parameter.size * sizeof(float));
}

void HostDenseCache::writeBack() {
  for (auto &[name, parameter] : impl->parameters)
    impl->server.writeDense(name, parameter.row);
}

void HostDenseCache::reload() {
  // Everything is read before anything changes.
  std::map<std::string, std::vector<float>> rows;
  for (auto &[name, parameter] : impl->parameters) {
    rows[name] = impl->server.readDense(name);
    checkReloadedSize(name, parameter.row.size(), rows[name].size());
  }
  for (auto &[name, parameter] : impl->parameters)
    std::copy(rows[name].begin(), rows[name].end(), parameter.row.begin());
}

} // namespace heterps::rt::ps
