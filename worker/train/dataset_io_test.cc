#include "worker/train/dataset_io.h"

#include <gtest/gtest.h>

#include "worker/train/memory_store_for_test.h"

namespace podsched::train {
namespace {

TEST(DatasetIoTest, RoundTripsThroughTfRecordShards) {
  MemoryStore store;
  const DataSpec spec{3, 6, 5, 16};
  StoredData data{GenerateExamples(spec, 0, 101), GenerateExamples(spec, 101, 20), 3};
  ASSERT_TRUE(WriteDataset(store, data, 4).ok());
  EXPECT_TRUE(store.objects.contains("train/part-3-of-4.tfrecord"));
  auto back = ReadDataset(store);
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->train.x, data.train.x);
  EXPECT_EQ(back->train.label, data.train.label);
  EXPECT_EQ(back->eval.label, data.eval.label);
  EXPECT_EQ(back->seed, 3u);
  EXPECT_EQ(back->train.input_dim, 6);
}

TEST(DatasetIoTest, RejectsACorruptedRecordNamingTheShard) {
  MemoryStore store;
  const DataSpec spec{3, 4, 3, 8};
  ASSERT_TRUE(
      WriteDataset(store, {GenerateExamples(spec, 0, 40), GenerateExamples(spec, 40, 8), 3}, 2)
          .ok());
  store.objects["train/part-1-of-2.tfrecord"][40] ^= 0x10;
  auto back = ReadDataset(store);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().code(), StatusCode::kDataLoss);
  EXPECT_NE(back.error().message().find("train/part-1-of-2.tfrecord"), std::string::npos)
      << back.error().message();
}

// Seen beside the manifest's fuzz finding (same nlohmann conversion): dataset.json's integers
// must be integers that fit, not 1e300 (undefined behaviour) or 2.5.
TEST(DatasetIoTest, MetadataNumbersMustBeIntegersInRange) {
  for (const char* dim : {"1e300", "2.5", "4294967296"}) {
    MemoryStore store;
    (void)store.Put("dataset.json", std::string(R"({"format":"podtrain-data-v1","input_dim":)") +
                                        dim + R"(,"classes":3,"train_shards":0,"seed":1})");
    auto back = ReadDataset(store);
    ASSERT_FALSE(back) << dim;
    EXPECT_EQ(back.error().code(), StatusCode::kDataLoss);
  }
}

// value("train_examples", 0) was read outside the try block: a string there, or a document
// that is not an object, threw type_error out of ReadDataset.
TEST(DatasetIoTest, MetadataOfAnotherShapeIsDataLossNamingTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {"[1, 2]", "dataset.json must be a JSON object"},
      {R"({"format":"podtrain-data-v1","input_dim":2,"classes":3,"train_shards":0,"seed":1,
          "train_examples":"many"})",
       "dataset.json: train_examples must be an integer"},
      {R"({"format":7,"input_dim":2,"classes":3,"train_shards":0,"seed":1})",
       "dataset.json: format must be a string"},
      {R"({"format":"v0","input_dim":2,"classes":3,"train_shards":0,"seed":1})",
       "dataset.json: format is not podtrain-data-v1"},
  };
  for (const auto& [text, message] : cases) {
    MemoryStore store;
    (void)store.Put("dataset.json", text);
    auto back = ReadDataset(store);
    ASSERT_FALSE(back) << text;
    EXPECT_EQ(back.error().code(), StatusCode::kDataLoss);
    EXPECT_NE(back.error().message().find(message), std::string::npos) << back.error().message();
  }
}

TEST(DatasetIoTest, MissingDatasetIsNotFound) {
  MemoryStore store;
  auto back = ReadDataset(store);
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace podsched::train
