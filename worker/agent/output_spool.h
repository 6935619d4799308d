// The stored output of the launcher's jobs (docs/podworker.md, "Output"): one file per job and
// epoch in the state dir (`job-J-epoch-E.log`, at most `max_bytes`, then one note line), copied
// at the job's end to `{log_url}/{J}/logs/epoch-{E}.log` in the object store and deleted.
//
// The copy runs on a worker thread of its own, streamed from the file in 1 MiB pieces (an s3
// store's retries and a 256 MiB log never hold up the poll thread, nor sit in memory whole);
// when it is done the worker makes fd() readable and OnReadable(), on the poll thread, calls
// the `stored` callback.
//
// Thread safety: every method but the worker's own is for the poll thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "common/ids.h"
#include "common/status.h"
#include "store/objects/object_store.h"

namespace podsched::agent {

inline constexpr int64_t kMaxSpool = int64_t{256} << 20;  // stored output per job and epoch

class OutputSpool {
 public:
  using StoreOpener =
      std::function<Result<std::unique_ptr<store::ObjectStore>>(std::string_view url)>;
  // Runs on the poll thread once a job's output is stored (or storing it failed, logged).
  using Stored = std::function<void(const JobEpoch&)>;

  OutputSpool(std::string dir, Stored stored, int64_t max_bytes = kMaxSpool,
              StoreOpener open_store = store::OpenObjectStore);
  // Lets the copy in progress finish (its store's retries included), then stops the worker;
  // copies still queued are abandoned (their files stay in the state dir).
  ~OutputSpool();
  OutputSpool(const OutputSpool&) = delete;
  OutputSpool& operator=(const OutputSpool&) = delete;

  // The eventfd and the worker thread.
  Status Start();
  // Readable when copies have finished: then call OnReadable().
  int fd() const { return event_fd_; }
  void OnReadable();

  // Starts the file of (job, epoch), empty.
  void Open(const JobEpoch& je);
  // Output at `offset` of the job's output (contiguous chunks); beyond max_bytes, a note once.
  void Append(const JobEpoch& je, int64_t offset, std::string_view chunk);
  // Closes the file and queues its copy to `log_url` (none when empty) and its deletion; `stored`
  // follows. Also for a job whose file could not be opened (an empty log is stored).
  void Finish(const JobEpoch& je, const std::string& log_url);

  // The object key of a job's log: "J/logs/epoch-E.log".
  static std::string LogKey(const JobEpoch& je);

 private:
  struct Copy {
    JobEpoch je;
    std::string path, url;
  };
  struct Done {
    JobEpoch je;
    std::string url;
    Status status;
  };

  std::string PathOf(const JobEpoch& je) const;
  Status Upload(const Copy& copy) const;  // worker thread
  void Work();                             // worker thread

  const std::string dir_;
  const Stored stored_;
  const int64_t max_bytes_;
  const StoreOpener open_store_;
  std::map<JobEpoch, int> files_;  // open spool files (poll thread)
  int event_fd_ = -1;

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Copy> queue_;  // guarded by mu_
  std::deque<Done> done_;   // guarded by mu_
  bool stop_ = false;       // guarded by mu_
  std::thread worker_;
};

}  // namespace podsched::agent
