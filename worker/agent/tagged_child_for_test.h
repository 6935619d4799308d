// Test helpers: a real child process carrying a job's tag (process_tree.h), as `podworker rank`
// leaves one, and a wait for its exec to finish.
#pragma once

#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "worker/agent/process_tree.h"

namespace podsched::agent {

// A child that runs `argv` with a job's tag, as `podworker rank` leaves one.
inline pid_t SpawnTagged(const std::string& tag, std::vector<std::string> argv) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string env = std::string(kTagVariable) + "=" + tag;
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    char* const envp[] = {const_cast<char*>(env.c_str()), nullptr};
    execve(args[0], args.data(), envp);
    _exit(127);
  }
  return pid;
}

// Whether execve is over: the new name shows first, the new environment later.
inline bool ExecDone(pid_t pid) {
  auto info = ReadProc(pid);
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ");
  return info && info->comm == "sleep" && in.get() != std::ifstream::traits_type::eof();
}

inline void WaitForExec(pid_t pid) {
  for (int i = 0; i < 5000 && !ExecDone(pid); ++i) usleep(1000);
  ASSERT_TRUE(ExecDone(pid)) << "pid " << pid << " never became sleep";
}

}  // namespace podsched::agent
