#include "pod/accelerator.h"

#include <gtest/gtest.h>

#include <string>

namespace podsched::pod {
namespace {

struct ValidCase {
  const char* text;
  Generation generation;
  int cores;
  int chips;
  int hosts;
  SliceShape shape;
};

class AcceleratorValidTest : public ::testing::TestWithParam<ValidCase> {};

TEST_P(AcceleratorValidTest, ParsesOnFullPod) {
  const ValidCase& c = GetParam();
  Result<AcceleratorType> t = AcceleratorType::Parse(c.text);
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  EXPECT_EQ(t->generation(), c.generation);
  EXPECT_EQ(t->tensor_cores(), c.cores);
  EXPECT_EQ(t->chips(), c.chips);
  EXPECT_EQ(t->hosts(), c.hosts);
  EXPECT_EQ(t->shape(), c.shape);
  EXPECT_LE(t->shape().rows, t->shape().cols);
  EXPECT_EQ(t->ToString(), c.text);
  // Hosts hold 8 cores each.
  EXPECT_EQ(t->hosts() * SpecOf(c.generation).cores_per_host(), c.cores);
}

INSTANTIATE_TEST_SUITE_P(
    AllTypes, AcceleratorValidTest,
    ::testing::Values(ValidCase{"v2-8", Generation::kV2, 8, 4, 1, {1, 1}},
                      ValidCase{"v2-32", Generation::kV2, 32, 16, 4, {2, 2}},
                      ValidCase{"v2-128", Generation::kV2, 128, 64, 16, {4, 4}},
                      ValidCase{"v2-256", Generation::kV2, 256, 128, 32, {4, 8}},
                      ValidCase{"v2-512", Generation::kV2, 512, 256, 64, {8, 8}},
                      ValidCase{"v3-8", Generation::kV3, 8, 4, 1, {1, 1}},
                      ValidCase{"v3-32", Generation::kV3, 32, 16, 4, {2, 2}},
                      ValidCase{"v3-64", Generation::kV3, 64, 32, 8, {2, 4}},
                      ValidCase{"v3-128", Generation::kV3, 128, 64, 16, {4, 4}},
                      ValidCase{"v3-256", Generation::kV3, 256, 128, 32, {4, 8}},
                      ValidCase{"v3-512", Generation::kV3, 512, 256, 64, {8, 8}},
                      ValidCase{"v3-1024", Generation::kV3, 1024, 512, 128, {8, 16}},
                      ValidCase{"v3-2048", Generation::kV3, 2048, 1024, 256, {16, 16}}));

struct InvalidCase {
  const char* text;
  Generation pod_generation;
  int rows;
  int cols;
  const char* valid_list;  // the list the message must contain
};

constexpr const char* kV2Full = "valid: v2-8, v2-32, v2-128, v2-256, v2-512";
constexpr const char* kV3Full =
    "valid: v3-8, v3-32, v3-64, v3-128, v3-256, v3-512, v3-1024, v3-2048";

class AcceleratorInvalidTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(AcceleratorInvalidTest, RejectsAndListsValidTypes) {
  const InvalidCase& c = GetParam();
  Result<AcceleratorType> t = AcceleratorType::Parse(c.text, c.pod_generation, c.rows, c.cols);
  ASSERT_FALSE(t.has_value()) << c.text << " parsed as " << t->ToString();
  EXPECT_EQ(t.error().code(), StatusCode::kInvalidArgument);
  const std::string& msg = t.error().message();
  EXPECT_NE(msg.find(c.valid_list), std::string::npos) << msg;
  EXPECT_NE(msg.find("'" + std::string(c.text) + "'"), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    InvalidForms, AcceleratorInvalidTest,
    ::testing::Values(InvalidCase{"v2-12", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v4-8", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2-1024", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2-64", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2-", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2-8x", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"-8", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"V2-8", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2-08", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2-+8", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2--8", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2-0", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2-99999999999999999999", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2-4294967304", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{" v2-8", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2-8 ", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2 -8", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2-8\n", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v3-8", Generation::kV2, 8, 8, kV2Full},
                      InvalidCase{"v2-8", Generation::kV3, 16, 16, kV3Full},
                      InvalidCase{"v3-4096", Generation::kV3, 16, 16, kV3Full},
                      InvalidCase{"v3-16", Generation::kV3, 16, 16, kV3Full},
                      // Types that exist but do not fit a small grid.
                      InvalidCase{"v2-128", Generation::kV2, 2, 2, "valid: v2-8, v2-32"},
                      InvalidCase{"v2-32", Generation::kV2, 1, 1, "valid: v2-8"},
                      InvalidCase{"v3-1024", Generation::kV3, 8, 8,
                                  "valid: v3-8, v3-32, v3-64, v3-128, v3-256, v3-512"}));

TEST(AcceleratorTest, UpperCaseGenerationSaysLowerCase) {
  Result<AcceleratorType> t = AcceleratorType::Parse("V2-8");
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.error().message().find("lower case"), std::string::npos);
}

TEST(AcceleratorTest, WithoutAPodUnknownGenerationsListBothGenerations) {
  for (const char* text : {"v4-8", "", "-8", "tpu", "v-8"}) {
    Result<AcceleratorType> t = AcceleratorType::Parse(text);
    ASSERT_FALSE(t.has_value()) << text;
    EXPECT_NE(t.error().message().find("valid: v2-8, v2-32, v2-128, v2-256, v2-512, v3-8, v3-32, "
                                       "v3-64, v3-128, v3-256, v3-512, v3-1024, v3-2048"),
              std::string::npos)
        << t.error().message();
  }
  // A known generation is checked against its own full pod.
  EXPECT_NE(AcceleratorType::Parse("v3-12").error().message().find("valid: v3-8,"),
            std::string::npos);
  EXPECT_NE(AcceleratorType::Parse("v2-2048").error().message().find("valid: v2-8,"),
            std::string::npos);
}

TEST(AcceleratorTest, RotatedShapesFitNarrowGrids) {
  // v3-64 is 2x4 hosts; a 4x2 grid holds it rotated.
  Result<AcceleratorType> t = AcceleratorType::Parse("v3-64", Generation::kV3, 4, 2);
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  EXPECT_EQ(t->shape(), (SliceShape{2, 4}));
}

TEST(AcceleratorTest, ValidTypesPerGrid) {
  EXPECT_EQ(ValidTypes(Generation::kV2, 8, 8).size(), 5u);
  EXPECT_EQ(ValidTypes(Generation::kV3, 16, 16).size(), 8u);
  EXPECT_EQ(ValidTypes(Generation::kV2, 1, 1).size(), 1u);
  EXPECT_EQ(ValidTypes(Generation::kV2, 4, 4).back().ToString(), "v2-128");
  EXPECT_EQ(ValidTypes(Generation::kV3, 4, 8).back().ToString(), "v3-256");
}

TEST(AcceleratorTest, GenerationSpecs) {
  EXPECT_EQ(SpecOf(Generation::kV2).cores_per_host(), 8);
  EXPECT_EQ(SpecOf(Generation::kV2).hbm_gib_per_core, 8);
  EXPECT_EQ(SpecOf(Generation::kV3).hbm_gib_per_core, 16);
  EXPECT_DOUBLE_EQ(SpecOf(Generation::kV3).peak_bf16_tflops_per_host, 420.0);
  EXPECT_EQ(ParseGeneration("v3").value(), Generation::kV3);
  Result<Generation> bad = ParseGeneration("v4");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("valid: v2, v3"), std::string::npos);
}

}  // namespace
}  // namespace podsched::pod
