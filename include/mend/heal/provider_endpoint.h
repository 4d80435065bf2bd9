#pragma once

// ProviderEndpoint, where a run's model requests go (provider kind and base URL, never a
// credential): recovery keeps one outage breaker per endpoint (docs/heal.md, "Provider outages").

#include <compare>
#include <string>

#include "mend/agent/run_origin.h"

namespace mend::heal {

/// Where a run's model requests go: the provider kind and its base URL. The recovery loop keeps one
/// outage breaker per endpoint (docs/heal.md, "Provider outages"), so an endpoint that is down
/// pauses only the runs that talk to it. Never holds a credential: EndpointOf removes them.
struct ProviderEndpoint {
  std::string provider;  ///< "openai" | "anthropic" | "scripted"; "" when the run recorded none
  std::string base_url;  ///< "" = the provider's default URL

  /// Ordered field by field, so endpoints can key a map.
  auto operator<=>(const ProviderEndpoint&) const = default;
};

/// The endpoint of `model`: its provider, and its base URL without "user:password@", without a
/// query or fragment (where some gateways take a key) and without trailing '/'.
ProviderEndpoint EndpointOf(const agent::RunModel& model);

/// "openai at http://127.0.0.1:8080", "anthropic (default URL)", "(provider not recorded)": for
/// logs and reports.
std::string DescribeEndpoint(const ProviderEndpoint& endpoint);

}  // namespace mend::heal
