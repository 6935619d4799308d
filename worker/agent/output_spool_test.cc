#include "worker/agent/output_spool.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>
#include <vector>

namespace podsched::agent {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool Readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1;
}

class OutputSpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("output-spool-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "state");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs OnReadable until `n` jobs were reported stored (at most 10 s).
  void WaitStored(OutputSpool& spool, size_t n) {
    for (int i = 0; i < 100 && stored_.size() < n; ++i) {
      if (Readable(spool.fd(), 100)) spool.OnReadable();
    }
    ASSERT_EQ(stored_.size(), n);
  }

  OutputSpool::Stored Record() {
    return [this](const JobEpoch& je) { stored_.push_back(je); };
  }
  std::string Url() const { return "file://" + (dir_ / "objects").string(); }

  fs::path dir_;
  std::vector<JobEpoch> stored_;
};

TEST_F(OutputSpoolTest, StoresTheWholeOutputThenDeletesTheSpool) {
  OutputSpool spool((dir_ / "state").string(), Record());
  ASSERT_TRUE(spool.Start().ok());
  const JobEpoch je{JobId(7), 2};
  spool.Open(je);
  ASSERT_TRUE(fs::exists(dir_ / "state" / "job-7-epoch-2.log"));
  std::string all;
  int64_t offset = 0;
  for (int i = 0; i < 3000; ++i) {  // a few MiB: more than one 1 MiB piece of the copy
    const std::string line = "line " + std::to_string(i) + std::string(1000, '.') + "\n";
    spool.Append(je, offset, line);
    offset += static_cast<int64_t>(line.size());
    all += line;
  }
  spool.Finish(je, Url());
  WaitStored(spool, 1);
  EXPECT_EQ(stored_[0], je);
  EXPECT_EQ(OutputSpool::LogKey(je), "7/logs/epoch-2.log");
  EXPECT_EQ(ReadFile(dir_ / "objects" / "7" / "logs" / "epoch-2.log"), all);
  EXPECT_FALSE(fs::exists(dir_ / "state" / "job-7-epoch-2.log"));
}

TEST_F(OutputSpoolTest, BeyondTheLimitOneNoteLine) {
  OutputSpool spool((dir_ / "state").string(), Record(), {.max_bytes = 10});
  ASSERT_TRUE(spool.Start().ok());
  const JobEpoch je{JobId(3), 1};
  spool.Open(je);
  spool.Append(je, 0, "12345\n");
  spool.Append(je, 6, "67890\n");  // crosses the limit: the note instead
  spool.Append(je, 12, "more\n");  // beyond it: nothing
  spool.Finish(je, Url());
  WaitStored(spool, 1);
  const std::string got = ReadFile(dir_ / "objects" / "3" / "logs" / "epoch-1.log");
  EXPECT_TRUE(got.starts_with("12345\npodworker: output beyond ")) << got;
  EXPECT_EQ(got.find("67890"), std::string::npos);
  EXPECT_EQ(got.find("more"), std::string::npos);
  EXPECT_EQ(std::count(got.begin(), got.end(), '\n'), 2);
}

TEST_F(OutputSpoolTest, ASlowStoreDoesNotHoldUpThePollThread) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  OutputSpool spool((dir_ / "state").string(), Record(), {},
                    [released](std::string_view url) {
                      released.wait();  // an s3 store retrying
                      return store::OpenObjectStore(url);
                    });
  ASSERT_TRUE(spool.Start().ok());
  const JobEpoch first{JobId(1), 1}, second{JobId(2), 1};
  spool.Open(first);
  spool.Append(first, 0, "first\n");
  spool.Finish(first, Url());  // returns at once
  spool.Open(second);
  spool.Append(second, 0, "second\n");
  spool.Finish(second, Url());
  EXPECT_FALSE(Readable(spool.fd(), 200)) << "nothing is stored while the store hangs";
  EXPECT_TRUE(stored_.empty());
  release.set_value();
  WaitStored(spool, 2);
  std::sort(stored_.begin(), stored_.end());  // side by side: either may finish first
  EXPECT_EQ(stored_, (std::vector<JobEpoch>{first, second}));
  EXPECT_EQ(ReadFile(dir_ / "objects" / "2" / "logs" / "epoch-1.log"), "second\n");
}

// Audit M13: one store that hangs holds one upload thread; other jobs' logs are stored meanwhile,
// and a stopping agent leaves the hung upload after shutdown_wait instead of waiting for it.
TEST_F(OutputSpoolTest, AHungStoreHoldsOneUploadNotTheOthersNorTheStop) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  const std::string hung_url = "file://" + (dir_ / "hung").string();
  {
    OutputSpool spool((dir_ / "state").string(), Record(),
                      {.upload_threads = 2, .shutdown_wait = std::chrono::milliseconds(100)},
                      [released, hung_url](std::string_view url)
                          -> Result<std::unique_ptr<store::ObjectStore>> {
                        if (url == hung_url) {
                          released.wait();
                          return std::unexpected(Status(StatusCode::kUnavailable, "hung"));
                        }
                        return store::OpenObjectStore(url);
                      });
    ASSERT_TRUE(spool.Start().ok());
    const JobEpoch stuck{JobId(1), 1}, fine{JobId(2), 1}, later{JobId(3), 1};
    spool.Open(stuck);
    spool.Finish(stuck, hung_url);
    spool.Open(fine);
    spool.Append(fine, 0, "fine\n");
    spool.Finish(fine, Url());
    WaitStored(spool, 1);
    EXPECT_EQ(stored_[0], fine);
    spool.Open(later);
    spool.Finish(later, Url());  // the free thread takes it too
    WaitStored(spool, 2);
    EXPECT_EQ(stored_[1], later);
    EXPECT_EQ(ReadFile(dir_ / "objects" / "2" / "logs" / "epoch-1.log"), "fine\n");
  }  // the destructor returns while the hung upload still waits (it would deadlock otherwise)
  EXPECT_EQ(stored_.size(), 2u);
  EXPECT_TRUE(fs::exists(dir_ / "state" / "job-1-epoch-1.log"));  // its upload still runs
  release.set_value();  // the detached upload fails on its own and deletes its spool file
  for (int i = 0; i < 1000 && fs::exists(dir_ / "state" / "job-1-epoch-1.log"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(fs::exists(dir_ / "state" / "job-1-epoch-1.log"));
}

TEST_F(OutputSpoolTest, NoUrlOrABadStoreStillReportsAndDeletes) {
  OutputSpool spool((dir_ / "state").string(), Record());
  ASSERT_TRUE(spool.Start().ok());
  const JobEpoch a{JobId(4), 1}, b{JobId(5), 1};
  spool.Open(a);
  spool.Append(a, 0, "x\n");
  spool.Finish(a, "");
  spool.Open(b);
  spool.Finish(b, "nosuchscheme://bucket");
  WaitStored(spool, 2);
  EXPECT_FALSE(fs::exists(dir_ / "state" / "job-4-epoch-1.log"));
  EXPECT_FALSE(fs::exists(dir_ / "state" / "job-5-epoch-1.log"));
  EXPECT_FALSE(fs::exists(dir_ / "objects"));
}

}  // namespace
}  // namespace podsched::agent
