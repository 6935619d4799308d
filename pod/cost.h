// Cost model: what a slice costs per hour, what stored bytes cost, and how long a training step
// of a simulated workload takes on a slice.
//
// Prices (Cloud TPU US 2018-19; docs/pod.md, "Cost model") are for the 8-core slice and scale linearly
// with TensorCores: v2-32 on-demand is 4 x $4.50 = $18.00/h.
//
// Step-time model (weak scaling: the per-core batch stays constant as slices grow, so the global
// batch grows with the slice):
//   compute   = per_core_batch * cores_per_host * flops_per_example
//               / (peak bf16 FLOP/s of one host * efficiency)
//   allreduce = 2 * (n - 1) / n * gradient_bytes / link_bandwidth     (ring all-reduce over the
//               + 2 * (n - 1) * hop_latency                            n TensorCores of the slice)
//   step      = compute + allreduce
// Each host computes its share in parallel, so compute does not depend on the slice size; the
// ring term grows slowly with n. The interconnect figures are model assumptions (documented in
// InterconnectOf), not measured facts. The workload constants are calibrated so that the two
// reference workloads of docs/pod.md, "Cost model", come out right on a v2-8:
//   "resnet50": ResNet-50, global batch 1024 (128 per core), bf16: ~4 min per epoch of
//               1.28M images = 1250 steps of ~0.192 s;
//   "gan128":   a 128x128 GAN at batch 128 (16 per core): 100 iterations in ~60 s.
//
// Pure functions and values; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "pod/accelerator.h"

namespace podsched::pod {

enum class PriceClass { kOnDemand, kPreemptible };

// "on-demand" / "preemptible".
std::string_view PriceClassName(PriceClass c);
// Parses those names; anything else is an error listing both.
Result<PriceClass> ParsePriceClass(std::string_view text);

// Dollars per hour for a slice of `type` in class `c`.
double SliceUsdPerHour(const AcceleratorType& type, PriceClass c);
// Dollars for holding a slice for `d`.
double SliceUsd(const AcceleratorType& type, PriceClass c, Duration d);

// Object storage is billed per GB-month; GB = 2^30 bytes and a month is 730 hours, as cloud
// bills count them. The price is configurable (default: $0.026, a 2019 regional bucket).
struct StoragePricing {
  double usd_per_gb_month = 0.026;
  // Dollars for keeping `bytes` stored for `d`.
  double Usd(double bytes, Duration d) const;
};

// Network egress between zones, billed per GB sent (GB = 2^30 bytes): a job that resumes in
// another zone than its checkpoint store reads the checkpoint across, and one that runs away from
// its store writes its checkpoints across (docs/scheduler.md, "Zones and checkpoint stores").
// A zone's region is its name without the last "-" part ("us-central1-b" -> "us-central1"), its
// continent the part before the first "-" ("us", "europe"). The defaults are the Cloud list
// prices of 2019 (between zones of a region $0.01, between regions of a continent $0.02, between
// continents $0.08); configurable.
struct EgressPricing {
  double usd_per_gb_between_zones = 0.01;
  double usd_per_gb_between_regions = 0.02;
  double usd_per_gb_between_continents = 0.08;
  // The price of one GB from `from` to `to`: 0 within one zone, or when either is unknown ("").
  double UsdPerGb(std::string_view from, std::string_view to) const;
  // Dollars for `bytes` from `from` to `to`.
  double Usd(int64_t bytes, std::string_view from, std::string_view to) const;
  // Whether bytes between the two are billed as egress (both known, not the same zone).
  static bool Crosses(std::string_view from, std::string_view to);
};
// "us-central1-b" -> "us-central1"; a name without "-" is its own region.
std::string_view RegionOfZone(std::string_view zone);
// "us-central1-b" -> "us"; a name without "-" is its own continent.
std::string_view ContinentOfZone(std::string_view zone);

// Interconnect between TensorCores of a slice, as the model assumes it.
struct InterconnectSpec {
  double link_bytes_per_second;  // one direction of one link
  double hop_latency_seconds;
};
const InterconnectSpec& InterconnectOf(Generation generation);

struct Workload {
  std::string name;
  double flops_per_example = 0;  // training FLOPs (forward + backward) per example per step
  int per_core_batch = 0;
  double gradient_bytes = 0;  // bytes all-reduced per step
  double efficiency = 0;      // achieved fraction of peak FLOP/s, in (0, 1]
};

// The named reference workloads ("resnet50", "gan128"); others are an error listing them.
Result<Workload> ReferenceWorkload(std::string_view name);
std::vector<std::string_view> ReferenceWorkloadNames();

struct StepEstimate {
  double compute_seconds = 0;
  double allreduce_seconds = 0;
  int global_batch = 0;
  double step_seconds() const { return compute_seconds + allreduce_seconds; }
  double examples_per_second() const { return global_batch / step_seconds(); }
};

// One training step of `w` on a slice of `type` (the formula above).
StepEstimate EstimateStep(const Workload& w, const AcceleratorType& type);

}  // namespace podsched::pod
