#include "store/objects/s3_xml.h"

#include <gtest/gtest.h>

#include <random>

namespace podsched::store {
namespace {

TEST(S3XmlTest, UnescapesPredefinedAndNumericEntities) {
  EXPECT_EQ(XmlUnescape("a&amp;b&lt;c&gt;d&quot;e&apos;f").value(), "a&b<c>d\"e'f");
  EXPECT_EQ(XmlUnescape("&#65;&#x42;&#xe9;").value(), "AB\xc3\xa9");
  EXPECT_EQ(XmlUnescape("&bogus;").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(XmlUnescape("a & b").error().code(), StatusCode::kInvalidArgument);
}

TEST(S3XmlTest, EscapeRoundTrips) {
  std::string s = "\"etag\" & <x> 'y'";
  EXPECT_EQ(XmlEscape(s), "&quot;etag&quot; &amp; &lt;x&gt; &apos;y&apos;");
  EXPECT_EQ(XmlUnescape(XmlEscape(s)).value(), s);
}

TEST(S3XmlTest, ParsesListPageWithEscapedKeysAndToken) {
  const char* xml = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>
<Prefix>p/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated>
<Contents><Key>p/a&amp;b</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>
<ETag>&quot;x&quot;</ETag><Size>12</Size><StorageClass>STANDARD</StorageClass></Contents>
<Contents><Key>p/c&lt;d</Key><Size>0</Size></Contents>
<NextContinuationToken>tok&amp;en==</NextContinuationToken></ListBucketResult>)";
  auto page = ParseListObjectsV2(xml);
  ASSERT_TRUE(page.has_value()) << page.error().ToString();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "p/a&b");
  EXPECT_EQ(page->objects[0].size, 12u);
  EXPECT_EQ(page->objects[1].key, "p/c<d");
  EXPECT_EQ(page->objects[1].size, 0u);
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_token, "tok&en==");
}

TEST(S3XmlTest, ParsesEmptyLastPage) {
  auto page = ParseListObjectsV2(
      "<ListBucketResult><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated>"
      "</ListBucketResult>");
  ASSERT_TRUE(page.has_value());
  EXPECT_TRUE(page->objects.empty());
  EXPECT_FALSE(page->truncated);
}

TEST(S3XmlTest, RejectsMalformedListResponses) {
  EXPECT_FALSE(ParseListObjectsV2("<Error><Code>X</Code></Error>").has_value());
  EXPECT_FALSE(ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated>"
                                  "</ListBucketResult>")
                   .has_value());
  EXPECT_FALSE(ParseListObjectsV2("<ListBucketResult><Contents><Key>a</Key><Size>x1</Size>"
                                  "</Contents></ListBucketResult>")
                   .has_value());
}

TEST(S3XmlTest, ParsesErrorBodies) {
  S3ErrorBody e = ParseS3Error(
      "<?xml version='1.0' encoding='UTF-8'?>\n<Error><Code>SignatureDoesNotMatch</Code>"
      "<Message>The request signature we calculated does not match</Message></Error>");
  EXPECT_EQ(e.code, "SignatureDoesNotMatch");
  EXPECT_EQ(e.message, "The request signature we calculated does not match");
  EXPECT_EQ(ParseS3Error("").code, "");
  EXPECT_EQ(XmlFirst("<R><UploadId>abc</UploadId></R>", "UploadId").value(), "abc");
  EXPECT_EQ(XmlFirst("<R><Empty/></R>", "Empty").value(), "");
  EXPECT_FALSE(XmlFirst("<R></R>", "UploadId").has_value());
}

}  // namespace
}  // namespace podsched::store

namespace podsched::store {
namespace {

// Outside bytes: mutated responses must parse or fail cleanly, never crash or over-read
// (this runs under ASan in CI).
TEST(S3XmlTest, MutatedResponsesNeverCrash) {
  const std::string seed =
      "<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>a&amp;b</Key>"
      "<Size>12</Size></Contents><NextContinuationToken>t&#x41;</NextContinuationToken>"
      "</ListBucketResult><Error><Code>C</Code><Message>M</Message></Error>";
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    std::string doc = seed;
    for (int m = rng() % 6; m >= 0; --m) {
      size_t pos = rng() % doc.size();
      switch (rng() % 3) {
        case 0:
          doc[pos] = "<>/&;#x0"[rng() % 8];
          break;
        case 1:
          doc.erase(pos, rng() % 12);
          break;
        default:
          doc = doc.substr(0, pos);
          break;
      }
      if (doc.empty()) doc = "<";
    }
    (void)ParseListObjectsV2(doc);
    (void)ParseS3Error(doc);
    (void)XmlFirst(doc, "Key");
    (void)XmlUnescape(doc);
  }
}

}  // namespace
}  // namespace podsched::store
