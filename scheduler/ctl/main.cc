// podctl: the command-line client of podsched (docs/podctl.md). One verb per subcommand; the
// server and token come from flags, POD_SERVER / POD_TOKEN, ~/.config/podctl/config.yaml, or
// var/admin.token in the working directory.
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "scheduler/ctl/client.h"
#include "scheduler/ctl/commands.h"

namespace fs = std::filesystem;
using namespace podsched::ctl;

namespace {

struct Settings {
  std::string server;
  std::string token;
};

// Flags win over the environment, which wins over the config file, then var/admin.token.
Settings Resolve(std::string server, std::string token) {
  if (server.empty()) {
    if (const char* e = std::getenv("POD_SERVER"); e && *e) server = e;
  }
  if (token.empty()) {
    if (const char* e = std::getenv("POD_TOKEN"); e && *e) token = e;
  }
  if (const char* home = std::getenv("HOME"); home && (server.empty() || token.empty())) {
    fs::path file = fs::path(home) / ".config/podctl/config.yaml";
    if (fs::exists(file)) {
      try {
        YAML::Node c = YAML::LoadFile(file.string());
        if (server.empty() && c["server"]) server = c["server"].as<std::string>();
        if (token.empty() && c["token"]) token = c["token"].as<std::string>();
      } catch (const YAML::Exception& e) {
        std::cerr << "podctl: ignoring " << file.string() << ": " << e.what() << "\n";
      }
    }
  }
  if (token.empty()) {
    if (std::ifstream in("var/admin.token"); in) std::getline(in, token);
  }
  if (server.empty()) server = "http://127.0.0.1:8470";
  return {server, token};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("podctl: submit and watch jobs on a podsched TPU pod scheduler");
  app.require_subcommand(1);
  app.fallthrough();  // --server / --token also after the verb
  std::string server, token;
  app.add_option("--server", server,
                 "podsched URL (env POD_SERVER; default http://127.0.0.1:8470)");
  app.add_option("--token", token,
                 "bearer token (env POD_TOKEN, ~/.config/podctl/config.yaml, "
                 "or var/admin.token)");

  SubmitOptions submit;
  auto* sub = app.add_subcommand("submit", "submit a job; prints its id");
  sub->add_option("-f,--file", submit.file, "job spec YAML (docs/jobspec.md)");
  sub->add_option("--accelerator", submit.accelerator, "slice type, e.g. v2-8, v2-32");
  sub->add_flag("--preemptible", submit.preemptible,
                "run as preemptible (cheaper, can be taken back)");
  sub->add_option("--priority", submit.priority, "0..1000, higher first");
  sub->add_option("--name", submit.name, "job name (default: the command's basename)");
  sub->add_option("--checkpoint-every", submit.checkpoint_every, "seconds between checkpoints");
  sub->add_option("--env", submit.env, "K=V in every rank's environment (repeatable)");
  sub->add_option("--ranks-per-host", submit.ranks_per_host, "processes per host, 1..64");
  sub->add_option("-t,--time", submit.time,
                  "max runtime: MM, HH:MM:SS, D-HH:MM:SS, or 90s, 30m, 2h, 1d");
  sub->add_option("--launcher", submit.launcher, "mpi (mpirun across the slice) or exec")
      ->check(CLI::IsMember({"mpi", "exec"}));
  sub->add_option("-a,--array", submit.array,
                  "job array: 0-99, 1,3,5-9, 0-15:4; %N runs at most N tasks at once");
  sub->add_option("-d,--dependency", submit.dependency,
                  "afterok:ID[:ID...], afterany:..., afternotok:...; ',' joins (all must hold)");
  sub->add_flag("--parsable", submit.parsable, "print only the job (or array) id");
  sub->add_option("command", submit.command, "-- COMMAND ARGS...");

  JobsOptions jobs;
  auto* jl = app.add_subcommand("jobs", "list jobs (your own; --all for everyone's, admin)");
  jl->add_flag("--all", jobs.all, "jobs of every user (admin sees all; users see their own)");
  jl->add_option("--state", jobs.state,
                 "QUEUED, PLACED, STARTING, RUNNING, PREEMPTING, SUCCEEDED, FAILED, CANCELLED");
  jl->add_option("--user", jobs.user, "only this user's jobs (admin)");
  jl->add_option("--array", jobs.array, "only the tasks of this array (its id)");
  jl->add_flag("-w,--watch", jobs.watch, "redraw the list when it changes (Ctrl-C stops)");
  jl->add_option("-o,--output", jobs.output, "table, json or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}));

  std::string job, output = "text";
  auto* describe = app.add_subcommand("describe", "show one job: spec, state, placement, cost");
  describe->add_option("job", job, "job id")->required();
  describe->add_option("-o,--output", output, "text, json or yaml")
      ->check(CLI::IsMember({"text", "json", "yaml"}));
  auto* cancel = app.add_subcommand("cancel", "cancel a job (graceful stop if it runs)");
  cancel->add_option("job", job, "job id; an array id cancels every task, ARRAYID_INDEX one")
      ->required();
  auto* preempt = app.add_subcommand("preempt", "preempt a job: checkpoint, stop, requeue");
  preempt->add_option("job", job, "job id")->required();
  std::string events_output = "table";
  auto* events = app.add_subcommand("events", "a job's state transitions, oldest first");
  events->add_option("job", job, "job id")->required();
  events->add_option("-o,--output", events_output, "table, json or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  bool follow = false;
  auto* logs = app.add_subcommand("logs", "a job's output (collected by podworker)");
  logs->add_option("job", job, "job id")->required();
  logs->add_flag("-f,--follow", follow, "keep following until the job ends");
  bool quiet = false;
  auto* wait = app.add_subcommand(
      "wait", "wait until a job ends; exit 0 SUCCEEDED, 10 FAILED, 11 CANCELLED");
  wait->add_option("job", job, "job id")->required();
  wait->add_flag("-q,--quiet", quiet, "print nothing");
  std::string pod_name;
  bool no_color = false;
  auto* pod = app.add_subcommand("pod", "draw the pod's host grid with jobs and free hosts");
  pod->add_option("pod", pod_name, "pod name (default: every pod)");
  pod->add_flag("--no-color", no_color, "no ANSI colours");
  std::string agents_output = "table";
  auto* agents = app.add_subcommand("agents", "registered podworkers, their hosts and jobs (admin)");
  agents->add_option("-o,--output", agents_output, "table, json or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  std::string quota_output = "table";
  auto* quota = app.add_subcommand("quota", "quotas and usage (yours; every user's for an admin)");
  quota->add_option("-o,--output", quota_output, "table, json or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "podctl: " << e.what() << " (see podctl --help)\n";
    return kExitUsage;
  }

  if (jl->parsed() && jobs.watch) {
    // Ctrl-C ends --watch: leave the cursor on a fresh line and exit 0 (nothing to clean up).
    std::signal(SIGINT, [](int) {
      (void)!write(STDOUT_FILENO, "\n", 1);
      _exit(0);
    });
  }
  Settings s = Resolve(server, token);
  ApiClient api(s.server, s.token);
  if (sub->parsed()) return Submit(api, submit);
  if (jl->parsed()) return Jobs(api, jobs);
  if (describe->parsed()) return Describe(api, job, output);
  if (cancel->parsed()) return Cancel(api, job);
  if (preempt->parsed()) return Preempt(api, job);
  if (events->parsed()) return Events(api, job, events_output);
  if (logs->parsed()) return Logs(api, job, follow);
  if (wait->parsed()) return Wait(api, job, quiet);
  if (pod->parsed()) return ShowPod(api, pod_name, !no_color && isatty(STDOUT_FILENO));
  if (quota->parsed()) return Quota(api, quota_output);
  if (agents->parsed()) return Agents(api, agents_output);
  return kExitUsage;
}
