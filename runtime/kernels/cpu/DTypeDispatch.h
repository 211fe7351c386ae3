//===- DTypeDispatch.h - Element types as C++ types -------------*- C++ -*-===//
//
// Private to the CPU elementwise and data-movement kernels: the storage and
// compute types of every DType (F16/BF16 are stored as bits and computed in
// float), their conversions, and a switch that calls a generic lambda with
// the DType as a compile-time constant so kernels pick a template instance
// once, in their constructor.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_RUNTIME_KERNELS_CPU_DTYPEDISPATCH_H
#define HETERPS_RUNTIME_KERNELS_CPU_DTYPEDISPATCH_H

#include "heterps/Runtime/Types.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace heterps::rt::cpu {

/// IEEE binary16 bits.
struct Half {
  uint16_t bits;
};
/// bfloat16 bits (the high half of a float).
struct BFloat16 {
  uint16_t bits;
};

inline float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}
inline uint32_t floatToBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) // inf / nan
    return bitsToFloat(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {
    // Zero or subnormal: exact as mantissa * 2^-24.
    float value = float(mantissa) * (1.0f / 16777216.0f);
    return sign ? -value : value;
  }
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

/// Round to nearest even, overflow to infinity, NaN stays NaN.
inline uint16_t floatToHalf(float f) {
  uint32_t x = floatToBits(f);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t absBits = x & 0x7fffffff;
  if (absBits >= 0x7f800000) // inf / nan
    return sign | 0x7c00 | (absBits > 0x7f800000 ? 0x200 : 0);
  if (absBits >= 0x477ff000) // rounds to >= 65520: infinity
    return sign | 0x7c00;
  if (absBits < 0x38800000) {
    // Subnormal half (or zero): add 0.5 so that the float adder rounds the
    // mantissa to 2^-24 units with ties to even.
    float value = bitsToFloat(absBits) + 0.5f;
    return sign | uint16_t(floatToBits(value) - 0x3f000000);
  }
  uint32_t mantissaOdd = (absBits >> 13) & 1;
  absBits += 0xc8000fff + mantissaOdd; // rebias exponent, round half to even
  return sign | uint16_t(absBits >> 13);
}

inline float bf16ToFloat(uint16_t b) { return bitsToFloat(uint32_t(b) << 16); }

inline uint16_t floatToBf16(float f) {
  uint32_t x = floatToBits(f);
  if ((x & 0x7fffffff) > 0x7f800000) // quiet NaN
    return uint16_t((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return uint16_t(x >> 16);
}

template <DType D> struct DTypeTraits;
#define HPS_DTYPE_TRAITS(D, S, C)                                              \
  template <> struct DTypeTraits<DType::D> {                                   \
    using Storage = S;                                                         \
    using Compute = C;                                                         \
  };
HPS_DTYPE_TRAITS(F32, float, float)
HPS_DTYPE_TRAITS(F64, double, double)
HPS_DTYPE_TRAITS(F16, Half, float)
HPS_DTYPE_TRAITS(BF16, BFloat16, float)
HPS_DTYPE_TRAITS(I8, int8_t, int8_t)
HPS_DTYPE_TRAITS(U8, uint8_t, uint8_t)
HPS_DTYPE_TRAITS(I16, int16_t, int16_t)
HPS_DTYPE_TRAITS(U16, uint16_t, uint16_t)
HPS_DTYPE_TRAITS(I32, int32_t, int32_t)
HPS_DTYPE_TRAITS(U32, uint32_t, uint32_t)
HPS_DTYPE_TRAITS(I64, int64_t, int64_t)
HPS_DTYPE_TRAITS(U64, uint64_t, uint64_t)
HPS_DTYPE_TRAITS(Bool, uint8_t, uint8_t)
#undef HPS_DTYPE_TRAITS

/// Storage -> compute value (identity except for the 16-bit floats).
template <typename S> inline auto load(S value) { return value; }
inline float load(Half value) { return halfToFloat(value.bits); }
inline float load(BFloat16 value) { return bf16ToFloat(value.bits); }

/// Compute value -> storage of `S`.
template <typename S, typename C> inline S store(C value) {
  if constexpr (std::is_same_v<S, Half>)
    return Half{floatToHalf(float(value))};
  else if constexpr (std::is_same_v<S, BFloat16>)
    return BFloat16{floatToBf16(float(value))};
  else
    return S(value);
}

template <DType D> using DTypeConstant = std::integral_constant<DType, D>;

/// Calls fn(DTypeConstant<type>{}) and returns its result (every instance
/// must return the same type).
template <typename F> decltype(auto) dispatchDType(DType type, F &&fn) {
  switch (type) {
  case DType::F32:
    return fn(DTypeConstant<DType::F32>{});
  case DType::F64:
    return fn(DTypeConstant<DType::F64>{});
  case DType::F16:
    return fn(DTypeConstant<DType::F16>{});
  case DType::BF16:
    return fn(DTypeConstant<DType::BF16>{});
  case DType::I8:
    return fn(DTypeConstant<DType::I8>{});
  case DType::U8:
    return fn(DTypeConstant<DType::U8>{});
  case DType::I16:
    return fn(DTypeConstant<DType::I16>{});
  case DType::U16:
    return fn(DTypeConstant<DType::U16>{});
  case DType::I32:
    return fn(DTypeConstant<DType::I32>{});
  case DType::U32:
    return fn(DTypeConstant<DType::U32>{});
  case DType::I64:
    return fn(DTypeConstant<DType::I64>{});
  case DType::U64:
    return fn(DTypeConstant<DType::U64>{});
  case DType::Bool:
    break;
  }
  return fn(DTypeConstant<DType::Bool>{});
}

/// Unsigned integer of `bytes` bytes: data movement only copies bits.
template <size_t Bytes> struct BitsOf;
template <> struct BitsOf<1> { using type = uint8_t; };
template <> struct BitsOf<2> { using type = uint16_t; };
template <> struct BitsOf<4> { using type = uint32_t; };
template <> struct BitsOf<8> { using type = uint64_t; };

/// Calls fn(std::integral_constant<size_t, bytes>{}) for the element size.
template <typename F> decltype(auto) dispatchSize(size_t bytes, F &&fn) {
  switch (bytes) {
  case 1:
    return fn(std::integral_constant<size_t, 1>{});
  case 2:
    return fn(std::integral_constant<size_t, 2>{});
  case 4:
    return fn(std::integral_constant<size_t, 4>{});
  default:
    break;
  }
  return fn(std::integral_constant<size_t, 8>{});
}

} // namespace heterps::rt::cpu

#endif // HETERPS_RUNTIME_KERNELS_CPU_DTYPEDISPATCH_H
