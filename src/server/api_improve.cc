// Routes of improve proposals: list, show, apply, reject (docs/http_api.md).
#include "server/api.h"
#include "server/serve_context.h"

namespace mend::server {

void AddImproveRoutes(ApiRoutes& routes, ServeContext& context) {
  (void)routes;
  (void)context;
}

}  // namespace mend::server
