#include "store/objects/sigv4.h"

#include <gtest/gtest.h>

#include <chrono>

namespace podsched::store {
namespace {

// The examples of https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html
const SigV4Key kExampleKey{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                           "us-east-1", "s3"};
constexpr char kEmptySha[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

TimePoint ExampleTime() {
  using namespace std::chrono;
  return time_point_cast<Duration>(sys_days(year(2013) / May / 24));
}

TEST(SigV4Test, AmzDateFormatsUtc) { EXPECT_EQ(AmzDate(ExampleTime()), "20130524T000000Z"); }

TEST(SigV4Test, Sha256OfEmptyString) { EXPECT_EQ(Sha256Hex(""), kEmptySha); }

TEST(SigV4Test, AwsExampleGetObject) {
  SigV4Request req{.method = "GET",
                   .canonical_uri = "/test.txt",
                   .headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                               {"Range", "bytes=0-9"},
                               {"x-amz-content-sha256", kEmptySha},
                               {"x-amz-date", "20130524T000000Z"}},
                   .payload_sha256 = kEmptySha};
  EXPECT_EQ(Sha256Hex(CanonicalRequest(req)),
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(SigV4Authorization(req, kExampleKey, ExampleTime()),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
            "aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,"
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4Test, AwsExamplePutObject) {
  const char* body_sha = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072";
  EXPECT_EQ(Sha256Hex("Welcome to Amazon S3."), body_sha);
  SigV4Request req{.method = "PUT",
                   .canonical_uri = "/" + UriEncode("test$file.text", false),
                   .headers = {{"Date", "Fri, 24 May 2013 00:00:00 GMT"},
                               {"Host", "examplebucket.s3.amazonaws.com"},
                               {"x-amz-content-sha256", body_sha},
                               {"x-amz-date", "20130524T000000Z"},
                               {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
                   .payload_sha256 = body_sha};
  EXPECT_EQ(req.canonical_uri, "/test%24file.text");
  EXPECT_TRUE(
      SigV4Authorization(req, kExampleKey, ExampleTime())
          .ends_with("Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd"));
}

TEST(SigV4Test, AwsExampleListObjectsSortsAndEncodesQuery) {
  SigV4Request req{.method = "GET",
                   .canonical_uri = "/",
                   .query = {{"prefix", "J"}, {"max-keys", "2"}},
                   .headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                               {"x-amz-content-sha256", kEmptySha},
                               {"x-amz-date", "20130524T000000Z"}},
                   .payload_sha256 = kEmptySha};
  EXPECT_TRUE(
      SigV4Authorization(req, kExampleKey, ExampleTime())
          .ends_with("Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"));
}

TEST(SigV4Test, UriEncodeKeepsUnreservedAndOptionallySlash) {
  EXPECT_EQ(UriEncode("a-b_c.d~e/f g+h", false), "a-b_c.d~e/f%20g%2Bh");
  EXPECT_EQ(UriEncode("a/b=c&", true), "a%2Fb%3Dc%26");
  EXPECT_EQ(UriEncode("\xc3\xa9", true), "%C3%A9");
}

TEST(SigV4Test, CanonicalQueryHasEmptyValuesAndSortedNames) {
  EXPECT_EQ(CanonicalQuery({{"uploads", ""}}), "uploads=");
  EXPECT_EQ(CanonicalQuery({{"uploadId", "x/y"}, {"partNumber", "2"}}),
            "partNumber=2&uploadId=x%2Fy");
}

TEST(SigV4Test, HeaderValuesAreTrimmedAndNamesLowerCased) {
  SigV4Request req{.method = "GET",
                   .canonical_uri = "/",
                   .headers = {{"X-Amz-Meta-A", "  a   b  "}, {"host", "h"}},
                   .payload_sha256 = "UNSIGNED-PAYLOAD"};
  EXPECT_EQ(CanonicalRequest(req),
            "GET\n/\n\nhost:h\nx-amz-meta-a:a b\n\nhost;x-amz-meta-a\n"
            "UNSIGNED-PAYLOAD");
}

}  // namespace
}  // namespace podsched::store
