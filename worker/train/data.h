// Training data: a learnable classification task generated from a seed, and the order in which
// training consumes it.
//
// Example k of a data set with seed s is x_k ~ N(0, I) (input_dim values drawn from a
// counter-based generator keyed by (s, k, j)) with label argmax(teacher(x_k)), where the teacher
// is a fixed random one-hidden-layer ReLU network drawn from s. Examples [0, train) form the
// training split, [train, train + eval) the held-out split. Everything is a pure function of the
// seed and the index: no hidden generator state.
//
// The example stream: global example g (g = cursor of the step + i, i in [0, B)) is training
// example Perm_p[g mod N] with p = g / N (one pass over the N training examples) and Perm_p a
// Fisher-Yates shuffle keyed by (seed, p). So the examples of a step depend only on the cursor,
// never on the world size; a checkpoint stores the cursor and the seed, which is the whole
// RNG state.
//
// Thread safety: Dataset is a value; ExampleStream caches one permutation (not thread-safe).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace podsched::train {

// splitmix64 of (key, counter): a stateless, well-mixed 64-bit hash.
uint64_t Mix64(uint64_t key, uint64_t counter);
// A standard normal deterministic in (key, counter) (Box-Muller on two Mix64 uniforms).
double NormalAt(uint64_t key, uint64_t counter);

struct DataSpec {
  uint64_t seed = 1;
  int input_dim = 16;
  int classes = 8;
  int teacher_hidden = 32;
};

struct Dataset {
  int input_dim = 0;
  int classes = 0;
  std::vector<float> x;        // size() * input_dim, row-major
  std::vector<int32_t> label;  // size()
  size_t size() const { return label.size(); }
  std::span<const float> Row(size_t i) const {
    return std::span<const float>(x).subspan(i * input_dim, input_dim);
  }
};

// Examples [first, first + count) of the task described by `spec`.
Dataset GenerateExamples(const DataSpec& spec, uint64_t first, uint64_t count);

class ExampleStream {
 public:
  // `train_size` > 0.
  ExampleStream(uint64_t seed, uint64_t train_size);
  // Index into the training split of global stream example `g`.
  uint64_t IndexOf(uint64_t g);

 private:
  uint64_t seed_;
  uint64_t train_size_;
  uint64_t cached_pass_ = UINT64_MAX;
  std::vector<uint64_t> perm_;
};

// The part of global batch [cursor, cursor + global_batch) that `rank` of `world` trains on: the
// contiguous block of global_batch / world examples starting at rank * global_batch / world.
// global_batch % world == 0 (checked by the caller).
Dataset LocalBatch(const Dataset& train, ExampleStream& stream, uint64_t cursor, int global_batch,
                   int world, int rank);

}  // namespace podsched::train
