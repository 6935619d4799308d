// The few pieces of S3's XML responses the client needs, extracted without an XML library.
// S3 responses are flat, machine-written documents; these functions look for elements by name
// and decode the five predefined entities and numeric character references. They do not handle
// CDATA, comments or namespaced element names (S3 sends none of them in these responses).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace podsched::store {

// Decodes &amp; &lt; &gt; &quot; &apos; &#N; &#xH;. kInvalidArgument on an unknown entity.
Result<std::string> XmlUnescape(std::string_view s);
// Escapes & < > " ' for element text.
std::string XmlEscape(std::string_view s);

// The decoded text of the first <tag>...</tag> in `xml`, or nullopt.
std::optional<std::string> XmlFirst(std::string_view xml, std::string_view tag);

struct ListedObject {
  std::string key;  // the full object name in the bucket
  uint64_t size = 0;
};

struct ListPage {
  std::vector<ListedObject> objects;
  bool truncated = false;
  std::string next_token;  // NextContinuationToken when truncated
};

// Parses a ListObjectsV2 response (ListBucketResult). kInternal naming the problem when the
// document is not one, or a truncated page has no continuation token.
Result<ListPage> ParseListObjectsV2(std::string_view xml);

struct S3ErrorBody {
  std::string code;  // "NoSuchKey", "SignatureDoesNotMatch", ...; empty if not an <Error>
  std::string message;
};
S3ErrorBody ParseS3Error(std::string_view xml);

}  // namespace podsched::store
