#include "scheduler/daemon/dashboard_api.h"

#include "api.pb.h"
#include "scheduler/daemon/api_response.h"

namespace podsched::daemon {

HttpResponse DashboardFile(const ApiView& view, ApiCalls&, const Principal&,
                           const ApiRequest& request) {
  return view.web.Serve(request.http.method, request.target.path, request.http.target);
}

HttpResponse LoginRoute(const ApiView& view, ApiCalls& calls, const Principal&,
                        const ApiRequest& request) {
  return Login(request.http, view.accounts, calls.sessions(), request.now);
}

HttpResponse LogoutRoute(const ApiView&, ApiCalls& calls, const Principal&,
                         const ApiRequest& request) {
  return Logout(request.http, calls.sessions());
}

HttpResponse ClusterStats(const ApiView& view, ApiCalls&, const Principal&,
                          const ApiRequest& request) {
  return JsonResponse(view.history.ToProto(view.scheduler, request.now));
}

}  // namespace podsched::daemon
