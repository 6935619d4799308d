#include "pod/cost.h"

#include <gtest/gtest.h>

#include <cmath>

namespace podsched::pod {
namespace {

AcceleratorType Type(std::string_view text) { return AcceleratorType::Parse(text).value(); }

TEST(CostTest, PricesScaleWithCores) {
  EXPECT_DOUBLE_EQ(SliceUsdPerHour(Type("v2-8"), PriceClass::kOnDemand), 4.50);
  EXPECT_DOUBLE_EQ(SliceUsdPerHour(Type("v2-8"), PriceClass::kPreemptible), 1.35);
  EXPECT_DOUBLE_EQ(SliceUsdPerHour(Type("v3-8"), PriceClass::kOnDemand), 8.00);
  EXPECT_DOUBLE_EQ(SliceUsdPerHour(Type("v3-8"), PriceClass::kPreemptible), 2.40);
  EXPECT_DOUBLE_EQ(SliceUsdPerHour(Type("v2-32"), PriceClass::kOnDemand), 18.00);
  EXPECT_DOUBLE_EQ(SliceUsdPerHour(Type("v2-512"), PriceClass::kPreemptible), 1.35 * 64);
  EXPECT_DOUBLE_EQ(SliceUsdPerHour(Type("v3-2048"), PriceClass::kOnDemand), 8.00 * 256);
  EXPECT_NEAR(SliceUsd(Type("v2-32"), PriceClass::kOnDemand, std::chrono::minutes(30)), 9.0, 1e-9);
}

TEST(CostTest, PriceClassNames) {
  EXPECT_EQ(ParsePriceClass("preemptible").value(), PriceClass::kPreemptible);
  EXPECT_EQ(PriceClassName(PriceClass::kOnDemand), "on-demand");
  Result<PriceClass> bad = ParsePriceClass("spot");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("valid: on-demand, preemptible"), std::string::npos);
}

TEST(CostTest, StorageIsPerGbMonthAndConfigurable) {
  const Duration month = std::chrono::hours(730);
  EXPECT_NEAR(StoragePricing{}.Usd(1024.0 * 1024 * 1024, month), 0.026, 1e-12);
  EXPECT_NEAR(StoragePricing{}.Usd(10.0 * 1024 * 1024 * 1024, month / 2), 0.13, 1e-12);
  EXPECT_NEAR(StoragePricing{0.020}.Usd(1024.0 * 1024 * 1024, month), 0.020, 1e-12);
}

// The calibration must reproduce the reference figures of docs/pod.md, "Cost model", within 10%.
TEST(CostTest, EgressIsPricedByHowFarTheZonesAre) {
  const EgressPricing egress;
  const int64_t gb = int64_t{1} << 30;
  EXPECT_EQ(RegionOfZone("us-central1-b"), "us-central1");
  EXPECT_EQ(ContinentOfZone("europe-west4-a"), "europe");
  EXPECT_EQ(RegionOfZone("site"), "site");
  EXPECT_DOUBLE_EQ(egress.Usd(gb, "us-central1-b", "us-central1-b"), 0);  // one zone
  EXPECT_DOUBLE_EQ(egress.Usd(gb, "", "us-central1-b"), 0);               // unknown: not billed
  EXPECT_FALSE(EgressPricing::Crosses("us-central1-b", ""));
  EXPECT_TRUE(EgressPricing::Crosses("us-central1-b", "us-central1-f"));
  EXPECT_DOUBLE_EQ(egress.Usd(gb, "us-central1-b", "us-central1-f"), 0.01);
  EXPECT_DOUBLE_EQ(egress.Usd(gb, "us-central1-b", "us-east1-c"), 0.02);
  EXPECT_DOUBLE_EQ(egress.Usd(10 * gb, "us-central1-b", "europe-west4-a"), 0.80);
  const EgressPricing custom{.usd_per_gb_between_zones = 0.5};
  EXPECT_DOUBLE_EQ(custom.Usd(gb / 2, "a-1-x", "a-1-y"), 0.25);
}

TEST(CostTest, ResNet50OnV2_8TakesAboutFourMinutesPerEpoch) {
  const Workload w = ReferenceWorkload("resnet50").value();
  const StepEstimate e = EstimateStep(w, Type("v2-8"));
  EXPECT_EQ(e.global_batch, 1024);
  const double epoch_seconds = 1.28e6 / e.global_batch * e.step_seconds();
  EXPECT_NEAR(epoch_seconds, 240.0, 24.0);
  EXPECT_NEAR(e.step_seconds(), 0.192, 0.0192);
}

TEST(CostTest, Gan128OnV2_8Takes60SecondsPer100Iterations) {
  const Workload w = ReferenceWorkload("gan128").value();
  const StepEstimate e = EstimateStep(w, Type("v2-8"));
  EXPECT_EQ(e.global_batch, 128);
  EXPECT_NEAR(100 * e.step_seconds(), 60.0, 6.0);
}

TEST(CostTest, PerCoreBatchStaysConstantAsSlicesGrow) {
  const Workload w = ReferenceWorkload("gan128").value();
  double previous_step = 0;
  for (const AcceleratorType& t : ValidTypes(Generation::kV2, 8, 8)) {
    const StepEstimate e = EstimateStep(w, t);
    EXPECT_EQ(e.global_batch, 16 * t.tensor_cores());
    // Compute per step is constant; the ring all-reduce grows with the slice.
    EXPECT_GT(e.step_seconds(), previous_step);
    previous_step = e.step_seconds();
  }
  // Throughput scales almost linearly: a v2-512 does more than 50x the examples/s of a v2-8.
  EXPECT_GT(EstimateStep(w, Type("v2-512")).examples_per_second(),
            50 * EstimateStep(w, Type("v2-8")).examples_per_second());
}

TEST(CostTest, V3IsFasterThanV2) {
  for (std::string_view name : ReferenceWorkloadNames()) {
    const Workload w = ReferenceWorkload(name).value();
    EXPECT_LT(EstimateStep(w, Type("v3-8")).step_seconds(),
              EstimateStep(w, Type("v2-8")).step_seconds())
        << name;
  }
  EXPECT_EQ(ReferenceWorkload("bert").error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace podsched::pod
