//===- ParameterStore.cpp - What training needs of a parameter server -----===//

#include "heterps/Runtime/ParameterStore.h"

namespace heterps::rt::ps {

ParameterStore::~ParameterStore() = default;

std::vector<std::optional<std::vector<float>>>
ParameterStore::readRows(const std::string &table,
                         const std::vector<uint64_t> &keys) {
  std::vector<std::optional<std::vector<float>>> rows;
  rows.reserve(keys.size());
  for (uint64_t key : keys)
    rows.push_back(readRow(table, key));
  return rows;
}

std::vector<std::vector<float>>
ParameterStore::pullDenseMany(const std::vector<std::string> &names) {
  std::vector<std::vector<float>> values;
  values.reserve(names.size());
  for (const std::string &name : names)
    values.push_back(pullDense(name));
  return values;
}

void ParameterStore::pushDenseMany(
    const std::vector<std::string> &names,
    const std::vector<std::vector<float>> &gradients) {
  for (size_t i = 0; i < names.size(); ++i)
    pushDense(names[i], gradients.at(i));
}

} // namespace heterps::rt::ps
