// One conformance suite for every ObjectStore backend: file:// on a temp dir and s3:// against
// the real S3 server (OpenStack Swift + s3api) that the ctest fixture starts with
// deploy/s3-server.sh. Plus s3-only checks: credentials, unreachable endpoint, virtual-host
// addressing, interop with the aws CLI, abandoned multipart uploads (through the internal
// S3Client, to list them).
//
// Environment: PODSCHED_TEST_S3_DIR (the fixture's server dir, whose run/ports names the proxy
// port) or PODSCHED_TEST_S3_ENDPOINT; PODSCHED_TEST_TMPDIR for file:// stores. Without an S3
// server the s3 tests fail when CI=true, else skip with a loud message.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "store/objects/object_store.h"
#include "store/objects/object_url.h"
#include "store/objects/s3_client.h"
#include "store/objects/s3_store.h"

namespace podsched::store {
namespace {

namespace fs = std::filesystem;

constexpr char kBucket[] = "podsched-conformance";

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The fixture's endpoint, or "" when there is no S3 server.
std::string S3Endpoint() {
  if (std::string e = Env("PODSCHED_TEST_S3_ENDPOINT"); !e.empty()) return e;
  std::string dir = Env("PODSCHED_TEST_S3_DIR");
  if (dir.empty()) return "";
  std::ifstream ports(dir + "/run/ports");
  for (std::string line; std::getline(ports, line);) {
    if (line.starts_with("proxy_port=")) return "http://127.0.0.1:" + line.substr(11);
  }
  return "";
}

std::string UniqueName(std::string_view what) {
  static std::atomic<int> n{0};
  std::random_device rd;
  return std::string(what) + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + "-" +
         std::to_string(rd() % 100000);
}

std::string S3Url(std::string_view prefix, std::string_view extra = "") {
  return std::string("s3://") + kBucket + "/" + std::string(prefix) + "?endpoint=" + S3Endpoint() +
         "&region=us-east-1&access_key=test%3Atester&secret_key=testing" + std::string(extra);
}

#define REQUIRE_S3()                                                                              \
  do {                                                                                            \
    if (S3Endpoint().empty()) {                                                                   \
      if (Env("CI") == "true") FAIL() << "CI=true but no S3 server: the fixture must start it";   \
      GTEST_SKIP() << "\n*** NO S3 SERVER: s3:// tests SKIPPED. Run them through ctest (its "     \
                      "fixture starts deploy/s3-server.sh) or set PODSCHED_TEST_S3_ENDPOINT ***"; \
    }                                                                                             \
  } while (false)

std::string Bytes(size_t n, uint32_t seed) {
  std::string out(n, '\0');
  std::minstd_rand rng(seed);
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

class ConformanceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "s3") {
      REQUIRE_S3();
      ASSERT_TRUE(EnsureS3Bucket(S3Url("")).ok());
      url_ = S3Url(UniqueName("t"), "&part_size_mb=5");
    } else {
      std::string base = Env("PODSCHED_TEST_TMPDIR");
      if (base.empty()) base = fs::temp_directory_path().string();
      fs::create_directories(base);
      dir_ = base + "/" + UniqueName("objects");
      url_ = "file://" + dir_;
    }
    auto s = OpenObjectStore(url_);
    ASSERT_TRUE(s.has_value()) << s.error().ToString();
    store_ = std::move(*s);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::vector<std::string> Keys(std::string_view prefix) {
    auto list = store_->List(prefix);
    EXPECT_TRUE(list.has_value()) << list.error().ToString();
    std::vector<std::string> out;
    if (list) {
      for (const ObjectInfo& o : *list) out.push_back(o.key);
    }
    return out;
  }

  std::string url_;
  std::string dir_;
  std::unique_ptr<ObjectStore> store_;
};

TEST_P(ConformanceTest, PutGetOverwriteHead) {
  ASSERT_TRUE(store_->Put("a/b.bin", "first").ok());
  EXPECT_EQ(store_->Get("a/b.bin").value(), "first");
  std::string big = Bytes(300000, 1);
  ASSERT_TRUE(store_->Put("a/b.bin", big).ok());
  EXPECT_EQ(store_->Get("a/b.bin").value(), big);
  EXPECT_EQ(store_->Head("a/b.bin")->size, big.size());
  ASSERT_TRUE(store_->Put("empty", "").ok());
  EXPECT_EQ(store_->Get("empty").value(), "");
  EXPECT_EQ(store_->Head("empty")->size, 0u);
  std::string odd = "sp ace+plus%pct&amp=eq~ü/x";
  ASSERT_TRUE(store_->Put(odd, "odd").ok());
  EXPECT_EQ(store_->Get(odd).value(), "odd");
  EXPECT_EQ(Keys("sp ace"), std::vector<std::string>{odd});
}

TEST_P(ConformanceTest, RangeGet) {
  ASSERT_TRUE(store_->Put("r", "0123456789").ok());
  EXPECT_EQ(store_->GetRange("r", 0, 10).value(), "0123456789");
  EXPECT_EQ(store_->GetRange("r", 3, 4).value(), "3456");
  EXPECT_EQ(store_->GetRange("r", 9, 1).value(), "9");
  EXPECT_EQ(store_->GetRange("r", 10, 0).value(), "");
  EXPECT_EQ(store_->GetRange("r", 8, 5).error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->GetRange("r", 10, 1).error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->GetRange("r", 50, 1).error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->GetRange("r", 11, 0).error().code(), StatusCode::kInvalidArgument);
}

// ReadRange: the same bytes and errors as GetRange, into the caller's buffer (and nothing
// written to it on an error's way out but what was read).
TEST_P(ConformanceTest, RangeReadIntoABuffer) {
  ASSERT_TRUE(store_->Put("r", "0123456789").ok());
  std::string buf(4, '.');
  ASSERT_TRUE(store_->ReadRange("r", 3, std::span<char>(buf)).ok());
  EXPECT_EQ(buf, "3456");
  std::string all(10, '.');
  ASSERT_TRUE(store_->ReadRange("r", 0, std::span<char>(all)).ok());
  EXPECT_EQ(all, "0123456789");
  EXPECT_TRUE(store_->ReadRange("r", 10, std::span<char>()).ok());
  std::string five(5, '.');
  EXPECT_EQ(store_->ReadRange("r", 8, std::span<char>(five)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ReadRange("nope", 0, std::span<char>(buf)).code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->ReadRange("../r", 0, std::span<char>(buf)).code(),
            StatusCode::kInvalidArgument);
}

TEST_P(ConformanceTest, MissingKeysAreNotFoundAndDeleteIsIdempotent) {
  EXPECT_EQ(store_->Get("nope").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Head("nope").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->GetRange("nope", 0, 1).error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(store_->Delete("nope").ok());
  ASSERT_TRUE(store_->Put("d/x", "1").ok());
  ASSERT_TRUE(store_->Delete("d/x").ok());
  EXPECT_EQ(store_->Get("d/x").error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Keys("").empty());
}

TEST_P(ConformanceTest, ListByPrefixIsSorted) {
  for (const char* k : {"job/ckpt-2/manifest", "job/ckpt-10/shard-0", "job/ckpt-1/shard-1",
                        "job/ckpt-1/shard-0", "jobx", "logs/0"}) {
    ASSERT_TRUE(store_->Put(k, k).ok()) << k;
  }
  EXPECT_EQ(Keys("job/ckpt-1"),
            (std::vector<std::string>{"job/ckpt-1/shard-0", "job/ckpt-1/shard-1",
                                      "job/ckpt-10/shard-0"}));
  EXPECT_EQ(Keys("job/").size(), 4u);
  EXPECT_EQ(Keys("job").size(), 5u);
  EXPECT_EQ(Keys("").size(), 6u);
  EXPECT_TRUE(Keys("zzz").empty());
  auto list = store_->List("logs/");
  ASSERT_TRUE(list.has_value());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].size, 6u);
}

TEST_P(ConformanceTest, ListPagesPast1000Keys) {
  constexpr int kKeys = 1100;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < kKeys; i += 8) {
        char key[32];
        std::snprintf(key, sizeof key, "many/%05d", i);
        if (!store_->Put(key, "x").ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);
  ASSERT_TRUE(store_->Put("other", "y").ok());
  std::vector<std::string> keys = Keys("many/");
  ASSERT_EQ(keys.size(), static_cast<size_t>(kKeys));
  EXPECT_EQ(keys.front(), "many/00000");
  EXPECT_EQ(keys[1000], "many/01000");
  EXPECT_EQ(keys.back(), "many/01099");
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
}

TEST_P(ConformanceTest, InvalidKeysAreRejectedByEveryCall) {
  for (std::string key : {std::string(""), std::string("/abs"), std::string("a/../b"),
                          std::string("a//b"), std::string("x/"), std::string(1025, 'k')}) {
    EXPECT_EQ(store_->Put(key, "x").code(), StatusCode::kInvalidArgument) << key;
    EXPECT_EQ(store_->NewWriter(key).error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(store_->Get(key).error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(store_->GetRange(key, 0, 1).error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(store_->Head(key).error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(store_->Delete(key).code(), StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(Keys("").empty());
}

TEST_P(ConformanceTest, StreamingWriterInManyParts) {
  std::string data = Bytes(12 * (1 << 20) + 12345, 7);  // > 2 parts of 5 MiB on s3
  auto w = store_->NewWriter("ckpt/shard-0-of-1");
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  for (size_t off = 0; off < data.size();) {
    size_t n = std::min<size_t>(data.size() - off, (1 << 20) + 7 * (off % 5));
    ASSERT_TRUE((*w)->Append(std::string_view(data).substr(off, n)).ok());
    off += n;
  }
  EXPECT_EQ(store_->Head("ckpt/shard-0-of-1").error().code(), StatusCode::kNotFound);
  ASSERT_TRUE((*w)->Commit().ok());
  EXPECT_EQ((*w)->Commit().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->Head("ckpt/shard-0-of-1")->size, data.size());
  EXPECT_EQ(store_->Get("ckpt/shard-0-of-1").value(), data);
  EXPECT_EQ(store_->GetRange("ckpt/shard-0-of-1", 6 << 20, 100).value(), data.substr(6 << 20, 100));
  EXPECT_EQ(Keys(""), std::vector<std::string>{"ckpt/shard-0-of-1"});
}

TEST_P(ConformanceTest, SmallWriterCommitsOneObject) {
  auto w = store_->NewWriter("small");
  ASSERT_TRUE(w.has_value());
  ASSERT_TRUE((*w)->Append("ab").ok());
  ASSERT_TRUE((*w)->Append("").ok());
  ASSERT_TRUE((*w)->Append("c").ok());
  ASSERT_TRUE((*w)->Commit().ok());
  EXPECT_EQ(store_->Get("small").value(), "abc");
}

TEST_P(ConformanceTest, WriterDroppedWithoutCommitLeavesNothing) {
  ASSERT_TRUE(store_->Put("ckpt/manifest", "old").ok());
  {
    auto w = store_->NewWriter("ckpt/shard");
    ASSERT_TRUE(w.has_value());
    ASSERT_TRUE((*w)->Append(Bytes(11 << 20, 3)).ok());  // at least 2 parts uploaded on s3
    auto m = store_->NewWriter("ckpt/manifest");
    ASSERT_TRUE((*m)->Append("new").ok());
  }
  EXPECT_EQ(store_->Head("ckpt/shard").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Get("ckpt/manifest").value(), "old");
  EXPECT_EQ(Keys(""), std::vector<std::string>{"ckpt/manifest"});
}

INSTANTIATE_TEST_SUITE_P(Backends, ConformanceTest, ::testing::Values("file", "s3"),
                         [](const auto& info) { return info.param; });

// ---- s3 only ----

class S3Test : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_S3();
    ASSERT_TRUE(EnsureS3Bucket(S3Url("")).ok());
    prefix_ = UniqueName("s3");
  }

  // Runs the aws CLI against the fixture's server; returns its stdout, or nullopt on failure.
  std::optional<std::string> Aws(const std::string& args) {
    std::string cmd =
        "AWS_ACCESS_KEY_ID=test:tester AWS_SECRET_ACCESS_KEY=testing "
        "AWS_DEFAULT_REGION=us-east-1 /usr/bin/aws --endpoint-url " +
        S3Endpoint() + " " + args + " 2>/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return std::nullopt;
    std::string out;
    char buf[65536];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    if (::pclose(p) != 0) return std::nullopt;
    return out;
  }

  std::string prefix_;
};

TEST_F(S3Test, WrongSecretIsPermissionDeniedWithTheServersReason) {
  auto store =
      OpenObjectStore(std::string("s3://") + kBucket + "/" + prefix_ + "?endpoint=" + S3Endpoint() +
                      "&access_key=test%3Atester&secret_key=wrong");
  ASSERT_TRUE(store.has_value());
  Status s = (*store)->Put("k", "v");
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("SignatureDoesNotMatch"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("secret key"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("wrong"), std::string::npos) << "secret leaked: " << s.message();
  EXPECT_EQ((*store)->Get("k").error().code(), StatusCode::kPermissionDenied);
}

TEST_F(S3Test, UnreachableEndpointIsUnavailableAfterBoundedRetries) {
  // Port 1 of 127.0.0.1: privileged and unused, so the connection is refused.
  auto store = OpenObjectStore(std::string("s3://") + kBucket +
                               "/x?endpoint=http://127.0.0.1:1&access_key=a&secret_key=b&"
                               "max_attempts=3&connect_timeout_ms=300");
  ASSERT_TRUE(store.has_value());
  auto got = (*store)->Get("k");
  ASSERT_FALSE(got.has_value());
  EXPECT_EQ(got.error().code(), StatusCode::kUnavailable) << got.error().ToString();
  EXPECT_NE(got.error().message().find("after 3 attempts"), std::string::npos)
      << got.error().message();
}

TEST_F(S3Test, MissingBucketIsNotFound) {
  auto store = OpenObjectStore(S3Url("p").replace(5, std::string(kBucket).size(), "no-such-bkt"));
  ASSERT_TRUE(store.has_value());
  auto got = (*store)->Get("k");
  EXPECT_EQ(got.error().code(), StatusCode::kNotFound);
  EXPECT_NE(got.error().message().find("NoSuchBucket"), std::string::npos);
  EXPECT_FALSE((*store)->Delete("k").ok()) << "a missing bucket is not a missing key";
}

TEST_F(S3Test, VirtualHostAddressing) {
  std::string endpoint = S3Endpoint();
  std::string local = "http://localhost" + endpoint.substr(endpoint.rfind(':'));
  auto store =
      OpenObjectStore(std::string("s3://") + kBucket + "/" + prefix_ + "?endpoint=" + local +
                      "&addressing=virtual&access_key=test%3Atester&" + "secret_key=testing");
  ASSERT_TRUE(store.has_value());
  ASSERT_TRUE((*store)->Put("v/k", "virtual").ok());
  auto path_style = OpenObjectStore(S3Url(prefix_));
  EXPECT_EQ((*path_style)->Get("v/k").value(), "virtual");
  EXPECT_EQ((*store)->List("v/")->size(), 1u);
}

TEST_F(S3Test, AwsCliReadsWhatWeWroteAndWeReadWhatItWrote) {
  auto store = OpenObjectStore(S3Url(prefix_, "&part_size_mb=5"));
  ASSERT_TRUE(store.has_value());
  std::string big = Bytes(11 << 20, 12);
  auto w = (*store)->NewWriter("interop/big");
  ASSERT_TRUE((*w)->Append(big).ok());
  ASSERT_TRUE((*w)->Commit().ok());
  std::string base = std::string("s3://") + kBucket + "/" + prefix_ + "/interop/";
  EXPECT_EQ(Aws("s3 cp " + base + "big -"), big);
  auto head = Aws(std::string("s3api head-object --bucket ") + kBucket + " --key " + prefix_ +
                  "/interop/big --query ETag --output text");
  ASSERT_TRUE(head.has_value());
  EXPECT_NE(head->find("-3"), std::string::npos) << "expected a 3-part multipart ETag: " << *head;

  std::string tmp = (fs::temp_directory_path() / UniqueName("awscli")).string();
  std::string from_cli = Bytes(20000, 13);
  std::ofstream(tmp, std::ios::binary) << from_cli;
  ASSERT_TRUE(Aws("s3 cp " + tmp + " " + base + "from-cli").has_value());
  fs::remove(tmp);
  EXPECT_EQ((*store)->Get("interop/from-cli").value(), from_cli);
  EXPECT_EQ((*store)->Head("interop/from-cli")->size, from_cli.size());
}

TEST_F(S3Test, AbandonedWriterAbortsItsMultipartUpload) {
  auto parsed = ParseObjectUrl(S3Url(prefix_), ProcessEnv());
  ASSERT_TRUE(parsed.has_value());
  S3Client client(*parsed->s3);
  std::string key = prefix_ + "/abandoned";
  auto open_uploads = [&]() -> std::string {
    auto resp = client.SendOk({.method = "GET", .query = {{"uploads", ""}, {"prefix", key}}});
    EXPECT_TRUE(resp.has_value()) << resp.error().ToString();
    return resp ? resp->body : "";
  };
  auto store = OpenObjectStore(S3Url(prefix_, "&part_size_mb=5"));
  {
    auto w = (*store)->NewWriter("abandoned");
    ASSERT_TRUE((*w)->Append(Bytes(6 << 20, 5)).ok());
    EXPECT_NE(open_uploads().find("<Key>" + key + "</Key>"), std::string::npos)
        << "a part should be up";
  }
  std::string after = open_uploads();
  EXPECT_EQ(after.find("<Key>" + key + "</Key>"), std::string::npos) << "not aborted: " << after;
  EXPECT_NE(after.find("ListMultipartUploadsResult"), std::string::npos) << after;
}

}  // namespace
}  // namespace podsched::store
