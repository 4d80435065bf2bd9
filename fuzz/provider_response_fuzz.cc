// Provider responses (src/llm/openai_provider.cc, anthropic_provider.cc, openai_embedder.cc,
// errors.cc): the bodies a model or embeddings server sends back, successful or not. mend's HTTP
// providers read whole JSON bodies (they do not ask for streams, so there is no SSE parser to
// fuzz).
//
// Input: the first byte picks the provider (0x40: the embeddings client, 0x80 then asking for two
// vectors), the HTTP status and whether a Retry-After header comes with it (taken from the body's
// first line); the rest is the body. Both parsers run
// outside Guarded() on purpose: an exception escaping the parse would turn a bad response
// (transient, retried) into an internal error in production, so here it is a crash. Invariants:
// a 2xx gives a completion or kUnavailable; a non-2xx never gives a completion; texts that reach
// the agent are valid UTF-8; costs and token counts are not negative.
#include <cmath>
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "llm/anthropic_provider.h"
#include "llm/openai_embedder.h"
#include "llm/openai_provider.h"
#include "mend/base/utf8.h"
#include "mend/llm/prices.h"

namespace mend::llm {
namespace {

constexpr int kStatuses[] = {200, 200, 200, 201, 400, 401, 403, 404,
                             408, 413, 429, 500, 502, 503, 504, 529};

void Check(const Result<Completion>& r, const HttpResponse& response) {
  const bool success = response.status >= 200 && response.status < 300;
  if (!success) {
    FUZZ_CHECK(!r.ok(), "a completion from HTTP " + std::to_string(response.status));
    return;
  }
  if (!r.ok()) {
    FUZZ_CHECK(r.status().code() == StatusCode::kUnavailable, r.status().ToString());
    return;
  }
  FUZZ_CHECK(IsValidUtf8(r->text), "the text is not valid UTF-8");
  for (const ToolCall& call : r->tool_calls) {
    FUZZ_CHECK(IsValidUtf8(call.name) && IsValidUtf8(call.arguments) && IsValidUtf8(call.id),
               "a tool call is not valid UTF-8");
  }
  FUZZ_CHECK(std::isfinite(r->cost_usd) && r->cost_usd >= 0, "cost " + std::to_string(r->cost_usd));
}

}  // namespace
}  // namespace mend::llm

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend::llm;
  if (size == 0) return 0;
  static const PriceTable* const prices = new PriceTable(PriceTable::Defaults());
  const uint8_t selector = data[0];
  HttpResponse response;
  response.status = kStatuses[selector & 0x0f];
  response.body = std::string(mend::fuzz::AsText(data + 1, size - 1));
  response.content_type = "application/json";
  if (selector & 0x20) response.retry_after = response.body.substr(0, response.body.find('\n'));
  const mend::Time now{std::chrono::seconds(1'700'000'000)};
  if (selector & 0x40) {
    // An embeddings response (src/llm/openai_embedder.cc) for one or two texts.
    if (response.status < 200 || response.status >= 300) return 0;  // never parsed
    const size_t count = (selector & 0x80) ? 2 : 1;
    mend::Result<std::vector<std::vector<float>>> vectors =
        ParseEmbeddingsResponse(response, count);
    if (!vectors.ok()) {
      FUZZ_CHECK(vectors.status().code() == mend::StatusCode::kUnavailable,
                 vectors.status().ToString());
      return 0;
    }
    FUZZ_CHECK(vectors->size() == count, "not one vector per text");
    for (const std::vector<float>& v : *vectors) {
      FUZZ_CHECK(!v.empty(), "an empty vector");
      for (float f : v) FUZZ_CHECK(std::isfinite(f), "a value that is not finite");
    }
  } else if (selector & 0x10) {
    Check(ParseAnthropicResponse(response, "claude-sonnet-4-5", *prices, now), response);
  } else {
    Check(ParseOpenAiResponse(response, "gpt-4o", *prices, now), response);
  }
  return 0;
}
