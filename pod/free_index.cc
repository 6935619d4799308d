#include "pod/free_index.h"

#include <algorithm>

#include "pod/legal.h"

namespace podsched::pod {

FreeIndex::FreeIndex(const Pod& pod)
    : generation_(pod.generation()),
      available_(PrefixSum2D::FromGrid(pod.host_rows(), pod.host_cols(), pod.AvailabilityGrid())) {}

const std::vector<TypeOrigins>& FreeIndex::types() const {
  if (!types_built_.load(std::memory_order_acquire)) {
    std::lock_guard lock(build_mutex_);
    if (!types_built_.load(std::memory_order_relaxed)) {
      BuildTypes();
      types_built_.store(true, std::memory_order_release);
    }
  }
  return types_;
}

void FreeIndex::BuildTypes() const {
  const int rows = available_.rows(), cols = available_.cols();
  // Canonical shapes of the types found without a position: a type whose shape contains one of
  // them (both orientations then contain one of its orientations) has none either.
  std::vector<SliceShape> none;
  std::vector<int> legal;  // legal origins of one oriented shape, row-major
  const std::vector<AcceleratorType> valid = ValidTypes(generation_, rows, cols);
  types_.reserve(valid.size());  // a TypeOrigins moved when the vector grows is 4 tables
  for (const AcceleratorType& t : valid) {
    TypeOrigins& to = types_.emplace_back(TypeOrigins{
        .type = t, .total = 0, .hosts_per_position = 0, .oriented = {}, .num_oriented = 0});
    const SliceShape s = t.shape();
    to.num_oriented = s.rows == s.cols ? 1 : 2;
    // Too few hosts available, or a smaller shape inside it already has no position: no table to
    // build (Overlapping is never asked of a type without positions).
    const bool hopeless =
        t.hosts() > available_.Total() ||
        std::any_of(none.begin(), none.end(),
                    [s](SliceShape u) { return u.rows <= s.rows && u.cols <= s.cols; });
    for (int i = 0; i < to.num_oriented; ++i) {
      const SliceShape o = i == 0 ? s : s.Rotated();
      OrientedOrigins& oo = to.oriented[static_cast<size_t>(i)];
      oo.shape = o;
      if (hopeless) continue;
      // An origin is legal when its rectangle is all available: a row at a time over the rows of
      // the availability table, in loops the compiler vectorizes.
      const int need = o.hosts();
      legal.assign(static_cast<size_t>(rows) * cols, 0);
      for (int r = 0; r + o.rows <= rows; ++r) {
        const int* top = available_.Row(r);
        const int* bottom = available_.Row(r + o.rows);
        int* out = &legal[static_cast<size_t>(r) * cols];
        for (int c = 0; c + o.cols <= cols; ++c) {
          out[c] = bottom[c + o.cols] - top[c + o.cols] - bottom[c] + top[c] == need ? 1 : 0;
        }
      }
      oo.origins = PrefixSum2D::FromGrid(rows, cols, legal);
      to.total += oo.origins.Total();
    }
    if (to.total == 0) none.push_back(s);
    if (to.total > 0) to.hosts_per_position = static_cast<double>(t.hosts()) / to.total;
  }
  for (const TypeOrigins& to : types_) {
    if (to.total > 0) placeable_.push_back(&to);
  }
  best_fit_.resize(types_.size());
}

std::optional<BestFitMemo> FreeIndex::RecalledBestFit(const TypeOrigins& type) const {
  const auto i = static_cast<size_t>(&type - types().data());
  std::lock_guard lock(memo_mutex_);
  return best_fit_.at(i);
}

void FreeIndex::RememberBestFit(const TypeOrigins& type, const BestFitMemo& memo) const {
  const auto i = static_cast<size_t>(&type - types().data());
  std::lock_guard lock(memo_mutex_);
  best_fit_.at(i) = memo;
}

const TypeOrigins* FreeIndex::Find(SliceShape shape) const {
  const SliceShape canonical = Canonical(shape);
  for (const TypeOrigins& to : types()) {
    if (to.type.shape() == canonical) return &to;
  }
  return nullptr;
}

}  // namespace podsched::pod
