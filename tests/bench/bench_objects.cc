// bench_objects: checkpoint-like save and restore through store/objects, beside the tools a
// user would compare with, in the same run on the same machine:
//   file://  S shard writers in parallel (+ a manifest with CRC32Cs) vs dd conv=fsync, then a
//            restore (parallel Gets, CRC check) vs dd reading the same size back. Before each
//            read the files' pages are evicted from the page cache (posix_fadvise DONTNEED on
//            fsynced, hence clean, pages) so that both read from the disk; the residency left
//            is printed.
//   s3://    (with --s3) the same save/restore against an S3 endpoint vs `aws s3 cp` upload
//            and download of the same bytes.
//   podtrain (file://, beside the same dd run) the checkpoint code podtrain itself runs
//            (worker/train/checkpoint_store.h), with one thread per rank: each encodes its
//            shard of params + Adam's two moments and writes it (WriteShard: SHA-256, 1 MiB
//            appends, one fsync), rank 0 commits the manifest and collects garbage; then,
//            after eviction, rank 0 lists the manifests and every rank verifies its shard
//            as it reads it into its buffers, then reads the other ranks' params
//            (Trainer::ChooseCheckpoint's VerifyCheckpointShards and Trainer::Restore's
//            ReadRankState). The ranks read (ranks + 2) / 3 times the checkpoint's bytes
//            (ckpt_podtrain_restore_read_mbps), dd reads it once.
//
//   bench_objects --mb 1024 --dir /var/tmp/bench [--no-dd] [--s3 [--s3-endpoint URL]
//                 [--s3-mb 256] [--no-awscli]]
//
// Credentials for s3: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (default: those of
// deploy/s3-server.sh); the endpoint from --s3-endpoint or AWS_ENDPOINT_URL.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <span>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "store/formats/crc32c.h"
#include "store/objects/object_store.h"
#include "store/objects/s3_store.h"
#include "worker/train/checkpoint.h"
#include "worker/train/checkpoint_store.h"
#include "worker/train/optimizer.h"

namespace podsched::store {
namespace {

namespace fs = std::filesystem;

constexpr size_t kChunk = 8 << 20;

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "bench_objects: error: %s\n", msg.c_str());
  std::exit(1);
}

double Time(const std::function<void()>& fn) {
  auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Figure(const char* name, double value, const char* unit) {
  std::printf("FIGURE %s %.2f %s\n", name, value, unit);
  std::fflush(stdout);
}

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

void Run(const std::string& cmd) {
  if (std::system(cmd.c_str()) != 0) Die("command failed: " + cmd);
}

std::string State(size_t bytes) {
  std::string s(bytes, '\0');
  std::mt19937_64 rng(1);
  for (size_t i = 0; i + 8 <= bytes; i += 8) {
    uint64_t v = rng();
    std::memcpy(s.data() + i, &v, 8);
  }
  return s;
}

struct Shard {
  std::string key;
  size_t size = 0;
  uint32_t crc = 0;
};

// Saves `state` as shards written in parallel (one thread per shard, as ranks would), then a
// manifest naming each shard's size and CRC32C, written last.
std::vector<Shard> Save(ObjectStore& store, const std::string& prefix, std::string_view state,
                        int shards) {
  std::vector<Shard> out(shards);
  std::vector<std::thread> threads;
  std::vector<std::string> errors(shards);
  size_t per = (state.size() + shards - 1) / shards;
  for (int i = 0; i < shards; ++i) {
    threads.emplace_back([&, i] {
      std::string_view part = state.substr(std::min(state.size(), i * per), per);
      Shard& sh = out[i];
      sh.key = prefix + "/shard-" + std::to_string(i) + "-of-" + std::to_string(shards);
      sh.size = part.size();
      auto w = store.NewWriter(sh.key);
      if (!w) return void(errors[i] = w.error().ToString());
      for (size_t off = 0; off < part.size(); off += kChunk) {
        std::string_view chunk = part.substr(off, kChunk);
        sh.crc = formats::Crc32cExtend(sh.crc, chunk);
        if (Status s = (*w)->Append(chunk); !s.ok()) return void(errors[i] = s.ToString());
      }
      if (Status s = (*w)->Commit(); !s.ok()) errors[i] = s.ToString();
    });
  }
  for (auto& t : threads) t.join();
  for (const std::string& e : errors) {
    if (!e.empty()) Die("save: " + e);
  }
  std::ostringstream manifest;
  for (const Shard& sh : out) manifest << sh.key << " " << sh.size << " " << sh.crc << "\n";
  if (Status s = store.Put(prefix + "/manifest", manifest.str()); !s.ok()) Die(s.ToString());
  return out;
}

// Reads the manifest, then every shard in parallel, checking sizes and CRCs.
void Restore(ObjectStore& store, const std::string& prefix) {
  auto manifest = store.Get(prefix + "/manifest");
  if (!manifest) Die("restore: " + manifest.error().ToString());
  std::vector<Shard> shards;
  std::istringstream in(*manifest);
  for (Shard sh; in >> sh.key >> sh.size >> sh.crc;) shards.push_back(sh);
  std::vector<std::thread> threads;
  std::vector<std::string> errors(shards.size());
  for (size_t i = 0; i < shards.size(); ++i) {
    threads.emplace_back([&, i] {
      auto data = store.Get(shards[i].key);
      if (!data) return void(errors[i] = data.error().ToString());
      if (data->size() != shards[i].size || formats::Crc32c(*data) != shards[i].crc) {
        errors[i] = "shard " + shards[i].key + " does not match its manifest";
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const std::string& e : errors) {
    if (!e.empty()) Die("restore: " + e);
  }
}

// Drops the file's (clean) pages from the page cache; returns the fraction still resident.
double Evict(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) Die("open " + path);
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  struct stat st;
  ::fstat(fd, &st);
  double resident = 0;
  if (st.st_size > 0) {
    void* map = ::mmap(nullptr, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    size_t pages = (st.st_size + 4095) / 4096;
    std::vector<unsigned char> vec(pages);
    if (map != MAP_FAILED && ::mincore(map, st.st_size, vec.data()) == 0) {
      size_t in = 0;
      for (unsigned char v : vec) in += v & 1;
      resident = static_cast<double>(in) / pages;
    }
    if (map != MAP_FAILED) ::munmap(map, st.st_size);
  }
  ::close(fd);
  return resident;
}

struct DdFigures {
  double write_mbps = 0, read_mbps = 0;
};

// podtrain's checkpoint path (see the top of the file). `values` floats are params, adam_m and
// adam_v of state.size() / 12 parameters, as W = `ranks` ranks hold them.
void BenchPodtrain(const std::string& dir, std::string_view state, int ranks,
                   const std::optional<DdFigures>& dd) {
  using namespace podsched::train;
  const std::string root = dir + "/podtrain-store";
  auto store = OpenObjectStore("file://" + root);
  if (!store) Die(store.error().ToString());
  const size_t n = state.size() / 12;
  const double mb = static_cast<double>(n) * 12 / 1048576.0;
  auto tensor = [&](int t) {
    return std::span<const float>(reinterpret_cast<const float*>(state.data()) + t * n, n);
  };
  Manifest m;
  m.job = "bench";
  m.id = CkptId{1, 100};
  m.world_size = ranks;
  m.allreduce = "exact";
  m.global_batch = 64;
  m.data_source = "generated";
  m.num_params = n;
  m.tensors = TensorNames(OptimizerKind::kAdam);
  m.optimizer.kind = OptimizerKind::kAdam;
  std::vector<Result<ShardEntry>> written(static_cast<size_t>(ranks));
  const double save_s = Time([&] {
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        const ShardRange range = ShardOf(n, ranks, r);
        std::vector<std::span<const float>> parts;
        for (int t = 0; t < 3; ++t) parts.push_back(tensor(t).subspan(range.begin, range.size()));
        written[static_cast<size_t>(r)] = WriteShard(
            **store, CkptPrefix(m.job, m.id) + ShardName(r, ranks), EncodeShard(parts), {});
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < ranks; ++r) {
      if (!written[r]) Die("podtrain save: " + written[r].error().ToString());
      const ShardRange range = ShardOf(n, ranks, r);
      m.shards.push_back(ShardEntry{ShardName(r, ranks), range.begin, range.end, written[r]->size,
                                    written[r]->checksum});
    }
    if (Status s = CommitManifest(**store, m); !s.ok()) Die("podtrain commit: " + s.ToString());
    if (auto gc = CollectGarbage(**store, m.job, 2); !gc) Die(gc.error().ToString());
  });
  double resident = 0;
  for (const ShardEntry& sh : m.shards) {
    resident += Evict(root + "/" + CkptPrefix(m.job, m.id) + sh.name) / ranks;
  }
  std::vector<std::string> errors(static_cast<size_t>(ranks));
  // Each rank's buffers exist, paged in, before its restore (podtrain's Setup fills them with
  // the initial parameters and zeroed optimizer state first).
  struct Buffers {
    std::vector<float> params, m1, m2;
  };
  std::vector<Buffers> buffers(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const size_t own = ShardOf(n, ranks, r).size();
    buffers[r] = {std::vector<float>(n, 1.0f), std::vector<float>(own), std::vector<float>(own)};
  }
  const double restore_s = Time([&] {
    std::vector<std::string> rejected;
    auto listed = ListCommittedManifests(**store, m.job, &rejected);
    if (!listed || listed->empty()) Die("podtrain restore: no manifest");
    const Manifest& found = listed->front();
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        std::string& err = errors[static_cast<size_t>(r)];
        const ShardRange range = ShardOf(n, ranks, r);
        Buffers& b = buffers[static_cast<size_t>(r)];
        const std::vector<std::span<float>> state{b.m1, b.m2};
        const RankBuffers into{range, b.params, state};
        VerifiedShards verified;
        if (Status s = VerifyCheckpointShards(**store, found, r, ranks, &verified, &into);
            !s.ok()) {
          return void(err = s.ToString());
        }
        if (Status s = ReadRankState(**store, found, into, &verified); !s.ok()) {
          return void(err = s.ToString());
        }
        // Bytes, not floats: the random state holds NaN patterns, which never compare equal.
        for (int t = 1; t < 3; ++t) {
          if (std::memcmp(state[t - 1].data(), tensor(t).data() + range.begin,
                          range.size() * 4) != 0) {
            return void(err = "tensor " + std::to_string(t) + " differs after restore");
          }
        }
        if (std::memcmp(b.params.data(), tensor(0).data(), n * 4) != 0) {
          err = "params differ after restore";
        }
      });
    }
    for (auto& t : threads) t.join();
  });
  for (const std::string& e : errors) {
    if (!e.empty()) Die("podtrain restore: " + e);
  }
  std::printf(
      "podtrain path, %d ranks, %.0f MB (%zu params x 3 tensors): save %.3f s, restore %.3f s "
      "(page cache residency before restore %.1f%%)\n",
      ranks, mb, n, save_s, restore_s, 100 * resident);
  Figure("ckpt_podtrain_save_file_mbps", mb / save_s, "MB/s");
  Figure("ckpt_podtrain_restore_file_mbps", mb / restore_s, "MB/s");
  // What the ranks read: every rank its own shard and every other rank's parameters (each rank
  // holds them all), (ranks + 2) / 3 times the checkpoint with Adam's three tensors.
  const double read_mb = mb + (mb / 3) * (ranks - 1);
  Figure("ckpt_podtrain_restore_read_mbps", read_mb / restore_s, "MB/s");
  if (dd) {
    Figure("ckpt_podtrain_save_over_dd_ratio", (mb / save_s) / dd->write_mbps, "x");
    Figure("ckpt_podtrain_restore_over_dd_ratio", (mb / restore_s) / dd->read_mbps, "x");
    Figure("ckpt_podtrain_restore_read_over_dd_ratio", (read_mb / restore_s) / dd->read_mbps, "x");
  }
  fs::remove_all(root);
}

std::optional<DdFigures> BenchFile(const std::string& dir, std::string_view state, int shards,
                                   bool with_dd) {
  double mb = state.size() / 1048576.0;
  std::string root = dir + "/store";
  auto store = OpenObjectStore("file://" + root);
  if (!store) Die(store.error().ToString());
  std::vector<Shard> saved;
  double save_s = Time([&] { saved = Save(**store, "ckpt", state, shards); });
  double resident = 0;
  for (const Shard& sh : saved) resident += Evict(root + "/" + sh.key) / saved.size();
  double restore_s = Time([&] { Restore(**store, "ckpt"); });
  std::printf(
      "file:// %d shards, %.0f MB: save %.3f s, restore %.3f s (page cache residency "
      "before restore %.1f%%)\n",
      shards, mb, save_s, restore_s, 100 * resident);
  Figure("ckpt_save_file_mbps", mb / save_s, "MB/s");
  Figure("ckpt_restore_file_mbps", mb / restore_s, "MB/s");
  fs::remove_all(root);
  if (!with_dd) return std::nullopt;
  std::string dd_file = dir + "/dd.bin";
  size_t count = (state.size() + kChunk - 1) / kChunk;
  double dd_write_s = Time([&] {
    Run("dd if=/dev/zero of=" + dd_file + " bs=8M count=" + std::to_string(count) +
        " conv=fsync status=none");
  });
  double dd_resident = Evict(dd_file);
  double dd_read_s = Time([&] { Run("dd if=" + dd_file + " of=/dev/null bs=8M status=none"); });
  double dd_direct_s =
      Time([&] { Run("dd if=" + dd_file + " of=/dev/null bs=8M iflag=direct status=none"); });
  double dd_mb = count * kChunk / 1048576.0;
  std::printf(
      "dd %.0f MB: write+fsync %.3f s, read %.3f s (residency before %.1f%%), "
      "read iflag=direct %.3f s\n",
      dd_mb, dd_write_s, dd_read_s, 100 * dd_resident, dd_direct_s);
  Figure("dd_write_mbps", dd_mb / dd_write_s, "MB/s");
  Figure("dd_read_mbps", dd_mb / dd_read_s, "MB/s");
  Figure("dd_read_direct_mbps", dd_mb / dd_direct_s, "MB/s");
  Figure("ckpt_save_over_dd_ratio", (mb / save_s) / (dd_mb / dd_write_s), "x");
  Figure("ckpt_restore_over_dd_ratio", (mb / restore_s) / (dd_mb / dd_read_s), "x");
  fs::remove(dd_file);
  return DdFigures{dd_mb / dd_write_s, dd_mb / dd_read_s};
}

void BenchS3(const std::string& dir, const std::string& endpoint, std::string_view state,
             int shards, bool with_awscli) {
  double mb = state.size() / 1048576.0;
  std::string access = Env("AWS_ACCESS_KEY_ID", "test:tester");
  std::string secret = Env("AWS_SECRET_ACCESS_KEY", "testing");
  std::string region = Env("AWS_REGION", "us-east-1");
  std::string bucket = "podsched-bench";
  std::string prefix = "bench-" + std::to_string(::getpid());
  // Credentials through the environment, so that they are not in the URL or in messages.
  ::setenv("AWS_ACCESS_KEY_ID", access.c_str(), 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", secret.c_str(), 1);
  std::string url = "s3://" + bucket + "/" + prefix + "?endpoint=" + endpoint + "&region=" + region;
  if (Status s = EnsureS3Bucket(url); !s.ok()) Die(s.ToString());
  auto store = OpenObjectStore(url);
  if (!store) Die(store.error().ToString());
  std::vector<Shard> saved;
  double save_s = Time([&] { saved = Save(**store, "ckpt", state, shards); });
  double restore_s = Time([&] { Restore(**store, "ckpt"); });
  std::printf("s3:// %d shards, %.0f MB: save %.3f s, restore %.3f s\n", shards, mb, save_s,
              restore_s);
  Figure("ckpt_save_s3_mbps", mb / save_s, "MB/s");
  Figure("ckpt_restore_s3_mbps", mb / restore_s, "MB/s");
  for (const Shard& sh : saved) (void)(*store)->Delete(sh.key);
  (void)(*store)->Delete("ckpt/manifest");
  if (!with_awscli) return;

  std::string local = dir + "/awscli-up.bin";
  std::ofstream(local, std::ios::binary).write(state.data(), state.size());
  std::string aws = "AWS_DEFAULT_REGION=" + region + " /usr/bin/aws --endpoint-url " + endpoint +
                    " s3 cp --only-show-errors ";
  std::string remote = "s3://" + bucket + "/" + prefix + "/awscli.bin";
  double up_s = Time([&] { Run(aws + local + " " + remote); });
  double down_s = Time([&] { Run(aws + remote + " " + dir + "/awscli-down.bin"); });
  std::printf(
      "aws s3 cp %.0f MB: upload %.3f s, download %.3f s (each includes ~1 s of CLI "
      "start-up)\n",
      mb, up_s, down_s);
  Figure("awscli_upload_mbps", mb / up_s, "MB/s");
  Figure("awscli_download_mbps", mb / down_s, "MB/s");
  Figure("ckpt_save_s3_over_awscli_ratio", (mb / save_s) / (mb / up_s), "x");
  Figure("ckpt_restore_s3_over_awscli_ratio", (mb / restore_s) / (mb / down_s), "x");
  Run("AWS_DEFAULT_REGION=" + region + " /usr/bin/aws --endpoint-url " + endpoint +
      " s3 rm --only-show-errors " + remote);
  fs::remove(local);
  fs::remove(dir + "/awscli-down.bin");
}

}  // namespace
}  // namespace podsched::store

int main(int argc, char** argv) {
  using namespace podsched::store;
  CLI::App app{"Checkpoint save/restore through store/objects vs dd and the aws CLI"};
  int mb = 1024, s3_mb = 0, shards = 4;
  std::string dir = fs::temp_directory_path() / "bench_objects";
  std::string endpoint = Env("AWS_ENDPOINT_URL", "");
  bool s3 = false, no_dd = false, no_awscli = false;
  app.add_option("--mb", mb, "checkpoint size in MB (file://)")->check(CLI::PositiveNumber);
  app.add_option("--shards", shards, "shards, written in parallel")->check(CLI::Range(1, 64));
  app.add_option("--dir", dir, "scratch directory on the disk to measure");
  app.add_flag("--s3", s3, "also benchmark s3:// (needs --s3-endpoint or AWS_ENDPOINT_URL)");
  app.add_option("--s3-endpoint", endpoint, "S3 endpoint, http(s)://HOST:PORT");
  app.add_option("--s3-mb", s3_mb, "checkpoint size for s3:// (default: --mb)");
  app.add_flag("--no-dd", no_dd, "skip the dd comparison");
  app.add_flag("--no-awscli", no_awscli, "skip the aws CLI comparison");
  CLI11_PARSE(app, argc, argv);
  if (s3 && endpoint.empty()) Die("--s3 needs --s3-endpoint or AWS_ENDPOINT_URL");
  dir += "/run-" + std::to_string(::getpid());
  fs::create_directories(dir);
  std::printf("bench_objects: %d MB in %d shards under %s (crc32c: %s)\n", mb, shards, dir.c_str(),
              std::string(podsched::formats::Crc32cImplementation()).c_str());
  std::string state = State(static_cast<size_t>(std::max(mb, s3_mb)) << 20);
  const std::string_view file_state = std::string_view(state).substr(0, static_cast<size_t>(mb) << 20);
  const std::optional<DdFigures> dd = BenchFile(dir, file_state, shards, !no_dd);
  BenchPodtrain(dir, file_state, shards, dd);
  if (s3) {
    size_t bytes = static_cast<size_t>(s3_mb > 0 ? s3_mb : mb) << 20;
    BenchS3(dir, endpoint, std::string_view(state).substr(0, bytes), shards, !no_awscli);
  }
  fs::remove_all(dir);
  return 0;
}
