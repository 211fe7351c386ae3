//===- TensorFiles.cpp - .npy and TensorProto files -----------------------===//

#include "heterps/Runtime/Tensor.h"

#include <onnx/onnx_pb.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

namespace heterps::rt {
namespace {

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream contents;
  contents << in.rdbuf();
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

HostTensor parseNpy(const std::string &path, const std::string &bytes) {
  auto bad = [&](const std::string &why) {
    return Error("'" + path + "' is not a valid .npy file: " + why);
  };
  if (bytes.size() < 10)
    throw bad("too short");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(bytes[8]) |
                   static_cast<unsigned char>(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      throw bad("too short");
    headerLength = 0;
    for (int i = 3; i >= 0; --i)
      headerLength =
          headerLength << 8 | static_cast<unsigned char>(bytes[8 + i]);
    headerStart = 12;
  } else {
    throw bad("unknown format version " + std::to_string(major));
  }
  if (headerStart + headerLength > bytes.size())
    throw bad("header runs past the end of the file");
  std::string header = bytes.substr(headerStart, headerLength);
  std::smatch match;
  if (!std::regex_search(header, match,
                         std::regex("'descr'\\s*:\\s*'([^']*)'")))
    throw bad("no 'descr' in the header");
  std::string descr = match[1];
  if (descr.size() == 3 && descr[0] == '=')
    descr[0] = '<';
  HostTensor tensor;
  bool known = false;
  for (const NpyType &type : kNpyTypes)
    if (descr == type.descr ||
        (descr[0] == '|' &&
         descr.substr(1) == std::string(type.descr).substr(1)))
      tensor.dtype = type.dtype, known = true;
  if (!known)
    throw bad("element type '" + descr +
              "' is not supported (little-endian numeric or bool only)");
  // numpy saves a transposed (Fortran-contiguous) array in column-major
  // order; it is read back into row-major order below.
  const bool fortranOrder =
      std::regex_search(header, match,
                        std::regex("'fortran_order'\\s*:\\s*(True|False)")) &&
      match[1] == "True";
  if (!std::regex_search(header, match,
                         std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)")))
    throw bad("no 'shape' in the header");
  std::string dims = match[1];
  std::regex number("[0-9]+");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), number);
       it != std::sregex_iterator(); ++it)
    tensor.shape.push_back(std::stoll(it->str()));
  size_t expected = numElements(tensor.shape) * dtypeSize(tensor.dtype);
  size_t dataStart = headerStart + headerLength;
  if (bytes.size() - dataStart != expected)
    throw bad("holds " + std::to_string(bytes.size() - dataStart) +
              " data bytes but shape " + shapeString(tensor.shape) + " of " +
              dtypeName(tensor.dtype) + " needs " + std::to_string(expected));
  tensor.data.assign(bytes.begin() + dataStart, bytes.end());
  if (fortranOrder && tensor.shape.size() > 1)
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
  for (int64_t dim : proto.dims())
    tensor.shape.push_back(dim);
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

HostTensor readTensorFile(const std::string &path) {
  std::string bytes = readAll(path);
  if (bytes.size() >= 6 && bytes.compare(0, 6, "\x93NUMPY") == 0)
    return parseNpy(path, bytes);
  return parseTensorProto(path, bytes);
}

void writeNpy(const std::string &path, const HostTensor &tensor) {
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
    if (!out.flush())
      throw Error("cannot write '" + path + "': " + std::strerror(errno));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw Error("cannot write '" + path + "': " + std::strerror(errno));
  }
}

} // namespace heterps::rt
