// podsched's configuration file: ParseConfig, then what the daemon derives from it first.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scheduler/daemon/account_registry.h"
#include "scheduler/daemon/config.h"

using namespace podsched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto config = daemon::ParseConfig(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!config) return 0;
  (void)daemon::DefaultCheckpointUrl(*config);
  core::InMemoryAccountRepository store;
  daemon::AccountRegistry accounts(config->users, &store);
  (void)accounts.AuthenticateHeader("Bearer t", TimePoint{});
  return 0;
}
