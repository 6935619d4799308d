#include "pod/cost.h"

#include "common/check.h"

namespace podsched::pod {
namespace {

constexpr double kBytesPerGb = 1024.0 * 1024.0 * 1024.0;
constexpr double kSecondsPerMonth = 730.0 * 3600.0;
constexpr int kPricedCores = 8;

// ICI: we assume 62.5 GB/s per link direction (500 Gbit/s) and 2 us per hop for both
// generations; the calibration below absorbs the error of this assumption on a v2-8.
constexpr InterconnectSpec kV2Interconnect{62.5e9, 2e-6};
constexpr InterconnectSpec kV3Interconnect{62.5e9, 2e-6};

// Calibration (v2-8: 180 TFLOPS, ring over 8 cores):
// resnet50: 3 x 8.2 GFLOP (forward = 4.1 G multiply-adds) per image, 25.6 M fp32 gradients.
//   compute = 1024 * 24.6e9 / (180e12 * 0.74) = 0.1891 s, all-reduce = 2.9 ms: 0.192 s/step.
// gan128: ~250 GFLOP per example and iteration (generator and discriminator steps), about
//   158 M fp32 gradients (a BigGAN-sized pair).
//   compute = 128 * 2.5e11 / (180e12 * 0.30) = 0.593 s, all-reduce = 17.7 ms: 0.61 s/iteration.
Workload ResNet50() { return {"resnet50", 24.6e9, 128, 25.6e6 * 4, 0.74}; }
Workload Gan128() { return {"gan128", 2.5e11, 16, 158e6 * 4, 0.30}; }

}  // namespace

std::string_view PriceClassName(PriceClass c) {
  return c == PriceClass::kOnDemand ? "on-demand" : "preemptible";
}

Result<PriceClass> ParsePriceClass(std::string_view text) {
  if (text == "on-demand") return PriceClass::kOnDemand;
  if (text == "preemptible") return PriceClass::kPreemptible;
  return InvalidArgument("'" + std::string(text) +
                         "' is not a price class; valid: on-demand, preemptible");
}

double SliceUsdPerHour(const AcceleratorType& type, PriceClass c) {
  const GenerationSpec& spec = SpecOf(type.generation());
  const double per_8 =
      c == PriceClass::kOnDemand ? spec.on_demand_usd_per_hour_8 : spec.preemptible_usd_per_hour_8;
  return per_8 * type.tensor_cores() / kPricedCores;
}

double SliceUsd(const AcceleratorType& type, PriceClass c, Duration d) {
  return SliceUsdPerHour(type, c) * ToSeconds(d) / 3600.0;
}

double StoragePricing::Usd(double bytes, Duration d) const {
  return usd_per_gb_month * (bytes / kBytesPerGb) * (ToSeconds(d) / kSecondsPerMonth);
}

std::string_view RegionOfZone(std::string_view zone) {
  const size_t dash = zone.rfind('-');
  return dash == std::string_view::npos ? zone : zone.substr(0, dash);
}

std::string_view ContinentOfZone(std::string_view zone) {
  return zone.substr(0, zone.find('-'));
}

bool EgressPricing::Crosses(std::string_view from, std::string_view to) {
  return !from.empty() && !to.empty() && from != to;
}

double EgressPricing::UsdPerGb(std::string_view from, std::string_view to) const {
  if (!Crosses(from, to)) return 0;
  if (RegionOfZone(from) == RegionOfZone(to)) return usd_per_gb_between_zones;
  if (ContinentOfZone(from) == ContinentOfZone(to)) return usd_per_gb_between_regions;
  return usd_per_gb_between_continents;
}

double EgressPricing::Usd(int64_t bytes, std::string_view from, std::string_view to) const {
  return UsdPerGb(from, to) * (static_cast<double>(bytes) / kBytesPerGb);
}

const InterconnectSpec& InterconnectOf(Generation generation) {
  return generation == Generation::kV2 ? kV2Interconnect : kV3Interconnect;
}

Result<Workload> ReferenceWorkload(std::string_view name) {
  if (name == "resnet50") return ResNet50();
  if (name == "gan128") return Gan128();
  return NotFound("'" + std::string(name) +
                  "' is not a reference workload; valid: resnet50, gan128");
}

std::vector<std::string_view> ReferenceWorkloadNames() { return {"resnet50", "gan128"}; }

StepEstimate EstimateStep(const Workload& w, const AcceleratorType& type) {
  PODSCHED_CHECK(w.efficiency > 0 && w.efficiency <= 1 && w.per_core_batch > 0);
  const GenerationSpec& spec = SpecOf(type.generation());
  const InterconnectSpec& ici = InterconnectOf(type.generation());
  StepEstimate e;
  e.global_batch = w.per_core_batch * type.tensor_cores();
  const double host_flops = w.flops_per_example * w.per_core_batch * spec.cores_per_host();
  e.compute_seconds = host_flops / (spec.peak_bf16_tflops_per_host * 1e12 * w.efficiency);
  const double n = type.tensor_cores();
  e.allreduce_seconds = 2.0 * (n - 1) / n * w.gradient_bytes / ici.link_bytes_per_second +
                        2.0 * (n - 1) * ici.hop_latency_seconds;
  return e;
}

}  // namespace podsched::pod
