#include "worker/progress/progress_wire.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/json_reader.h"

namespace podsched::progress {
namespace {

Status Bad(std::string message) { return Status(StatusCode::kInvalidArgument, std::move(message)); }

Status AddScalar(Progress& p, const std::string& name, double value) {
  const bool name_ok =
      !name.empty() && name.size() <= kMaxScalarName &&
      name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") ==
          std::string::npos;
  if (!name_ok) {
    return Bad("progress scalar '" + name.substr(0, 40) + "': names are 1.." +
                           std::to_string(kMaxScalarName) + " of [A-Za-z0-9_.-]");
  }
  if (!std::isfinite(value)) return Bad("progress scalar " + name + " is not finite");
  if (!p.scalars.contains(name) && p.scalars.size() >= kMaxScalars) {
    return Bad("more than " + std::to_string(kMaxScalars) + " progress scalars");
  }
  p.scalars[name] = value;
  return Status::Ok();
}

}  // namespace

std::string ProgressLine(const Progress& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "step=%lld/%lld loss=%.4f accuracy=%.4f examples_per_s=%.0f ",
                static_cast<long long>(p.step), static_cast<long long>(p.steps), p.loss, p.accuracy,
                p.examples_per_s);
  return buf + std::string("checkpoint=") + (p.checkpoint.empty() ? "none" : p.checkpoint);
}

std::string ProgressJson(const Progress& p) {
  nlohmann::json j{{"job", p.job},
                   {"epoch", p.epoch},
                   {"step", p.step},
                   {"steps", p.steps},
                   {"loss", p.loss},
                   {"accuracy", p.accuracy},
                   {"examples_per_s", p.examples_per_s},
                   {"checkpoint", p.checkpoint}};
  if (!p.scalars.empty()) j["scalars"] = p.scalars;
  if (!p.key.empty()) j["key"] = p.key;
  return j.dump();
}

Result<Progress> ParseProgressJson(std::string_view json) {
  const auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("progress report is not a JSON object");
  auto job = j.find("job");
  auto epoch = j.find("epoch");
  auto step = j.find("step");
  // JsonInteger: an unsigned number above INT64_MAX would otherwise wrap (epoch 2^64-1 is -1).
  const auto epoch_value = epoch == j.end() ? std::nullopt : JsonInteger<int64_t>(*epoch);
  const auto step_value = step == j.end() ? std::nullopt : JsonInteger<int64_t>(*step);
  if (job == j.end() || !job->is_string() || !epoch_value || !step_value) {
    return InvalidArgument("progress report lacks string job, integer epoch and step");
  }
  Progress p;
  p.job = job->get<std::string>();
  p.epoch = *epoch_value;
  p.step = *step_value;
  auto number = [&](const char* key, double& out) {
    auto it = j.find(key);
    if (it != j.end() && it->is_number()) out = it->get<double>();
  };
  number("loss", p.loss);
  number("accuracy", p.accuracy);
  number("examples_per_s", p.examples_per_s);
  if (auto it = j.find("steps"); it != j.end()) p.steps = JsonInteger<int64_t>(*it).value_or(0);
  if (auto it = j.find("checkpoint"); it != j.end() && it->is_string()) p.checkpoint = it->get<std::string>();
  if (auto it = j.find("checkpoint_step"); it != j.end()) {
    p.checkpoint_step = std::max<int64_t>(0, JsonInteger<int64_t>(*it).value_or(0));
  }
  if (auto it = j.find("key"); it != j.end()) {
    if (!it->is_string() || it->get_ref<const std::string&>().size() > kMaxProgressKey) {
      return InvalidArgument("progress report's key is not a string of at most " +
                             std::to_string(kMaxProgressKey) + " bytes");
    }
    p.key = it->get<std::string>();
  }
  if (auto it = j.find("scalars"); it != j.end() && it->is_object()) {
    for (const auto& [name, value] : it->items()) {
      if (!value.is_number()) continue;
      if (Status s = AddScalar(p, name, value.get<double>()); !s.ok()) return std::unexpected(s);
    }
  }
  return p;
}

int64_t ReportedCheckpointStep(const Progress& p) {
  return p.checkpoint_step > 0 ? p.checkpoint_step : CheckpointStep(p.checkpoint);
}

Result<Progress> ParseProgressLine(std::string_view line) {
  if (!line.starts_with(kProgressLinePrefix)) return InvalidArgument("not a POD_PROGRESS line");
  line.remove_prefix(kProgressLinePrefix.size());
  Progress p;
  bool has_step = false;
  size_t pos = 0;
  while (pos < line.size()) {
    if (line[pos] == ' ' || line[pos] == '\t' || line[pos] == '\r') {
      ++pos;
      continue;
    }
    size_t end = line.find_first_of(" \t\r", pos);
    if (end == std::string_view::npos) end = line.size();
    const std::string_view field = line.substr(pos, end - pos);
    pos = end;
    const size_t eq = field.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return InvalidArgument("POD_PROGRESS: '" + std::string(field.substr(0, 40)) +
                             "' is not KEY=NUMBER");
    }
    const std::string key(field.substr(0, eq));
    const std::string_view value = field.substr(eq + 1);
    auto integer = [&](int64_t& out) -> Status {
      auto [q, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
      if (ec != std::errc() || q != value.data() + value.size() || out < 0) {
        return Bad("POD_PROGRESS: " + key + "=" + std::string(value.substr(0, 24)) +
                               " is not a non-negative integer");
      }
      return Status::Ok();
    };
    Status s = Status::Ok();
    if (key == "step") {
      s = integer(p.step);
      has_step = true;
    } else if (key == "total_steps") {
      s = integer(p.steps);
    } else if (key == "checkpoint_step") {
      s = integer(p.checkpoint_step);
    } else {
      double d = 0;
      auto [q, ec] = std::from_chars(value.data(), value.data() + value.size(), d);
      if (ec != std::errc() || q != value.data() + value.size() || !std::isfinite(d)) {
        return InvalidArgument("POD_PROGRESS: " + key + "=" + std::string(value.substr(0, 24)) +
                               " is not a number");
      }
      if (key == "loss") {
        p.loss = d;
      } else if (key == "accuracy") {
        p.accuracy = d;
      } else if (key == "examples_per_second") {
        p.examples_per_s = d;
      } else {
        s = AddScalar(p, key, d);
      }
    }
    if (!s.ok()) return std::unexpected(s);
  }
  if (!has_step) return InvalidArgument("POD_PROGRESS: step=N is required");
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
