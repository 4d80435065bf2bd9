#pragma once

// Recovery's outage breaker is llm's, shared with the proxy (docs/heal.md, "Provider outages").
#include "mend/llm/outage_breaker.h"

namespace mend::heal {

using llm::OutageBreaker;

}  // namespace mend::heal
