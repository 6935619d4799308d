#include "worker/train/fixed_point.h"

#include <cstdio>

namespace podsched::train {

std::string OverflowMessage(double value, int64_t terms) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "fixed-point overflow: a gradient or batch-norm term of %g exceeds the exact "
                "all-reduce bound of %g (scale 2^%d, %lld summed terms); lower --lr, use a "
                "smaller --global-batch, or run with --allreduce float",
                value, static_cast<double>(FixedBound(terms)) / kFixedScale, kFracBits,
                static_cast<long long>(terms));
  return buf;
}

}  // namespace podsched::train
