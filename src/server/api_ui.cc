// Routes of the web UI: static files embedded in the binary (docs/http_api.md).
#include "server/api.h"
#include "server/serve_context.h"

namespace mend::server {

void AddUiRoutes(ApiRoutes& routes, ServeContext& context) {
  (void)routes;
  (void)context;
}

}  // namespace mend::server
