#include "store/jobdb/sqlite_job_repository.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "store/jobdb/codec.h"
#include "store/jobdb/schema.h"

namespace podsched::jobdb {
namespace {

using core::JobEvent;
using core::JobRecord;
using core::JobState;
using core::StoreBatch;
using core::UserRecord;

int64_t Micros(TimePoint t) { return t.time_since_epoch().count(); }
TimePoint FromMicros(int64_t us) { return TimePoint(Duration(us)); }

// One column order for the INSERT binds (1-based, BindJob) and the SELECT (0-based, ReadJob).
#define PODSCHED_JOB_COLUMNS                                                                   \
  "id, user, preemptible, priority, submit_time_us, state, epoch, restarts, preemptions, "     \
  "reason, placement_row, placement_col, placement_rows, placement_cols, step, "               \
  "last_checkpoint_step, start_time_us, last_checkpoint_time_us, end_time_us, not_before_us, " \
  "preempt_deadline_us, reserved_for, cancel_requested, usage_core_hours, run_time_us, "       \
  "placement_pod, more_slices, checkpoint_store, checkpoint_zone, checkpoint_bytes, "          \
  "egress_bytes, egress_usd"

constexpr std::string_view kPutJob =
    "INSERT OR REPLACE INTO jobs (" PODSCHED_JOB_COLUMNS
    ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
// A queued job's new pending reason, alone (core::ReasonUpdate): no index covers the column.
constexpr std::string_view kPutReason = "UPDATE jobs SET reason = ?2 WHERE id = ?1";
// The spec is written once per job (schema v3): a row update never carries it.
constexpr std::string_view kPutSpec = "INSERT OR IGNORE INTO job_specs (id, spec) VALUES (?,?)";
#define PODSCHED_SELECT_JOBS \
  "SELECT " PODSCHED_JOB_COLUMNS ", job_specs.spec FROM jobs JOIN job_specs USING (id) "
// ?1: the earliest end time (µs) of an ended job to load; active jobs always. The states 5, 6, 7
// are SUCCEEDED, FAILED and CANCELLED (JobState, stored as its integer).
constexpr std::string_view kLoadJobs =
    PODSCHED_SELECT_JOBS "WHERE state NOT IN (5, 6, 7) OR end_time_us >= ?1 ORDER BY id";
constexpr std::string_view kJobsInRange =
    PODSCHED_SELECT_JOBS "WHERE id >= ?1 AND id < ?2 ORDER BY id";
// EndedJobQuery; a NULL filter matches every row.
constexpr std::string_view kEndedJobs =
    PODSCHED_SELECT_JOBS
    "WHERE id > ?1 AND id < ?2 AND state IN (5, 6, 7) AND (?3 IS NULL OR user = ?3) "
    "AND (?4 IS NULL OR state = ?4) AND (?5 IS NULL OR preemptible = ?5) ORDER BY id LIMIT ?6";
#undef PODSCHED_SELECT_JOBS
#undef PODSCHED_JOB_COLUMNS

constexpr std::string_view kPutEpoch =
    "INSERT OR REPLACE INTO epochs (job_id, epoch, start_time_us, origin_row, origin_col, rows, "
    "cols, pod) VALUES (?,?,?,?,?,?,?,?)";
constexpr std::string_view kPutEvent =
    "INSERT INTO events (seq, job_id, time_us, epoch, from_state, to_state, reason, hosts, pod, "
    "more_slices) VALUES (?,?,?,?,?,?,?,?,?,?)";
constexpr std::string_view kPutAllocation =
    "INSERT OR IGNORE INTO allocations (job_id, epoch, host) VALUES (?,?,?)";
constexpr std::string_view kEventsOf =
    "SELECT seq, job_id, time_us, epoch, from_state, to_state, reason, hosts, pod, more_slices "
    "FROM events "
    "WHERE job_id = ? ORDER BY seq";
constexpr std::string_view kPutUser =
    "INSERT OR REPLACE INTO users (name, admin, decayed_core_hours, usage_as_of_us, egress_usd) "
    "VALUES (?,?,?,?,?)";
constexpr std::string_view kPutQuota =
    "INSERT OR REPLACE INTO quotas (user, on_demand_cores, preemptible_cores) VALUES (?,?,?)";
constexpr std::string_view kLoadUsers =
    "SELECT u.name, u.admin, u.decayed_core_hours, u.usage_as_of_us, q.on_demand_cores, "
    "q.preemptible_cores, u.egress_usd FROM users u JOIN quotas q ON q.user = u.name ORDER BY u.name";

Result<JobState> StateOf(int64_t value) {
  if (value < 0 || value > static_cast<int64_t>(JobState::kCancelled)) {
    return DataLoss("stored job state " + std::to_string(value) + " is not a known state");
  }
  return static_cast<JobState>(value);
}

// `pod`: the stored name of the placement's pod; `more_slices`: the other slices (EncodeSlices),
// nullopt for one.
void BindJob(Statement& s, const JobRecord& job, const std::optional<std::string>& pod,
             const std::optional<std::string>& more_slices) {
  s.Bind(1, job.id.value())
      .Bind(2, job.spec.user.value())
      .Bind(3, int64_t{job.spec.preemptible})
      .Bind(4, int64_t{job.spec.priority})
      .Bind(5, Micros(job.submit_time))
      .Bind(6, static_cast<int64_t>(job.state))
      .Bind(7, job.epoch)
      .Bind(8, int64_t{job.restarts})
      .Bind(9, int64_t{job.preemptions})
      .Bind(10, job.reason.str());
  if (job.placement) {
    const pod::Placement& rect = job.placement->rect;
    s.Bind(11, int64_t{rect.origin.row})
        .Bind(12, int64_t{rect.origin.col})
        .Bind(13, int64_t{rect.shape.rows})
        .Bind(14, int64_t{rect.shape.cols});
  } else {
    s.BindNull(11).BindNull(12).BindNull(13).BindNull(14);
  }
  s.Bind(15, job.step)
      .Bind(16, job.last_checkpoint_step)
      .Bind(17, Micros(job.start_time))
      .Bind(18, Micros(job.last_checkpoint_time))
      .Bind(19, Micros(job.end_time))
      .Bind(20, Micros(job.not_before))
      .Bind(21, Micros(job.preempt_deadline));
  if (job.reserved_for) {
    s.Bind(22, job.reserved_for->value());
  } else {
    s.BindNull(22);
  }
  s.Bind(23, int64_t{job.cancel_requested})
      .Bind(24, job.usage_core_hours)
      .Bind(25, job.run_time.count());
  if (pod) {
    s.Bind(26, *pod);
  } else {
    s.BindNull(26);
  }
  if (more_slices) {
    s.Bind(27, *more_slices);
  } else {
    s.BindNull(27);
  }
  s.Bind(28, job.checkpoint_store)
      .Bind(29, job.checkpoint_zone)
      .Bind(30, job.checkpoint_bytes)
      .Bind(31, job.egress_bytes)
      .Bind(32, job.egress_usd);
}

// `pod`: the index of the stored placement's pod (ReadJob's caller maps the name).
Result<JobRecord> ReadJob(const Statement& s, int pod) {
  JobRecord job;
  job.id = JobId(s.Int(0));
  auto spec = DecodeSpec(s.Text(32));
  if (!spec) return std::unexpected(spec.error().WithContext("job " + std::to_string(s.Int(0))));
  job.spec = std::move(*spec);
  auto state = StateOf(s.Int(5));
  if (!state) return std::unexpected(state.error());
  job.state = *state;
  job.epoch = s.Int(6);
  job.restarts = static_cast<int>(s.Int(7));
  job.preemptions = static_cast<int>(s.Int(8));
  job.reason = s.Text(9);
  if (!s.IsNull(10)) {
    job.placement = pod::FleetPlacement{
        pod, pod::Placement{{static_cast<int>(s.Int(10)), static_cast<int>(s.Int(11))},
                          {static_cast<int>(s.Int(12)), static_cast<int>(s.Int(13))}}};
  }
  job.step = s.Int(14);
  job.last_checkpoint_step = s.Int(15);
  job.submit_time = FromMicros(s.Int(4));
  job.start_time = FromMicros(s.Int(16));
  job.last_checkpoint_time = FromMicros(s.Int(17));
  job.end_time = FromMicros(s.Int(18));
  job.not_before = FromMicros(s.Int(19));
  job.preempt_deadline = FromMicros(s.Int(20));
  if (auto reserved = s.OptInt(21)) job.reserved_for = JobId(*reserved);
  job.cancel_requested = s.Int(22) != 0;
  job.usage_core_hours = s.Real(23);
  job.run_time = Duration(s.Int(24));
  job.checkpoint_store = s.Text(27);
  job.checkpoint_zone = s.Text(28);
  job.checkpoint_bytes = s.Int(29);
  job.egress_bytes = s.Int(30);
  job.egress_usd = s.Real(31);
  return job;
}

Result<JobEvent> ReadEvent(const Statement& s) {
  JobEvent event;
  event.seq = s.Int(0);
  event.job = JobId(s.Int(1));
  event.time = FromMicros(s.Int(2));
  event.epoch = s.Int(3);
  if (auto from = s.OptInt(4)) {
    auto state = StateOf(*from);
    if (!state) return std::unexpected(state.error());
    event.from = *state;
  }
  auto to = StateOf(s.Int(5));
  if (!to) return std::unexpected(to.error());
  event.to = *to;
  event.reason = s.Text(6);
  auto hosts = DecodeHosts(s.Text(7));
  if (!hosts) return std::unexpected(hosts.error());
  event.hosts = std::move(*hosts);
  event.pod = s.Text(8);
  if (!s.IsNull(9)) {
    auto slices = DecodeEventSlices(s.Text(9));
    if (!slices) return std::unexpected(slices.error());
    event.more_slices = std::move(*slices);
  }
  return event;
}

}  // namespace

Result<std::optional<std::string>> SqliteJobRepository::PodName(JobId job, int pod) const {
  if (pods_.empty() && pod == 0) return std::nullopt;
  if (pod < 0 || static_cast<size_t>(pod) >= pods_.size()) {
    return FailedPrecondition("job " + std::to_string(job.value()) + " is placed in pod " +
                              std::to_string(pod) + " of a fleet; this job store knows " +
                              std::to_string(pods_.size()) + " pod name(s)");
  }
  return pods_[static_cast<size_t>(pod)];
}

Result<int> SqliteJobRepository::PodIndex(int64_t job, const std::optional<std::string>& name) const {
  if (!name) return 0;
  auto it = std::find(pods_.begin(), pods_.end(), *name);
  if (it == pods_.end()) {
    std::string known;
    for (const std::string& p : pods_) known += (known.empty() ? "" : ", ") + p;
    return FailedPrecondition("job " + std::to_string(job) + " is placed in pod '" + *name +
                              "', which the configured fleet does not have (pods: " +
                              (known.empty() ? "none named" : known) +
                              "); restore the pod's configuration");
  }
  return static_cast<int>(it - pods_.begin());
}

Result<JobRecord> SqliteJobRepository::Read(const Statement& s) const {
  const int64_t id = s.Int(0);
  auto pod = PodIndex(id, s.IsNull(25) ? std::nullopt : std::optional(s.Text(25)));
  if (!pod) return std::unexpected(pod.error());
  auto job = ReadJob(s, *pod);
  if (!job || s.IsNull(26)) return job;
  auto slices = DecodeSlices(s.Text(26));
  if (!slices) return std::unexpected(slices.error().WithContext("job " + std::to_string(id)));
  for (const StoredSlice& slice : *slices) {
    auto index = PodIndex(id, slice.pod);
    if (!index) return std::unexpected(index.error());
    job->more_slices.push_back(pod::FleetPlacement{*index, slice.rect});
  }
  return job;
}

Result<std::unique_ptr<SqliteJobRepository>> SqliteJobRepository::Open(const std::string& path,
                                                                       JobDbOptions options) {
  auto db = Connection::Open(path);
  if (!db) return std::unexpected(db.error());
  Connection& c = **db;
  sqlite3_busy_timeout(
      c.raw(),
      static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(options.busy_timeout).count()));
  // The first statement reads the file header: this is where a non-SQLite file is detected.
  auto mode = c.QueryText("PRAGMA journal_mode = WAL");
  if (!mode) {
    return std::unexpected(mode.error().WithContext("opening job database " + path +
                                                    " (is it an SQLite database, and intact?)"));
  }
  if (*mode != "wal") {
    return FailedPrecondition("job database " + path + " cannot use WAL journaling (got '" + *mode +
                              "'); put it on a local file system");
  }
  Status sync = c.Exec("PRAGMA synchronous = FULL");
  if (!sync.ok()) return std::unexpected(sync);
  Status migrated = Migrate(c);
  if (!migrated.ok()) return std::unexpected(migrated);
  return std::unique_ptr<SqliteJobRepository>(
      new SqliteJobRepository(std::move(*db), std::move(options.pods)));
}

Status SqliteJobRepository::Commit(const StoreBatch& batch) {
  const StoreBatch* one[] = {&batch};
  return CommitAll(one);
}

Status SqliteJobRepository::CommitAll(std::span<const StoreBatch* const> batches) {
  Status status = db_->Exec("BEGIN IMMEDIATE");
  if (!status.ok()) return status.WithContext("starting a commit");
  for (const StoreBatch* batch : batches) {
    status = Apply(*batch);
    if (!status.ok()) break;
  }
  if (status.ok()) status = db_->Exec("COMMIT");
  // Specs count as stored only once their transaction is.
  if (status.ok()) specs_stored_.insert(specs_new_.begin(), specs_new_.end());
  specs_new_.clear();
  if (!status.ok()) {
    // COMMIT may fail after SQLite already rolled back; a ROLLBACK error then is expected.
    (void)db_->Exec("ROLLBACK");
    return status.WithContext("committing to the job database (nothing of it was stored)");
  }
  return Status::Ok();
}

Status SqliteJobRepository::Apply(const StoreBatch& batch) {
  for (const JobRecord& job : batch.jobs) {
    if (Status s = WriteJob(job); !s.ok()) return s;
  }
  for (const core::ReasonUpdate& update : batch.reasons) {
    if (Status s = WriteReason(update); !s.ok()) return s;
  }
  for (const JobEvent& event : batch.events) {
    if (Status s = WriteEvent(event); !s.ok()) return s;
  }
  for (const UserRecord& user : batch.users) {
    if (Status s = WriteUser(user); !s.ok()) return s;
  }
  return Status::Ok();
}

Status SqliteJobRepository::WriteJob(const JobRecord& job) {
  std::optional<std::string> pod;
  if (job.placement) {
    auto name = PodName(job.id, job.placement->pod);
    if (!name) return name.error();
    pod = std::move(*name);
  }
  std::optional<std::string> more_slices;
  if (!job.more_slices.empty()) {
    std::vector<StoredSlice> slices;
    for (const pod::FleetPlacement& slice : job.more_slices) {
      auto name = PodName(job.id, slice.pod);
      if (!name) return name.error();
      slices.push_back(StoredSlice{std::move(*name), slice.rect});
    }
    more_slices = EncodeSlices(slices);
  }
  auto put = db_->Prepare(kPutJob);
  if (!put) return put.error();
  BindJob(**put, job, pod, more_slices);
  if (Status s = (*put)->Run(); !s.ok()) {
    return s.WithContext("storing job " + std::to_string(job.id.value()));
  }
  if (!specs_stored_.contains(job.id.value())) {
    auto spec = db_->Prepare(kPutSpec);
    if (!spec) return spec.error();
    (*spec)->Bind(1, job.id.value()).BindBlob(2, EncodeSpec(job.spec));
    if (Status s = (*spec)->Run(); !s.ok()) {
      return s.WithContext("storing the spec of job " + std::to_string(job.id.value()));
    }
    specs_new_.push_back(job.id.value());
  }
  if (!job.placement) return Status::Ok();
  auto epoch = db_->Prepare(kPutEpoch);
  if (!epoch) return epoch.error();
  (*epoch)
      ->Bind(1, job.id.value())
      .Bind(2, job.epoch)
      .Bind(3, Micros(job.start_time))
      .Bind(4, int64_t{job.placement->rect.origin.row})
      .Bind(5, int64_t{job.placement->rect.origin.col})
      .Bind(6, int64_t{job.placement->rect.shape.rows})
      .Bind(7, int64_t{job.placement->rect.shape.cols});
  if (pod) {
    (*epoch)->Bind(8, *pod);
  } else {
    (*epoch)->BindNull(8);
  }
  return (*epoch)->Run();
}

Status SqliteJobRepository::WriteReason(const core::ReasonUpdate& update) {
  auto put = db_->Prepare(kPutReason);
  if (!put) return put.error();
  (*put)->Bind(1, update.job.value()).Bind(2, update.reason.str());
  if (Status s = (*put)->Run(); !s.ok()) {
    return s.WithContext("storing the reason of job " + std::to_string(update.job.value()));
  }
  // The row comes first (the job's submission, in this commit or an earlier one); an update of
  // none is the core's bug, and the whole commit fails rather than lose the reason.
  if (sqlite3_changes(db_->raw()) != 1) {
    return ToStatus(Internal("storing the reason of job " + std::to_string(update.job.value()) +
                             ": the job database has no row for it"));
  }
  return Status::Ok();
}

Status SqliteJobRepository::WriteEvent(const JobEvent& event) {
  auto put = db_->Prepare(kPutEvent);
  if (!put) return put.error();
  std::optional<int64_t> from;
  if (event.from) from = static_cast<int64_t>(*event.from);
  (*put)
      ->Bind(1, event.seq)
      .Bind(2, event.job.value())
      .Bind(3, Micros(event.time))
      .Bind(4, event.epoch)
      .Bind(5, from)
      .Bind(6, static_cast<int64_t>(event.to))
      .Bind(7, event.reason)
      .Bind(8, EncodeHosts(event.hosts));
  if (event.pod.empty()) {
    (*put)->BindNull(9);
  } else {
    (*put)->Bind(9, event.pod);
  }
  if (event.more_slices.empty()) {
    (*put)->BindNull(10);
  } else {
    (*put)->Bind(10, EncodeEventSlices(event.more_slices));
  }
  if (Status s = (*put)->Run(); !s.ok()) {
    return s.WithContext("appending event " + std::to_string(event.seq));
  }
  for (HostId host : event.hosts) {
    auto alloc = db_->Prepare(kPutAllocation);
    if (!alloc) return alloc.error();
    (*alloc)->Bind(1, event.job.value()).Bind(2, event.epoch).Bind(3, int64_t{host.value()});
    if (Status s = (*alloc)->Run(); !s.ok()) return s;
  }
  return Status::Ok();
}

Status SqliteJobRepository::WriteUser(const UserRecord& user) {
  auto put = db_->Prepare(kPutUser);
  if (!put) return put.error();
  (*put)
      ->Bind(1, user.name.value())
      .Bind(2, int64_t{user.admin})
      .Bind(3, user.decayed_core_hours)
      .Bind(4, Micros(user.usage_as_of))
      .Bind(5, user.egress_usd);
  if (Status s = (*put)->Run(); !s.ok()) return s.WithContext("storing user " + user.name.value());
  auto quota = db_->Prepare(kPutQuota);
  if (!quota) return quota.error();
  (*quota)
      ->Bind(1, user.name.value())
      .Bind(2, int64_t{user.quota.on_demand_cores})
      .Bind(3, int64_t{user.quota.preemptible_cores});
  return (*quota)->Run();
}

Result<core::StoredState> SqliteJobRepository::Load() {
  return LoadEndedSince(FromMicros(std::numeric_limits<int64_t>::min()));
}

Result<core::StoredState> SqliteJobRepository::LoadEndedSince(TimePoint ended_since) {
  // One read transaction: jobs, users and the event counter come from the same snapshot even
  // when another connection commits meanwhile.
  if (Status s = db_->Exec("BEGIN"); !s.ok()) return std::unexpected(s);
  auto state = LoadSnapshot(ended_since);
  (void)db_->Exec(state ? "COMMIT" : "ROLLBACK");
  return state;
}

Result<std::vector<JobRecord>> SqliteJobRepository::JobsInRange(JobId first, int64_t count) {
  auto query = db_->Prepare(kJobsInRange);
  if (!query) return std::unexpected(query.error());
  const int64_t end = count > std::numeric_limits<int64_t>::max() - first.value()
                          ? std::numeric_limits<int64_t>::max()
                          : first.value() + count;
  (*query)->Bind(1, first.value()).Bind(2, end);
  std::vector<JobRecord> out;
  Status read = (*query)->ForEachRow([this, &out](const Statement& s) {
    auto job = Read(s);
    if (job) out.push_back(std::move(*job));  // an unreadable row reads as missing (audit M11)
    return Status::Ok();
  });
  if (!read.ok()) return std::unexpected(read.WithContext("reading jobs"));
  return out;
}

Result<core::EndedJobPage> SqliteJobRepository::EndedJobs(const core::EndedJobQuery& q) {
  auto query = db_->Prepare(kEndedJobs);
  if (!query) return std::unexpected(query.error());
  std::optional<std::string> user;
  if (q.user) user = q.user->value();
  std::optional<int64_t> state, preemptible;
  if (q.state) state = static_cast<int64_t>(*q.state);
  if (q.preemptible) preemptible = *q.preemptible ? 1 : 0;
  (*query)
      ->Bind(1, q.after.value())
      .Bind(2, q.before ? q.before->value() : std::numeric_limits<int64_t>::max())
      .Bind(3, user)
      .Bind(4, state)
      .Bind(5, preemptible)
      .Bind(6, int64_t{q.limit});
  core::EndedJobPage page;
  page.last_read = q.after;
  int read = 0;
  Status status = (*query)->ForEachRow([&](const Statement& s) {
    ++read;
    page.last_read = JobId(s.Int(0));
    auto job = Read(s);
    if (job) page.jobs.push_back(std::move(*job));  // an unreadable row reads as missing
    return Status::Ok();
  });
  if (!status.ok()) return std::unexpected(status.WithContext("reading ended jobs"));
  page.more = read == q.limit;
  return page;
}

Result<core::StoredState> SqliteJobRepository::LoadSnapshot(TimePoint ended_since) {
  core::StoredState state;
  // Ids are never reused: the next one counts every stored job, loaded or not.
  auto max_id = db_->QueryInt("SELECT coalesce(max(id), 0) FROM jobs");
  if (!max_id) return std::unexpected(max_id.error());
  state.next_job_id = *max_id + 1;
  auto jobs = db_->Prepare(kLoadJobs);
  if (!jobs) return std::unexpected(jobs.error());
  (*jobs)->Bind(1, Micros(ended_since));
  Status loaded = (*jobs)->ForEachRow([this, &state](const Statement& s) {
    const int64_t id = s.Int(0);
    specs_stored_.insert(id);
    auto job = Read(s);
    if (!job) {
      // An ended job is history: podsched starts without it (audit M11). An active one is
      // work the scheduler owes: the error stops the start, naming it.
      auto stored_state = StateOf(s.Int(5));
      if (!stored_state || !core::IsTerminal(*stored_state)) return job.error();
      state.quarantined.push_back({JobId(id), std::string(core::JobStateName(*stored_state)) +
                                                  ", " + job.error().message()});
      return Status::Ok();
    }
    state.jobs.push_back(std::move(*job));
    return Status::Ok();
  });
  if (!loaded.ok()) return std::unexpected(loaded.WithContext("loading jobs"));
  auto users = db_->Prepare(kLoadUsers);
  if (!users) return std::unexpected(users.error());
  loaded = (*users)->ForEachRow([&state](const Statement& s) {
    UserRecord user;
    user.name = UserName(s.Text(0));
    user.admin = s.Int(1) != 0;
    user.decayed_core_hours = s.Real(2);
    user.usage_as_of = FromMicros(s.Int(3));
    user.quota = core::Quota{static_cast<int>(s.Int(4)), static_cast<int>(s.Int(5))};
    user.egress_usd = s.Real(6);
    state.users.push_back(std::move(user));
    return Status::Ok();
  });
  if (!loaded.ok()) return std::unexpected(loaded.WithContext("loading users"));
  auto max_seq = db_->QueryInt("SELECT coalesce(max(seq), 0) FROM events");
  if (!max_seq) return std::unexpected(max_seq.error());
  state.next_event_seq = *max_seq + 1;
  return state;
}

Result<std::vector<core::JobEvent>> SqliteJobRepository::EventsOf(JobId job) {
  auto query = db_->Prepare(kEventsOf);
  if (!query) return std::unexpected(query.error());
  (*query)->Bind(1, job.value());
  std::vector<JobEvent> events;
  Status loaded = (*query)->ForEachRow([&events](const Statement& s) {
    auto event = ReadEvent(s);
    if (!event) return event.error();
    events.push_back(std::move(*event));
    return Status::Ok();
  });
  if (!loaded.ok()) return std::unexpected(loaded.WithContext("loading events"));
  return events;
}

Result<std::string> SqliteJobRepository::IntegrityCheck() {
  // integrity_check returns one row per finding; "ok" alone when sound.
  auto check = db_->Prepare("PRAGMA integrity_check");
  if (!check) return std::unexpected(check.error());
  std::string findings;
  Status status = (*check)->ForEachRow([&findings](const Statement& s) {
    if (!findings.empty()) findings += "\n";
    findings += s.Text(0);
    return Status::Ok();
  });
  if (!status.ok()) return std::unexpected(status);
  return findings;
}

Result<int> SqliteJobRepository::SchemaVersion() {
  auto version = db_->QueryInt("PRAGMA user_version");
  if (!version) return std::unexpected(version.error());
  return static_cast<int>(*version);
}

}  // namespace podsched::jobdb
