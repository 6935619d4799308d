// The s3:// backend of ObjectStore: the S3 REST API signed with AWS Signature V4 (see
// object_url.h for the URL and its parameters).
//
// Opening does not contact the server; the first request does. Every request carries
// x-amz-content-sha256 (the SHA-256 of its body, so the server verifies the payload) and is
// retried with exponential backoff (100 ms doubling, at most 2 s, with jitter) on 5xx, 429 and
// transport failures, up to max_attempts tries; then kUnavailable (kDataLoss when the last
// failure was a response body shorter than its Content-Length). A 403 is kPermissionDenied
// with the server's error code and message.
//
// Writers buffer one part (part_size_mb) in memory. An object smaller than one part is one PUT
// at Commit; a larger one is a multipart upload whose parts go up as they fill and which is
// completed by Commit, and aborted on any failure or when the writer is destroyed uncommitted.
// Put of more than 5 GiB goes through a writer (S3's single-PUT limit).
#pragma once

#include <memory>
#include <string_view>

#include "store/objects/object_store.h"
#include "store/objects/object_url.h"

namespace podsched::store {

Result<std::unique_ptr<ObjectStore>> OpenS3Store(const S3Url& url);

// Creates the bucket of the s3:// `url` unless it exists already (owned by the same account).
// For tests, benchmarks and first-time setup; stores never create buckets by themselves.
Status EnsureS3Bucket(std::string_view url);

}  // namespace podsched::store
