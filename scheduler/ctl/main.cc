// podctl: the command-line client of podsched (docs/podctl.md). One verb per subcommand; the
// server and token come from flags, POD_SERVER / POD_TOKEN, the config file `podctl login`
// writes ($XDG_CONFIG_HOME or ~/.config/podctl/config.yaml), or var/admin.token in the working
// directory.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "scheduler/ctl/admin_commands.h"
#include "scheduler/ctl/client.h"
#include "scheduler/ctl/client_config.h"
#include "scheduler/ctl/commands.h"

namespace fs = std::filesystem;
using namespace podsched::ctl;

namespace {

struct Settings {
  std::string server;
  std::string token;
};

// The admin token `podsched` wrote in ./var (the one-machine quick start), if this user owns it
// and nobody else can write it: in a shared directory, a file another user planted would
// otherwise make podctl act, unasked, with that user's identity (audit L7).
std::string AdminTokenHere() {
  constexpr const char* kPath = "var/admin.token";
  const int fd = open(kPath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "";  // none here (or a symlink: not ours to follow)
  struct stat st {};
  std::string token;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    std::cerr << "podctl: ignoring " << kPath << ": not a regular file\n";
  } else if (st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
    std::cerr << "podctl: ignoring " << kPath << ": owned by uid " << st.st_uid
              << (st.st_uid != geteuid() ? " (not you)" : "") << ", mode "
              << std::oct << (st.st_mode & 0777) << std::dec
              << "; only your own file that no one else can write is used\n";
  } else {
    char buf[512];
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    token.assign(buf, n > 0 ? static_cast<size_t>(n) : 0);
    token = token.substr(0, token.find_first_of("\r\n"));
  }
  close(fd);
  return token;
}

// Flags win over the environment, which wins over the config file, then var/admin.token.
// Without `want_token` only the server is resolved (the token stays as given).
Settings Resolve(std::string server, std::string token, bool want_token = true) {
  if (server.empty()) {
    if (const char* e = std::getenv("POD_SERVER"); e && *e) server = e;
  }
  if (token.empty()) {
    if (const char* e = std::getenv("POD_TOKEN"); e && *e) token = e;
  }
  if (server.empty() || (want_token && token.empty())) {
    const std::string path = ClientConfigPath();
    if (auto file = ReadClientConfig(path); !file) {
      std::cerr << "podctl: ignoring " << file.error().message() << "\n";
    } else {
      if (server.empty()) server = file->server;
      if (want_token && token.empty()) token = file->token;
    }
  }
  if (want_token && token.empty()) token = AdminTokenHere();
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
                 "bearer token (env POD_TOKEN, ~/.config/podctl/config.yaml from podctl "
                 "login, or var/admin.token); visible to other users in ps: prefer login");

  SubmitOptions submit;
  auto* sub = app.add_subcommand("submit", "submit a job; prints its id");
  sub->add_option("-f,--file", submit.file, "job spec YAML (docs/jobspec.md)");
  sub->add_option("--accelerator", submit.accelerator, "slice type, e.g. v2-8, v2-32");
  sub->add_option("--zone", submit.zone,
                  "run only on the pods of this zone (podctl fleet lists them)");
  sub->add_option("--pod", submit.pod, "run only on this pod or device (podctl fleet)");
  sub->add_flag("--preemptible", submit.preemptible,
                "run as preemptible (cheaper, can be taken back)");
  sub->add_option("--priority", submit.priority, "0..1000, higher first");
  sub->add_option("--name", submit.name, "job name (default: the command's basename)");
  sub->add_option("--checkpoint-every", submit.checkpoint_every, "seconds between checkpoints");
  sub->add_option("--env", submit.env, "K=V in every rank's environment (repeatable)");
  sub->add_option("--ranks-per-host", submit.ranks_per_host, "processes per host, 1..64");
  sub->add_option("--slices", submit.slices,
                  "multislice: N slices of the type, all or nothing, in one zone, as one job");
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
  jl->add_flag("--history", jobs.history,
               "also jobs that ended before podsched's retention (an hour), from its store");
  jl->add_option("--limit", jobs.limit, "at most this many jobs (default all; 1000 with --history)")
      ->check(CLI::PositiveNumber);
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
  std::string fleet_output = "table";
  auto* fleet = app.add_subcommand(
      "fleet", "every pod and device of the fleet: zone, hosts free and held by class, waiting jobs");
  fleet->add_option("-o,--output", fleet_output, "table, json or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  std::string agents_output = "table";
  auto* agents = app.add_subcommand("agents", "registered podworkers, their hosts and jobs (admin)");
  agents->add_option("-o,--output", agents_output, "table, json or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  std::string quota_output = "table";
  auto* quota = app.add_subcommand("quota", "quotas and usage (yours; every user's for an admin)");
  quota->add_option("-o,--output", quota_output, "table, json or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}));

  LoginOptions login_options;
  auto* login = app.add_subcommand(
      "login", "check a token with the server and save it (and the server) in podctl's config");
  login->add_flag("--token-stdin", login_options.token_stdin,
                  "read the token from stdin (else it is asked for on the terminal, unechoed)");

  auto* admin = app.add_subcommand("admin", "users and tokens (docs/podctl.md)");
  admin->require_subcommand(1);
  auto* admin_user = admin->add_subcommand("user", "API users (admin)");
  admin_user->require_subcommand(1);
  UserAddOptions user_add;
  auto* user_add_cmd =
      admin_user->add_subcommand("add", "create a user; prints its first token once");
  user_add_cmd->add_option("name", user_add.name, "1..64 of a-z 0-9 . _ -")->required();
  user_add_cmd->add_flag("--admin", user_add.admin, "role admin (default: user)");
  user_add_cmd->add_option("--unix-user", user_add.unix_user,
                           "the Unix account the user's jobs run as (default: the name)");
  std::string user_name, users_output = "table";
  auto* user_list_cmd = admin_user->add_subcommand("list", "every user (configured and API)");
  user_list_cmd->add_option("-o,--output", users_output, "table, json or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  auto* user_disable_cmd = admin_user->add_subcommand(
      "disable", "disable a user: all its tokens fail at once; its jobs are left alone");
  user_disable_cmd->add_option("name", user_name, "user")->required();
  auto* user_enable_cmd = admin_user->add_subcommand("enable", "enable a disabled user");
  user_enable_cmd->add_option("name", user_name, "user")->required();

  auto* admin_token = admin->add_subcommand("token", "bearer tokens (admins: all; users: own)");
  admin_token->require_subcommand(1);
  TokenCreateOptions token_create;
  auto* token_create_cmd =
      admin_token->add_subcommand("create", "a new token, printed once on stdout");
  token_create_cmd->add_option("user", token_create.user, "whose (default: yours)");
  token_create_cmd->add_option("--expires", token_create.expires,
                               "lifetime: 90m, 12h, 30d, 1w, or never (default)");
  token_create_cmd->add_option("--name", token_create.label, "a label, e.g. laptop");
  std::string token_user, tokens_output = "table", token_id;
  auto* token_list_cmd = admin_token->add_subcommand("list", "tokens (never their secrets)");
  token_list_cmd->add_option("user", token_user, "only this user's");
  token_list_cmd->add_option("-o,--output", tokens_output, "table, json or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}));
  auto* token_revoke_cmd = admin_token->add_subcommand(
      "revoke", "revoke a token: it fails at once, with its sessions and streams");
  token_revoke_cmd->add_option("id", token_id, "token id (podctl admin token list)")->required();

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
  if (login->parsed()) {
    // The token comes from --token / POD_TOKEN or is asked for, never from the old config.
    Settings given = Resolve(server, token, /*want_token=*/false);
    login_options.server = given.server;
    login_options.token = given.token;
    return Login(login_options);
  }
  Settings s = Resolve(server, token);
  ApiClient api(s.server, s.token);
  if (user_add_cmd->parsed()) return UserAdd(api, user_add);
  if (user_list_cmd->parsed()) return UserList(api, users_output);
  if (user_disable_cmd->parsed()) return UserSetDisabled(api, user_name, true);
  if (user_enable_cmd->parsed()) return UserSetDisabled(api, user_name, false);
  if (token_create_cmd->parsed()) return TokenCreate(api, token_create);
  if (token_list_cmd->parsed()) return TokenList(api, token_user, tokens_output);
  if (token_revoke_cmd->parsed()) return TokenRevoke(api, token_id);
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
  if (fleet->parsed()) return Fleet(api, fleet_output);
  if (agents->parsed()) return Agents(api, agents_output);
  return kExitUsage;
}
