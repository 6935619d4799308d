#include "store/objects/object_url.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "store/objects/object_store.h"

namespace podsched::store {
namespace {

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ValidateKeyTest, AcceptsRelativePaths) {
  for (const char* key : {"a", "job/ckpt-1-2/shard-0-of-4", "a.b/.c/..d/x y", "ü/ß"}) {
    EXPECT_TRUE(ValidateKey(key).ok()) << key;
  }
  EXPECT_TRUE(ValidateKey(std::string(1024, 'k')).ok());
}

TEST(ValidateKeyTest, RejectsWithReason) {
  struct Case {
    std::string key;
    std::string reason;
  };
  for (const Case& c : std::vector<Case>{{"", "empty"},
                                         {"/abs", "must not start with '/'"},
                                         {"a//b", "empty path segment"},
                                         {"a/", "empty path segment"},
                                         {"../x", "'..'"},
                                         {"a/./b", "'.'"},
                                         {"a/..", "'..'"},
                                         {std::string("a\0b", 3), "control"},
                                         {"a\nb", "control"},
                                         {std::string(1025, 'k'), "at most 1024"}}) {
    Status s = ValidateKey(c.key);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.key;
    EXPECT_NE(s.message().find(c.reason), std::string::npos) << s.message();
  }
}

TEST(ParseObjectUrlTest, FileUrls) {
  auto u = ParseObjectUrl("file:///var/objects/", FakeEnv({}));
  ASSERT_TRUE(u.has_value()) << u.error().ToString();
  ASSERT_TRUE(u->file.has_value());
  EXPECT_EQ(u->file->root, "/var/objects");
  EXPECT_EQ(ParseObjectUrl("file://localhost/x", FakeEnv({}))->file->root, "/x");
  auto rel = ParseObjectUrl("file://var/objects", FakeEnv({}));
  ASSERT_FALSE(rel.has_value());
  EXPECT_NE(rel.error().message().find("three slashes"), std::string::npos);
  EXPECT_FALSE(ParseObjectUrl("file:///x?y=1", FakeEnv({})).has_value());
}

TEST(ParseObjectUrlTest, S3UrlFromQuery) {
  auto u = ParseObjectUrl(
      "s3://my-bucket/ckpt/run1/?endpoint=http://127.0.0.1:9000&region=eu-west-1&"
      "access_key=test%3Atester&secret_key=se%2Fcr+et&addressing=virtual&max_attempts=2&"
      "connect_timeout_ms=100&part_size_mb=5",
      FakeEnv({{"AWS_ACCESS_KEY_ID", "ignored"}}));
  ASSERT_TRUE(u.has_value()) << u.error().ToString();
  const S3Url& s = *u->s3;
  EXPECT_EQ(s.bucket, "my-bucket");
  EXPECT_EQ(s.prefix, "ckpt/run1");
  EXPECT_EQ(s.endpoint_scheme, "http");
  EXPECT_EQ(s.endpoint_host, "127.0.0.1");
  EXPECT_EQ(s.endpoint_port, 9000);
  EXPECT_EQ(s.region, "eu-west-1");
  EXPECT_EQ(s.access_key, "test:tester");
  EXPECT_EQ(s.secret_key, "se/cr+et");
  EXPECT_TRUE(s.virtual_host);
  EXPECT_EQ(s.max_attempts, 2);
  EXPECT_EQ(s.connect_timeout_ms, 100);
  EXPECT_EQ(s.part_size, 5u << 20);
  EXPECT_EQ(s.redacted_url,
            "s3://my-bucket/ckpt/run1/?endpoint=http://127.0.0.1:9000&region=eu-west-1&"
            "addressing=virtual&max_attempts=2&connect_timeout_ms=100&part_size_mb=5");
}

TEST(ParseObjectUrlTest, S3DefaultsFromEnvironment) {
  auto u = ParseObjectUrl("s3://bkt", FakeEnv({{"AWS_ACCESS_KEY_ID", "ak"},
                                               {"AWS_SECRET_ACCESS_KEY", "sk"},
                                               {"AWS_ENDPOINT_URL", "https://s3.example.com/"},
                                               {"AWS_DEFAULT_REGION", "ap-south-1"}}));
  ASSERT_TRUE(u.has_value()) << u.error().ToString();
  EXPECT_EQ(u->s3->prefix, "");
  EXPECT_EQ(u->s3->access_key, "ak");
  EXPECT_EQ(u->s3->secret_key, "sk");
  EXPECT_EQ(u->s3->endpoint_scheme, "https");
  EXPECT_EQ(u->s3->endpoint_host, "s3.example.com");
  EXPECT_FALSE(u->s3->endpoint_port.has_value());
  EXPECT_EQ(u->s3->region, "ap-south-1");
  EXPECT_FALSE(u->s3->virtual_host);

  auto aws = ParseObjectUrl(
      "s3://bkt", FakeEnv({{"AWS_ACCESS_KEY_ID", "ak"}, {"AWS_SECRET_ACCESS_KEY", "sk"}}));
  EXPECT_EQ(aws->s3->endpoint_host, "s3.us-east-1.amazonaws.com");
}

TEST(ParseObjectUrlTest, BadUrlsNameTheProblem) {
  auto env = FakeEnv({{"AWS_ACCESS_KEY_ID", "ak"}, {"AWS_SECRET_ACCESS_KEY", "sk"}});
  struct Case {
    std::string url;
    std::string reason;
  };
  for (const Case& c : std::vector<Case>{{"gs://b/x", "unsupported object store URL"},
                                         {"s3://B/x", "invalid S3 bucket name"},
                                         {"s3://ab", "invalid S3 bucket name"},
                                         {"s3://bkt/a/../b", "'..'"},
                                         {"s3://bkt?colour=red", "unknown URL parameter 'colour'"},
                                         {"s3://bkt?addressing=dns", "valid: path, virtual"},
                                         {"s3://bkt?max_attempts=0", "max_attempts=0"},
                                         {"s3://bkt?part_size_mb=4", "[5, 1024]"},
                                         {"s3://bkt?endpoint=127.0.0.1:9000", "has no scheme"},
                                         {"s3://bkt?endpoint=ftp://h", "unsupported scheme"},
                                         {"s3://bkt?endpoint=http://h:99999", "invalid port"},
                                         {"s3://bkt?endpoint=http://h/path", "has a path"},
                                         {"s3://bkt?secret_key=%zz", "malformed percent escape"}}) {
    auto u = ParseObjectUrl(c.url, env);
    ASSERT_FALSE(u.has_value()) << c.url;
    EXPECT_EQ(u.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(u.error().message().find(c.reason), std::string::npos) << u.error().message();
  }
}

TEST(ParseObjectUrlTest, MissingCredentialsSayWhereToPutThem) {
  auto u = ParseObjectUrl("s3://bkt/p?secret_key=only", FakeEnv({}));
  ASSERT_FALSE(u.has_value());
  EXPECT_NE(u.error().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_EQ(u.error().message().find("only"), std::string::npos) << "secret leaked";
}

}  // namespace
}  // namespace podsched::store

namespace podsched::store {
namespace {

TEST(ParseObjectUrlTest, MutatedUrlsNeverCrash) {
  const std::string seed =
      "s3://bkt/p/q?endpoint=http://127.0.0.1:9000&access_key=a%3Ab&secret_key=s&max_attempts=2";
  auto env = [](std::string_view) -> std::optional<std::string> { return "x"; };
  std::mt19937 rng(11);
  for (int i = 0; i < 3000; ++i) {
    std::string url = seed;
    for (int m = rng() % 5; m >= 0; --m) {
      size_t pos = rng() % url.size();
      if (rng() % 2)
        url[pos] = ":/?&=%.[]@"[rng() % 10];
      else
        url.erase(pos, 1 + rng() % 6);
      if (url.empty()) url = "s";
    }
    auto parsed = ParseObjectUrl(url, env);
    if (parsed && parsed->s3) {
      EXPECT_TRUE(ValidateBucket(parsed->s3->bucket).ok()) << url;
    }
    (void)ValidateKey(url);
  }
}

}  // namespace
}  // namespace podsched::store
