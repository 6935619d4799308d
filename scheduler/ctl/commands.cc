#include "scheduler/ctl/commands.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <span>
#include <sstream>

#include "common/host_list.h"
#include "pod/fleet.h"
#include "pod/pod.h"
#include "pod/render.h"
#include "scheduler/ctl/jobspec.h"
#include "scheduler/ctl/reply.h"
#include "scheduler/ctl/terminal_text.h"

namespace podsched::ctl {
namespace {

std::string JobPath(const std::string& job) {
  return "/api/v1/jobs/" + job;  // the server answers 404 for anything that is not an id
}

int BadJobArg(const std::string& job) {
  std::cerr << "podctl: '" << job
            << "' is not a job id (a number as printed by podctl submit, or ARRAYID_INDEX)\n";
  return kExitUsage;
}

std::string Money(double usd) {
  std::ostringstream s;
  s << "$" << std::fixed << std::setprecision(2) << usd;
  return s.str();
}

YAML::Node ToYamlNode(const nlohmann::json& j) {
  if (j.is_object()) {
    YAML::Node n(YAML::NodeType::Map);
    for (auto& [k, v] : j.items()) n[k] = ToYamlNode(v);
    return n;
  }
  if (j.is_array()) {
    YAML::Node n(YAML::NodeType::Sequence);
    for (auto& v : j) n.push_back(ToYamlNode(v));
    return n;
  }
  if (j.is_string()) return YAML::Node(j.get<std::string>());
  if (j.is_boolean()) return YAML::Node(j.get<bool>());
  if (j.is_number_integer()) return YAML::Node(j.get<int64_t>());
  if (j.is_number()) return YAML::Node(j.get<double>());
  return YAML::Node();
}

// One line of a table: each cell but the last cut and padded to its column's width.
void TableRow(std::ostream& out, std::span<const int> widths,
              const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i + 1 < cells.size() && i < widths.size()) {
      out << std::left << std::setw(widths[i]) << cells[i].substr(0, widths[i] - 1);
    } else {
      out << cells[i];
    }
  }
  out << "\n";
}

}  // namespace

bool ValidJobArg(const std::string& job) {
  auto digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  const size_t underscore = job.find('_');
  if (underscore == std::string::npos) return digits(job);
  return digits(std::string_view(job).substr(0, underscore)) &&
         digits(std::string_view(job).substr(underscore + 1));
}

std::string JsonToYaml(const std::string& json) {
  YAML::Emitter out;
  out << ToYamlNode(nlohmann::json::parse(json, nullptr, false));
  return out.c_str();
}

std::string JobsTable(const api::JobList& list) {
  std::ostringstream out;
  static constexpr int kWidths[] = {10, 18, 10, 9, 12, 5, 11, 6, 8, 9};
  auto row = [&out](const std::vector<std::string>& cells) { TableRow(out, kWidths, cells); };
  row({"ID", "NAME", "USER", "ACCEL", "CLASS", "PRIO", "STATE", "EPOCH", "STEP", "COST", "REASON"});
  for (const auto& j : list.jobs()) {
    const std::string id = j.task_name().empty() ? std::to_string(j.id()) : j.task_name();
    row({id, TerminalSafe(j.name()), j.user(), j.accelerator(),
         j.preemptible() ? "preemptible" : "on-demand", std::to_string(j.priority()), j.state(),
         std::to_string(j.epoch()), std::to_string(j.step()), Money(j.cost_usd()),
         TerminalSafe(j.reason())});
  }
  return out.str();
}

int Submit(ApiClient& api, const SubmitOptions& o) {
  api::JobSpec spec;
  if (!o.file.empty()) {
    std::ifstream in(o.file);
    if (!in) {
      std::cerr << "podctl: cannot read " << o.file << "\n";
      return kExitUsage;
    }
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = ParseJobSpecYaml(text.str());
    if (!parsed) {
      std::cerr << "podctl: " << o.file << ": " << parsed.error().message() << "\n";
      return kExitInvalid;
    }
    spec = *parsed;
  }
  if (Status flags = ApplySubmitFlags(o, &spec); !flags.ok()) {
    std::cerr << "podctl: " << flags.message() << "\n";
    return kExitUsage;
  }
  // In protobuf's binary encoding, both ways: no descriptors built, no JSON mapping.
  auto reply = api.CallOk("POST", "/api/v1/jobs", spec.SerializeAsString(), Encoding::kProtobuf);
  if (!reply) return Report(reply.error());
  auto r = ParseBinary<api::SubmitResponse>(*reply);
  if (!r) return Report(r.error());
  std::cout << r->job().id();
  if (!o.parsable && r->array_tasks() > 0) {
    std::cout << " (array of " << r->array_tasks() << " tasks: podctl jobs --array "
              << r->job().id() << ")";
  }
  std::cout << "\n";
  return kExitOk;
}

namespace {

// Every page of the list `o` asks for.
std::expected<api::JobList, CallError> FetchJobs(ApiClient& api, const JobsOptions& o,
                                                 const std::string& user) {
  constexpr int kHistoryLimit = 1000;  // the history can be every job ever: ask for more
  const int limit = o.limit > 0 ? o.limit : (o.history ? kHistoryLimit : 0);
  api::JobList all;
  std::string token;
  do {
    std::string path = "/api/v1/jobs?page_size=500";
    if (o.history) path += "&history=true";
    if (!o.state.empty()) path += "&state=" + o.state;
    if (!user.empty()) path += "&user=" + user;
    if (!o.array.empty()) path += "&array=" + o.array;
    if (!token.empty()) path += "&page_token=" + token;
    auto reply = api.CallOk("GET", path);
    if (!reply) return std::unexpected(reply.error());
    auto page = Parse<api::JobList>(*reply);
    if (!page) return std::unexpected(page.error());
    for (auto& j : *page->mutable_jobs()) *all.add_jobs() = std::move(j);
    all.set_total(page->total());
    token = page->next_page_token();
  } while (!token.empty() && (limit == 0 || all.jobs_size() < limit));
  while (limit > 0 && all.jobs_size() > limit) all.mutable_jobs()->RemoveLast();
  return all;
}

std::string RenderJobs(const api::JobList& list, const std::string& output) {
  if (output == "table") return JobsTable(list);
  std::string json = ToJsonText(list);
  return output == "yaml" ? JsonToYaml(json) + "\n" : json;
}

}  // namespace

int Jobs(ApiClient& api, const JobsOptions& o) {
  if (!o.array.empty() && !ValidJobArg(o.array)) return BadJobArg(o.array);
  std::string user = o.user;
  if (!o.all && user.empty()) {
    auto me = api.CallOk("GET", "/api/v1/whoami");
    if (!me) return Report(me.error());
    auto u = Parse<api::User>(*me);
    if (!u) return Report(u.error());
    user = u->name();
  }
  std::string shown;
  for (;;) {
    auto list = FetchJobs(api, o, user);
    if (!list) return Report(list.error());
    std::string text = RenderJobs(*list, o.output);
    if (!o.watch) {
      std::cout << text;
      return kExitOk;
    }
    // Polling once a second keeps --watch independent of the stream's visibility rules and
    // bursts (an array submission is thousands of events); it redraws only on a change.
    if (text != shown) {
      std::cout << "\x1b[H\x1b[2J" << "every 1 s, Ctrl-C to stop\n\n" << text << std::flush;
      shown = std::move(text);
    }
    usleep(1000 * 1000);
  }
}

int Describe(ApiClient& api, const std::string& job, const std::string& output) {
  if (!ValidJobArg(job)) return BadJobArg(job);
  auto reply = api.CallOk("GET", JobPath(job));
  if (!reply) return Report(reply.error());
  auto j = Parse<api::Job>(*reply);
  if (!j) return Report(j.error());
  if (output != "text") {
    Print(*j, output);
    return kExitOk;
  }
  const auto& s = j->spec();
  std::cout << "Job " << j->id() << " (" << TerminalSafe(j->name()) << ") of " << j->user() << "\n"
            << "  accelerator:  " << j->accelerator()
            << (s.slices() > 1 ? " x " + std::to_string(s.slices()) + " slices" : "") << " "
            << (j->preemptible() ? "preemptible" : "on-demand") << ", priority " << j->priority()
            << "\n"
            << "  state:        " << j->state() << (j->reason().empty() ? "" : " — ") << TerminalSafe(j->reason())
            << "\n"
            << "  epoch:        " << j->epoch() << ", restarts " << j->restarts()
            << ", preemptions " << j->preemptions() << "\n";
  if (j->hosts_size() > 0) {
    std::cout << "  placement:    " << j->pod() << " rows " << j->placement().row() << ".."
              << j->placement().row() + j->placement().rows() - 1 << " cols "
              << j->placement().col() << ".." << j->placement().col() + j->placement().cols() - 1
              << ", hosts";
    for (int h : j->hosts()) std::cout << " " << h;
    std::cout << "\n";
    for (const auto& slice : j->more_slices()) {  // a multislice job's other slices
      std::cout << "                " << slice.pod() << " rows " << slice.placement().row()
                << ".." << slice.placement().row() + slice.placement().rows() - 1 << " cols "
                << slice.placement().col() << ".."
                << slice.placement().col() + slice.placement().cols() - 1 << ", hosts";
      for (int h : slice.hosts()) std::cout << " " << h;
      std::cout << "\n";
    }
  }
  std::cout << "  progress:     step " << j->step() << ", last checkpoint at step "
            << j->last_checkpoint_step() << "\n"
            << "  cost so far:  " << Money(j->cost_usd());
  if (j->egress_bytes() > 0) {
    char gb[32];
    std::snprintf(gb, sizeof gb, "%.2f", static_cast<double>(j->egress_bytes()) / (1 << 30));
    std::cout << " (of it " << Money(j->egress_usd()) << " egress: " << gb
              << " GiB of checkpoints across zones)";
  }
  std::cout << "\n"
            << "  submitted:    " << j->submit_time() << "\n";
  if (!j->start_time().empty()) std::cout << "  started:      " << j->start_time() << "\n";
  if (!j->end_time().empty()) std::cout << "  ended:        " << j->end_time() << "\n";
  std::cout << "  command:      " << TerminalSafe(s.command());
  for (const auto& a : s.args()) std::cout << " " << TerminalSafe(a);
  // The store the job's first launch chose (its zone's, when zones have stores), else the spec's.
  const std::string& store = j->checkpoint_store().empty() ? s.checkpoint_url() : j->checkpoint_store();
  std::cout << "\n  checkpoints:  " << TerminalSafe(store)
            << (j->checkpoint_zone().empty() ? "" : " (zone " + j->checkpoint_zone() + ")")
            << " every "
            << s.checkpoint_every_seconds() << " s; grace " << s.grace_period_seconds()
            << " s; max restarts " << s.max_restarts() << "\n";
  if (j->array_id() != 0) {
    const auto& a = j->array();
    std::cout << "  array:        " << j->task_name() << " (index " << j->array_index()
              << " of array " << j->array_id() << " '" << a.expression() << "', " << a.tasks()
              << " tasks";
    if (a.throttle() > 0) std::cout << ", at most " << a.throttle() << " at once";
    std::cout << "):";
    for (const auto& [state, n] : std::map<std::string, int>(a.tasks_by_state().begin(),
                                                             a.tasks_by_state().end())) {
      std::cout << " " << n << " " << state;
    }
    std::cout << "\n";
  }
  for (const auto& d : j->dependencies()) {
    std::cout << "  dependency:   " << d.dependency() << " (" << d.target_state() << "): "
              << d.verdict() << "\n";
  }
  return kExitOk;
}

static int Verb(ApiClient& api, const std::string& job, const std::string& verb) {
  if (!ValidJobArg(job)) return BadJobArg(job);
  auto reply = api.CallOk("POST", JobPath(job) + "/" + verb);
  if (!reply) return Report(reply.error());
  auto j = Parse<api::Job>(*reply);
  if (!j) return Report(j.error());
  std::cout << "job " << (j->task_name().empty() ? std::to_string(j->id()) : j->task_name())
            << ": " << j->state() << (j->reason().empty() ? "" : " (" + TerminalSafe(j->reason()) + ")");
  if (verb == "cancel" && j->array_id() == j->id() && job.find('_') == std::string::npos) {
    std::cout << "; cancel sent to every task of array " << j->id();
  }
  std::cout << "\n";
  return kExitOk;
}

int Cancel(ApiClient& api, const std::string& job) { return Verb(api, job, "cancel"); }
int Preempt(ApiClient& api, const std::string& job) { return Verb(api, job, "preempt"); }

int Events(ApiClient& api, const std::string& job, const std::string& output) {
  if (!ValidJobArg(job)) return BadJobArg(job);
  auto reply = api.CallOk("GET", JobPath(job) + "/events");
  if (!reply) return Report(reply.error());
  auto list = Parse<api::JobEventList>(*reply);
  if (!list) return Report(list.error());
  if (output != "table") {
    Print(*list, output);
    return kExitOk;
  }
  for (const auto& e : list->events()) {
    std::cout << e.time() << "  epoch " << e.epoch() << "  "
              << (e.from().empty() ? "" : e.from() + " -> ") << e.to() << "  "
              << TerminalSafe(e.reason());
    if (e.hosts_size() > 0) {
      std::cout << "  hosts";
      for (int h : e.hosts()) std::cout << " " << h;
      if (!e.pod().empty()) std::cout << " of pod " << TerminalSafe(e.pod());
      for (const auto& slice : e.more_slices()) {  // a multislice job's other slices
        std::cout << ", hosts";
        for (int h : slice.hosts()) std::cout << " " << h;
        std::cout << " of pod " << TerminalSafe(slice.pod());
      }
    }
    std::cout << "\n";
  }
  return kExitOk;
}

namespace {
bool Terminal(const std::string& state);
}  // namespace

int Logs(ApiClient& api, const std::string& job, bool follow) {
  if (!ValidJobArg(job)) return BadJobArg(job);
  int64_t since = 0;
  bool noted = false;
  for (;;) {
    auto reply = api.CallOk("GET", JobPath(job) + "/logs?since=" + std::to_string(since));
    if (!reply) return Report(reply.error());
    auto logs = Parse<api::LogList>(*reply);
    if (!logs) return Report(logs.error());
    for (const auto& l : logs->lines()) {
      if (l.rank() >= 0) std::cout << "[" << l.rank() << "] ";
      std::cout << TerminalSafe(l.text()) << "\n";
    }
    std::cout << std::flush;
    if (!logs->note().empty() && (!noted || logs->truncated())) {
      std::cerr << "podctl: " << logs->note() << "\n";
      noted = true;
    }
    bool more = logs->next_offset() > since;
    since = logs->next_offset();
    if (!follow) return kExitOk;
    if (more) continue;  // a full page: fetch the rest at once
    // Caught up: stop once the job has ended and its last output is in (one more read after).
    auto state = api.CallOk("GET", JobPath(job));
    if (!state) return Report(state.error());
    auto j = Parse<api::Job>(*state);
    if (!j) return Report(j.error());
    if (Terminal(j->state())) {
      auto last = api.CallOk("GET", JobPath(job) + "/logs?since=" + std::to_string(since));
      if (auto rest = last ? Parse<api::LogList>(*last) : std::unexpected(last.error())) {
        for (const auto& l : rest->lines()) {
          if (l.rank() >= 0) std::cout << "[" << l.rank() << "] ";
          std::cout << TerminalSafe(l.text()) << "\n";
        }
      }
      return kExitOk;
    }
    usleep(500 * 1000);  // polling keeps podctl simple; the server bounds the tail anyway
  }
}

int Agents(ApiClient& api, const std::string& output) {
  auto reply = api.CallOk("GET", "/api/v1/agents");
  if (!reply) return Report(reply.error());
  auto list = Parse<api::AgentList>(*reply);
  if (!list) return Report(list.error());
  if (output != "table") {
    Print(*list, output);
    return kExitOk;
  }
  std::cout << std::left << std::setw(24) << "AGENT" << std::setw(8) << "POD" << std::setw(14)
            << "HOSTS" << std::setw(12) << "STATE" << std::setw(12) << "HEARD" << "JOBS\n";
  for (const auto& a : list->agents()) {
    std::string hosts = HostRanges(a.hosts());
    std::string jobs;
    for (int64_t j : a.running_jobs()) jobs += (jobs.empty() ? "" : ",") + std::to_string(j);
    std::cout << std::left << std::setw(24) << a.agent_id() << std::setw(8) << a.pod()
              << std::setw(14) << hosts << std::setw(12)
              << (a.connected() ? "connected" : "lost") << std::setw(12)
              << (std::to_string(a.last_heartbeat_ms_ago()) + " ms") << (jobs.empty() ? "-" : jobs)
              << "\n";
  }
  if (list->agents_size() == 0) std::cerr << "podctl: no podworker has registered\n";
  return kExitOk;
}

std::string HostRanges(const google::protobuf::RepeatedField<int32_t>& hosts) {
  return FormatHostRanges({hosts.begin(), hosts.end()});
}

namespace {

bool Terminal(const std::string& state) {
  return state == "SUCCEEDED" || state == "FAILED" || state == "CANCELLED";
}

int EndCode(const api::Job& j) {
  if (j.state() == "SUCCEEDED") return kExitOk;
  if (j.state() == "FAILED") return kExitJobFailed;
  return kExitJobCancelled;
}

}  // namespace

int Wait(ApiClient& api, const std::string& job, bool quiet) {
  if (!ValidJobArg(job)) return BadJobArg(job);
  const bool tty = !quiet && isatty(STDOUT_FILENO);
  std::optional<api::Job> last;
  std::optional<CallError> error;
  std::string last_state;
  int64_t total_steps = 0;  // from the spec's POD_TOTAL_STEPS, when the job declares it
  std::string id = job;
  auto show = [&](const api::Job& j) {
    if (tty && j.step() > 0) {
      std::cout << "\r" << j.state() << " ";
      if (total_steps > 0) {
        constexpr int kWidth = 30;
        int filled = static_cast<int>(std::min<int64_t>(kWidth, j.step() * kWidth / total_steps));
        std::cout << "[" << std::string(filled, '#') << std::string(kWidth - filled, ' ') << "] "
                  << j.step() << "/" << total_steps;
      } else {
        std::cout << "step " << j.step();
      }
      std::cout << " (checkpoint at step " << j.last_checkpoint_step() << ")   " << std::flush;
    } else if (!quiet && j.state() != last_state) {
      std::cout << (tty && last_state.size() ? "\n" : "") << "job " << j.id() << ": " << j.state()
                << (j.reason().empty() ? "" : " (" + TerminalSafe(j.reason()) + ")") << "\n";
    }
    last_state = j.state();
  };
  auto streamed = api.Stream("/api/v1/events/stream", [&](const std::string& data) {
    if (data.empty()) {  // subscribed: now read the current state without missing a change
      auto reply = api.CallOk("GET", JobPath(job));
      if (!reply) {
        error = reply.error();
        return false;
      }
      auto j = Parse<api::Job>(*reply);
      if (!j) {
        error = j.error();
        return false;
      }
      last = *j;
      id = std::to_string(j->id());  // `job` may be ARRAYID_INDEX; the stream names ids
      if (auto it = j->spec().env().find("POD_TOTAL_STEPS"); it != j->spec().env().end()) {
        total_steps = std::atoll(it->second.c_str());
      }
      show(*j);
      return !Terminal(j->state());
    }
    auto ev = Parse<api::StreamEvent>(data);
    if (!ev || std::to_string(ev->job().id()) != id) return true;
    last = ev->job();
    last->set_state(ev->event().to());
    last->set_reason(ev->event().reason());
    show(*last);
    return !Terminal(last->state());
  });
  if (error) return Report(*error);
  if (!streamed) return Report(streamed.error());
  if (tty && last && last->step() > 0) std::cout << "\n";
  return last ? EndCode(*last) : kExitOther;
}

std::string PodPicture(const api::Pod& p, bool color) {
  auto gen = pod::ParseGeneration(p.generation());
  if (!gen) return "unknown generation " + p.generation() + "\n";
  auto grid = pod::Pod::Create(p.name(), *gen, p.host_rows(), p.host_cols());
  if (!grid) return grid.error().message() + "\n";
  pod::RenderOptions options;
  options.color = color;
  std::vector<std::string> legend;
  std::set<int64_t> in_legend;
  int hidden = 0, more_slices = 0;
  for (const auto& a : p.allocations()) {
    // Another slice of a multislice job in this pod is drawn under its own id with the job's
    // label (the grid holds one allocation per id).
    const bool shown = a.job_id() != 0;
    AllocationId id(!shown ? -(++hidden) : a.slice() == 0 ? a.job_id() : -1'000'000 - ++more_slices);
    pod::Placement placement{{a.placement().row(), a.placement().col()},
                             {a.placement().rows(), a.placement().cols()}};
    if (!grid->Allocate(id, placement).ok()) continue;
    char label = shown ? pod::DefaultLabel(AllocationId(a.job_id())) : '#';
    // Preemptible work in lower case, on-demand in upper case.
    if (a.preemptible() && label >= 'A' && label <= 'Z') label = static_cast<char>(label + 32);
    if (!a.preemptible() && label >= 'a' && label <= 'z') label = static_cast<char>(label - 32);
    options.labels[id] = label;
    if (shown && in_legend.insert(a.job_id()).second) {
      legend.push_back(std::string(1, label) + "  job " + std::to_string(a.job_id()) + " " +
                       a.user() + " " + a.accelerator() + " " +
                       (a.preemptible() ? "preemptible" : "on-demand") + " " + a.state());
    }
  }
  for (const auto& h : p.hosts()) {
    if (!h.healthy()) (void)grid->MarkUnhealthy(HostId(h.id()));
    if (h.draining()) (void)grid->SetDraining(HostId(h.id()), true);
  }
  std::ostringstream out;
  out << "pod " << p.name() << " (" << p.generation() << ", " << p.host_rows() << "x"
      << p.host_cols() << " hosts"
      << (p.job_class().empty() || p.job_class() == "any" ? ""
                                                           : ", " + p.job_class() + " jobs only")
      << "): " << p.available_hosts() << " hosts free, largest "
      << "placeable " << (p.largest_placeable_type().empty() ? "none" : p.largest_placeable_type())
      << "\n\n";
  for (const auto& line : pod::RenderGrid(*grid, options)) out << line << "\n";
  out << "\n";
  for (const auto& line : legend) out << line << "\n";
  if (hidden > 0) out << "#  hosts held by other users' jobs\n";
  std::map<std::string, std::vector<int32_t>> unhealthy;  // reason -> hosts
  for (const auto& h : p.hosts()) {
    if (!h.healthy() && !h.health_reason().empty()) unhealthy[h.health_reason()].push_back(h.id());
  }
  for (const auto& [reason, ids] : unhealthy) {
    out << "X  " << reason << ": hosts " << FormatHostRanges(ids) << "\n";
  }
  out << "upper case on-demand, lower case preemptible, . free, X unhealthy, D draining\n";
  if (p.pending_size() > 0) {
    out << "\npending:\n";
    for (const auto& j : p.pending()) {
      out << "  job " << j.job_id() << " " << j.user() << " " << j.accelerator() << ": "
          << TerminalSafe(j.reason()) << "\n";
    }
  }
  return out.str();
}

int ShowPod(ApiClient& api, const std::string& name, bool color) {
  if (!name.empty()) {
    if (!pod::IsPodName(name)) {  // nothing else can be a pod's name, or go into the URL
      std::cerr << "podctl: '" << TerminalSafe(name.substr(0, 80))
                << "' is not a pod name (1-64 characters of A-Z a-z 0-9 . _ -)\n";
      return kExitUsage;
    }
    // podsched names the pods there are when there is no such pod (404).
    auto reply = api.CallOk("GET", "/api/v1/pods/" + name);
    if (!reply) return Report(reply.error());
    auto pod = Parse<api::Pod>(*reply);
    if (!pod) return Report(pod.error());
    std::cout << PodPicture(*pod, color);
    return kExitOk;
  }
  auto reply = api.CallOk("GET", "/api/v1/pods");
  if (!reply) return Report(reply.error());
  auto pods = Parse<api::PodList>(*reply);
  if (!pods) return Report(pods.error());
  for (const auto& p : pods->pods()) std::cout << PodPicture(p, color);
  return kExitOk;
}

std::string FleetTable(const api::PodList& list) {
  std::ostringstream out;
  static constexpr int kWidths[] = {18, 16, 12, 10, 7, 6, 10, 12, 10, 10};
  auto row = [&out](const std::vector<std::string>& cells) { TableRow(out, kWidths, cells); };
  row({"POD", "ZONE", "TAKES", "GRID", "HOSTS", "FREE", "ON-DEMAND", "PREEMPTIBLE", "UNHEALTHY",
       "WAITING", "LARGEST FREE"});
  int64_t hosts = 0, free = 0, on_demand = 0, preemptible = 0, unhealthy = 0;
  for (const auto& p : list.pods()) {
    int64_t down = 0;
    for (const auto& h : p.hosts()) down += h.healthy() ? 0 : 1;
    hosts += p.hosts_size();
    free += p.available_hosts();
    on_demand += p.on_demand_hosts();
    preemptible += p.preemptible_hosts();
    unhealthy += down;
    row({TerminalSafe(p.name()), p.zone().empty() ? "-" : TerminalSafe(p.zone()),
         p.job_class().empty() ? "any" : TerminalSafe(p.job_class()),
         p.generation() + " " + std::to_string(p.host_rows()) + "x" + std::to_string(p.host_cols()),
         std::to_string(p.hosts_size()), std::to_string(p.available_hosts()),
         std::to_string(p.on_demand_hosts()), std::to_string(p.preemptible_hosts()),
         std::to_string(down), std::to_string(p.pending_total()),
         p.largest_placeable_type().empty() ? "none" : p.largest_placeable_type()});
  }
  // Waiting jobs are not summed: a job waits in every pod that can hold its type.
  row({"total (" + std::to_string(list.pods_size()) + " pods)", "", "", "", std::to_string(hosts),
       std::to_string(free), std::to_string(on_demand), std::to_string(preemptible),
       std::to_string(unhealthy), "", ""});
  return out.str();
}

int Fleet(ApiClient& api, const std::string& output) {
  auto reply = api.CallOk("GET", "/api/v1/pods");
  if (!reply) return Report(reply.error());
  auto list = Parse<api::PodList>(*reply);
  if (!list) return Report(list.error());
  if (output != "table") {
    Print(*list, output);
    return kExitOk;
  }
  std::cout << FleetTable(*list);
  return kExitOk;
}

int Quota(ApiClient& api, const std::string& output) {
  auto reply = api.CallOk("GET", "/api/v1/quotas");
  if (!reply) return Report(reply.error());
  auto list = Parse<api::QuotaList>(*reply);
  if (!list) return Report(list.error());
  if (output != "table") {
    Print(*list, output);
    return kExitOk;
  }
  std::cout << std::left << std::setw(16) << "USER" << std::setw(24) << "ON-DEMAND CORES"
            << std::setw(24) << "PREEMPTIBLE CORES" << "EGRESS\n";
  for (const auto& q : list->quotas()) {
    std::cout << std::left << std::setw(16) << q.user() << std::setw(24)
              << (std::to_string(q.on_demand_cores_used()) + " / " +
                  std::to_string(q.on_demand_cores()))
              << std::setw(24)
              << (std::to_string(q.preemptible_cores_used()) + " / " +
                  std::to_string(q.preemptible_cores()))
              << Money(q.egress_usd()) << "\n";
  }
  return kExitOk;
}

}  // namespace podsched::ctl
