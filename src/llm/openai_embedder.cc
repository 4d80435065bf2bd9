#include "llm/openai_embedder.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mend/base/base64.h"

namespace mend::llm {
namespace {

constexpr std::string_view kProvider = "openai embeddings";

// Base64 of little-endian float32 values, as OpenAI answers with encoding_format "base64".
Result<std::vector<float>> DecodeBase64Vector(std::string_view text) {
  std::string bytes;
  if (!Base64Decode(text, &bytes) || bytes.empty() || bytes.size() % 4 != 0) {
    return InvalidArgumentError("an embedding that is not base64 of float32 values");
  }
  std::vector<float> v(bytes.size() / 4);
  for (size_t i = 0; i < v.size(); ++i) {
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data() + 4 * i);
    const uint32_t bits =
        uint32_t{b[0]} | (uint32_t{b[1]} << 8) | (uint32_t{b[2]} << 16) | (uint32_t{b[3]} << 24);
    v[i] = std::bit_cast<float>(bits);
    if (!std::isfinite(v[i])) return InvalidArgumentError("an embedding value that is not finite");
  }
  return v;
}

// A response with its long strings (the vectors, in base64) taken out before it is parsed:
// nlohmann's lexer copies a string byte by byte, which took most of an import's time with
// 1536-float vectors. Each such string (one without escapes) is replaced by a marker string,
// "\u0000" and its number in `strings`. A response could spell a marker itself, but only to name
// one of its own strings: nothing it could not send as the vector anyway.
struct LiftedBody {
  std::string json;
  std::vector<std::string_view> strings;  // into the response's body
};

constexpr size_t kLiftBytes = 256;
constexpr char kMarker = '\0';

LiftedBody LiftLongStrings(std::string_view body) {
  LiftedBody out;
  size_t copied = 0;
  for (size_t open = body.find('"'); open != std::string_view::npos;) {
    size_t close = open + 1;
    bool escaped = false;
    while (true) {
      // Two vectorised scans (memchr) rather than find_first_of, which tests byte by byte.
      const size_t quote = body.find('"', close);
      if (quote == std::string_view::npos) {
        // Not JSON: leave it whole, for the parser to say so.
        return LiftedBody{std::string(body), {}};
      }
      const size_t slash = body.substr(close, quote - close).find('\\');
      if (slash == std::string_view::npos) {
        close = quote;
        break;
      }
      escaped = true;
      close += slash + 2;
    }
    if (!escaped && close - open - 1 >= kLiftBytes) {
      out.json.append(body.substr(copied, open - copied));
      out.json += "\"\\u0000" + std::to_string(out.strings.size()) + "\"";
      out.strings.push_back(body.substr(open + 1, close - open - 1));
      copied = close + 1;
    }
    open = body.find('"', close + 1);
  }
  out.json.append(body.substr(copied));
  return out;
}

Result<std::vector<float>> ParseVector(const Json& item, const LiftedBody& lifted) {
  const Json* e = Member(item, "embedding");
  if (e != nullptr && e->is_string()) {
    const std::string& text = e->get_ref<const std::string&>();
    if (!text.empty() && text[0] == kMarker) {
      size_t k = lifted.strings.size();
      const std::string number = text.substr(1);
      if (!number.empty() && number.size() < 10 &&
          number.find_first_not_of("0123456789") == std::string::npos) {
        k = std::stoul(number);
      }
      if (k >= lifted.strings.size()) return InvalidArgumentError("an unreadable embedding");
      return DecodeBase64Vector(lifted.strings[k]);
    }
    return DecodeBase64Vector(text);
  }
  if (e == nullptr || !e->is_array() || e->empty()) {
    return InvalidArgumentError("an item without an embedding array");
  }
  std::vector<float> v;
  v.reserve(e->size());
  for (const Json& x : *e) {
    if (!x.is_number()) return InvalidArgumentError("a non-numeric embedding value");
    const double d = x.get<double>();
    if (!(std::fabs(d) <= std::numeric_limits<float>::max())) {
      return InvalidArgumentError("an embedding value out of range");
    }
    v.push_back(static_cast<float>(d));
  }
  return v;
}

}  // namespace

Result<std::vector<std::vector<float>>> ParseEmbeddingsResponse(const HttpResponse& response,
                                                                size_t count) {
  const LiftedBody lifted = LiftLongStrings(response.body);
  HttpResponse small{response.status, lifted.json, response.content_type, response.retry_after};
  MEND_ASSIGN_OR_RETURN(Json j, ParseSuccessBody(kProvider, small));
  const Json* data = Member(j, "data");
  if (data == nullptr || !data->is_array() || data->size() != count) {
    return BadResponseError(kProvider, response,
                            "expected " + std::to_string(count) + " items in \"data\"");
  }
  std::vector<std::vector<float>> out(count);
  for (size_t i = 0; i < data->size(); ++i) {
    const Json& item = (*data)[i];
    int64_t index = IntMember(item, "index").value_or(static_cast<int64_t>(i));
    if (index < 0 || static_cast<size_t>(index) >= out.size() || !out[index].empty()) {
      return BadResponseError(kProvider, response,
                              "bad or repeated index " + std::to_string(index));
    }
    Result<std::vector<float>> v = ParseVector(item, lifted);
    if (!v.ok()) return BadResponseError(kProvider, response, v.status().message());
    out[index] = std::move(v).value();
  }
  return out;
}

OpenAiEmbedder::OpenAiEmbedder(HttpProviderConfig config, int dimension)
    : config_(std::move(config)), http_(config_.http), dimension_(dimension > 0 ? dimension : 0) {}

Result<std::vector<std::vector<float>>> OpenAiEmbedder::Embed(
    const std::vector<std::string>& texts) {
  if (texts.empty()) return std::vector<std::vector<float>>{};
  return Guarded<std::vector<std::vector<float>>>(kProvider, config_.api_key,
                                                  [&] { return EmbedUnguarded(texts); });
}

Result<HttpResponse> OpenAiEmbedder::Post(const std::vector<std::string>& texts, bool base64) {
  Json request = {{"model", config_.model}, {"input", texts}};
  if (base64) request["encoding_format"] = "base64";
  std::vector<std::string> headers;
  if (!config_.api_key.empty()) headers.push_back("Authorization: Bearer " + config_.api_key);
  return http_.PostJson(EndpointUrl(config_.base_url, "/v1/embeddings"), headers,
                        DumpJson(request));
}

Result<std::vector<std::vector<float>>> OpenAiEmbedder::EmbedUnguarded(
    const std::vector<std::string>& texts) {
  const bool base64 = !numbers_only_.load();
  MEND_ASSIGN_OR_RETURN(HttpResponse response, Post(texts, base64));
  if (base64 && response.status == 400) {
    // An endpoint that does not know encoding_format; one that refuses the texts refuses again.
    MEND_ASSIGN_OR_RETURN(response, Post(texts, false));
    if (response.status != 400) numbers_only_.store(true);
  }
  if (response.status < 200 || response.status >= 300) {
    return HttpErrorToStatus(kProvider, response, NowOf(config_.clock));
  }
  MEND_ASSIGN_OR_RETURN(std::vector<std::vector<float>> out,
                        ParseEmbeddingsResponse(response, texts.size()));
  int expected = dimension_.load();
  for (const auto& v : out) {
    if (expected == 0) {
      // First answer: fix the dimension (a concurrent first call may race; both saw a valid one).
      dimension_.compare_exchange_strong(expected, static_cast<int>(v.size()));
      expected = dimension_.load();
    }
    if (static_cast<int>(v.size()) != expected) {
      return BadResponseError(kProvider, response,
                              "vector of dimension " + std::to_string(v.size()) + ", expected " +
                                  std::to_string(expected));
    }
  }
  return out;
}

}  // namespace mend::llm
