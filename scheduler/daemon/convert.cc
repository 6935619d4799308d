#include "scheduler/daemon/convert.h"

#include <cstdio>
#include <ctime>
#include <map>
#include <string_view>
#include <tuple>

#include "common/check.h"
#include "pod/cost.h"
#include "scheduler/daemon/checkpoint_prefix.h"
#include "scheduler/daemon/json_util.h"

namespace podsched::daemon {
namespace {

void SetPlacement(const pod::Placement& rect, api::Placement* out) {
  out->set_row(rect.origin.row);
  out->set_col(rect.origin.col);
  out->set_rows(rect.shape.rows);
  out->set_cols(rect.shape.cols);
}

}  // namespace

std::string Rfc3339(TimePoint t) {
  if (t == TimePoint{}) return "";
  auto us = t.time_since_epoch().count();
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(us % 1000000));
  return buf;
}

Result<core::JobSpec> SpecFromProto(const api::JobSpec& in, const std::string& user,
                                    const CheckpointStores& stores) {
  for (const auto* field : {&in.name(), &in.accelerator(), &in.checkpoint_url()}) {
    if (HasControlCharacters(*field)) {
      return InvalidArgument(
          "name, accelerator and checkpoint_url must not contain control "
          "characters");
    }
  }
  if (in.name().empty()) return InvalidArgument("name is empty; give the job a name");
  if (in.checkpoint_every_seconds() < 0 || in.grace_period_seconds() < 0 ||
      in.max_runtime_seconds() < 0 || in.expected_runtime_seconds() < 0) {
    return InvalidArgument(
        "durations (checkpoint_every_seconds, grace_period_seconds, "
        "max_runtime_seconds, expected_runtime_seconds) must be >= 0");
  }
  constexpr int64_t kMaxSeconds = int64_t{10} * 365 * 24 * 3600;
  if (in.checkpoint_every_seconds() > kMaxSeconds || in.grace_period_seconds() > kMaxSeconds ||
      in.max_runtime_seconds() > kMaxSeconds || in.expected_runtime_seconds() > kMaxSeconds) {
    return InvalidArgument("durations must be at most ten years");
  }
  core::JobSpec spec;
  spec.name = in.name();
  spec.user = UserName(user);
  spec.accelerator = in.accelerator();
  spec.zone = in.zone();  // checked by the core (names, and against the fleet)
  spec.pod = in.pod();
  spec.preemptible = in.preemptible();
  spec.priority = in.priority();
  spec.command = in.command();
  spec.args.assign(in.args().begin(), in.args().end());
  for (const auto& [k, v] : in.env()) spec.env[k] = v;
  // One checkpoint URL: the spec's checkpoint_url, or POD_CHECKPOINT_URL of its env (empty
  // there: no checkpoints), else the user's prefix of the default store (of the zone's store,
  // chosen at the first launch, when zones have stores); never outside the user's prefixes.
  std::string ckpt = in.checkpoint_url();
  if (auto it = spec.env.find("POD_CHECKPOINT_URL"); it != spec.env.end()) {
    if (!ckpt.empty() && it->second != ckpt) {
      return InvalidArgument("checkpoint_url and env POD_CHECKPOINT_URL differ; give one of them");
    }
    ckpt = it->second;
  } else if (ckpt.empty() && !stores.zoned() && !stores.default_url().empty()) {
    ckpt = UserCheckpointPrefix(stores.default_url(), user);
  }
  if (!ckpt.empty() && !stores.default_url().empty()) {
    if (Status s = stores.CheckUserUrl(ckpt, user); !s.ok()) return std::unexpected(s);
  }
  if (!ckpt.empty() || spec.env.contains("POD_CHECKPOINT_URL")) {
    spec.env["POD_CHECKPOINT_URL"] = ckpt;
  }
  spec.ranks_per_host = in.ranks_per_host() == 0 ? 1 : in.ranks_per_host();
  spec.slices = in.slices() == 0 ? 1 : in.slices();  // the range is checked by the core
  auto launcher = core::ParseLauncher(in.launcher());
  if (!launcher) return std::unexpected(launcher.error());
  spec.launcher = *launcher;
  spec.checkpoint_interval = std::chrono::seconds(in.checkpoint_every_seconds());
  if (in.grace_period_seconds() > 0) {
    spec.grace_period = std::chrono::seconds(in.grace_period_seconds());
  }
  spec.max_runtime = std::chrono::seconds(in.max_runtime_seconds());
  if (in.has_max_restarts()) spec.max_restarts = in.max_restarts();
  if (in.expected_runtime_seconds() > 0) {
    spec.expected_runtime = std::chrono::seconds(in.expected_runtime_seconds());
  }
  if (!in.dependency().empty()) {
    auto deps = core::ParseDependencies(in.dependency());
    if (!deps) return std::unexpected(deps.error());
    spec.dependencies = std::move(*deps);
  }
  return spec;
}

api::JobSpec SpecToProto(const core::JobSpec& spec) {
  api::JobSpec out;
  out.set_name(spec.name);
  out.set_accelerator(spec.accelerator);
  out.set_zone(spec.zone);
  out.set_pod(spec.pod);
  out.set_preemptible(spec.preemptible);
  out.set_priority(spec.priority);
  out.set_command(spec.command);
  for (const auto& a : spec.args) out.add_args(a);
  for (const auto& [k, v] : spec.env) (*out.mutable_env())[k] = v;
  out.set_ranks_per_host(spec.ranks_per_host);
  out.set_slices(spec.slices);
  out.set_launcher(std::string(core::LauncherName(spec.launcher)));
  out.set_checkpoint_every_seconds(
      std::chrono::duration_cast<std::chrono::seconds>(spec.checkpoint_interval).count());
  out.set_grace_period_seconds(
      std::chrono::duration_cast<std::chrono::seconds>(spec.grace_period).count());
  out.set_max_runtime_seconds(
      std::chrono::duration_cast<std::chrono::seconds>(spec.max_runtime).count());
  out.set_max_restarts(spec.max_restarts);
  if (spec.expected_runtime) {
    out.set_expected_runtime_seconds(
        std::chrono::duration_cast<std::chrono::seconds>(*spec.expected_runtime).count());
  }
  auto it = spec.env.find("POD_CHECKPOINT_URL");
  if (it != spec.env.end()) out.set_checkpoint_url(it->second);
  if (spec.array) out.set_array(spec.array->expression);
  out.set_dependency(core::FormatDependencies(spec.dependencies));
  return out;
}

double CostUsd(const core::JobRecord& job, const pod::AcceleratorType* type, TimePoint now) {
  if (type == nullptr) return job.egress_usd;
  Duration held = job.run_time;
  if (core::HoldsHosts(job.state) && now > job.start_time) held += now - job.start_time;
  // Every slice of a multislice job is billed (the slices are held together), and checkpoints
  // moved across zones.
  return job.egress_usd + job.spec.slices *
         pod::SliceUsd(*type,
                       job.spec.preemptible ? pod::PriceClass::kPreemptible
                                            : pod::PriceClass::kOnDemand,
                       held);
}

api::Job JobToProto(const core::JobRecord& job, const core::Scheduler& scheduler, TimePoint now,
                    bool with_spec) {
  if (const pod::AcceleratorType* type = scheduler.TypeOf(job.id)) {
    return JobToProto(job, scheduler.fleet(), type, now, with_spec);
  }
  auto parsed = scheduler.fleet().ParseType(job.spec.accelerator);
  return JobToProto(job, scheduler.fleet(), parsed ? &*parsed : nullptr, now, with_spec);
}

api::Job JobToProto(const core::JobRecord& job, const pod::Fleet& fleet,
                    const pod::AcceleratorType* type, TimePoint now, bool with_spec) {
  api::Job out;
  out.set_id(job.id.value());
  out.set_name(job.spec.name);
  out.set_user(job.spec.user.value());
  out.set_accelerator(job.spec.accelerator);
  out.set_preemptible(job.spec.preemptible);
  out.set_priority(job.spec.priority);
  out.set_state(std::string(core::JobStateName(job.state)));
  out.set_reason(job.reason);
  out.set_epoch(job.epoch);
  out.set_restarts(job.restarts);
  out.set_preemptions(job.preemptions);
  out.set_step(job.step);
  out.set_last_checkpoint_step(job.last_checkpoint_step);
  out.set_cost_usd(CostUsd(job, type, now));
  out.set_checkpoint_store(job.checkpoint_store);
  out.set_checkpoint_zone(job.checkpoint_zone);
  out.set_checkpoint_bytes(job.checkpoint_bytes);
  out.set_egress_bytes(job.egress_bytes);
  out.set_egress_usd(job.egress_usd);
  out.set_submit_time(Rfc3339(job.submit_time));
  out.set_start_time(Rfc3339(job.start_time));
  out.set_end_time(Rfc3339(job.end_time));
  if (job.placement) {
    out.set_pod(fleet.pod(job.placement->pod).name());
  } else if (fleet.size() == 1) {
    out.set_pod(fleet.pod(0).name());
  }
  out.set_task_name(core::TaskName(job.id, job.spec.array));
  if (job.spec.array) {
    out.set_array_id(job.spec.array->array_id.value());
    out.set_array_index(job.spec.array->index);
  }
  if (job.placement && core::HoldsHosts(job.state)) {
    SetPlacement(job.placement->rect, out.mutable_placement());
    // By the pod's own ids, beside its name (as the job's POD_HOSTS).
    for (HostId h : fleet.pod(job.placement->pod).HostsIn(job.placement->rect)) {
      out.add_hosts(h.value());
    }
    for (const pod::FleetPlacement& slice : job.more_slices) {
      auto* s = out.add_more_slices();
      s->set_pod(fleet.pod(slice.pod).name());
      SetPlacement(slice.rect, s->mutable_placement());
      for (HostId h : fleet.pod(slice.pod).HostsIn(slice.rect)) s->add_hosts(h.value());
    }
  }
  if (with_spec) *out.mutable_spec() = SpecToProto(job.spec);
  return out;
}

void AddSweepDetails(const core::Scheduler& scheduler, const core::JobRecord& job, api::Job* out) {
  for (const core::Dependency& dep : job.spec.dependencies) {
    auto [target, status] = scheduler.DependencyStatusOf(dep);
    auto* d = out->add_dependencies();
    d->set_dependency(core::FormatDependency(dep));
    d->set_target_state(target.state);
    d->set_verdict(status.verdict == core::DependencyVerdict::kMet     ? "met"
                   : status.verdict == core::DependencyVerdict::kNever ? "never"
                                                                       : "waiting");
  }
  if (!job.spec.array) return;
  const core::JobArray* array = scheduler.FindArray(job.spec.array->array_id);
  if (array == nullptr) return;
  auto* a = out->mutable_array();
  a->set_array_id(array->id.value());
  a->set_expression(array->expression);
  a->set_tasks(static_cast<int32_t>(array->tasks.size()));
  a->set_throttle(array->throttle);
  for (int s = 0; s < static_cast<int>(array->by_state.size()); ++s) {
    if (array->by_state[s] == 0) continue;
    (*a->mutable_tasks_by_state())[std::string(core::JobStateName(static_cast<core::JobState>(s)))] =
        array->by_state[s];
  }
}

api::JobEvent EventToProto(const core::JobEvent& event) {
  api::JobEvent out;
  out.set_seq(event.seq);
  out.set_time(Rfc3339(event.time));
  out.set_job_id(event.job.value());
  out.set_epoch(event.epoch);
  if (event.from) out.set_from(std::string(core::JobStateName(*event.from)));
  out.set_to(std::string(core::JobStateName(event.to)));
  out.set_reason(event.reason);
  out.set_pod(event.pod);
  for (HostId h : event.hosts) out.add_hosts(h.value());
  for (const core::JobEvent::Slice& slice : event.more_slices) {
    auto* s = out.add_more_slices();
    s->set_pod(slice.pod);
    for (HostId h : slice.hosts) s->add_hosts(h.value());
  }
  return out;
}

std::vector<api::Pod> PodsToProto(const core::Scheduler& scheduler, std::optional<int> only,
                                  int max_pending) {
  const pod::Fleet& fleet = scheduler.fleet();
  std::vector<int> indexes;
  if (only) {
    indexes.push_back(*only);
  } else {
    for (int i = 0; i < fleet.size(); ++i) indexes.push_back(i);
  }
  std::vector<api::Pod> out(indexes.size());
  std::vector<int> slot_of(static_cast<size_t>(fleet.size()), -1);  // pod index -> out
  std::vector<std::vector<int64_t>> job_of_host(indexes.size());
  for (size_t k = 0; k < indexes.size(); ++k) {
    const pod::Pod& pod = fleet.pod(indexes[k]);
    slot_of[static_cast<size_t>(indexes[k])] = static_cast<int>(k);
    api::Pod& p = out[k];
    p.set_name(pod.name());
    p.set_zone(fleet.zone(indexes[k]));
    p.set_job_class(std::string(pod::PodClassName(fleet.job_class(indexes[k]))));
    p.set_generation(std::string(pod::SpecOf(pod.generation()).name));
    p.set_host_rows(pod.host_rows());
    p.set_host_cols(pod.host_cols());
    job_of_host[k].assign(static_cast<size_t>(pod.num_hosts()), 0);
  }
  // The pods a waiting job could run on depend on its type's generation and shape and its scope:
  // looked up once per such kind. Once every one of them lists max_pending jobs, a further job
  // of that kind is only counted (O(queued + kinds x pods), not O(queued x pods)).
  using WaitingKind = std::tuple<int, int, int, std::string_view, std::string_view, bool>;
  struct WaitingPods {
    std::vector<size_t> slots;  // in `out`
    bool full = false;          // every slot lists max_pending jobs
    int32_t counted_later = 0;  // jobs counted once `full`, added to each slot's total at the end
  };
  std::map<WaitingKind, WaitingPods> kinds;
  for (JobId id : scheduler.ActiveJobIds()) {
    const core::JobRecord& job = *scheduler.Find(id);
    if (core::HoldsHosts(job.state) && job.placement) {
      const std::vector<pod::FleetPlacement> slices = core::SlicesOf(job);
      for (int slice = 0; slice < static_cast<int>(slices.size()); ++slice) {
        const pod::FleetPlacement& at = slices[static_cast<size_t>(slice)];
        const int k = slot_of[static_cast<size_t>(at.pod)];
        if (k < 0) continue;
        for (HostId h : fleet.pod(at.pod).HostsIn(at.rect)) {
          job_of_host[static_cast<size_t>(k)][static_cast<size_t>(h.value())] = id.value();
        }
        api::Pod& p = out[static_cast<size_t>(k)];
        const int held = at.rect.shape.hosts();
        if (job.spec.preemptible) {
          p.set_preemptible_hosts(p.preemptible_hosts() + held);
        } else {
          p.set_on_demand_hosts(p.on_demand_hosts() + held);
        }
        auto* a = p.add_allocations();
        a->set_job_id(id.value());
        a->set_user(job.spec.user.value());
        a->set_accelerator(job.spec.accelerator);
        a->set_preemptible(job.spec.preemptible);
        a->set_state(std::string(core::JobStateName(job.state)));
        SetPlacement(at.rect, a->mutable_placement());
        a->set_slice(slice);
      }
    } else if (job.state == core::JobState::kQueued) {
      // Waiting for room in every pod that can hold its type, within its zone or pod if any.
      const pod::AcceleratorType* type = scheduler.TypeOf(id);
      if (type == nullptr) continue;
      auto [it, fresh] = kinds.try_emplace(
          WaitingKind{static_cast<int>(type->generation()), type->shape().rows,
                      type->shape().cols, job.spec.zone, job.spec.pod, job.spec.preemptible});
      WaitingPods& where = it->second;
      if (fresh) {
        for (size_t k = 0; k < indexes.size(); ++k) {
          if (fleet.CanHold(indexes[k], *type, job.spec.zone, job.spec.pod, job.spec.preemptible)) {
            where.slots.push_back(k);
          }
        }
      }
      if (where.full) {
        ++where.counted_later;
        continue;
      }
      where.full = true;
      for (size_t k : where.slots) {
        api::Pod& p = out[k];
        p.set_pending_total(p.pending_total() + 1);
        if (p.pending_size() >= max_pending) continue;
        auto* pending = p.add_pending();
        pending->set_job_id(id.value());
        pending->set_user(job.spec.user.value());
        pending->set_accelerator(job.spec.accelerator);
        pending->set_reason(job.reason);
        if (p.pending_size() < max_pending) where.full = false;
      }
    }
  }
  for (const auto& [kind, where] : kinds) {
    for (size_t k : where.slots) out[k].set_pending_total(out[k].pending_total() + where.counted_later);
  }
  for (size_t k = 0; k < indexes.size(); ++k) {
    const pod::Pod& pod = fleet.pod(indexes[k]);
    api::Pod& p = out[k];
    for (int i = 0; i < pod.num_hosts(); ++i) {
      HostId h(i);
      const auto& status = pod.host(h);
      auto* host = p.add_hosts();
      host->set_id(i);
      host->set_row(pod.CoordOf(h).row);
      host->set_col(pod.CoordOf(h).col);
      host->set_healthy(status.healthy);
      host->set_draining(status.draining);
      host->set_allocated(status.allocation.has_value());
      host->set_job_id(status.allocation ? job_of_host[k][static_cast<size_t>(i)] : 0);
    }
    if (auto largest = pod.LargestPlaceableType()) {
      p.set_largest_placeable_type(largest->ToString());
    }
    p.set_utilization(pod.Utilization());
    p.set_fragmentation(pod.Fragmentation());
    p.set_available_hosts(pod.AvailableHosts());
  }
  return out;
}

api::ProgressPoint ProgressToProto(const ProgressSample& p) {
  api::ProgressPoint out;
  out.set_time(Rfc3339(p.time));
  out.set_epoch(p.epoch);
  out.set_step(p.step);
  out.set_total_steps(p.total_steps);
  out.set_loss(p.loss);
  out.set_accuracy(p.accuracy);
  out.set_examples_per_second(p.examples_per_second);
  out.set_last_checkpoint_step(p.last_checkpoint_step);
  for (const auto& [name, value] : p.scalars) (*out.mutable_scalars())[name] = value;
  return out;
}

std::string JobListJson(const JobSnapshot& snapshot, const JobSnapshot::Page& page, TimePoint now) {
  api::JobList envelope;
  envelope.set_total(page.total);
  if (page.more) envelope.set_next_page_token(std::to_string(page.jobs.back()->job.id.value()));
  // {"jobs":[],"next_page_token":...}: the jobs go between the brackets.
  const std::string rest = ToJson(envelope);
  constexpr std::string_view kJobs = R"({"jobs":[)";
  PODSCHED_CHECK_MSG(rest.starts_with(kJobs), rest.c_str());
  const pod::Fleet& fleet = snapshot.fleet();
  auto render = [&fleet, now](const JobSnapshot::Entry& e) {
    return ToJson(JobToProto(e.job, fleet, e.accelerator(), now, false));
  };
  std::string out(kJobs);
  for (size_t i = 0; i < page.jobs.size(); ++i) {
    if (i > 0) out += ',';
    const JobSnapshot::Entry& e = *page.jobs[i];
    // Only CostUsd reads `now`, and only for a job that holds hosts.
    out += core::HoldsHosts(e.job.state) ? render(e) : e.Json(render);
  }
  out.append(rest, kJobs.size());
  return out;
}

}  // namespace podsched::daemon
