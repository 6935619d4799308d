#include "worker/progress/progress_wire.h"

#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace podsched::progress {

std::string ProgressLine(const Progress& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "step=%lld/%lld loss=%.4f accuracy=%.4f examples_per_s=%.0f ",
                static_cast<long long>(p.step), static_cast<long long>(p.steps), p.loss, p.accuracy,
                p.examples_per_s);
  return buf + std::string("checkpoint=") + (p.checkpoint.empty() ? "none" : p.checkpoint);
}

std::string ProgressJson(const Progress& p) {
  return nlohmann::json{{"job", p.job},
                        {"epoch", p.epoch},
                        {"step", p.step},
                        {"steps", p.steps},
                        {"loss", p.loss},
                        {"accuracy", p.accuracy},
                        {"examples_per_s", p.examples_per_s},
                        {"checkpoint", p.checkpoint}}
      .dump();
}

Result<Progress> ParseProgressJson(std::string_view json) {
  const auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("progress report is not a JSON object");
  auto job = j.find("job");
  auto epoch = j.find("epoch");
  auto step = j.find("step");
  if (job == j.end() || !job->is_string() || epoch == j.end() || !epoch->is_number_integer() ||
      step == j.end() || !step->is_number_integer()) {
    return InvalidArgument("progress report lacks string job, integer epoch and step");
  }
  Progress p;
  p.job = job->get<std::string>();
  p.epoch = epoch->get<int64_t>();
  p.step = step->get<int64_t>();
  auto number = [&](const char* key, double& out) {
    auto it = j.find(key);
    if (it != j.end() && it->is_number()) out = it->get<double>();
  };
  number("loss", p.loss);
  number("accuracy", p.accuracy);
  number("examples_per_s", p.examples_per_s);
  if (auto it = j.find("steps"); it != j.end() && it->is_number_integer()) p.steps = it->get<int64_t>();
  if (auto it = j.find("checkpoint"); it != j.end() && it->is_string()) p.checkpoint = it->get<std::string>();
  return p;
}

int64_t CheckpointStep(std::string_view checkpoint) {
  if (!checkpoint.starts_with("ckpt-")) return 0;
  const size_t dash = checkpoint.rfind('-');
  if (dash < 5) return 0;
  const std::string_view digits = checkpoint.substr(dash + 1);
  int64_t step = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (ec != std::errc() || p != digits.data() + digits.size() || step < 0) return 0;
  return step;
}

Result<Ipv4Endpoint> ParseProgressEndpoint(std::string_view url) {
  auto ep = ParseIpv4Endpoint(url, "udp");
  if (!ep) return InvalidArgument("POD_PROGRESS_ENDPOINT: " + ep.error().message());
  return ep;
}

}  // namespace podsched::progress
