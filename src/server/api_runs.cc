// Routes of runs and pending: list, detail, start, resume, fork, approve, deny, answer
// (docs/http_api.md).
#include "server/api.h"
#include "server/serve_context.h"

namespace mend::server {

void AddRunRoutes(ApiRoutes& routes, ServeContext& context) {
  (void)routes;
  (void)context;
}

}  // namespace mend::server
