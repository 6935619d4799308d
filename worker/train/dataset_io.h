// Data sets as TFRecord shards in object storage (written by `podtrain gen-data`, read by
// `podtrain --data URL`).
//
//   {prefix}dataset.json                          {"format":"podtrain-data-v1","input_dim":16,
//                                                  "classes":8,"train_examples":N,
//                                                  "eval_examples":M,"train_shards":K,"seed":S}
//   {prefix}train/part-{k}-of-{K}.tfrecord       training examples, contiguous ranges in order
//   {prefix}eval/part-0-of-1.tfrecord            held-out examples
//
// Records use TensorFlow's framing (store/formats/tfrecord.h); each payload is one example:
// int32 label, then input_dim float32 features, all little-endian.
//
// Thread safety: functions; as safe as the store passed in.
#pragma once

#include <string>

#include "common/status.h"
#include "store/objects/object_store.h"
#include "worker/train/data.h"

namespace podsched::train {

struct StoredData {
  Dataset train, eval;
  uint64_t seed = 0;
};

// Writes `data` as `shards` training shards plus one held-out shard and dataset.json.
Status WriteDataset(store::ObjectStore& store, const StoredData& data, int shards);

// Reads a data set back; kDataLoss naming the shard and record for a CRC mismatch, a truncated
// record or a payload of the wrong size; kNotFound when dataset.json is missing.
Result<StoredData> ReadDataset(store::ObjectStore& store);

}  // namespace podsched::train
