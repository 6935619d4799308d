// Helpers for the job store's tests: a temporary directory and fully populated records.
#pragma once

#include <filesystem>
#include <string>

#include "scheduler/core/job.h"

namespace podsched::jobdb::testing {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A job with every field set to a non-default value derived from `id` (placement included),
// with opaque bytes that are not UTF-8 in args, env and reason.
core::JobRecord FullJob(int64_t id);
// Its submission event (seq given) and a user record with every field set.
core::JobEvent SubmitEvent(const core::JobRecord& job, int64_t seq);
core::UserRecord FullUser(const std::string& name);

}  // namespace podsched::jobdb::testing
