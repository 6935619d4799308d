#include "scheduler/daemon/jobs_api.h"

#include <cctype>
#include <deque>
#include <expected>
#include <optional>

#include "api.pb.h"
#include "scheduler/core/dependency.h"
#include "scheduler/daemon/api_response.h"
#include "scheduler/daemon/bus_logic.h"
#include "scheduler/daemon/checkpoint_prefix.h"
#include "scheduler/daemon/convert.h"
#include "scheduler/daemon/json_util.h"
#include "scheduler/daemon/visibility.h"

namespace podsched::daemon {
namespace {

// A job named by a user: its id, or "ARRAYID_INDEX" for a task of an array.
std::optional<JobId> ParseJobName(const core::Scheduler& scheduler, const std::string& raw) {
  const size_t underscore = raw.find('_');
  auto id = ParseInt(raw.substr(0, underscore));
  if (!id || *id <= 0) return std::nullopt;
  if (underscore == std::string::npos) return JobId(*id);
  auto index = ParseInt(raw.substr(underscore + 1));
  const core::JobArray* array = scheduler.FindArray(JobId(*id));
  if (!index || *index < 0 || *index > core::kMaxArrayIndex || array == nullptr) {
    return std::nullopt;
  }
  auto task = array->tasks.find(static_cast<int>(*index));
  if (task == array->tasks.end()) return std::nullopt;
  return task->second;
}

// A job the caller may see: in the scheduler's memory, or an ended job it has forgotten
// (SchedulerConfig::ended_job_retention) read back from the store.
struct FoundJob {
  const core::JobRecord* live = nullptr;
  std::optional<core::JobRecord> stored;
  const core::JobRecord& operator*() const { return live != nullptr ? *live : *stored; }
  const core::JobRecord* operator->() const { return &**this; }
};

// The job named by the route's {id} if the caller may see it, else the 404 to answer.
std::expected<FoundJob, HttpResponse> VisibleJob(const ApiView& view, const Principal& who,
                                                 const ApiRequest& request) {
  const std::string& raw = request.params.at(0);
  auto not_found = [&] {
    return std::unexpected(ErrorResponse(
        404, "not_found", "no job '" + raw + "' (a job id, or ARRAYID_INDEX for an array task)"));
  };
  auto id = ParseJobName(view.scheduler, raw);
  if (!id) return not_found();
  if (const core::JobRecord* job = view.scheduler.Find(*id)) {
    if (!MaySee(who, *job)) return not_found();
    return FoundJob{job, std::nullopt};
  }
  auto stored = view.scheduler.FindStored(*id);
  if (!stored) return std::unexpected(StatusError(stored.error()));
  if (!*stored || !MaySee(who, **stored)) return not_found();
  return FoundJob{nullptr, std::move(*stored)};
}

api::Job JobWithDetails(const ApiView& view, const core::JobRecord& job, TimePoint now) {
  api::Job out = JobToProto(job, view.scheduler, now, true);
  // A forgotten job's dependencies were settled before it ended, and its array is gone from
  // memory: there is nothing current to say about either.
  if (view.scheduler.Find(job.id) != nullptr) AddSweepDetails(view.scheduler, job, &out);
  return out;
}

HttpResponse JobReply(const ApiView& view, const core::JobRecord& job, TimePoint now) {
  return JsonResponse(JobWithDetails(view, job, now));
}

// Cancel or preempt: both refuse a job that ended.
template <typename Call>
HttpResponse Stop(const ApiView& view, const Principal& who, const ApiRequest& request, Call call) {
  auto job = VisibleJob(view, who, request);
  if (!job) return std::move(job.error());
  if (core::IsTerminal((*job)->state)) {
    return ErrorResponse(409, "failed_precondition",
                         "job " + std::to_string((*job)->id.value()) + " already ended (" +
                             std::string(core::JobStateName((*job)->state)) + ")");
  }
  const JobId id = (*job)->id;
  if (Status s = call(id); !s.ok()) return CoreError(s);
  return JobReply(view, *view.scheduler.Find(id), request.now);
}

}  // namespace

HttpResponse SubmitJob(const ApiView& view, ApiCalls& calls, const Principal& who,
                       const ApiRequest& request) {
  api::JobSpec in;
  JsonLimits limits{view.config.limits.max_json_depth, 64 << 10};
  if (Status s = ParseBody(request.http.body, request.http.content_type, limits, &in); !s.ok()) {
    return StatusError(s);
  }
  auto spec =
      SpecFromProto(in, who.user, view.bus.checkpoint_stores());
  if (!spec) return StatusError(spec.error());
  if (const size_t launch = view.bus.LargestLaunchBytes(*spec); launch > kMaxLaunchBytes) {
    return ErrorResponse(
        400, "invalid_argument",
        "the job's command, args and env make a launch message of up to " +
            std::to_string(launch >> 10) + " KiB with the job contract, more than the " +
            std::to_string(kMaxLaunchBytes >> 10) +
            " KiB the host agents accept; pass large data in files, not in env or args");
  }
  JobId id;
  api::SubmitResponse out;
  if (in.array().empty()) {
    auto one = calls.Submit(std::move(*spec), request.now);
    if (!one) return CoreError(one.error());
    id = *one;
  } else {
    auto array = core::ParseArraySpec(in.array());
    if (!array) return StatusError(array.error());
    auto ids = calls.SubmitArray(std::move(*spec), *array, request.now);
    if (!ids) return CoreError(ids.error());
    id = ids->front();
    out.set_array_tasks(static_cast<int32_t>(ids->size()));
  }
  *out.mutable_job() = JobWithDetails(view, *view.scheduler.Find(id), request.now);
  HttpResponse r = MessageResponse(request.http, out, 201);
  r.headers.emplace_back("Location", "/api/v1/jobs/" + std::to_string(id.value()));
  return r;
}

namespace {

// GET /api/v1/jobs's query, checked.
struct ListQuery {
  JobSnapshot::Filter filter;
  int page_size = 0;
  int64_t after = 0;  // page_token: the last id of the previous page
  bool history = false;
};

std::expected<ListQuery, HttpResponse> ParseListQuery(const Limits& limits, const Principal& who,
                                                      const ApiRequest& request) {
  ListQuery q;
  if (const std::string* v = request.NonEmptyQuery("state")) {
    std::string upper = *v;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    auto parsed = core::ParseJobState(upper);
    if (!parsed) return std::unexpected(StatusError(parsed.error()));
    q.filter.state = *parsed;
  }
  if (const std::string* v = request.NonEmptyQuery("class")) {
    if (*v != "on-demand" && *v != "preemptible") {
      return std::unexpected(ErrorResponse(
          400, "invalid_argument", "class '" + *v + "' is not valid; use on-demand or preemptible"));
    }
    q.filter.preemptible = *v == "preemptible";
  }
  if (const std::string* v = request.NonEmptyQuery("user")) q.filter.user = *v;
  if (const std::string* v = request.NonEmptyQuery("array")) {
    auto n = ParseInt(*v);
    if (!n || *n <= 0) {
      return std::unexpected(
          ErrorResponse(400, "invalid_argument", "array '" + *v + "' is not an array id"));
    }
    q.filter.array = JobId(*n);
  }
  // `user=` filters an admin's list; anyone else lists exactly the jobs they may see.
  if (auto only = OnlyOwnerFor(who)) q.filter.user = std::string(*only);
  q.page_size = limits.default_page_size;
  if (const std::string* v = request.Query("page_size")) {
    auto n = ParseInt(*v);
    if (!n || *n < 1 || *n > limits.max_page_size) {
      return std::unexpected(ErrorResponse(
          400, "invalid_argument", "page_size must be 1.." + std::to_string(limits.max_page_size)));
    }
    q.page_size = static_cast<int>(*n);
  }
  if (const std::string* v = request.NonEmptyQuery("page_token")) {
    auto n = ParseInt(*v);
    if (!n || *n < 0) {
      return std::unexpected(ErrorResponse(400, "invalid_argument", "invalid page_token"));
    }
    q.after = *n;
  }
  if (const std::string* v = request.NonEmptyQuery("history")) {
    if (*v != "true" && *v != "false") {
      return std::unexpected(
          ErrorResponse(400, "invalid_argument", "history must be true or false"));
    }
    q.history = *v == "true";
  }
  return q;
}

// ?history=true: the jobs in memory merged by id with the ended ones only the store still has
// (forgotten after scheduler.ended_job_retention_hours). Not counted: `total` stays 0. On the
// scheduler thread: it reads the store.
HttpResponse ListWithHistory(const ApiView& view, const ListQuery& q, TimePoint now) {
  const JobSnapshot::Filter& f = q.filter;
  const int page_size = q.page_size;
  core::EndedJobQuery query;
  query.after = JobId(q.after);
  if (f.array) query.before = JobId(f.array->value() + core::kMaxArrayTasks);
  if (f.user) query.user = UserName(*f.user);
  query.state = f.state;
  query.preemptible = f.preemptible;
  query.limit = page_size + 1;
  const bool may_be_stored = !f.state || core::IsTerminal(*f.state);
  std::deque<core::JobRecord> stored;
  bool store_more = may_be_stored;
  const auto& jobs = view.scheduler.jobs();
  auto mem = jobs.upper_bound(JobId(q.after));
  std::vector<const core::JobRecord*> page;
  std::vector<core::JobRecord> kept;  // the stored ones on this page
  kept.reserve(static_cast<size_t>(page_size) + 1);
  while (static_cast<int>(page.size()) <= page_size) {
    if (stored.empty() && store_more) {
      auto batch = view.scheduler.StoredEndedJobs(query);
      if (!batch) return StatusError(batch.error());
      for (core::JobRecord& job : batch->jobs) {
        if (view.scheduler.Find(job.id) == nullptr && f.Matches(job)) {
          stored.push_back(std::move(job));
        }
      }
      query.after = batch->last_read;
      store_more = batch->more;
      continue;
    }
    while (mem != jobs.end() && !f.Matches(mem->second)) ++mem;
    const bool take_memory =
        mem != jobs.end() && (stored.empty() || mem->first < stored.front().id);
    if (take_memory) {
      page.push_back(&(mem++)->second);
    } else if (!stored.empty()) {
      kept.push_back(std::move(stored.front()));
      stored.pop_front();
      page.push_back(&kept.back());
    } else {
      break;
    }
  }
  api::JobList out;
  for (int i = 0; i < static_cast<int>(page.size()) && i < page_size; ++i) {
    *out.add_jobs() = JobToProto(*page[static_cast<size_t>(i)], view.scheduler, now, false);
  }
  if (static_cast<int>(page.size()) > page_size) {
    out.set_next_page_token(std::to_string(out.jobs(page_size - 1).id()));
  }
  return JsonResponse(out);
}

}  // namespace

ApiAnswer ListJobs(const ApiView& view, const Principal& who, const ApiRequest& request) {
  auto query = ParseListQuery(view.config.limits, who, request);
  if (!query) return std::move(query.error());
  if (query->history) return ListWithHistory(view, *query, request.now);
  return SnapshotRead([snapshot = view.jobs_snapshot, q = std::move(*query), now = request.now] {
    HttpResponse r;
    r.body = JobListJson(*snapshot, snapshot->List(q.filter, JobId(q.after), q.page_size), now);
    return r;
  });
}

ApiAnswer GetJob(const ApiView& view, const Principal& who, const ApiRequest& request) {
  // A job of the snapshot named by its id: rendered off the scheduler thread. Here: a job of a
  // sweep (its dependencies' and its array's state are the scheduler's), a task named
  // ARRAYID_INDEX, a job not committed yet, one only the store still has, and every "not found".
  if (auto id = ParseInt(request.params.at(0)); id && *id > 0) {
    const JobSnapshot::Entry* entry = view.jobs_snapshot->Find(JobId(*id));
    if (entry != nullptr && MaySee(who, entry->job) && entry->job.spec.dependencies.empty() &&
        !entry->job.spec.array) {
      return SnapshotRead([snapshot = view.jobs_snapshot, entry, now = request.now] {
        return JsonResponse(
            JobToProto(entry->job, snapshot->fleet(), entry->accelerator(), now, true));
      });
    }
  }
  auto job = VisibleJob(view, who, request);
  if (!job) return std::move(job.error());
  return JobReply(view, **job, request.now);
}

HttpResponse CancelJob(const ApiView& view, ApiCalls& calls, const Principal& who,
                       const ApiRequest& request) {
  // As Slurm's scancel: an array id names every task of the array, ARRAYID_INDEX one task.
  const bool whole_array = request.params.at(0).find('_') == std::string::npos;
  auto job = VisibleJob(view, who, request);
  if (job && whole_array && view.scheduler.FindArray((*job)->id) != nullptr) {
    const JobId id = (*job)->id;
    if (Status s = calls.CancelArray(id, request.now); !s.ok()) return CoreError(s);
    return JobReply(view, *view.scheduler.Find(id), request.now);
  }
  return Stop(view, who, request, [&](JobId id) { return calls.Cancel(id, request.now); });
}

HttpResponse PreemptJob(const ApiView& view, ApiCalls& calls, const Principal& who,
                        const ApiRequest& request) {
  return Stop(view, who, request,
              [&](JobId id) { return calls.Preempt(id, "preempted by " + who.user, request.now); });
}

HttpResponse JobEvents(const ApiView& view, ApiCalls& calls, const Principal& who,
                       const ApiRequest& request) {
  auto job = VisibleJob(view, who, request);
  if (!job) return std::move(job.error());
  auto events = calls.EventsOf((*job)->id);
  if (!events) return StatusError(events.error());
  api::JobEventList out;
  for (const auto& e : *events) *out.add_events() = EventToProto(e);
  return JsonResponse(out);
}

HttpResponse JobLogs(const ApiView& view, ApiCalls&, const Principal& who,
                     const ApiRequest& request) {
  auto job = VisibleJob(view, who, request);
  if (!job) return std::move(job.error());
  int64_t since = 0;
  int64_t limit = 64 << 10;
  if (const std::string* v = request.NonEmptyQuery("since")) {
    auto n = ParseInt(*v);
    if (!n || *n < 0) {
      return ErrorResponse(400, "invalid_argument", "since must be a byte offset >= 0");
    }
    since = *n;
  }
  if (const std::string* v = request.NonEmptyQuery("limit")) {
    auto n = ParseInt(*v);
    if (!n || *n < 1 || *n > int64_t{LogTail::kMaxBytes}) {
      return ErrorResponse(400, "invalid_argument",
                           "limit must be 1.." + std::to_string(LogTail::kMaxBytes) + " bytes");
    }
    limit = *n;
  }
  api::LogList out;
  const LogTail* tail = view.bus.LogsOf((*job)->id);
  if (tail == nullptr) {
    out.set_note("no output yet (podworker sends the output of a running job)");
    out.set_next_offset(since);
    return JsonResponse(out);
  }
  LogTail::Page page = tail->Read(since, static_cast<size_t>(limit));
  for (const OutputLine* line : page.lines) {
    auto* l = out.add_lines();
    l->set_time(Rfc3339(line->time));
    l->set_rank(line->rank);
    l->set_text(line->text);
  }
  out.set_next_offset(page.next_offset);
  out.set_truncated(page.truncated);
  if (page.truncated) out.set_note("older output was dropped (the server keeps the last 1 MiB)");
  return JsonResponse(out);
}

HttpResponse JobProgress(const ApiView& view, ApiCalls&, const Principal& who,
                         const ApiRequest& request) {
  auto job = VisibleJob(view, who, request);
  if (!job) return std::move(job.error());
  api::ProgressList out;
  if (const ProgressSeries* series = view.bus.ProgressOf((*job)->id)) {
    for (const ProgressSample& p : series->points()) *out.add_points() = ProgressToProto(p);
  }
  return JsonResponse(out);
}

}  // namespace podsched::daemon
