// PrefixSum2D: a summed-area table over a rows x cols grid of small counts, so that the sum over
// any axis-aligned rectangle costs four lookups. Placement uses it to test a rectangle of hosts
// for availability, and best-fit to count how many legal positions of another slice shape a
// candidate would destroy.
//
// Internal to pod/. Value type; not thread-safe while being built.
#pragma once

#include <algorithm>
#include <vector>

namespace podsched::pod {

class PrefixSum2D {
 public:
  PrefixSum2D() = default;

  // From the counts of a row-major rows x cols grid.
  static PrefixSum2D FromGrid(int rows, int cols, const std::vector<int>& counts) {
    PrefixSum2D out;
    out.rows_ = rows;
    out.cols_ = cols;
    out.sum_.assign(static_cast<size_t>(rows + 1) * (cols + 1), 0);
    for (int r = 0; r < rows; ++r) {
      const int* in = &counts[static_cast<size_t>(r) * cols];
      const int* above = &out.At(r, 0);
      int* row = &out.At(r + 1, 0);
      int run = 0;
      for (int c = 0; c < cols; ++c) {
        run += in[c];
        row[c + 1] = run + above[c + 1];
      }
    }
    return out;
  }

  int rows() const { return rows_; }
  // The sums of row boundary r (0..rows): Row(r)[c] = Sum(0, 0, r, c), for c in 0..cols.
  const int* Row(int r) const { return &sum_[static_cast<size_t>(r) * (cols_ + 1)]; }
  int cols() const { return cols_; }

  // Sum over rows [r0, r1) x cols [c0, c1), clipped to the grid; empty ranges sum to 0.
  int Sum(int r0, int c0, int r1, int c1) const {
    r0 = std::max(r0, 0);
    c0 = std::max(c0, 0);
    r1 = std::min(r1, rows_);
    c1 = std::min(c1, cols_);
    if (r0 >= r1 || c0 >= c1) return 0;
    return Get(r1, c1) - Get(r0, c1) - Get(r1, c0) + Get(r0, c0);
  }
  int Total() const { return Get(rows_, cols_); }

 private:
  int& At(int r, int c) { return sum_[static_cast<size_t>(r) * (cols_ + 1) + c]; }
  int Get(int r, int c) const { return sum_[static_cast<size_t>(r) * (cols_ + 1) + c]; }

  int rows_ = 0;
  int cols_ = 0;
  std::vector<int> sum_;
};

}  // namespace podsched::pod
