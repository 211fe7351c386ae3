//===- DynamicProgram.cpp - Exact allocation programs ---------------------===//
//
// The seed's dynamic program over jobs x devices, and its multi-dimensional
// form over jobs x (devices of every class) for small capacities:
//   P[j][k] = max(P[j-1][k], max_c score_j(c) + P[j-1][k - g_c]).
// Only two rows of scores are kept; the argmax of every cell is kept for
// backtracking in the narrowest integer that holds the option count.
//
//===----------------------------------------------------------------------===//

#include "AllocatorInternal.h"

#include <cstring>
#include <limits>

using namespace heterps::autoscale;
using namespace heterps::autoscale::detail;

namespace {

/// jobs x states argmax table: 0 = the job gets nothing, i+1 = option i.
/// One byte per cell when every job has fewer than 255 options.
class ChoiceTable {
public:
  ChoiceTable(size_t rows, size_t columns, size_t maxOptions)
      : columns(columns), width(maxOptions < 0xff     ? 1
                                : maxOptions < 0xffff ? 2
                                                      : 4),
        cells(rows * columns * width, 0) {}

  void set(size_t row, size_t column, uint32_t entry) {
    uint8_t *cell = &cells[(row * columns + column) * width];
    if (width == 1)
      *cell = static_cast<uint8_t>(entry);
    else if (width == 2) {
      uint16_t narrow = static_cast<uint16_t>(entry);
      std::memcpy(cell, &narrow, 2);
    } else
      std::memcpy(cell, &entry, 4);
  }

  uint32_t get(size_t row, size_t column) const {
    const uint8_t *cell = &cells[(row * columns + column) * width];
    if (width == 1)
      return *cell;
    if (width == 2) {
      uint16_t narrow;
      std::memcpy(&narrow, cell, 2);
      return narrow;
    }
    uint32_t entry;
    std::memcpy(&entry, cell, 4);
    return entry;
  }

private:
  size_t columns;
  size_t width;
  std::vector<uint8_t> cells;
};

size_t maxOptions(const Problem &problem) {
  size_t most = 0;
  for (const auto &options : problem.options)
    most = std::max(most, options.size());
  return most;
}

} // namespace

int64_t
heterps::autoscale::detail::multiClassStates(const std::vector<int> &capacity) {
  int64_t states = 1;
  for (int c : capacity) {
    int64_t size = static_cast<int64_t>(c < 0 ? 0 : c) + 1;
    if (states > std::numeric_limits<int64_t>::max() / size)
      return std::numeric_limits<int64_t>::max();
    states *= size;
  }
  return states;
}

Picks heterps::autoscale::detail::solveSingleClassExact(
    const Problem &problem) {
  size_t numJobs = problem.options.size();
  size_t capacity = problem.capacity[0];
  Objective objective = problem.objective;
  // P[k]: best score of the jobs so far within k devices.
  std::vector<Score> previous(capacity + 1), current(capacity + 1);
  ChoiceTable argmax(numJobs, capacity + 1, maxOptions(problem));
  for (size_t j = 0; j < numJobs; ++j) {
    const std::vector<Option> &options = problem.options[j];
    if (options.empty())
      continue; // the table's rows stay 0: nothing for this job
    for (size_t k = 0; k <= capacity; ++k) {
      Score best = previous[k];
      uint32_t bestEntry = 0;
      for (size_t o = 0; o < options.size(); ++o) {
        size_t devices = options[o].devices[0];
        if (devices > k)
          continue;
        Score candidate = options[o].score + previous[k - devices];
        if (better(candidate, best, objective)) {
          best = candidate;
          bestEntry = static_cast<uint32_t>(o + 1);
        }
      }
      current[k] = best;
      argmax.set(j, k, bestEntry);
    }
    previous.swap(current);
  }
  Picks picks(numJobs, -1);
  size_t k = capacity;
  for (size_t j = numJobs; j-- > 0;) {
    uint32_t entry = argmax.get(j, k);
    if (entry == 0)
      continue;
    picks[j] = static_cast<int>(entry - 1);
    k -= problem.options[j][entry - 1].devices[0];
  }
  return picks;
}

Picks heterps::autoscale::detail::solveMultiClassExact(const Problem &problem) {
  size_t numJobs = problem.options.size();
  int numClasses = problem.numClasses;
  const std::vector<int> &capacity = problem.capacity;
  Objective objective = problem.objective;
  // Mixed-radix state: s = sum_c k_c * stride_c.
  std::vector<int64_t> stride(numClasses + 1, 1);
  for (int c = 0; c < numClasses; ++c)
    stride[c + 1] = stride[c] * (capacity[c] + 1);
  size_t states = static_cast<size_t>(stride[numClasses]);

  std::vector<Score> previous(states), current(states);
  ChoiceTable argmax(numJobs, states, maxOptions(problem));
  std::vector<int> coordinate(numClasses);
  for (size_t j = 0; j < numJobs; ++j) {
    const std::vector<Option> &options = problem.options[j];
    if (options.empty())
      continue;
    std::vector<int64_t> offset(options.size(), 0);
    for (size_t o = 0; o < options.size(); ++o)
      for (int c = 0; c < numClasses; ++c)
        offset[o] += options[o].devices[c] * stride[c];
    std::fill(coordinate.begin(), coordinate.end(), 0);
    for (size_t s = 0; s < states; ++s) {
      Score best = previous[s];
      uint32_t bestEntry = 0;
      for (size_t o = 0; o < options.size(); ++o) {
        bool fits = true;
        for (int c = 0; c < numClasses && fits; ++c)
          fits = options[o].devices[c] <= coordinate[c];
        if (!fits)
          continue;
        Score candidate = options[o].score + previous[s - offset[o]];
        if (better(candidate, best, objective)) {
          best = candidate;
          bestEntry = static_cast<uint32_t>(o + 1);
        }
      }
      current[s] = best;
      argmax.set(j, s, bestEntry);
      // Next coordinate (odometer, class 0 fastest, matching the strides).
      for (int c = 0; c < numClasses; ++c) {
        if (++coordinate[c] <= capacity[c])
          break;
        coordinate[c] = 0;
      }
    }
    previous.swap(current);
  }
  Picks picks(numJobs, -1);
  size_t s = states - 1;
  for (size_t j = numJobs; j-- > 0;) {
    uint32_t entry = argmax.get(j, s);
    if (entry == 0)
      continue;
    const Option &option = problem.options[j][entry - 1];
    picks[j] = static_cast<int>(entry - 1);
    for (int c = 0; c < numClasses; ++c)
      s -= option.devices[c] * stride[c];
  }
  return picks;
}
