#include "common/endpoint.h"

#include <gtest/gtest.h>

namespace podsched {
namespace {

TEST(EndpointTest, ParsesNumericIpv4AndPort) {
  auto ep = ParseIpv4Endpoint("udp://127.0.0.1:9000", "udp");
  ASSERT_TRUE(ep.has_value()) << ep.error().ToString();
  EXPECT_EQ(ep->ip, "127.0.0.1");
  EXPECT_EQ(ep->port, 9000);
  EXPECT_EQ(FormatIpv4Endpoint("tcp", *ep), "tcp://127.0.0.1:9000");
}

TEST(EndpointTest, RejectsEverythingElseNamingTheForm) {
  for (const char* url : {"", "udp://", "tcp://127.0.0.1:9000", "udp://localhost:9000",
                          "udp://127.0.0.1", "udp://127.0.0.1:0", "udp://127.0.0.1:65536",
                          "udp://127.0.0.1:90x", "udp://[::1]:9000", "udp://1.2.3:9"}) {
    auto ep = ParseIpv4Endpoint(url, "udp");
    ASSERT_FALSE(ep.has_value()) << url;
    EXPECT_NE(ep.error().message().find("udp://IPV4:PORT"), std::string::npos) << url;
  }
}

}  // namespace
}  // namespace podsched
