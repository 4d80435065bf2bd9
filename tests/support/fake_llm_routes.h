#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/fake_llm_server.h"

// The routes of a fake server: which request gets which canned answer (see FakeRoute).
namespace mend::testing::fake_llm {

// The decoded texts of `request` that routes match against, in this order: the system prompt, the
// top-level instructions (a string, as the Responses API sends), each message's content (string,
// part and block texts, tool_result contents), and the embedding or responses input (strings;
// items' contents as messages', and the string output of function_call_output items). Values of
// other types and other keys are ignored.
std::vector<std::string> RequestTexts(const nlohmann::json& request);

// True when every string of `contains` occurs inside one of `texts`.
bool RouteMatches(const std::vector<std::string>& contains, const std::vector<std::string>& texts);

// The routes in the order added, each with the number of requests it answered. Not thread-safe:
// the server calls it under its own lock, which is what makes a route's turns exact under
// concurrent requests.
class Routes {
 public:
  bool empty() const { return routes_.empty(); }
  void Add(FakeRoute route) { routes_.push_back({std::move(route), 0}); }
  void Clear() { routes_.clear(); }

  // The next response of the first route matching `texts` (`fallback` for a route without
  // responses), counting the hit; nullopt when no route matches.
  std::optional<FakeResponse> Answer(const std::vector<std::string>& texts,
                                     const FakeResponse& fallback);

  // The hits of the routes named `name`, summed.
  int64_t Hits(std::string_view name) const;

 private:
  struct Entry {
    FakeRoute route;
    int64_t hits;
  };
  std::vector<Entry> routes_;
};

}  // namespace mend::testing::fake_llm
