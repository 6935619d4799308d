#include "worker/train/ring_reduce.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace podsched::train {
namespace {

// Runs the schedule over W in-memory ranks, every rank sending before any adds (as MPI_Sendrecv
// does), and checks that rank r ends with the full sum of block r: each of the W ranks' values
// added exactly once.
TEST(RingReduceTest, TheScheduleLeavesEachRankTheFullSumOfItsOwnBlock) {
  for (int world = 1; world <= 9; ++world) {
    SCOPED_TRACE("world " + std::to_string(world));
    const int block = 3;
    // Rank r's element k is a distinct power of two per rank, so a value added twice or missed
    // shows in the sum's bits.
    std::vector<std::vector<int64_t>> data(world, std::vector<int64_t>(world * block));
    for (int r = 0; r < world; ++r) {
      for (int k = 0; k < world * block; ++k) data[r][k] = (int64_t{1} << r) * (k + 1);
    }
    for (int step = 0; step + 1 < world; ++step) {
      std::vector<std::vector<int64_t>> sent(world);
      for (int r = 0; r < world; ++r) {
        const RingStep s = RingReduceScatterStep(r, world, step);
        sent[r].assign(data[r].begin() + s.send_block * block,
                       data[r].begin() + (s.send_block + 1) * block);
        if (step > 0) {
          // What a rank sends is what it completed a step ago: the partial sum it just extended.
          EXPECT_EQ(s.send_block, RingReduceScatterStep(r, world, step - 1).recv_block);
        }
      }
      for (int r = 0; r < world; ++r) {
        const RingStep s = RingReduceScatterStep(r, world, step);
        const int left = (r + world - 1) % world;
        // The block arriving from the left is the one this rank adds it into.
        ASSERT_EQ(RingReduceScatterStep(left, world, step).send_block, s.recv_block);
        for (int k = 0; k < block; ++k) data[r][s.recv_block * block + k] += sent[left][k];
      }
    }
    const int64_t all_ranks = (int64_t{1} << world) - 1;
    for (int r = 0; r < world; ++r) {
      if (world > 1) {
        EXPECT_EQ(RingReduceScatterStep(r, world, world - 2).recv_block, r);
      }
      for (int k = 0; k < block; ++k) {
        const int index = r * block + k;
        EXPECT_EQ(data[r][index], all_ranks * (index + 1)) << "rank " << r << " element " << k;
      }
    }
  }
}

}  // namespace
}  // namespace podsched::train
