#include "pod/session.h"

#include <algorithm>
#include <charconv>

namespace podsched::pod {
namespace {

std::optional<int> ParseNonNegative(std::string_view text) {
  int v = 0;
  if (text.empty() || text.size() > 9) return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

std::string Shape(SliceShape s) { return std::to_string(s.rows) + "x" + std::to_string(s.cols); }

std::string Label(AllocationId id, const AcceleratorType& t) {
  return "allocation " + std::to_string(id.value()) + " (" + t.ToString() + ")";
}

}  // namespace

Result<Pod> ParsePodSpec(std::string_view text) {
  const std::string usage = "expected v2, v3, v2:RxC, v3:RxC or RxC (a v2 grid), got '" +
                            std::string(text) + "'";
  Generation g = Generation::kV2;
  std::string_view grid = text;
  if (const size_t colon = text.find(':'); colon != std::string_view::npos) {
    Result<Generation> parsed = ParseGeneration(text.substr(0, colon));
    if (!parsed) return InvalidArgument(usage);
    g = *parsed;
    grid = text.substr(colon + 1);
  } else if (Result<Generation> whole = ParseGeneration(text)) {
    return Pod::Full(std::string(text), *whole);
  }
  const size_t x = grid.find('x');
  if (x == std::string_view::npos) return InvalidArgument(usage);
  const std::optional<int> rows = ParseNonNegative(grid.substr(0, x));
  const std::optional<int> cols = ParseNonNegative(grid.substr(x + 1));
  if (!rows || !cols) return InvalidArgument(usage);
  return Pod::Create(std::string(text), g, *rows, *cols);
}

Result<ScriptRequest> ParseRequest(std::string_view text, const Pod& pod) {
  ScriptRequest r;
  r.text = std::string(text);
  const auto id_after = [&](std::string_view prefix) -> std::optional<int> {
    return text.starts_with(prefix) ? ParseNonNegative(text.substr(prefix.size()))
                                    : std::nullopt;
  };
  if (text.starts_with('-') || text.starts_with("release:")) {
    const std::optional<int> n = text.starts_with('-') ? id_after("-") : id_after("release:");
    if (!n || *n == 0) {
      return InvalidArgument("'" + r.text + "': release needs an allocation number, e.g. -2");
    }
    r.kind = ScriptRequest::Kind::kRelease;
    r.allocation = AllocationId(*n);
    return r;
  }
  static constexpr std::pair<std::string_view, ScriptRequest::Kind> kHostOps[] = {
      {"fail:", ScriptRequest::Kind::kFail},
      {"heal:", ScriptRequest::Kind::kHeal},
      {"drain:", ScriptRequest::Kind::kDrain},
      {"undrain:", ScriptRequest::Kind::kUndrain}};
  for (const auto& [prefix, kind] : kHostOps) {
    if (!text.starts_with(prefix)) continue;
    const std::optional<int> h = id_after(prefix);
    if (!h || !pod.Contains(HostId(*h))) {
      return InvalidArgument("'" + r.text + "': hosts are numbered 0.." +
                             std::to_string(pod.num_hosts() - 1));
    }
    r.kind = kind;
    r.host = HostId(*h);
    return r;
  }
  Result<AcceleratorType> type = pod.ParseType(text);
  if (!type) {
    return InvalidArgument(type.error().message() +
                           "; other requests: -N (release), fail:H, heal:H, drain:H, undrain:H");
  }
  r.kind = ScriptRequest::Kind::kAllocate;
  r.type = *type;
  return r;
}

std::string DescribePlacement(const Placement& p) {
  return Shape(p.shape) + " hosts at row " + std::to_string(p.origin.row) + " col " +
         std::to_string(p.origin.col);
}

std::string NoRoomReason(SliceShape shape) {
  if (shape.rows == shape.cols) return "no free " + Shape(shape) + " block";
  return "no free " + Shape(shape) + " or " + Shape(shape.Rotated()) + " block";
}

PlacementSession::PlacementSession(Pod pod, std::unique_ptr<PlacementPolicy> policy)
    : pod_(std::move(pod)), policy_(std::move(policy)) {}

std::vector<AllocationId> PlacementSession::waiting() const {
  std::vector<AllocationId> out;
  for (const Waiting& w : queue_) out.push_back(w.id);
  return out;
}

std::optional<std::string> PlacementSession::TryPlace(AllocationId id,
                                                      const AcceleratorType& type) {
  const std::optional<Placement> p = policy_->Choose(pod_, type);
  if (!p) return std::nullopt;
  const Status s = pod_.Allocate(id, *p);
  if (!s.ok()) return "error: " + s.message();  // a policy bug; shown, not hidden
  return DescribePlacement(*p);
}

void PlacementSession::DrainQueue(std::vector<std::string>& out) {
  while (!queue_.empty()) {
    const Waiting& head = queue_.front();
    const std::optional<std::string> where = TryPlace(head.id, head.type);
    if (!where) return;
    out.push_back(Label(head.id, head.type) + " placed from the queue -> " + *where);
    queue_.pop_front();
  }
}

std::vector<std::string> PlacementSession::Apply(const ScriptRequest& r) {
  std::vector<std::string> out;
  Status status;
  switch (r.kind) {
    case ScriptRequest::Kind::kAllocate: {
      const AllocationId id(next_id_++);
      const AcceleratorType& type = *r.type;
      // FIFO: nothing overtakes a waiting request.
      const std::optional<std::string> where =
          queue_.empty() ? TryPlace(id, type) : std::nullopt;
      if (where) {
        out.push_back(Label(id, type) + " -> " + *where);
      } else {
        std::string why = queue_.empty() ? NoRoomReason(type.shape())
                                         : "behind " + std::to_string(queue_.size()) +
                                               " waiting request(s)";
        out.push_back(Label(id, type) + " waits: " + why + " (" +
                      std::to_string(pod_.AvailableHosts()) + " hosts free)");
        queue_.push_back({id, type});
        ++requests_waited_;
      }
      return out;
    }
    case ScriptRequest::Kind::kRelease: {
      auto it = std::find_if(queue_.begin(), queue_.end(),
                             [&](const Waiting& w) { return w.id == r.allocation; });
      if (it != queue_.end()) {
        out.push_back("allocation " + std::to_string(r.allocation.value()) +
                      " withdrawn from the queue");
        queue_.erase(it);
        break;
      }
      status = pod_.Release(r.allocation);
      if (status.ok()) {
        out.push_back("allocation " + std::to_string(r.allocation.value()) + " released");
      }
      break;
    }
    case ScriptRequest::Kind::kFail:
      status = pod_.MarkUnhealthy(r.host);
      if (status.ok()) out.push_back("host " + std::to_string(r.host.value()) + " failed");
      break;
    case ScriptRequest::Kind::kHeal:
      status = pod_.MarkHealthy(r.host);
      if (status.ok()) out.push_back("host " + std::to_string(r.host.value()) + " healthy");
      break;
    case ScriptRequest::Kind::kDrain:
    case ScriptRequest::Kind::kUndrain: {
      const bool drain = r.kind == ScriptRequest::Kind::kDrain;
      status = pod_.SetDraining(r.host, drain);
      if (status.ok()) {
        out.push_back("host " + std::to_string(r.host.value()) +
                      (drain ? " draining" : " no longer draining"));
      }
      break;
    }
  }
  if (!status.ok()) out.push_back("error: " + status.message());
  DrainQueue(out);
  return out;
}

}  // namespace podsched::pod
