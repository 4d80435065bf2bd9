#pragma once

// The proxy in a process (docs/proxy.md): ProxyOptionsOf reads the proxy.* keys and OpenProxy
// builds the service on the runtime's memory, lesson queue, tracer and metrics.

#include <memory>

#include "mend/base/result.h"
#include "mend/llm/prices.h"
#include "mend/proxy/proxy.h"

namespace mend::app {

struct Runtime;

/// The proxy's parts in a process (docs/proxy.md), built from the proxy.* keys by OpenProxy.
struct Proxy {
  std::unique_ptr<proxy::MemorySource> memory;   ///< RecallForTask on the runtime
  llm::PriceTable prices;                        ///< for the cost of forwarded requests
  std::unique_ptr<proxy::ProxyService> service;  ///< the routes
};

/// The options OpenProxy uses, from the configuration: the upstream (proxy.upstream, else
/// provider.base_url + "/v1", else the provider's public endpoint), its kind (proxy.upstream_kind,
/// else provider.name; "scripted" is refused), the key sent upstream (proxy.upstream_api_key,
/// else provider.api_key), the client tokens (proxy.token and proxy.tokens; a token without
/// "=WORKSPACE" gets the workspace "proxy-<first 12 hex digits of its SHA-256>"), and the limits,
/// memory, lesson, progress and retry keys. kInvalidArgument naming the key for a bad value.
Result<proxy::ProxyOptions> ProxyOptionsOf(const Runtime& runtime);

/// The proxy service on the runtime: memory from RecallForTask (what a run for the same task and
/// workspace gets), lessons into the runtime's lesson queue, conversations in `<home>/mend.db`, its
/// spans on the runtime's tracer and its metrics on the runtime's registry. `runtime` must
/// outlive the result.
Result<std::unique_ptr<Proxy>> OpenProxy(Runtime& runtime);

/// Whether `mend serve` mounts the proxy: proxy.upstream is set.
bool ServeMountsProxy(const Runtime& runtime);

}  // namespace mend::app
