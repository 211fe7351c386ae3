//===- TensorFiles.cpp - .npy and TensorProto files -----------------------===//

#include "heterps/Runtime/StableHash.h"
#include "heterps/Runtime/Tensor.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <csetjmp>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <optional>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace heterps::rt {
namespace {

std::string readAll(const std::string &path) {
  requireRegularTensorFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (contents.str().empty())
    throw Error("'" + path + "' is empty; give a .npy or TensorProto file");
  return contents.str();
}

/// numpy's dtype descriptors.
struct NpyType {
  const char *descr;
  DType dtype;
};
constexpr NpyType kNpyTypes[] = {
    {"<f4", DType::F32}, {"<f8", DType::F64}, {"<f2", DType::F16},
    {"|i1", DType::I8},  {"|u1", DType::U8},  {"<i2", DType::I16},
    {"<u2", DType::U16}, {"<i4", DType::I32}, {"<u4", DType::U32},
    {"<i8", DType::I64}, {"<u8", DType::U64}, {"|b1", DType::Bool},
};

/// The elements of a column-major array of `shape` (first index fastest)
/// in row-major order.
std::vector<char> toRowMajor(const std::vector<char> &columnMajor,
                             const Shape &shape, size_t elementSize) {
  const size_t rank = shape.size();
  std::vector<int64_t> strides(rank, 1); // column-major, in elements
  for (size_t d = 1; d < rank; ++d)
    strides[d] = strides[d - 1] * shape[d - 1];
  std::vector<char> rowMajor(columnMajor.size());
  std::vector<int64_t> index(rank, 0);
  const size_t count = columnMajor.size() / elementSize;
  for (size_t linear = 0; linear < count; ++linear) {
    int64_t source = 0;
    for (size_t d = 0; d < rank; ++d)
      source += index[d] * strides[d];
    std::memcpy(&rowMajor[linear * elementSize],
                &columnMajor[static_cast<size_t>(source) * elementSize],
                elementSize);
    // The next row-major index: the last axis fastest.
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return rowMajor;
}

/// The header of a .npy file whose first bytes are `prefix` (at least the
/// whole header; the data may follow). `fileBytes` is the file's size, to
/// check that the data is all there.
/// The longest .npy header read: numpy's own max_header_size.
constexpr size_t kMaxNpyHeader = 10000;

NpyHeader parseNpyHeader(const std::string &path, const std::string &prefix,
                         uint64_t fileBytes) {
  auto bad = [&](const std::string &why) {
    return Error("'" + path + "' is not a valid .npy file: " + why);
  };
  if (prefix.size() < 10)
    throw bad("too short");
  unsigned major = static_cast<unsigned char>(prefix[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(prefix[8]) |
                   static_cast<unsigned char>(prefix[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (prefix.size() < 12)
      throw bad("too short");
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength =
          headerLength << 8 | static_cast<unsigned char>(prefix[8 + i]);
    headerStart = 12;
  } else {
    throw bad("unknown format version " + std::to_string(major));
  }
  // numpy itself reads headers of at most 10,000 bytes (max_header_size).
  if (headerLength > kMaxNpyHeader)
    throw bad("header of " + std::to_string(headerLength) +
              " bytes is longer than numpy reads (" +
              std::to_string(kMaxNpyHeader) + ")");
  if (headerStart + headerLength > prefix.size())
    throw bad("header runs past the end of the file");
  const std::string header = prefix.substr(headerStart, headerLength);
  // The header is a Python dict literal of exactly numpy's three keys:
  // {'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }. Read as
  // numpy reads it, so that a key given twice or an odd value is refused
  // instead of half-read.
  size_t at = 0;
  auto blanks = [&] {
    while (at < header.size() &&
           std::isspace(static_cast<unsigned char>(header[at])))
      ++at;
  };
  auto expect = [&](char c, const char *where) {
    blanks();
    if (at >= header.size() || header[at] != c)
      throw bad(std::string("header: expected '") + c + "' " + where);
    ++at;
  };
  auto quoted = [&](const char *what) {
    blanks();
    if (at >= header.size() || (header[at] != '\'' && header[at] != '"'))
      throw bad(std::string("header: expected a quoted ") + what);
    const char quote = header[at++];
    const size_t end = header.find(quote, at);
    if (end == std::string::npos)
      throw bad(std::string("header: unterminated ") + what);
    std::string text = header.substr(at, end - at);
    at = end + 1;
    return text;
  };
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<std::vector<int64_t>> dims;
  uint64_t expected = 0;
  NpyHeader parsed;
  expect('{', "at its start");
  for (blanks(); at < header.size() && header[at] != '}'; blanks()) {
    const std::string key = quoted("key");
    expect(':', "after a key");
    blanks();
    if (key == "descr") {
      if (descr)
        throw bad("header: 'descr' given twice");
      descr = quoted("'descr'");
    } else if (key == "fortran_order") {
      if (fortran)
        throw bad("header: 'fortran_order' given twice");
      if (header.compare(at, 4, "True") == 0)
        fortran = true, at += 4;
      else if (header.compare(at, 5, "False") == 0)
        fortran = false, at += 5;
      else
        throw bad("header: 'fortran_order' is neither True nor False");
    } else if (key == "shape") {
      if (dims)
        throw bad("header: 'shape' given twice");
      expect('(', "to start 'shape'");
      dims.emplace();
      for (blanks(); at < header.size() && header[at] != ')'; blanks()) {
        int64_t extent = -1;
        const auto [end, status] = std::from_chars(
            header.data() + at, header.data() + header.size(), extent);
        if (status != std::errc() || extent < 0) {
          const size_t stop = header.find_first_of(",)", at);
          throw bad("has a bad extent " +
                    header.substr(at, stop == std::string::npos
                                          ? std::string::npos
                                          : stop - at) +
                    " in its shape");
        }
        at = end - header.data();
        dims->push_back(extent);
        blanks();
        if (at < header.size() && header[at] == ',')
          ++at;
      }
      expect(')', "to end 'shape'");
    } else {
      throw bad("header: unknown key '" + key + "'");
    }
    blanks();
    if (at < header.size() && header[at] == ',')
      ++at;
  }
  expect('}', "at its end");
  if (!descr)
    throw bad("no 'descr' in the header");
  if (!fortran)
    throw bad("no 'fortran_order' in the header");
  if (!dims)
    throw bad("no 'shape' in the header");
  std::string type = *descr;
  if (type.size() == 3 && type[0] == '=')
    type[0] = '<';
  bool known = false;
  for (const NpyType &candidate : kNpyTypes)
    if (type == candidate.descr ||
        (!type.empty() && type[0] == '|' &&
         type.substr(1) == std::string(candidate.descr).substr(1)))
      parsed.dtype = candidate.dtype, known = true;
  if (!known)
    throw bad("element type '" + *descr +
              "' is not supported (little-endian numeric or bool only)");
  // numpy saves a transposed (Fortran-contiguous) array in column-major
  // order.
  parsed.fortranOrder = *fortran;
  expected = dtypeSize(parsed.dtype);
  for (int64_t extent : *dims) {
    if (__builtin_mul_overflow(expected, uint64_t(extent), &expected))
      throw bad("has a shape too large to hold");
    parsed.shape.push_back(extent);
  }
  parsed.dataOffset = headerStart + headerLength;
  if (fileBytes - parsed.dataOffset != expected)
    throw bad("holds " + std::to_string(fileBytes - parsed.dataOffset) +
              " data bytes but shape " + shapeString(parsed.shape) + " of " +
              dtypeName(parsed.dtype) + " needs " + std::to_string(expected));
  return parsed;
}

HostTensor parseNpy(const std::string &path, const std::string &bytes) {
  NpyHeader header = parseNpyHeader(path, bytes, bytes.size());
  HostTensor tensor;
  tensor.dtype = header.dtype;
  tensor.shape = header.shape;
  tensor.data.assign(bytes.begin() + header.dataOffset, bytes.end());
  if (header.fortranOrder && tensor.shape.size() > 1)
    tensor.data =
        toRowMajor(tensor.data, tensor.shape, dtypeSize(tensor.dtype));
  return tensor;
}

DType fromOnnx(int type, const std::string &path) {
  switch (type) {
  case onnx::TensorProto::FLOAT:
    return DType::F32;
  case onnx::TensorProto::DOUBLE:
    return DType::F64;
  case onnx::TensorProto::FLOAT16:
    return DType::F16;
  case onnx::TensorProto::BFLOAT16:
    return DType::BF16;
  case onnx::TensorProto::INT8:
    return DType::I8;
  case onnx::TensorProto::UINT8:
    return DType::U8;
  case onnx::TensorProto::INT16:
    return DType::I16;
  case onnx::TensorProto::UINT16:
    return DType::U16;
  case onnx::TensorProto::INT32:
    return DType::I32;
  case onnx::TensorProto::UINT32:
    return DType::U32;
  case onnx::TensorProto::INT64:
    return DType::I64;
  case onnx::TensorProto::UINT64:
    return DType::U64;
  case onnx::TensorProto::BOOL:
    return DType::Bool;
  default:
    throw Error("'" + path + "': TensorProto element type " +
                std::to_string(type) + " is not supported");
  }
}

template <typename To, typename From>
void copyConverted(std::vector<char> &out, const From &values) {
  out.resize(values.size() * sizeof(To));
  To *dst = reinterpret_cast<To *>(out.data());
  for (int i = 0; i < values.size(); ++i)
    dst[i] = static_cast<To>(values.Get(i));
}

HostTensor parseTensorProto(const std::string &path, const std::string &bytes) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    throw Error("'" + path +
                "' is neither a .npy file nor an ONNX TensorProto");
  HostTensor tensor;
  tensor.dtype = fromOnnx(proto.data_type(), path);
  // The byte count below must not wrap (a 20-byte file of dims 2^62 x 4
  // needed "0" bytes and was copied from as if it held them).
  uint64_t byteCount = dtypeSize(tensor.dtype);
  for (int64_t dim : proto.dims()) {
    if (dim < 0)
      throw Error("'" + path + "': TensorProto dim " +
                  std::to_string(tensor.shape.size()) + " is " +
                  std::to_string(dim) + ", below 0");
    if (__builtin_mul_overflow(byteCount, uint64_t(dim), &byteCount))
      throw Error("'" + path + "': TensorProto has a shape too large to hold");
    tensor.shape.push_back(dim);
  }
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    throw Error("'" + path + "': external tensor data is not supported");
  if (!proto.raw_data().empty()) {
    tensor.data.assign(proto.raw_data().begin(), proto.raw_data().end());
  } else {
    switch (tensor.dtype) {
    case DType::F32:
      copyConverted<float>(tensor.data, proto.float_data());
      break;
    case DType::F64:
      copyConverted<double>(tensor.data, proto.double_data());
      break;
    case DType::I64:
      copyConverted<int64_t>(tensor.data, proto.int64_data());
      break;
    case DType::U32:
    case DType::U64:
      if (tensor.dtype == DType::U32)
        copyConverted<uint32_t>(tensor.data, proto.uint64_data());
      else
        copyConverted<uint64_t>(tensor.data, proto.uint64_data());
      break;
    case DType::I32:
      copyConverted<int32_t>(tensor.data, proto.int32_data());
      break;
    case DType::I16:
      copyConverted<int16_t>(tensor.data, proto.int32_data());
      break;
    case DType::U16:
    case DType::F16:
    case DType::BF16:
      copyConverted<uint16_t>(tensor.data, proto.int32_data());
      break;
    case DType::I8:
      copyConverted<int8_t>(tensor.data, proto.int32_data());
      break;
    case DType::U8:
    case DType::Bool:
      copyConverted<uint8_t>(tensor.data, proto.int32_data());
      break;
    }
  }
  size_t expected = numElements(tensor.shape) * dtypeSize(tensor.dtype);
  if (tensor.data.size() != expected)
    throw Error("'" + path + "': TensorProto holds " +
                std::to_string(tensor.data.size()) + " bytes but shape " +
                shapeString(tensor.shape) + " needs " +
                std::to_string(expected));
  return tensor;
}

} // namespace

void requireRegularTensorFile(const std::string &path) {
  try {
    requireRegularFile(path);
  } catch (const Error &error) {
    throw Error(std::string(error.what()) +
                "; give a .npy or TensorProto file");
  }
}

std::vector<TensorView> viewsOf(const std::vector<HostTensor> &tensors) {
  return std::vector<TensorView>(tensors.begin(), tensors.end());
}

HostTensor readTensorFile(const std::string &path) {
  std::string bytes = readAll(path);
  if (bytes.size() >= 6 && bytes.compare(0, 6, "\x93NUMPY") == 0)
    return parseNpy(path, bytes);
  return parseTensorProto(path, bytes);
}

std::string safeFileName(const std::string &name) {
  std::string safe;
  for (char c : name)
    safe += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
                    c == '-' || c == '.'
                ? c
                : '_';
  if (safe.empty() || safe[0] == '.')
    safe = "_" + safe;
  // A file name holds at most 255 bytes, with room for ".npy.partial" and
  // a "_N" of names that collide: a longer one keeps its first 160
  // characters and a hash of the whole name.
  if (safe.size() > 200)
    safe = safe.substr(0, 160) + "-" + stableHashText(name);
  return safe;
}

namespace {

/// Writes `tensor` as .npy to `path` + ".partial" and returns that name; on
/// failure removes it and throws naming `path`.
std::string writeNpyBeside(const std::string &path, const HostTensor &tensor) {
  const char *descr = nullptr;
  for (const NpyType &type : kNpyTypes)
    if (type.dtype == tensor.dtype)
      descr = type.descr;
  if (!descr)
    throw Error("cannot write " + std::string(dtypeName(tensor.dtype)) +
                " tensors as .npy");
  std::string shape;
  for (int64_t dim : tensor.shape)
    shape += std::to_string(dim) + ", ";
  if (tensor.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (tensor.shape.size() == 1)
    shape.resize(shape.size() - 1);
  std::string header = "{'descr': '" + std::string(descr) +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // The data starts 64-byte aligned; the header ends with a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out)
      throw Error("cannot write '" + path + "': " + std::strerror(errno));
    out.write("\x93NUMPY\x01\x00", 8);
    char length[2] = {static_cast<char>(header.size() & 0xff),
                      static_cast<char>(header.size() >> 8)};
    out.write(length, 2);
    out << header;
    out.write(tensor.data.data(), tensor.data.size());
    if (!out.flush()) {
      const int reason = errno;
      out.close();
      std::remove(temporary.c_str());
      throw Error("cannot write '" + path + "': " + std::strerror(reason));
    }
  }
  return temporary;
}

void moveIntoPlace(const std::string &temporary, const std::string &path) {
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int reason = errno;
    std::remove(temporary.c_str());
    throw Error("cannot write '" + path + "': " + std::strerror(reason));
  }
}

} // namespace

void writeNpy(const std::string &path, const HostTensor &tensor) {
  moveIntoPlace(writeNpyBeside(path, tensor), path);
}

NpyFileSet::~NpyFileSet() {
  for (const auto &[temporary, path] : staged)
    std::remove(temporary.c_str());
}

void NpyFileSet::write(const std::string &path, const HostTensor &tensor) {
  for (const auto &entry : staged)
    if (entry.second == path)
      throw Error("'" + path + "' is written twice");
  staged.emplace_back(writeNpyBeside(path, tensor), path);
}

void NpyFileSet::commit() {
  // What would make a rename fail is checked before the first: a path
  // taken by a directory or other non-file.
  for (const auto &[temporary, path] : staged) {
    struct stat status {};
    if (::lstat(path.c_str(), &status) == 0 && !S_ISREG(status.st_mode))
      throw Error("cannot write '" + path + "': it exists and is not a file");
  }
  // A rename that still fails leaves the rest to the destructor (removing
  // a temporary already moved into place finds nothing).
  for (const auto &[temporary, path] : staged)
    moveIntoPlace(temporary, path);
  staged.clear();
}

/// Enough for any header numpy reads (kMaxNpyHeader).
constexpr size_t kMaxNpyPrefix = 1 << 16;

namespace {

/// Where a bus error inside MappedNpy::guardedRead on this thread returns.
thread_local sigjmp_buf *busErrorReturn = nullptr;
struct sigaction busErrorPrevious {};

void onBusError(int, siginfo_t *, void *) {
  if (busErrorReturn)
    siglongjmp(*busErrorReturn, 1);
  // Not a guarded read: the previous disposition takes the fault when the
  // access runs again.
  ::sigaction(SIGBUS, &busErrorPrevious, nullptr);
}

void installBusErrorHandler() {
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_sigaction = onBusError;
    // SA_NODEFER: the handler leaves by siglongjmp without restoring the
    // signal mask (a syscall per guarded read otherwise), so SIGBUS must
    // not be blocked while it runs.
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    return ::sigaction(SIGBUS, &action, &busErrorPrevious) == 0;
  }();
  (void)installed;
}

} // namespace

void MappedNpy::guardedRead(void (*read)(void *), void *context) const {
  if (!mapping) {
    read(context);
    return;
  }
  installBusErrorHandler();
  sigjmp_buf target;
  sigjmp_buf *const outer = busErrorReturn;
  if (sigsetjmp(target, /*savemask=*/0) != 0) {
    busErrorReturn = outer;
    throw Error("'" + path +
                "' shrank while it was being read (truncated or rewritten "
                "in place during the run; it held " +
                std::to_string(mappedBytes) +
                " bytes when opened): keep data files unchanged while a run "
                "reads them, or write new data to a new file");
  }
  busErrorReturn = &target;
  try {
    read(context);
  } catch (...) {
    busErrorReturn = outer;
    throw;
  }
  busErrorReturn = outer;
}

MappedNpy MappedNpy::open(const std::string &path) {
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (descriptor < 0)
    throw Error("cannot open '" + path + "': " + std::strerror(errno));
  struct stat status {};
  if (::fstat(descriptor, &status) != 0) {
    const int saved = errno;
    ::close(descriptor);
    throw Error("cannot read '" + path + "': " + std::strerror(saved));
  }
  const uint64_t fileBytes = static_cast<uint64_t>(status.st_size);
  std::string prefix(std::min<uint64_t>(fileBytes, kMaxNpyPrefix), '\0');
  const ssize_t got = ::pread(descriptor, prefix.data(), prefix.size(), 0);
  if (got < 0 || static_cast<size_t>(got) != prefix.size()) {
    const int saved = errno;
    ::close(descriptor);
    throw Error("cannot read '" + path +
                "': " + (got < 0 ? std::strerror(saved) : "short read"));
  }
  MappedNpy array;
  array.path = path;
  NpyHeader header;
  try {
    if (prefix.size() < 6 || prefix.compare(0, 6, "\x93NUMPY") != 0)
      throw Error("'" + path +
                  "' is not a .npy file (it does not start with \\x93NUMPY; "
                  "write it with numpy.save)");
    header = parseNpyHeader(path, prefix, fileBytes);
  } catch (...) {
    ::close(descriptor);
    throw;
  }
  array.dtype = header.dtype;
  array.shape = header.shape;
  array.byteCount = fileBytes - header.dataOffset;
  if (header.fortranOrder && header.shape.size() > 1) {
    // Column-major data is reordered in memory; a mapping cannot serve
    // samples from it.
    ::close(descriptor);
    HostTensor whole = readTensorFile(path);
    array.owned = std::move(whole.data);
    array.begin = array.owned.data();
    return array;
  }
  if (array.byteCount > 0) {
    void *mapping =
        ::mmap(nullptr, fileBytes, PROT_READ, MAP_SHARED, descriptor, 0);
    if (mapping == MAP_FAILED) {
      const int saved = errno;
      ::close(descriptor);
      throw Error("cannot map '" + path + "': " + std::strerror(saved));
    }
    array.mapping = mapping;
    array.mappedBytes = fileBytes;
    array.begin = static_cast<const char *>(mapping) + header.dataOffset;
  }
  ::close(descriptor); // the mapping keeps the file
  return array;
}

MappedNpy::MappedNpy(MappedNpy &&other) noexcept { *this = std::move(other); }

MappedNpy &MappedNpy::operator=(MappedNpy &&other) noexcept {
  if (this == &other)
    return *this;
  release();
  dtype = other.dtype;
  shape = std::move(other.shape);
  path = std::move(other.path);
  owned = std::move(other.owned);
  byteCount = other.byteCount;
  mapping = other.mapping;
  mappedBytes = other.mappedBytes;
  begin = other.mapping ? other.begin : owned.data();
  other.mapping = nullptr;
  other.mappedBytes = 0;
  other.begin = nullptr;
  other.byteCount = 0;
  return *this;
}

MappedNpy::~MappedNpy() { release(); }

void MappedNpy::release() {
  if (mapping)
    ::munmap(mapping, mappedBytes);
  mapping = nullptr;
  mappedBytes = 0;
}

void MappedNpy::adviseRandomAccess() const {
  if (mapping)
    ::madvise(mapping, mappedBytes, MADV_RANDOM);
}

} // namespace heterps::rt
