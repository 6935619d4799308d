#include "store/jobdb/codec.h"

#include <gtest/gtest.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "store/jobdb/test_util.h"

namespace podsched::jobdb {
namespace {

using nlohmann::json;

std::string Cbor(const json& j) {
  std::vector<uint8_t> bytes = json::to_cbor(j);
  return std::string(bytes.begin(), bytes.end());
}

TEST(CodecTest, SpecRoundTripsWithOpaqueBytes) {
  const core::JobSpec spec = testing::FullJob(7).spec;
  auto back = DecodeSpec(EncodeSpec(spec));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(EncodeSpec(*back), EncodeSpec(spec));
}

// A placement scope (issue 28) round-trips; a record written before it has none.
TEST(CodecTest, AZoneAndAPodRoundTripAndOlderRecordsHaveNone) {
  core::JobSpec spec = testing::FullJob(7).spec;
  spec.zone = "us-central1-b";
  spec.pod = "v2-pod";
  spec.slices = 4;  // multislice (issue 28): older records have one
  auto back = DecodeSpec(EncodeSpec(spec));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(*back, spec);
  auto old = DecodeSpec(EncodeSpec(testing::FullJob(7).spec));
  ASSERT_TRUE(old);
  EXPECT_EQ(old->zone, "");
  EXPECT_EQ(old->pod, "");
  EXPECT_EQ(old->slices, 1);
}

// A damaged record (a field of another type, a number beyond its C++ type, bytes that are not
// CBOR) is DataLoss naming the field; nlohmann used to throw, or cast 2^32 + 10 to 10.
TEST(CodecTest, ADamagedSpecIsDataLossNamingTheField) {
  const std::string good = EncodeSpec(testing::FullJob(7).spec);
  const json original = json::from_cbor(good);
  const std::pair<std::function<void(json&)>, const char*> cases[] = {
      {[](json& j) { j["priority"] = 4294967306; }, "priority is out of range"},
      {[](json& j) { j["name"] = 3; }, "name must be a string"},
      {[](json& j) { j["args"] = json::array({"a", 1}); }, "args[1] must be a string"},
      {[](json& j) { j["env"] = json::object({{"A", true}}); }, "env.A must be a string"},
      {[](json& j) { j.erase("user"); }, "user is missing"},
      {[](json& j) { j["launcher"] = "ssh"; }, "launcher"},
      {[](json& j) { j["array"] = 5; }, "array must be an object"},
      {[](json& j) { j["dependencies"] = json::array({{{"kind", 99}, {"job", 1}}}); },
       "dependencies[0].kind is not a dependency kind"},
      {[](json& j) { j["max_runtime_us"] = 1.5; }, "max_runtime_us must be an integer"},
  };
  for (const auto& [edit, message] : cases) {
    json j = original;
    edit(j);
    auto bad = DecodeSpec(Cbor(j));
    ASSERT_FALSE(bad) << message;
    EXPECT_EQ(bad.error().code(), StatusCode::kDataLoss);
    EXPECT_NE(bad.error().message().find(message), std::string::npos) << bad.error().message();
  }
  // An array header announcing 2^64-1 elements: nlohmann throws out_of_range even with
  // allow_exceptions=false (stored_spec_fuzz found it); now DataLoss like any damage.
  const std::string huge_array = "\xa1\x64name\x9b\xff\xff\xff\xff\xff\xff\xff\xff";
  for (const std::string& junk :
       {std::string(), good.substr(0, good.size() / 2), Cbor(json(3)), huge_array}) {
    auto bad = DecodeSpec(junk);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), StatusCode::kDataLoss);
  }
}

TEST(CodecTest, HostListsAreCheckedIds) {
  auto hosts = DecodeHosts(EncodeHosts({HostId(0), HostId(9)}));
  ASSERT_TRUE(hosts);
  EXPECT_EQ(hosts->size(), 2u);
  for (const char* bad : {"", "{}", "[1, \"2\"]", "[4294967296]", "[1.5]"}) {
    auto r = DecodeHosts(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kDataLoss) << bad;
  }
}

}  // namespace
}  // namespace podsched::jobdb
