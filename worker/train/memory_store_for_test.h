// MemoryStore: an in-memory ObjectStore, the fake that tests of checkpoint and data-set code
// run against (no file system). Test-only; not thread-safe.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "store/objects/object_store.h"

namespace podsched::train {

class MemoryStore final : public store::ObjectStore {
 public:
  std::map<std::string, std::string, std::less<>> objects;

  std::string url() const override { return "mem://"; }
  Status Put(std::string_view key, std::string_view bytes) override {
    objects[std::string(key)] = std::string(bytes);
    return Status::Ok();
  }
  Result<std::unique_ptr<store::ObjectWriter>> NewWriter(std::string_view key) override {
    struct Writer final : store::ObjectWriter {
      MemoryStore* s;
      std::string key, buf;
      Status Append(std::string_view b) override { return buf.append(b), Status::Ok(); }
      Status Commit() override { return s->Put(key, buf); }
    };
    auto w = std::make_unique<Writer>();
    w->s = this;
    w->key = std::string(key);
    return std::unique_ptr<store::ObjectWriter>(std::move(w));
  }
  Result<std::string> Get(std::string_view key) override {
    auto it = objects.find(key);
    if (it == objects.end()) return NotFound(std::string(key));
    return it->second;
  }
  Result<std::string> GetRange(std::string_view key, uint64_t off, uint64_t len) override {
    auto all = Get(key);
    if (!all) return all;
    if (off + len > all->size()) return InvalidArgument("past end");
    return all->substr(off, len);
  }
  Result<store::ObjectInfo> Head(std::string_view key) override {
    auto all = Get(key);
    if (!all) return std::unexpected(all.error());
    return store::ObjectInfo{std::string(key), all->size()};
  }
  Result<std::vector<store::ObjectInfo>> List(std::string_view prefix) override {
    std::vector<store::ObjectInfo> out;
    for (auto& [k, v] : objects) {
      if (k.starts_with(prefix)) out.push_back({k, v.size()});
    }
    return out;
  }
  Status Delete(std::string_view key) override {
    objects.erase(std::string(key));
    return Status::Ok();
  }
};

}  // namespace podsched::train
