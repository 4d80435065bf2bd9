// Routes of long-term memory: search, recall, add, show, rm (docs/http_api.md).
#include "server/api.h"
#include "server/serve_context.h"

namespace mend::server {

void AddMemoryRoutes(ApiRoutes& routes, ServeContext& context) {
  (void)routes;
  (void)context;
}

}  // namespace mend::server
