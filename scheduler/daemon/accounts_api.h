// Users and tokens (docs/api.md, "Users and tokens"): the token life cycle over the API.
//
// Admins manage every user and every token. A user may list, create and revoke their own
// tokens; another user's token is "not found" to them (as other users' jobs are, visibility.h).
#pragma once

#include "scheduler/daemon/api_handler.h"

namespace podsched::daemon {

// GET /api/v1/whoami: the caller, with the token of the request (id, expiry).
HttpResponse WhoAmI(const ApiView& view, ApiCalls& calls, const Principal& who,
                    const ApiRequest& request);
// GET /api/v1/users: every user (configured and API) with their active job counts. Admin only.
HttpResponse ListUsers(const ApiView& view, ApiCalls& calls, const Principal& who,
                       const ApiRequest& request);
// POST /api/v1/users User{name, role, unix_user} -> 201 NewToken (the user's first token).
// Admin only.
HttpResponse AddUser(const ApiView& view, ApiCalls& calls, const Principal& who,
                     const ApiRequest& request);
// POST /api/v1/users/{name}/disable and /enable -> User. Admin only.
HttpResponse DisableUser(const ApiView& view, ApiCalls& calls, const Principal& who,
                         const ApiRequest& request);
HttpResponse EnableUser(const ApiView& view, ApiCalls& calls, const Principal& who,
                        const ApiRequest& request);
// GET /api/v1/tokens[?user=NAME] -> TokenList (never a secret).
HttpResponse ListTokens(const ApiView& view, ApiCalls& calls, const Principal& who,
                        const ApiRequest& request);
// POST /api/v1/tokens TokenRequest -> 201 NewToken.
HttpResponse CreateToken(const ApiView& view, ApiCalls& calls, const Principal& who,
                         const ApiRequest& request);
// POST /api/v1/tokens/{id}/revoke -> Token.
HttpResponse RevokeToken(const ApiView& view, ApiCalls& calls, const Principal& who,
                         const ApiRequest& request);

}  // namespace podsched::daemon
