//===- Tensor.h - Host tensors and their files ------------------*- C++ -*-===//
//
// What the executor exchanges with its caller: dense row-major host
// tensors, read from .npy or ONNX TensorProto (.pb) files and written as
// .npy.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_TENSOR_H
#define HETERPS_RUNTIME_TENSOR_H

#include "heterps/Runtime/Types.h"

#include <string>
#include <utility>
#include <vector>

namespace heterps::rt {

struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<char> data;

  HostTensor() = default;
  HostTensor(DType dtype, Shape shape)
      : dtype(dtype), shape(std::move(shape)),
        data(numElements(this->shape) * dtypeSize(dtype)) {}
  size_t bytes() const { return data.size(); }
};

/// A dense row-major tensor the executor reads in place, without a copy:
/// a HostTensor's, or a caller's own memory (the Python bindings' NumPy
/// arrays), which the caller keeps alive and unchanged during the run.
struct TensorView {
  DType dtype = DType::F32;
  Shape shape;
  const char *data = nullptr;

  TensorView() = default;
  TensorView(DType dtype, Shape shape, const char *data)
      : dtype(dtype), shape(std::move(shape)), data(data) {}
  // Implicit: every HostTensor can be read in place.
  TensorView(const HostTensor &tensor) // NOLINT(google-explicit-constructor)
      : dtype(tensor.dtype), shape(tensor.shape), data(tensor.data.data()) {}
  size_t bytes() const { return numElements(shape) * dtypeSize(dtype); }
};

/// Views of `tensors`, in order.
std::vector<TensorView> viewsOf(const std::vector<HostTensor> &tensors);

/// Reads a .npy (format 1-3, little-endian, C order) or an ONNX TensorProto
/// (.pb) file, chosen by content. Throws Error naming the file and what is
/// wrong with it.
HostTensor readTensorFile(const std::string &path);
/// Throws Error unless `path` is a regular file (or does not exist, which
/// opening it reports): a FIFO or a device (/dev/zero) would be read, or
/// waited on, for ever.
void requireRegularTensorFile(const std::string &path);

/// What a .npy header says.
struct NpyHeader {
  DType dtype = DType::F32;
  Shape shape;
  bool fortranOrder = false;
  /// Where the elements start in the file.
  uint64_t dataOffset = 0;
};

/// A .npy file's elements in row-major order without reading them: the file
/// is mapped read-only and pages come in as samples are touched, so arrays
/// larger than memory can feed training. (A Fortran-ordered array of rank 2
/// or more is read and reordered instead.) Move-only.
class MappedNpy {
public:
  /// Throws Error naming the file when it cannot be opened or mapped or is
  /// not a valid .npy file.
  static MappedNpy open(const std::string &path);
  MappedNpy() = default;
  MappedNpy(MappedNpy &&other) noexcept;
  MappedNpy &operator=(MappedNpy &&other) noexcept;
  MappedNpy(const MappedNpy &) = delete;
  MappedNpy &operator=(const MappedNpy &) = delete;
  ~MappedNpy();

  DType dtype = DType::F32;
  Shape shape;
  const char *data() const { return begin; }
  uint64_t bytes() const { return byteCount; }
  /// Samples will be read out of order (shuffling): no read-ahead.
  void adviseRandomAccess() const;
  /// Runs `read`, which reads data(), and turns the bus error of a mapping
  /// whose file shrank under it (truncated or rewritten in place during a
  /// run) into an Error naming the file. `read` may throw, but must hold no
  /// object with a destructor while it reads: a bus error leaves its frames
  /// without unwinding them.
  template <typename Read> void guardedRead(Read &&read) const {
    guardedRead(
        [](void *context) { (*static_cast<decltype(&read)>(context))(); },
        &read);
  }

private:
  void guardedRead(void (*read)(void *), void *context) const;
  void release();
  std::string path;
  std::vector<char> owned;
  const char *begin = nullptr;
  uint64_t byteCount = 0;
  void *mapping = nullptr;
  uint64_t mappedBytes = 0;
};

/// `name` with characters outside [A-Za-z0-9_-.] replaced by '_' (ONNX
/// names may hold '/' or ':'; file systems and the parameter server may
/// not), never "", "." or "..": the file name of an output or parameter.
std::string safeFileName(const std::string &name);

/// Writes `tensor` as .npy, atomically (a temporary file renamed into place).
void writeNpy(const std::string &path, const HostTensor &tensor);

/// .npy files written together: all of them or, when one fails, none. Each
/// is written beside its path (path.partial) and all are moved into place
/// by commit(); files not committed are removed, and the files they would
/// have replaced stay as they were.
class NpyFileSet {
public:
  NpyFileSet() = default;
  ~NpyFileSet();
  NpyFileSet(const NpyFileSet &) = delete;
  NpyFileSet &operator=(const NpyFileSet &) = delete;

  /// Throws Error naming `path` when it cannot be written.
  void write(const std::string &path, const HostTensor &tensor);
  void commit();

private:
  std::vector<std::pair<std::string, std::string>> staged; // temporary, path
};

} // namespace heterps::rt

#endif // HETERPS_RUNTIME_TENSOR_H
