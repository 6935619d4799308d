#include <gtest/gtest.h>

#include "bus.pb.h"

namespace podsched::bus {
namespace {

TEST(BusProtoTest, EnvelopeRoundTripsThroughBytes) {
  Envelope in;
  Launch* launch = in.mutable_launch();
  launch->mutable_job()->set_job_id(42);
  launch->mutable_job()->set_epoch(3);
  launch->add_hosts(5);
  launch->add_hosts(6);
  launch->set_ranks_per_host(4);
  launch->add_command("podtrain");
  (*launch->mutable_env())["POD_JOB_ID"] = "42";

  std::string bytes;
  ASSERT_TRUE(in.SerializeToString(&bytes));
  Envelope out;
  ASSERT_TRUE(out.ParseFromString(bytes));
  ASSERT_EQ(out.body_case(), Envelope::kLaunch);
  EXPECT_EQ(out.launch().job().epoch(), 3);
  EXPECT_EQ(out.launch().hosts_size(), 2);
  EXPECT_EQ(out.launch().env().at("POD_JOB_ID"), "42");
}

TEST(BusProtoTest, GarbageDoesNotParseAsAMessage) {
  Envelope out;
  // A field tag of 0 is never valid protobuf.
  EXPECT_FALSE(out.ParseFromString(std::string("\x00\x01\x02", 3)));
}

}  // namespace
}  // namespace podsched::bus
