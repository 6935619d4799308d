// Fixed-point numbers for the exact all-reduce.
//
// A real value v is carried as the int64 round(v * 2^32) (kFracBits = 32: resolution 2^-32,
// about 2.3e-10). Integer addition is associative and commutative, so a sum of fixed-point
// values is the same bit pattern whatever the order or grouping of its terms: one process over
// the whole batch, or W processes whose partial sums MPI adds in any order.
//
// Overflow: a sum of at most `terms` values never overflows when every value satisfies
// |q| <= 2^62 / terms. Quantize() enforces that bound per value (it depends only on the global
// term count, never on W) and reports a value beyond it (or NaN/inf) instead of wrapping.
//
// Thread safety: pure functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace podsched::train {

inline constexpr int kFracBits = 32;
inline constexpr double kFixedScale = 4294967296.0;  // 2^kFracBits

// The largest |q| allowed per term when `terms` terms are summed: 2^62 / terms.
inline int64_t FixedBound(int64_t terms) { return (int64_t{1} << 62) / (terms < 1 ? 1 : terms); }

// round(v * 2^32) into `out`; false (and `out` untouched) when |v * 2^32| > bound or v is not
// finite. Rounding is to nearest-even (the default FP environment), deterministic everywhere.
inline bool Quantize(double v, int64_t bound, int64_t& out) {
  const double scaled = std::nearbyint(v * kFixedScale);
  if (!(std::fabs(scaled) <= static_cast<double>(bound))) return false;
  out = static_cast<int64_t>(scaled);
  return true;
}

inline double Dequantize(int64_t q) { return static_cast<double>(q) / kFixedScale; }

// The message of an overflow error, naming the value and what to change.
std::string OverflowMessage(double value, int64_t terms);

}  // namespace podsched::train
