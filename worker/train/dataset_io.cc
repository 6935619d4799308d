#include "worker/train/dataset_io.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "common/json_reader.h"
#include "store/formats/tfrecord.h"

namespace podsched::train {
namespace {

using Json = nlohmann::json;

std::string PartName(const std::string& split, int k, int n) {
  return split + "/part-" + std::to_string(k) + "-of-" + std::to_string(n) + ".tfrecord";
}

std::string EncodeRange(const Dataset& d, size_t begin, size_t end) {
  std::string out, payload;
  for (size_t i = begin; i < end; ++i) {
    payload.resize(4 + 4 * static_cast<size_t>(d.input_dim));
    std::memcpy(payload.data(), &d.label[i], 4);
    std::memcpy(payload.data() + 4, d.Row(i).data(), 4 * static_cast<size_t>(d.input_dim));
    formats::AppendTfRecord(payload, out);
  }
  return out;
}

Status DecodeInto(std::string_view file, const std::string& name, Dataset& d) {
  formats::TfRecordReader reader(file);
  const size_t want = 4 + 4 * static_cast<size_t>(d.input_dim);
  while (true) {
    auto rec = reader.Next();
    if (!rec) return rec.error().WithContext(name);
    if (!*rec) return Status::Ok();
    if ((*rec)->size() != want) {
      return ToStatus(DataLoss(name + ": record " + std::to_string(reader.index() - 1) + " has " +
                               std::to_string((*rec)->size()) + " bytes, expected " +
                               std::to_string(want)));
    }
    int32_t label;
    std::memcpy(&label, (*rec)->data(), 4);
    if (label < 0 || label >= d.classes) {
      return ToStatus(DataLoss(name + ": label " + std::to_string(label) + " out of range"));
    }
    d.label.push_back(label);
    const size_t at = d.x.size();
    d.x.resize(at + d.input_dim);
    std::memcpy(d.x.data() + at, (*rec)->data() + 4, 4 * static_cast<size_t>(d.input_dim));
  }
}

}  // namespace

Status WriteDataset(store::ObjectStore& store, const StoredData& data, int shards) {
  const Dataset& t = data.train;
  for (int k = 0; k < shards; ++k) {
    const size_t begin = t.size() * k / shards, end = t.size() * (k + 1) / shards;
    if (Status s = store.Put(PartName("train", k, shards), EncodeRange(t, begin, end)); !s.ok()) {
      return s;
    }
  }
  if (Status s = store.Put(PartName("eval", 0, 1), EncodeRange(data.eval, 0, data.eval.size()));
      !s.ok()) {
    return s;
  }
  const Json meta{{"format", "podtrain-data-v1"},
                  {"input_dim", t.input_dim},
                  {"classes", t.classes},
                  {"train_examples", t.size()},
                  {"eval_examples", data.eval.size()},
                  {"train_shards", shards},
                  {"seed", data.seed}};
  return store.Put("dataset.json", meta.dump(1) + "\n");  // last: the data set's commit point
}

Result<StoredData> ReadDataset(store::ObjectStore& store) {
  auto meta_bytes = store.Get("dataset.json");
  if (!meta_bytes) return std::unexpected(meta_bytes.error().WithContext("dataset.json"));
  auto parsed = ParseJsonDocument(*meta_bytes, "dataset.json", StatusCode::kDataLoss);
  if (!parsed) return std::unexpected(parsed.error());
  JsonReader meta(*parsed, "dataset.json", StatusCode::kDataLoss);
  if (meta.String("format") != "podtrain-data-v1" && meta.ok()) {
    meta.Fail("format", "is not podtrain-data-v1");
  }
  StoredData out;
  out.train.input_dim = out.eval.input_dim = meta.Integer<int>("input_dim");
  out.train.classes = out.eval.classes = meta.Integer<int>("classes");
  const int shards = meta.Integer<int>("train_shards");
  out.seed = meta.Integer<uint64_t>("seed");
  const uint64_t train_examples = meta.IntegerOr<uint64_t>("train_examples", 0);
  const uint64_t eval_examples = meta.IntegerOr<uint64_t>("eval_examples", 0);
  if (!meta.ok()) return std::unexpected(meta.status());
  for (int k = 0; k < shards; ++k) {
    const std::string name = PartName("train", k, shards);
    auto bytes = store.Get(name);
    if (!bytes) return std::unexpected(bytes.error().WithContext(name));
    if (Status s = DecodeInto(*bytes, name, out.train); !s.ok()) return std::unexpected(s);
  }
  const std::string eval_name = PartName("eval", 0, 1);
  auto eval = store.Get(eval_name);
  if (!eval) return std::unexpected(eval.error().WithContext(eval_name));
  if (Status s = DecodeInto(*eval, eval_name, out.eval); !s.ok()) return std::unexpected(s);
  if (out.train.size() != train_examples || out.eval.size() != eval_examples) {
    return DataLoss("data set shards hold another number of examples than dataset.json says");
  }
  return out;
}

}  // namespace podsched::train
