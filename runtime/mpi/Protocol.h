//===- Protocol.h - Messages between workers and parameter-server shards ===//
//
// A request is one MPI message on the job's parameter-server communicator:
// its tag is the operation, its bytes a sequence of fields in host byte
// order (the ranks of a job run the same binary on the same architecture).
// Strings and arrays are length-prefixed (u32 for strings, u64 for arrays),
// so a message is self-describing and a truncated one is detected. The
// reply carries the tag kReply and starts with a status byte: 0 and the
// operation's result, or 1 and the shard's error text.
//
// Private to heterps_rt_mpi (and its unit tests).
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_MPI_PROTOCOL_H
#define HETERPS_RUNTIME_MPI_PROTOCOL_H

#include "heterps/Runtime/ParameterServer.h"
#include "heterps/Runtime/Types.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace heterps::rt::mpi {

/// Request tags. Values are part of the protocol: append, never renumber.
enum Op : int {
  kCreateTable = 1,    // SparseTableConfig -> ()
  kCreateDense = 2,    // name, OptimizerConfig, f32[] -> ()
  kPull = 3,           // table, u64[] keys -> f32[] rows
  kPush = 4,           // table, u64[] keys, f32[] gradients -> ()
  kPullDense = 5,      // name -> f32[]
  kPushDense = 6,      // name, f32[] -> ()
  kEndStep = 7,        // () -> () once every worker's step is applied
  kReadRows = 8,       // table, u64[] keys -> per key u8 present [, f32[] row]
  kReadDense = 9,      // name -> f32[] values and state
  kRowCount = 10,      // table -> u64
  kSave = 11,          // directory -> ()
  kLoad = 12,          // u32 n, n part directories -> ()
  kGoodbye = 13,       // () -> no reply; the worker is done
  kPullDenseMany = 14, // u32 n, n names -> n f32[]
  kPushDenseMany = 15, // u32 n, n (name, f32[]) -> ()
  kPeek = 16,          // table, u64[] keys -> f32[] rows (none created)
  kLearningRateScale = 17, // f32 scale -> ()
  kResumedAtStep = 18,     // i64 step -> ()
  kReply = 100,
};

const char *opName(int op);

class MessageWriter {
public:
  template <typename T> void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    append(&value, sizeof(T));
  }
  void putString(const std::string &text) {
    put<uint32_t>(static_cast<uint32_t>(text.size()));
    append(text.data(), text.size());
  }
  template <typename T> void putArray(const T *values, size_t count) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint64_t>(count);
    append(values, count * sizeof(T));
  }
  template <typename T> void putArray(const std::vector<T> &values) {
    putArray(values.data(), values.size());
  }
  void putOptimizer(const ps::OptimizerConfig &config);
  void putTableConfig(const ps::SparseTableConfig &config);

  std::vector<char> &bytes() { return buffer; }

private:
  void append(const void *data, size_t size) {
    const char *begin = static_cast<const char *>(data);
    buffer.insert(buffer.end(), begin, begin + size);
  }
  std::vector<char> buffer;
};

/// Reads what a MessageWriter wrote; throws Error naming the message when
/// it is shorter than its fields say.
class MessageReader {
public:
  MessageReader(const char *data, size_t size, std::string what)
      : data(data), size(size), what(std::move(what)) {}
  explicit MessageReader(const std::vector<char> &bytes, std::string what)
      : MessageReader(bytes.data(), bytes.size(), std::move(what)) {}

  template <typename T> T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    take(&value, sizeof(T));
    return value;
  }
  std::string getString() {
    std::string text(get<uint32_t>(), '\0');
    take(text.data(), text.size());
    return text;
  }
  template <typename T> std::vector<T> getArray() {
    const uint64_t count = get<uint64_t>();
    if (count > (size - position) / sizeof(T))
      throw truncated();
    std::vector<T> values(count);
    take(values.data(), count * sizeof(T));
    return values;
  }
  /// An array of exactly `count` values into `out`.
  template <typename T> void getArrayInto(T *out, size_t count) {
    if (get<uint64_t>() != count)
      throw Error(what + " holds " + "an array of the wrong length");
    take(out, count * sizeof(T));
  }
  ps::OptimizerConfig getOptimizer();
  ps::SparseTableConfig getTableConfig();
  bool atEnd() const { return position == size; }

private:
  Error truncated() const {
    return Error(what + " is truncated (" + std::to_string(size) + " bytes)");
  }
  void take(void *out, size_t bytes) {
    if (bytes > size - position)
      throw truncated();
    if (bytes)
      std::memcpy(out, data + position, bytes);
    position += bytes;
  }
  const char *data;
  size_t size;
  size_t position = 0;
  std::string what;
};

} // namespace heterps::rt::mpi

#endif // HETERPS_RUNTIME_MPI_PROTOCOL_H
