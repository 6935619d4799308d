#include "scheduler/core/accounts.h"

namespace podsched::core {

Result<StoredAccounts> InMemoryAccountRepository::LoadAccounts() {
  StoredAccounts out;
  for (const auto& [name, user] : users_) out.users.push_back(user);
  for (const auto& [id, token] : tokens_) out.tokens.push_back(token);
  return out;
}

Status InMemoryAccountRepository::CommitAccounts(const AccountChange& change) {
  if (!fail_.ok()) return fail_;
  for (const UserAccount& user : change.users) users_[user.name] = user;
  for (const TokenRecord& token : change.tokens) tokens_[token.id] = token;
  return Status::Ok();
}

}  // namespace podsched::core
