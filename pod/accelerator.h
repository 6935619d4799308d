// TPU generations and accelerator types ("v2-32"): the domain facts every placement uses.
//
// An accelerator type `vN-C` names C TensorCores of generation N. A slice is a rectangle of
// whole hosts (boards of 2x2 chips, 2 cores per chip, so 8 cores per host):
//   v2: v2-8 (1x1 hosts), v2-32 (2x2), v2-128 (4x4), v2-256 (4x8), v2-512 (8x8, the full pod)
//   v3: v3-8, v3-32, v3-64 (2x4), v3-128, v3-256, v3-512 (8x8), v3-1024 (8x16), v3-2048 (16x16)
// Which types are valid also depends on the pod: a type is valid on a pod when its shape fits
// the pod's host grid in some orientation (v2-1024 never exists; v2-128 is invalid on a 2x2 grid).
//
// Pure values; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace podsched::pod {

enum class Generation { kV2, kV3 };

// Facts about one TPU generation (docs/pod.md, "Accelerator types").
struct GenerationSpec {
  Generation generation;
  std::string_view name;             // "v2"
  int cores_per_chip;                // 2
  int chips_per_host;                // 4 (a 2x2 board)
  int hbm_gib_per_core;              // v2: 8, v3: 16
  double peak_bf16_tflops_per_host;  // v2: 180, v3: 420
  int full_pod_host_rows;            // v2: 8, v3: 16
  int full_pod_host_cols;            // v2: 8, v3: 16
  double on_demand_usd_per_hour_8;   // price of the 8-core slice: v2 4.50, v3 8.00
  double preemptible_usd_per_hour_8; // v2 1.35, v3 2.40
  int cores_per_host() const { return cores_per_chip * chips_per_host; }
};

const GenerationSpec& SpecOf(Generation generation);
// "v2" -> kV2; anything else is an error listing "v2, v3".
Result<Generation> ParseGeneration(std::string_view text);

// A rectangle size in hosts. Orientation matters for a placement, not for a type.
struct SliceShape {
  int rows = 0;
  int cols = 0;
  int hosts() const { return rows * cols; }
  SliceShape Rotated() const { return {cols, rows}; }
  friend bool operator==(const SliceShape&, const SliceShape&) = default;
};

class AcceleratorType {
 public:
  // Parses "v2-32" and checks that the type exists for its generation and fits a pod whose host
  // grid is pod_host_rows x pod_host_cols. Errors name the valid types for that pod, e.g.
  //   "v2-12 is not an accelerator type on this pod; valid: v2-8, v2-32, v2-128, v2-256, v2-512"
  static Result<AcceleratorType> Parse(std::string_view text, Generation pod_generation,
                                       int pod_host_rows, int pod_host_cols);
  // Same, checked against the full pod of the text's own generation.
  static Result<AcceleratorType> Parse(std::string_view text);

  Generation generation() const { return generation_; }
  int tensor_cores() const { return tensor_cores_; }
  int chips() const;
  int hosts() const { return shape_.hosts(); }
  // Canonical orientation (rows <= cols); placements may use shape().Rotated() too.
  SliceShape shape() const { return shape_; }
  std::string ToString() const;  // "v2-32"

  friend bool operator==(const AcceleratorType&, const AcceleratorType&) = default;

 private:
  friend std::vector<AcceleratorType> ValidTypes(Generation, int, int);
  AcceleratorType(Generation g, int cores, SliceShape shape)
      : generation_(g), tensor_cores_(cores), shape_(shape) {}
  Generation generation_ = Generation::kV2;
  int tensor_cores_ = 0;
  SliceShape shape_;
};

// Every type of `generation` that fits a host grid of rows x cols, smallest first.
std::vector<AcceleratorType> ValidTypes(Generation generation, int pod_host_rows,
                                        int pod_host_cols);

}  // namespace podsched::pod
