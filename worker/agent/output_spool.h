// The stored output of the launcher's jobs (docs/podworker.md, "Output"): one file per job and
// epoch in the state dir (`job-J-epoch-E.log`, at most `max_bytes`, then one note line), copied
// at the job's end to `{log_url}/{J}/logs/epoch-{E}.log` in the object store and deleted.
//
// The copies run on a small pool of upload threads, each streamed from its file in 1 MiB pieces
// (an s3 store's retries and a 256 MiB log never hold up the poll thread, nor sit in memory
// whole, and one store that hangs holds one thread, not every other job's log: audit M13); when
// one is done its thread makes fd() readable and OnReadable(), on the poll thread, calls the
// `stored` callback.
//
// Thread safety: every public method is for the poll thread. The upload threads share only
// `Shared` (its own lock), which they co-own: a stopping agent leaves uploads still hung after
// `shutdown_wait` to finish or die with the process, instead of waiting for them.
#pragma once

#include <chrono>
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
#include <vector>

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

  struct Options {
    int64_t max_bytes = kMaxSpool;
    int upload_threads = 4;
    std::chrono::milliseconds shutdown_wait{5000};
  };
  OutputSpool(std::string dir, Stored stored, Options options,
              StoreOpener open_store = store::OpenObjectStore);
  OutputSpool(std::string dir, Stored stored) : OutputSpool(std::move(dir), std::move(stored), Options{}) {}
  // Lets the copies in progress finish for at most shutdown_wait, then leaves them (their threads
  // are detached; their spool files stay in the state dir); copies still queued are abandoned.
  ~OutputSpool();
  OutputSpool(const OutputSpool&) = delete;
  OutputSpool& operator=(const OutputSpool&) = delete;

  // The eventfd and the upload threads.
  Status Start();
  // Readable when copies have finished: then call OnReadable().
  int fd() const { return shared_->event_fd; }
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
  // Uploads left running by spools destroyed so far (their threads detached). Thread-safe.
  static int64_t AbandonedUploads();

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

  // What the poll thread and the upload threads share; the last of them to go closes the fd.
  struct Shared {
    explicit Shared(StoreOpener opener) : open_store(std::move(opener)) {}
    ~Shared();
    const StoreOpener open_store;
    int event_fd = -1;
    std::mutex mu;
    std::condition_variable wake;  // a copy queued, or stop
    std::condition_variable idle;  // a copy finished
    std::deque<Copy> queue;        // guarded by mu
    std::deque<Done> done;         // guarded by mu
    int uploading = 0;             // guarded by mu
    bool stop = false;             // guarded by mu
  };

  std::string PathOf(const JobEpoch& je) const;
  // `buf` is the upload thread's own (kUploadChunk bytes): a fresh zeroed megabyte per upload
  // (its page faults, munmap's cross-CPU TLB flushes) was 7% of the agents' CPU with trivial
  // jobs back to back.
  static Status Upload(const StoreOpener& open_store, const Copy& copy, char* buf);
  static void Work(const std::shared_ptr<Shared>& shared);               // upload thread

  const std::string dir_;
  const Stored stored_;
  const Options options_;
  std::map<JobEpoch, int> files_;  // open spool files (poll thread)
  std::shared_ptr<Shared> shared_;
  std::vector<std::thread> workers_;
};

}  // namespace podsched::agent
