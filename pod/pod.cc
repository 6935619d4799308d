#include "pod/pod.h"

#include <mutex>

#include "common/check.h"
#include "pod/free_index.h"
#include "pod/legal.h"

namespace podsched::pod {

Pod::Pod(std::string name, Generation generation, int rows, int cols)
    : name_(std::move(name)),
      generation_(generation),
      host_rows_(rows),
      host_cols_(cols),
      hosts_(static_cast<size_t>(rows) * cols) {}

Pod::Pod(const Pod& other)
    : name_(other.name_),
      generation_(other.generation_),
      host_rows_(other.host_rows_),
      host_cols_(other.host_cols_),
      hosts_(other.hosts_),
      allocations_(other.allocations_),
      free_index_(other.SharedIndex()),
      ready_index_(free_index_.get()) {}

Pod& Pod::operator=(const Pod& other) {
  if (this != &other) {
    name_ = other.name_;
    generation_ = other.generation_;
    host_rows_ = other.host_rows_;
    host_cols_ = other.host_cols_;
    hosts_ = other.hosts_;
    allocations_ = other.allocations_;
    free_index_ = other.SharedIndex();
    ready_index_.store(free_index_.get(), std::memory_order_release);
  }
  return *this;
}

Pod::Pod(Pod&& other) noexcept
    : name_(std::move(other.name_)),
      generation_(other.generation_),
      host_rows_(other.host_rows_),
      host_cols_(other.host_cols_),
      hosts_(std::move(other.hosts_)),
      allocations_(other.allocations_),  // shared, not taken: never null, even moved from
      free_index_(std::move(other.free_index_)),
      ready_index_(free_index_.get()) {
  other.ready_index_.store(nullptr, std::memory_order_relaxed);
}

Pod& Pod::operator=(Pod&& other) noexcept {
  if (this != &other) {
    name_ = std::move(other.name_);
    generation_ = other.generation_;
    host_rows_ = other.host_rows_;
    host_cols_ = other.host_cols_;
    hosts_ = std::move(other.hosts_);
    allocations_ = other.allocations_;
    free_index_ = std::move(other.free_index_);
    ready_index_.store(free_index_.get(), std::memory_order_release);
    other.ready_index_.store(nullptr, std::memory_order_relaxed);
  }
  return *this;
}

Pod::~Pod() = default;

const FreeIndex& Pod::free_index() const {
  if (const FreeIndex* ready = ready_index_.load(std::memory_order_acquire)) return *ready;
  // The first query after a change: rare next to the queries it serves, so one lock for all pods.
  static std::mutex build;
  std::lock_guard lock(build);
  if (const FreeIndex* ready = ready_index_.load(std::memory_order_relaxed)) return *ready;
  free_index_ = std::make_shared<const FreeIndex>(*this);
  ready_index_.store(free_index_.get(), std::memory_order_release);
  return *free_index_;
}

AllocationTable& Pod::MutableAllocations() {
  // Only the owner changes a pod, while no one reads it (pod.h): a count of 1 means no other pod
  // shares the map, and none can start to before this change is done.
  if (allocations_.use_count() > 1) {
    allocations_ = std::make_shared<AllocationTable>(*allocations_);
  }
  return *allocations_;
}

std::shared_ptr<const FreeIndex> Pod::SharedIndex() const {
  if (hosts_.empty()) return nullptr;  // moved from: nothing to index
  free_index();  // published: free_index_ is only read from now until the next change
  return free_index_;
}

Result<Pod> Pod::Create(std::string name, Generation generation, int host_rows, int host_cols) {
  const GenerationSpec& spec = SpecOf(generation);
  if (host_rows < 1 || host_cols < 1 || host_rows > spec.full_pod_host_rows ||
      host_cols > spec.full_pod_host_cols) {
    return InvalidArgument(
        "a " + std::string(spec.name) + " pod's host grid must be between 1x1 and " +
        std::to_string(spec.full_pod_host_rows) + "x" + std::to_string(spec.full_pod_host_cols) +
        ", not " + std::to_string(host_rows) + "x" + std::to_string(host_cols));
  }
  return Pod(std::move(name), generation, host_rows, host_cols);
}

Pod Pod::Full(std::string name, Generation generation) {
  const GenerationSpec& spec = SpecOf(generation);
  Result<Pod> pod =
      Create(std::move(name), generation, spec.full_pod_host_rows, spec.full_pod_host_cols);
  PODSCHED_CHECK(pod.has_value());
  return std::move(*pod);
}

bool Pod::IsFullPodShape(SliceShape shape) const {
  const GenerationSpec& spec = SpecOf(generation_);
  const bool pod_is_full =
      host_rows_ == spec.full_pod_host_rows && host_cols_ == spec.full_pod_host_cols;
  return pod_is_full && Canonical(shape) == Canonical({host_rows_, host_cols_});
}

const HostStatus& Pod::host(HostId h) const {
  PODSCHED_CHECK(Contains(h));
  return hosts_[static_cast<size_t>(h.value())];
}

std::vector<int> Pod::AvailabilityGrid() const {
  std::vector<int> grid(hosts_.size());
  for (size_t h = 0; h < hosts_.size(); ++h) grid[h] = hosts_[h].available() ? 1 : 0;
  return grid;
}

Result<AcceleratorType> Pod::ParseType(std::string_view text) const {
  return AcceleratorType::Parse(text, generation_, host_rows_, host_cols_);
}

bool Pod::CanPlace(const Placement& p) const {
  if (p.shape.rows < 1 || p.shape.cols < 1 || p.origin.row < 0 || p.origin.col < 0 ||
      p.origin.row + p.shape.rows > host_rows_ || p.origin.col + p.shape.cols > host_cols_) {
    return false;
  }
  for (HostId h : HostsIn(p)) {
    if (!host(h).available()) return false;
  }
  return true;
}

std::vector<Placement> Pod::LegalPlacements(SliceShape shape) const {
  std::vector<Placement> out;
  ForEachLegalPlacement(free_index().available(), shape, [&out](const Placement& p) {
    out.push_back(p);
    return true;
  });
  return out;
}

std::vector<HostId> Pod::HostsIn(const Placement& p) const {
  std::vector<HostId> out;
  out.reserve(static_cast<size_t>(std::max(0, p.shape.hosts())));
  for (int r = p.origin.row; r < p.origin.row + p.shape.rows; ++r) {
    for (int c = p.origin.col; c < p.origin.col + p.shape.cols; ++c) out.push_back(HostAt({r, c}));
  }
  return out;
}

Status Pod::Allocate(AllocationId id, const Placement& p) {
  if (allocations_->contains(id)) {
    return Status(StatusCode::kAlreadyExists,
                  "allocation " + std::to_string(id.value()) + " already holds hosts");
  }
  if (!CanPlace(p)) {
    return Status(StatusCode::kFailedPrecondition,
                  "cannot allocate a " + std::to_string(p.shape.rows) + "x" +
                      std::to_string(p.shape.cols) + " rectangle at host row " +
                      std::to_string(p.origin.row) + ", col " + std::to_string(p.origin.col) +
                      ": it leaves the grid or a host in it is not available");
  }
  for (HostId h : HostsIn(p)) hosts_[static_cast<size_t>(h.value())].allocation = id;
  MutableAllocations().Insert(id, p);
  Changed();
  return Status::Ok();
}

Status Pod::Release(AllocationId id) {
  if (!allocations_->contains(id)) {
    return Status(StatusCode::kNotFound,
                  "allocation " + std::to_string(id.value()) + " holds no hosts in this pod");
  }
  AllocationTable& allocations = MutableAllocations();
  for (HostId h : HostsIn(*allocations.Find(id))) {
    HostStatus& s = hosts_[static_cast<size_t>(h.value())];
    PODSCHED_CHECK(s.allocation == id);
    s.allocation.reset();
  }
  allocations.Erase(id);
  Changed();
  return Status::Ok();
}

namespace {
Status UnknownHost(HostId h, int num_hosts) {
  return Status(StatusCode::kNotFound, "host " + std::to_string(h.value()) +
                                           " is not in this pod (hosts 0.." +
                                           std::to_string(num_hosts - 1) + ")");
}
}  // namespace

Status Pod::MarkUnhealthy(HostId h) {
  if (!Contains(h)) return UnknownHost(h, num_hosts());
  hosts_[static_cast<size_t>(h.value())].healthy = false;
  Changed();
  return Status::Ok();
}

Status Pod::MarkHealthy(HostId h) {
  if (!Contains(h)) return UnknownHost(h, num_hosts());
  hosts_[static_cast<size_t>(h.value())].healthy = true;
  Changed();
  return Status::Ok();
}

Status Pod::SetDraining(HostId h, bool draining) {
  if (!Contains(h)) return UnknownHost(h, num_hosts());
  hosts_[static_cast<size_t>(h.value())].draining = draining;
  Changed();
  return Status::Ok();
}

std::optional<Placement> Pod::PlacementOf(AllocationId id) const {
  const Placement* p = allocations_->Find(id);
  if (p == nullptr) return std::nullopt;
  return *p;
}

int Pod::AvailableHosts() const {
  int n = 0;
  for (const HostStatus& s : hosts_) n += s.available() ? 1 : 0;
  return n;
}

int Pod::AllocatedHosts() const {
  // Each host is in at most one allocation.
  return allocations_->hosts();
}

std::optional<AcceleratorType> Pod::LargestPlaceableType() const {
  const std::vector<const TypeOrigins*>& placeable = free_index().placeable();
  if (placeable.empty()) return std::nullopt;
  return placeable.back()->type;
}

double Pod::Fragmentation() const {
  const int available = AvailableHosts();
  if (available == 0) return 0.0;
  const std::optional<AcceleratorType> largest = LargestPlaceableType();
  const int largest_hosts = largest ? largest->hosts() : 0;
  return 1.0 - static_cast<double>(largest_hosts) / available;
}

double Pod::Utilization() const { return static_cast<double>(AllocatedHosts()) / num_hosts(); }

}  // namespace podsched::pod
