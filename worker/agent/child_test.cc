// Where the agent finds the helper binary its jobs run (HelperPath), on a real file system.
#include "worker/agent/child.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fuse.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace podsched::agent {
namespace {

namespace fs = std::filesystem;

struct Finished {
  int status = -1;
  std::string out, err;
};

// Runs SpawnChild's child to its end, with what it wrote to stdout and stderr.
Finished RunChild(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                  const JobAccount* as = nullptr, const std::string& cwd = "") {
  auto child = SpawnChild(argv, env, as, cwd);
  EXPECT_TRUE(child.has_value()) << child.error().ToString();
  Finished f;
  if (!child) return f;
  pollfd fds[2] = {{child->stdout_fd, POLLIN, 0}, {child->stderr_fd, POLLIN, 0}};
  std::string* into[2] = {&f.out, &f.err};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, 10000) <= 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        into[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EAGAIN) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  waitpid(child->pid, &f.status, 0);
  return f;
}

class SpawnChildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/podsched-spawn-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Script(const std::string& name, const std::string& text, mode_t mode = 0755) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
    return path.string();
  }
  fs::path dir_;
};

// execvp's search in the child's own PATH: a candidate this account may not run is passed
// over, a file without "#!" goes to /bin/sh with the arguments, a missing program is exit 127.
TEST_F(SpawnChildTest, TheProgramIsFoundAsExecvpWouldInTheChildsPath) {
  fs::create_directory(dir_ / "a");
  fs::create_directory(dir_ / "b");
  Script("a/tool", "#!/bin/sh\necho from-a\n", 0644);
  Script("b/tool", "echo from-b \"$0\" \"$@\"\n");  // no "#!": the kernel says ENOEXEC
  const std::string path = "PATH=" + (dir_ / "missing").string() + ":" + (dir_ / "a").string() +
                           ":" + (dir_ / "b").string();
  Finished f = RunChild({"tool", "x y", "z"}, {path});
  ASSERT_TRUE(WIFEXITED(f.status)) << f.status;
  EXPECT_EQ(WEXITSTATUS(f.status), 0) << f.err;
  EXPECT_EQ(f.out, "from-b " + (dir_ / "b/tool").string() + " x y z\n");

  f = RunChild({"no-such-tool"}, {path});
  ASSERT_TRUE(WIFEXITED(f.status));
  EXPECT_EQ(WEXITSTATUS(f.status), 127);
  EXPECT_EQ(f.err, "podworker: cannot run 'no-such-tool': No such file or directory\n");

  // A relative PATH entry and a relative program are looked up from the child's directory.
  Script("b/here", "#!/bin/sh\npwd\n");
  f = RunChild({"here"}, {"PATH=b"}, nullptr, dir_.string());
  EXPECT_EQ(f.out, dir_.string() + "\n") << f.err;
  f = RunChild({"./b/here"}, {"PATH=/nowhere"}, nullptr, dir_.string());
  EXPECT_EQ(f.out, dir_.string() + "\n") << f.err;
}

// The child starts clean whatever the agent has: default handlers (SIGPIPE and SIGQUIT ignored
// by the agent; SIGUSR1 handled), no blocked signal, stdin from /dev/null, no fd past 2; and the
// calling thread's own signal mask is as it was.
TEST_F(SpawnChildTest, TheChildStartsWithDefaultSignalsAndOnlyItsThreeFds) {
  struct sigaction handled {};
  handled.sa_handler = [](int) {};
  sigemptyset(&handled.sa_mask);
  struct sigaction old_usr1 {};
  ASSERT_EQ(sigaction(SIGUSR1, &handled, &old_usr1), 0);
  ASSERT_NE(signal(SIGPIPE, SIG_IGN), SIG_ERR);
  const auto old_quit = signal(SIGQUIT, SIG_IGN);
  sigset_t blocked, before;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &blocked, &before), 0);
  const int leaked = open("/dev/null", O_RDONLY);  // not close-on-exec
  ASSERT_GE(leaked, 3);

  const std::string probe =
      Script("probe",
             "#!/bin/sh\ngrep -E '^Sig(Blk|Ign|Cgt):' /proc/self/status\n"
             "ls /proc/self/fd | sort -n | tr '\\n' ' '\necho\nreadlink /proc/self/fd/0\n");
  Finished f = RunChild({probe}, {"PATH=/usr/bin:/bin"});
  close(leaked);
  sigset_t now;
  pthread_sigmask(SIG_SETMASK, &before, &now);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGQUIT, old_quit);
  sigaction(SIGUSR1, &old_usr1, nullptr);

  EXPECT_TRUE(sigismember(&now, SIGTERM)) << "SpawnChild changed the caller's mask";
  EXPECT_FALSE(sigismember(&now, SIGUSR1));
  ASSERT_TRUE(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 0) << f.err;
  // The shell's own handlers (SigCgt) are its business; nothing blocked, nothing ignored.
  EXPECT_NE(f.out.find("SigBlk:\t0000000000000000\n"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("SigIgn:\t0000000000000000\n"), std::string::npos) << f.out;
  // ls's own directory fd shows up as a fourth.
  EXPECT_NE(f.out.find("\n0 1 2 3 \n"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("\n/dev/null\n"), std::string::npos) << f.out;
}

// Output nobody reads goes to /dev/null: the child writes and goes on (a closed pipe would have
// killed it with SIGPIPE at its first line).
TEST_F(SpawnChildTest, DiscardedOutputGoesToDevNull) {
  auto child = SpawnChild(
      {"sh", "-c", "echo one >&2; echo two; readlink /proc/self/fd/1 >&2 || exit 9; exit 3"},
      {"PATH=/usr/bin:/bin"}, nullptr, "", ChildOutput::kDiscard);
  ASSERT_TRUE(child.has_value()) << child.error().ToString();
  EXPECT_EQ(child->stdout_fd, -1);
  EXPECT_EQ(child->stderr_fd, -1);
  int status = 0;
  ASSERT_EQ(waitpid(child->pid, &status, 0), child->pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

// Children started from several threads at once, each on its own stack.
TEST_F(SpawnChildTest, ThreadsSpawnAtOnce) {
  std::vector<std::thread> threads;
  std::vector<std::string> outs(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&outs, t] {
      for (int i = 0; i < 20; ++i) {
        outs[t] += RunChild({"echo", std::to_string(t)}, {"PATH=/usr/bin:/bin"}).out;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) {
    std::string want;
    for (int i = 0; i < 20; ++i) want += std::to_string(t) + "\n";
    EXPECT_EQ(outs[t], want);
  }
}

// A file server that stopped answering: a FUSE file system that answers its INIT and nothing
// after it, so every lookup in it waits (killably) for an answer that does not come. Mounted in
// the calling thread's own mount namespace: nothing else on the machine sees it.
class HungMount {
 public:
  // Empty: mounted at `dir`; else why not.
  std::string Mount(const fs::path& dir) {
    if (unshare(CLONE_NEWNS) != 0) return std::string("unshare: ") + std::strerror(errno);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      return std::string("mount --make-rprivate /: ") + std::strerror(errno);
    }
    fuse_ = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fuse_ < 0) return std::string("/dev/fuse: ") + std::strerror(errno);
    stop_ = eventfd(0, EFD_CLOEXEC);
    const std::string options =
        "fd=" + std::to_string(fuse_) + ",rootmode=40000,user_id=0,group_id=0";
    if (mount("podsched-hung", dir.c_str(), "fuse", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
      return std::string("mount fuse: ") + std::strerror(errno);
    }
    dir_ = dir;
    // The connection's number for fusectl: the mount's device, from mountinfo (a stat of the
    // mount would wait for an answer).
    std::ifstream mountinfo("/proc/thread-self/mountinfo");  // this thread's namespace
    for (std::string line; std::getline(mountinfo, line);) {
      std::istringstream fields(line);
      std::string id, parent, dev, root, point;
      fields >> id >> parent >> dev >> root >> point;
      if (point == dir.string() && dev.starts_with("0:")) connection_ = dev.substr(2);
    }
    server_ = std::thread([this] { Serve(); });
    return "";
  }
  // Aborts the connection through fusectl, as an operator would, which works even while a
  // process stuck in the file system holds a copy of the device.
  void Abort() {
    const fs::path ctl = dir_.parent_path() / "fusectl";
    fs::create_directory(ctl);
    if (mount("fusectl", ctl.c_str(), "fusectl", 0, nullptr) != 0) return;
    std::ofstream(ctl / connection_ / "abort") << "1";
    umount2(ctl.c_str(), MNT_DETACH);
  }
  // A request other than INIT has arrived (and is waiting).
  bool Asked() const { return asked_; }
  // The server stops and closes the device: when that was its last fd, the connection is
  // aborted and what still waits fails with ENOTCONN.
  void Stop() {
    if (server_.joinable()) {
      const uint64_t one = 1;
      (void)!write(stop_, &one, sizeof one);
      server_.join();
    }
    if (fuse_ >= 0) close(fuse_);
    fuse_ = -1;
  }
  ~HungMount() {
    Stop();
    if (!dir_.empty()) umount2(dir_.c_str(), MNT_DETACH);
    if (stop_ >= 0) close(stop_);
  }

 private:
  void Serve() {
    std::vector<char> buf(FUSE_MIN_READ_BUFFER + (128 << 10));
    while (true) {
      pollfd fds[2] = {{fuse_, POLLIN, 0}, {stop_, POLLIN, 0}};
      if (poll(fds, 2, -1) < 0 || fds[1].revents != 0) return;
      const ssize_t n = read(fuse_, buf.data(), buf.size());
      if (n < static_cast<ssize_t>(sizeof(fuse_in_header))) continue;
      fuse_in_header in;
      std::memcpy(&in, buf.data(), sizeof in);
      if (in.opcode != FUSE_INIT) {
        asked_ = true;  // and never answered
        continue;
      }
      fuse_init_in init;
      std::memcpy(&init, buf.data() + sizeof in, sizeof init);
      struct {
        fuse_out_header header;
        fuse_init_out init;
      } reply{};
      reply.header.len = sizeof reply;
      reply.header.unique = in.unique;
      reply.init.major = FUSE_KERNEL_VERSION;
      reply.init.minor = std::min<uint32_t>(init.minor, FUSE_KERNEL_MINOR_VERSION);
      reply.init.max_readahead = init.max_readahead;
      reply.init.max_write = 4096;
      (void)!write(fuse_, &reply, sizeof reply);
    }
  }
  int fuse_ = -1, stop_ = -1;
  fs::path dir_;
  std::string connection_;
  std::atomic<bool> asked_{false};
  std::thread server_;
};

// A child whose working directory is on a file server that does not answer never reaches
// exec. The calling thread (the agent's poll thread, for a launcher) gets an error at the
// deadline instead of waiting with it, the next children start while the stuck one still
// waits, and the stuck one, killed, ends when the server's connection does.
TEST_F(SpawnChildTest, AChildStuckBeforeExecIsKilledAtTheDeadlineAndTheCallerGoesOn) {
  if (geteuid() != 0) GTEST_SKIP() << "mounting a FUSE file system needs root";
  // In a thread of its own: the mount namespace it makes is that thread's, and its children's.
  std::thread([this] {
    fs::create_directory(dir_ / "mnt");
    HungMount hung;
    ASSERT_EQ(hung.Mount(dir_ / "mnt"), "");
    const auto t0 = std::chrono::steady_clock::now();
    auto child = SpawnChild({"true"}, {"PATH=/usr/bin:/bin"}, nullptr, (dir_ / "mnt/sub").string(),
                            ChildOutput::kPipes, std::chrono::milliseconds(300));
    const auto waited = std::chrono::steady_clock::now() - t0;
    ASSERT_FALSE(child.has_value());
    EXPECT_EQ(child.error().code(), StatusCode::kUnavailable);
    EXPECT_NE(child.error().message().find("did not reach exec within 300 ms"), std::string::npos)
        << child.error().message();
    EXPECT_NE(child.error().message().find((dir_ / "mnt/sub").string()), std::string::npos);
    EXPECT_TRUE(hung.Asked());  // it was the file system that held it
    EXPECT_GE(waited, std::chrono::milliseconds(300));
    int status = 0;
    EXPECT_EQ(waitpid(-1, &status, WNOHANG), 0);  // still there: FUSE waits out a read request
    // The caller goes on: the next children start and end as usual.
    for (int i = 0; i < 3; ++i) {
      Finished f = RunChild({"echo", "next"}, {"PATH=/usr/bin:/bin"});
      EXPECT_EQ(f.out, "next\n");
    }
    // The server's connection ends (closing the device aborts it, which works only if the
    // stuck child holds no copy of it): the child's chdir fails and the SIGKILL it was sent
    // ends it.
    hung.Stop();
    const auto reap = [&status] {
      pid_t reaped = 0;
      for (int i = 0; i < 1000 && reaped == 0; ++i) {
        reaped = waitpid(-1, &status, WNOHANG);
        if (reaped == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      return reaped;
    };
    if (reap() <= 0) {
      hung.Abort();  // so that a failure leaves no process stuck on this machine
      reap();
      FAIL() << "the stuck child did not end when its file server's device was closed";
    }
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  }).join();
}

// As root, the child takes the account's groups, gid and uid; the agent keeps its own.
TEST_F(SpawnChildTest, AsRootTheChildRunsAsTheJobsAccount) {
  if (geteuid() != 0) GTEST_SKIP() << "switching accounts needs root";
  JobAccount nobody;
  nobody.name = "nobody";
  nobody.uid = 65534;
  nobody.gid = 65534;
  nobody.groups = {65534, 100};
  Finished f =
      RunChild({"sh", "-c", "id -u; id -g; id -G; pwd"}, {"PATH=/usr/bin:/bin"}, &nobody, "/tmp");
  ASSERT_TRUE(WIFEXITED(f.status) && WEXITSTATUS(f.status) == 0) << f.err;
  EXPECT_EQ(f.out, "65534\n65534\n65534 100\n/tmp\n");
  EXPECT_EQ(geteuid(), 0u);
  EXPECT_EQ(getegid(), 0u);
  // A directory the account may not enter (mkdtemp's 0700): the child works in / instead.
  f = RunChild({"pwd"}, {"PATH=/usr/bin:/bin"}, &nobody, dir_.string());
  EXPECT_EQ(f.out, "/\n") << f.err;
}

TEST(HelperPathTest, TheHelperBesideTheAgentWhenItRunsElseTheAgentItself) {
  char tmpl[] = "/tmp/podsched-helper-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  const std::string agent = (dir / "podworker").string();
  std::ofstream(agent) << "#!/bin/sh\n";
  EXPECT_EQ(HelperPath(agent), agent) << "no helper: the agent serves rsh, launch and rank";

  const fs::path helper = dir / "podworker-helper";
  std::ofstream(helper) << "#!/bin/sh\n";
  chmod(helper.c_str(), 0644);
  EXPECT_EQ(HelperPath(agent), agent) << "a helper that cannot run is not used";
  chmod(helper.c_str(), 0755);
  EXPECT_EQ(HelperPath(agent), helper.string());

  fs::remove(helper);
  fs::create_directory(helper);
  EXPECT_EQ(HelperPath(agent), agent) << "a directory of that name is no helper";
  fs::remove_all(dir);
}

TEST(HelperPathTest, RanksRunFromPodworkerRankBesideTheAgentElseFromTheHelper) {
  char tmpl[] = "/tmp/podsched-helper-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  const std::string agent = (dir / "podworker").string();
  std::ofstream(agent) << "#!/bin/sh\n";
  EXPECT_EQ(RankBinaryPath(agent), agent) << "neither: the agent serves launch and rank";
  const fs::path helper = dir / "podworker-helper";
  std::ofstream(helper) << "#!/bin/sh\n";
  chmod(helper.c_str(), 0755);
  EXPECT_EQ(RankBinaryPath(agent), helper.string()) << "no podworker-rank: the helper";
  const fs::path rank = dir / "podworker-rank";
  std::ofstream(rank) << "#!/bin/sh\n";
  chmod(rank.c_str(), 0644);
  EXPECT_EQ(RankBinaryPath(agent), helper.string()) << "a podworker-rank that cannot run";
  chmod(rank.c_str(), 0755);
  EXPECT_EQ(RankBinaryPath(agent), rank.string());
  EXPECT_EQ(HelperPath(agent), helper.string()) << "rsh stays with the helper";
  fs::remove_all(dir);
}

TEST(HelperPathTest, SelfPathIsThisTestsBinary) {
  EXPECT_EQ(fs::path(SelfPath("ignored")).filename(), "agent_process_tree_test");
}

}  // namespace
}  // namespace podsched::agent
