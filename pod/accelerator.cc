#include "pod/accelerator.h"

#include <array>
#include <charconv>
#include <span>

#include "common/check.h"

namespace podsched::pod {
namespace {

constexpr GenerationSpec kV2{Generation::kV2, "v2", 2, 4, 8, 180.0, 8, 8, 4.50, 1.35};
constexpr GenerationSpec kV3{Generation::kV3, "v3", 2, 4, 16, 420.0, 16, 16, 8.00, 2.40};

struct TypeShape {
  int cores;
  SliceShape shape;  // canonical: rows <= cols
};

constexpr std::array<TypeShape, 5> kV2Types{
    {{8, {1, 1}}, {32, {2, 2}}, {128, {4, 4}}, {256, {4, 8}}, {512, {8, 8}}}};
constexpr std::array<TypeShape, 8> kV3Types{{{8, {1, 1}},
                                             {32, {2, 2}},
                                             {64, {2, 4}},
                                             {128, {4, 4}},
                                             {256, {4, 8}},
                                             {512, {8, 8}},
                                             {1024, {8, 16}},
                                             {2048, {16, 16}}}};

std::span<const TypeShape> TypesOf(Generation g) {
  if (g == Generation::kV2) return kV2Types;
  return kV3Types;
}

bool Fits(SliceShape s, int rows, int cols) {
  return (s.rows <= rows && s.cols <= cols) || (s.cols <= rows && s.rows <= cols);
}

std::string ValidList(Generation g, int rows, int cols) {
  std::string out;
  for (const AcceleratorType& t : ValidTypes(g, rows, cols)) {
    if (!out.empty()) out += ", ";
    out += t.ToString();
  }
  return out.empty() ? "none" : out;
}

// Shows the offending text exactly, quoted, so that whitespace and empty input are visible.
std::string Quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace

const GenerationSpec& SpecOf(Generation generation) {
  return generation == Generation::kV2 ? kV2 : kV3;
}

Result<Generation> ParseGeneration(std::string_view text) {
  if (text == "v2") return Generation::kV2;
  if (text == "v3") return Generation::kV3;
  return InvalidArgument(Quoted(text) + " is not a TPU generation; valid: v2, v3");
}

int AcceleratorType::chips() const { return tensor_cores_ / SpecOf(generation_).cores_per_chip; }

std::string AcceleratorType::ToString() const {
  return std::string(SpecOf(generation_).name) + "-" + std::to_string(tensor_cores_);
}

std::vector<AcceleratorType> ValidTypes(Generation generation, int pod_host_rows,
                                        int pod_host_cols) {
  std::vector<AcceleratorType> out;
  for (const TypeShape& t : TypesOf(generation)) {
    if (Fits(t.shape, pod_host_rows, pod_host_cols)) {
      out.push_back(AcceleratorType(generation, t.cores, t.shape));
    }
  }
  return out;
}

Result<AcceleratorType> AcceleratorType::Parse(std::string_view text, Generation pod_generation,
                                               int pod_host_rows, int pod_host_cols) {
  const GenerationSpec& pod_spec = SpecOf(pod_generation);
  auto invalid = [&](std::string why) {
    return InvalidArgument(Quoted(text) + " is not an accelerator type on this " +
                           std::string(pod_spec.name) + " pod (" + why +
                           "); valid: " + ValidList(pod_generation, pod_host_rows, pod_host_cols));
  };
  if (text.empty()) return invalid("empty");
  const size_t dash = text.find('-');
  if (dash == std::string_view::npos) return invalid("expected the form vN-CORES, e.g. v2-8");
  const std::string_view gen_text = text.substr(0, dash);
  const std::string_view cores_text = text.substr(dash + 1);
  // One canonical spelling (lower case, no spaces, no sign, no leading zero) so that types
  // compare as strings in logs, the database and the API.
  if (gen_text.empty() || cores_text.empty()) {
    return invalid("expected the form vN-CORES, e.g. v2-8");
  }
  if (gen_text.starts_with('V')) return invalid("write the generation in lower case");
  Result<Generation> gen = ParseGeneration(gen_text);
  if (!gen) return invalid("unknown generation " + Quoted(gen_text));
  if (*gen != pod_generation) {
    return invalid(std::string(SpecOf(*gen).name) + " slices do not exist on a " +
                   std::string(pod_spec.name) + " pod");
  }
  for (char c : cores_text) {
    if (c < '0' || c > '9') return invalid("the core count must be a decimal number");
  }
  if (cores_text.front() == '0') return invalid("the core count has a leading zero");
  int cores = 0;
  const auto [end, ec] =
      std::from_chars(cores_text.data(), cores_text.data() + cores_text.size(), cores);
  if (ec == std::errc::result_out_of_range) return invalid("the core count is out of range");
  PODSCHED_CHECK(ec == std::errc() && end == cores_text.data() + cores_text.size());
  for (const TypeShape& t : TypesOf(pod_generation)) {
    if (t.cores != cores) continue;
    if (!Fits(t.shape, pod_host_rows, pod_host_cols)) {
      return invalid("a " + std::to_string(t.shape.rows) + "x" + std::to_string(t.shape.cols) +
                     " host slice does not fit a " + std::to_string(pod_host_rows) + "x" +
                     std::to_string(pod_host_cols) + " host grid");
    }
    return AcceleratorType(pod_generation, cores, t.shape);
  }
  return invalid("no " + std::string(pod_spec.name) + " slice has " + std::to_string(cores) +
                 " TensorCores");
}

Result<AcceleratorType> AcceleratorType::Parse(std::string_view text) {
  // The text's own generation picks the pod to check against ("V2-8" counts as v2 here, so that
  // its error says to write it in lower case).
  for (Generation g : {Generation::kV2, Generation::kV3}) {
    const GenerationSpec& spec = SpecOf(g);
    const std::string_view prefix = text.substr(0, spec.name.size());
    if (prefix.size() == spec.name.size() && (prefix[0] == 'v' || prefix[0] == 'V') &&
        prefix.substr(1) == spec.name.substr(1)) {
      return Parse(text, g, spec.full_pod_host_rows, spec.full_pod_host_cols);
    }
  }
  const GenerationSpec& v2 = SpecOf(Generation::kV2);
  const GenerationSpec& v3 = SpecOf(Generation::kV3);
  return InvalidArgument(
      Quoted(text) + " is not an accelerator type (the generation must be v2 or v3); valid: " +
      ValidList(Generation::kV2, v2.full_pod_host_rows, v2.full_pod_host_cols) + ", " +
      ValidList(Generation::kV3, v3.full_pod_host_rows, v3.full_pod_host_cols));
}

}  // namespace podsched::pod
