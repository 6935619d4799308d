// TFRecord files as podtrain reads them: the framing (TfRecordReader) and a whole data set
// (ReadDataset) from an in-memory object store.
//
// Input: dataset.json's text up to the first "\n", then the bytes of the one training shard
// (train/part-0-of-1.tfrecord), also used as the held-out shard (eval/part-0-of-1.tfrecord).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "store/formats/tfrecord.h"
#include "worker/train/dataset_io.h"
#include "worker/train/memory_store_for_test.h"

using namespace podsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const size_t nl = bytes.find('\n');
  const std::string_view meta = bytes.substr(0, nl);
  const std::string_view shard = nl == std::string_view::npos ? "" : bytes.substr(nl + 1);

  formats::TfRecordReader reader(shard);
  while (true) {
    auto record = reader.Next();
    if (!record || !*record) break;
  }

  train::MemoryStore store;
  (void)store.Put("dataset.json", meta);
  (void)store.Put("train/part-0-of-1.tfrecord", shard);
  (void)store.Put("eval/part-0-of-1.tfrecord", shard);
  (void)train::ReadDataset(store);
  return 0;
}
