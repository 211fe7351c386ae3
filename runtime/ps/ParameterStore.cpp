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

} // namespace heterps::rt::ps
