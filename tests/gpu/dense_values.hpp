// Values of the dense operands in their storage types, for the SpMM tests through the C API: packing
// doubles into f64/f32/f16/bf16 bytes and reading them back (so a round trip rounds the way the
// library sees its inputs), and the bounds of rounding a result to C's type.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <sparsetc/sparsetc.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace sparsetc_test {

inline size_t type_size(sparsetc_value_type_t t) {
  return t == SPARSETC_VALUE_F64 ? 8 : t == SPARSETC_VALUE_F32 ? 4 : 2;
}

// Values packed in a storage type, and read back as double (so packing then reading rounds).
inline std::vector<uint8_t> pack(const std::vector<double>& x, sparsetc_value_type_t t) {
  std::vector<uint8_t> out(x.size() * type_size(t));
  for (size_t i = 0; i < x.size(); ++i) {
    uint8_t* p = out.data() + i * type_size(t);
    if (t == SPARSETC_VALUE_F64) std::memcpy(p, &x[i], 8);
    if (t == SPARSETC_VALUE_F32) {
      const float f = float(x[i]);
      std::memcpy(p, &f, 4);
    }
    if (t == SPARSETC_VALUE_F16) {
      const __half h = __double2half(x[i]);
      std::memcpy(p, &h, 2);
    }
    if (t == SPARSETC_VALUE_BF16) {
      const __nv_bfloat16 h = __double2bfloat16(x[i]);
      std::memcpy(p, &h, 2);
    }
  }
  return out;
}
inline std::vector<double> unpack(const std::vector<uint8_t>& bytes, sparsetc_value_type_t t) {
  std::vector<double> out(bytes.size() / type_size(t));
  for (size_t i = 0; i < out.size(); ++i) {
    const uint8_t* p = bytes.data() + i * type_size(t);
    if (t == SPARSETC_VALUE_F64) std::memcpy(&out[i], p, 8);
    if (t == SPARSETC_VALUE_F32) {
      float f;
      std::memcpy(&f, p, 4);
      out[i] = f;
    }
    if (t == SPARSETC_VALUE_F16) {
      __half h;
      std::memcpy(&h, p, 2);
      out[i] = double(__half2float(h));
    }
    if (t == SPARSETC_VALUE_BF16) {
      __nv_bfloat16 h;
      std::memcpy(&h, p, 2);
      out[i] = double(__bfloat162float(h));
    }
  }
  return out;
}

// Relative error of rounding a result to C's type (f32 and f64 C: the accumulation's bound covers it).
inline double output_bound(sparsetc_value_type_t c) {
  return c == SPARSETC_VALUE_F16 ? std::ldexp(1.0, -10) : c == SPARSETC_VALUE_BF16 ? std::ldexp(1.0, -7) : 0.0;
}
// The absolute part of rounding C to its type: half the spacing of its subnormals, where the
// relative bound above does not hold (fp16 below 2^-14: a product of 1.1e-5 came out 1.3e-8 off,
// within half fp16's subnormal spacing 2^-24 but above the relative bound).
inline double output_floor(sparsetc_value_type_t c) {
  return c == SPARSETC_VALUE_F16 ? std::ldexp(1.0, -25) : c == SPARSETC_VALUE_BF16 ? std::ldexp(1.0, -134) : 0.0;
}

}  // namespace sparsetc_test
