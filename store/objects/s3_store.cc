#include "store/objects/s3_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <memory>

#include "store/objects/s3_client.h"
#include "store/objects/s3_xml.h"

namespace podsched::store {
namespace {

constexpr uint64_t kMaxSinglePut = 5ull << 30;
constexpr int kMaxParts = 1000;  // Swift's limit; AWS allows 10,000

// A multipart upload in progress: created lazily by the first full part.
class S3Writer final : public ObjectWriter {
 public:
  S3Writer(std::shared_ptr<S3Client> client, std::string object)
      : client_(std::move(client)),
        object_(std::move(object)),
        part_size_(client_->config().part_size) {}

  ~S3Writer() override {
    if (!upload_id_.empty() && !committed_) Abort();
  }

  Status Append(std::string_view bytes) override {
    if (!state_.ok()) return state_;
    while (!bytes.empty()) {
      if (buffer_.empty() && bytes.size() >= part_size_) {
        if (!Fail(UploadPart(bytes.substr(0, part_size_)))) return state_;
        bytes.remove_prefix(part_size_);
        continue;
      }
      if (buffer_.capacity() < part_size_) buffer_.reserve(part_size_);
      size_t take = std::min<size_t>(part_size_ - buffer_.size(), bytes.size());
      buffer_.append(bytes.data(), take);
      bytes.remove_prefix(take);
      if (buffer_.size() == part_size_) {
        if (!Fail(UploadPart(buffer_))) return state_;
        buffer_.clear();
      }
    }
    return Status::Ok();
  }

  Status Commit() override {
    if (!state_.ok()) return state_;
    Status s;
    if (upload_id_.empty()) {
      auto resp = client_->SendOk({.method = "PUT", .object = object_, .body = buffer_});
      s = resp ? Status::Ok() : resp.error();
    } else {
      if (!buffer_.empty()) s = UploadPart(buffer_);
      if (s.ok()) s = Complete();
    }
    if (!Fail(s)) return state_;
    committed_ = true;
    buffer_ = std::string();
    state_ = Status(StatusCode::kFailedPrecondition, "writer already committed");
    return Status::Ok();
  }

 private:
  // Records a failure (aborting the upload); returns s.ok().
  bool Fail(const Status& s) {
    if (s.ok()) return true;
    state_ = s;
    if (!upload_id_.empty()) Abort();
    return false;
  }

  Status Start() {
    auto resp = client_->SendOk({.method = "POST", .object = object_, .query = {{"uploads", ""}}});
    if (!resp) return resp.error();
    upload_id_ = XmlFirst(resp->body, "UploadId").value_or("");
    if (upload_id_.empty()) {
      return ToStatus(Internal(fmt::format("S3 create multipart upload of {}: no UploadId in {}",
                                           client_->Display(object_), resp->body.substr(0, 200))));
    }
    return Status::Ok();
  }

  Status UploadPart(std::string_view part) {
    if (upload_id_.empty()) {
      if (Status s = Start(); !s.ok()) return s;
    }
    if (etags_.size() >= kMaxParts) {
      return ToStatus(Error(StatusCode::kResourceExhausted,
                            fmt::format("{}: more than {} parts; raise part_size_mb in the URL",
                                        client_->Display(object_), kMaxParts)));
    }
    std::string number = std::to_string(etags_.size() + 1);
    auto resp = client_->SendOk({.method = "PUT",
                                 .object = object_,
                                 .query = {{"partNumber", number}, {"uploadId", upload_id_}},
                                 .body = part});
    if (!resp) return resp.error();
    auto etag = resp->headers.find("etag");
    if (etag == resp->headers.end()) {
      return ToStatus(Internal(fmt::format("S3 upload of part {} of {}: no ETag in the response",
                                           number, client_->Display(object_))));
    }
    etags_.push_back(etag->second);
    return Status::Ok();
  }

  Status Complete() {
    std::string body = "<CompleteMultipartUpload>";
    for (size_t i = 0; i < etags_.size(); ++i) {
      body += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", i + 1,
                          XmlEscape(etags_[i]));
    }
    body += "</CompleteMultipartUpload>";
    S3Call call{
        .method = "POST", .object = object_, .query = {{"uploadId", upload_id_}}, .body = body};
    auto resp = client_->SendOk(call);
    if (!resp) return resp.error();
    // S3 may answer 200 and still fail the completion in the body.
    if (S3ErrorBody err = ParseS3Error(resp->body); !err.code.empty()) {
      return ToStatus(Internal(fmt::format("S3 complete multipart upload of {}: {}: {}",
                                           client_->Display(object_), err.code, err.message)));
    }
    return Status::Ok();
  }

  void Abort() {
    // Best effort: a leftover upload is invisible to readers and expires by bucket policy.
    (void)client_->Send(
        {.method = "DELETE", .object = object_, .query = {{"uploadId", upload_id_}}});
    upload_id_.clear();
  }

  std::shared_ptr<S3Client> client_;
  std::string object_;
  uint64_t part_size_;
  std::string buffer_;
  std::string upload_id_;
  std::vector<std::string> etags_;
  bool committed_ = false;
  Status state_;  // the first error, or kFailedPrecondition after Commit
};

// Parses the total of "Content-Range: bytes A-B/TOTAL".
std::optional<uint64_t> RangeTotal(const HttpResponse& resp) {
  auto it = resp.headers.find("content-range");
  if (it == resp.headers.end()) return std::nullopt;
  size_t slash = it->second.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  uint64_t total = 0;
  const char* begin = it->second.data() + slash + 1;
  const char* end = it->second.data() + it->second.size();
  auto [p, ec] = std::from_chars(begin, end, total);
  if (ec != std::errc() || p != end) return std::nullopt;
  return total;
}

class S3Store final : public ObjectStore {
 public:
  explicit S3Store(S3Url url) : client_(std::make_shared<S3Client>(std::move(url))) {}

  std::string url() const override { return client_->config().redacted_url; }

  Status Put(std::string_view key, std::string_view bytes) override {
    if (Status s = ValidateKey(key); !s.ok()) return s;
    if (bytes.size() > kMaxSinglePut) {
      S3Writer w(client_, client_->ObjectName(key));
      if (Status s = w.Append(bytes); !s.ok()) return s;
      return w.Commit();
    }
    auto resp =
        client_->SendOk({.method = "PUT", .object = client_->ObjectName(key), .body = bytes});
    return resp ? Status::Ok() : resp.error();
  }

  Result<std::unique_ptr<ObjectWriter>> NewWriter(std::string_view key) override {
    if (Status s = ValidateKey(key); !s.ok()) return std::unexpected(s);
    return std::make_unique<S3Writer>(client_, client_->ObjectName(key));
  }

  Result<std::string> Get(std::string_view key) override {
    if (Status s = ValidateKey(key); !s.ok()) return std::unexpected(s);
    auto resp = client_->SendOk({.method = "GET", .object = client_->ObjectName(key)});
    if (!resp) return std::unexpected(resp.error());
    return std::move(resp->body);
  }

  Result<std::string> GetRange(std::string_view key, uint64_t offset, uint64_t length) override {
    if (Status s = ValidateKey(key); !s.ok()) return std::unexpected(s);
    auto past_end = [&](uint64_t size) {
      return InvalidArgument(fmt::format("range [{}, {}) is past the end of '{}' ({} bytes)",
                                         offset, offset + length, key, size));
    };
    if (length == 0) {
      auto info = Head(key);
      if (!info) return std::unexpected(info.error());
      if (offset > info->size) return past_end(info->size);
      return std::string();
    }
    S3Call call{.method = "GET",
                .object = client_->ObjectName(key),
                .headers = {{"range", fmt::format("bytes={}-{}", offset, offset + length - 1)}}};
    auto resp = client_->Send(call);
    if (!resp) return std::unexpected(resp.error());
    if (resp->status == 416) return past_end(RangeTotal(*resp).value_or(0));
    if (resp->status == 200) {  // the server ignored the range: cut it out ourselves
      if (offset > resp->body.size() || length > resp->body.size() - offset) {
        return past_end(resp->body.size());
      }
      return resp->body.substr(offset, length);
    }
    if (resp->status != 206) return std::unexpected(client_->ErrorFor(*resp, call));
    if (resp->body.size() != length) {
      return past_end(RangeTotal(*resp).value_or(offset + resp->body.size()));
    }
    return std::move(resp->body);
  }

  Result<ObjectInfo> Head(std::string_view key) override {
    if (Status s = ValidateKey(key); !s.ok()) return std::unexpected(s);
    auto resp = client_->SendOk({.method = "HEAD", .object = client_->ObjectName(key)});
    if (!resp) return std::unexpected(resp.error());
    auto it = resp->headers.find("content-length");
    uint64_t size = 0;
    if (it == resp->headers.end() ||
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), size).ec !=
            std::errc()) {
      return Internal(fmt::format("S3 HEAD {}: no valid Content-Length",
                                  client_->Display(client_->ObjectName(key))));
    }
    return ObjectInfo{std::string(key), size};
  }

  Result<std::vector<ObjectInfo>> List(std::string_view prefix) override {
    for (unsigned char c : prefix) {
      if (c < 0x20 || c == 0x7f) return InvalidArgument("list prefix contains a control byte");
    }
    const std::string& root = client_->config().prefix;
    std::string strip = root.empty() ? "" : root + "/";
    std::vector<ObjectInfo> out;
    std::string token;
    do {
      S3Call call{.method = "GET",
                  .query = {{"list-type", "2"}, {"prefix", strip + std::string(prefix)}}};
      if (!token.empty()) call.query.emplace_back("continuation-token", token);
      auto resp = client_->SendOk(call);
      if (!resp) return std::unexpected(resp.error());
      auto page = ParseListObjectsV2(resp->body);
      if (!page) return std::unexpected(page.error());
      for (ListedObject& o : page->objects) {
        if (o.key.starts_with(strip)) out.push_back({o.key.substr(strip.size()), o.size});
      }
      token = page->truncated ? page->next_token : "";
    } while (!token.empty());
    std::sort(out.begin(), out.end(),
              [](const ObjectInfo& a, const ObjectInfo& b) { return a.key < b.key; });
    return out;
  }

  Status Delete(std::string_view key) override {
    if (Status s = ValidateKey(key); !s.ok()) return s;
    S3Call call{.method = "DELETE", .object = client_->ObjectName(key)};
    auto resp = client_->Send(call);
    if (!resp) return resp.error();
    bool missing_key = resp->status == 404 && ParseS3Error(resp->body).code != "NoSuchBucket";
    if (missing_key || (resp->status >= 200 && resp->status <= 299)) return Status::Ok();
    return client_->ErrorFor(*resp, call);
  }

 private:
  std::shared_ptr<S3Client> client_;
};

}  // namespace

Result<std::unique_ptr<ObjectStore>> OpenS3Store(const S3Url& url) {
  return std::make_unique<S3Store>(url);
}

Status EnsureS3Bucket(std::string_view url) {
  auto parsed = ParseObjectUrl(url, ProcessEnv());
  if (!parsed) return parsed.error();
  if (!parsed->s3) return ToStatus(InvalidArgument(fmt::format("'{}' is not an s3:// URL", url)));
  S3Client client(*parsed->s3);
  std::string body;
  if (parsed->s3->region != "us-east-1") {
    body = fmt::format(
        "<CreateBucketConfiguration><LocationConstraint>{}</LocationConstraint>"
        "</CreateBucketConfiguration>",
        XmlEscape(parsed->s3->region));
  }
  S3Call call{.method = "PUT", .body = body};
  auto resp = client.Send(call);
  if (!resp) return resp.error();
  if (resp->status >= 200 && resp->status <= 299) return Status::Ok();
  if (resp->status == 409 && ParseS3Error(resp->body).code == "BucketAlreadyOwnedByYou") {
    return Status::Ok();
  }
  return client.ErrorFor(*resp, call);
}

}  // namespace podsched::store
