#include "worker/train/data.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "common/check.h"

namespace podsched::train {
namespace {

// Distinct key streams derived from the one seed, so inputs, teacher and shuffles never share
// counters.
constexpr uint64_t kInputSalt = 0x696e707574ULL;
constexpr uint64_t kTeacherSalt = 0x7465616368ULL;
constexpr uint64_t kShuffleSalt = 0x73687566ULL;

double UniformOpen(uint64_t bits) {  // (0, 1), never 0 so log() is finite
  return (static_cast<double>(bits >> 11) + 0.5) * 0x1.0p-53;
}

struct Teacher {
  std::vector<double> w1, b1, w2;  // hidden x in, hidden, classes x hidden
};

Teacher MakeTeacher(const DataSpec& spec) {
  Teacher t;
  const uint64_t key = Mix64(spec.seed, kTeacherSalt);
  uint64_t c = 0;
  const double s1 = 1.0 / std::sqrt(static_cast<double>(spec.input_dim));
  const double s2 = 1.0 / std::sqrt(static_cast<double>(spec.teacher_hidden));
  for (int i = 0; i < spec.teacher_hidden * spec.input_dim; ++i)
    t.w1.push_back(NormalAt(key, c++) * s1);
  for (int i = 0; i < spec.teacher_hidden; ++i) t.b1.push_back(NormalAt(key, c++) * 0.1);
  for (int i = 0; i < spec.classes * spec.teacher_hidden; ++i)
    t.w2.push_back(NormalAt(key, c++) * s2);
  return t;
}

int32_t TeacherLabel(const DataSpec& spec, const Teacher& t, std::span<const float> x) {
  std::vector<double> h(spec.teacher_hidden);
  for (int o = 0; o < spec.teacher_hidden; ++o) {
    double z = t.b1[o];
    for (int j = 0; j < spec.input_dim; ++j) z += t.w1[o * spec.input_dim + j] * x[j];
    h[o] = std::max(0.0, z);
  }
  int32_t best = 0;
  double best_v = -INFINITY;
  for (int c = 0; c < spec.classes; ++c) {
    double v = 0;
    for (int o = 0; o < spec.teacher_hidden; ++o) v += t.w2[c * spec.teacher_hidden + o] * h[o];
    if (v > best_v) best_v = v, best = c;
  }
  return best;
}

}  // namespace

uint64_t Mix64(uint64_t key, uint64_t counter) {
  uint64_t z = key + 0x9e3779b97f4a7c15ULL * (counter + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double NormalAt(uint64_t key, uint64_t counter) {
  const double u1 = UniformOpen(Mix64(key, 2 * counter));
  const double u2 = UniformOpen(Mix64(key, 2 * counter + 1));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

Dataset GenerateExamples(const DataSpec& spec, uint64_t first, uint64_t count) {
  PODSCHED_CHECK(spec.input_dim > 0 && spec.classes > 1 && spec.teacher_hidden > 0);
  const Teacher teacher = MakeTeacher(spec);
  const uint64_t key = Mix64(spec.seed, kInputSalt);
  Dataset d;
  d.input_dim = spec.input_dim;
  d.classes = spec.classes;
  d.x.resize(count * spec.input_dim);
  d.label.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t k = first + i;
    float* row = &d.x[i * spec.input_dim];
    for (int j = 0; j < spec.input_dim; ++j) {
      row[j] = static_cast<float>(NormalAt(key, k * spec.input_dim + j));
    }
    d.label[i] = TeacherLabel(spec, teacher, d.Row(i));
  }
  return d;
}

ExampleStream::ExampleStream(uint64_t seed, uint64_t train_size)
    : seed_(seed), train_size_(train_size) {
  PODSCHED_CHECK(train_size > 0);
}

uint64_t ExampleStream::IndexOf(uint64_t g) {
  const uint64_t pass = g / train_size_;
  if (pass != cached_pass_) {
    perm_.resize(train_size_);
    for (uint64_t i = 0; i < train_size_; ++i) perm_[i] = i;
    const uint64_t key = Mix64(Mix64(seed_, kShuffleSalt), pass);
    for (uint64_t i = train_size_ - 1; i > 0; --i) {
      std::swap(perm_[i], perm_[Mix64(key, i) % (i + 1)]);
    }
    cached_pass_ = pass;
  }
  return perm_[g % train_size_];
}

Dataset LocalBatch(const Dataset& train, ExampleStream& stream, uint64_t cursor, int global_batch,
                   int world, int rank) {
  PODSCHED_CHECK(world > 0 && global_batch % world == 0 && rank >= 0 && rank < world);
  const int local = global_batch / world;
  Dataset out;
  out.input_dim = train.input_dim;
  out.classes = train.classes;
  out.x.reserve(static_cast<size_t>(local) * train.input_dim);
  for (int i = 0; i < local; ++i) {
    const uint64_t idx = stream.IndexOf(cursor + static_cast<uint64_t>(rank) * local + i);
    const auto row = train.Row(idx);
    out.x.insert(out.x.end(), row.begin(), row.end());
    out.label.push_back(train.label[idx]);
  }
  return out;
}

}  // namespace podsched::train
