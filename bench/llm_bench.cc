// Completions per second against the fake OpenAI-compatible server (0 ms model latency), through
// mend's OpenAI provider with HTTP keep-alive on and off, at concurrency 1 and 8. The reference is
// a bare libcurl POST loop of the same request body on one reused handle per thread: the cost of
// HTTP alone, without request building, response parsing, error mapping and pricing.
#include <benchmark/benchmark.h>
#include <curl/curl.h>

#include <cstdio>
#include <memory>
#include <string>

#include "mend/base/env.h"
#include "mend/llm/factory.h"
#include "tests/support/fake_llm_server.h"

namespace {

mend::testing::FakeLlmServer* Server() {
  static std::unique_ptr<mend::testing::FakeLlmServer> server = [] {
    auto started = mend::testing::FakeLlmServer::Start();
    if (!started.ok()) {
      std::fprintf(stderr, "fake server: %s\n", started.status().ToString().c_str());
      std::abort();
    }
    mend::testing::FakeResponse ok;
    ok.text = "The answer is 42.";
    (*started)->SetDefault(ok);
    return std::move(started).value();
  }();
  return server.get();
}

mend::llm::CompletionRequest Request() {
  mend::llm::CompletionRequest request;
  request.model = "gpt-4o-mini";
  request.messages = {mend::llm::Message::System("You are terse."),
                      mend::llm::Message::User("What is six times seven?")};
  return request;
}

void BM_Provider(benchmark::State& state, bool reuse) {
  static std::unique_ptr<mend::llm::LlmProvider> providers[2];
  if (state.thread_index() == 0) {
    mend::llm::ProviderOptions options;
    options.kind = "openai";
    options.model = "gpt-4o-mini";
    options.base_url = Server()->base_url();
    options.api_key = "sk-bench";
    options.reuse_connections = reuse;
    auto provider = mend::llm::CreateProvider(options, mend::Env::Default());
    if (!provider.ok()) {
      state.SkipWithError(provider.status().ToString().c_str());
      return;
    }
    providers[reuse] = std::move(provider).value();
  }
  const mend::llm::CompletionRequest request = Request();
  for (auto _ : state) {
    auto completion = providers[reuse]->Complete(request);
    if (!completion.ok()) {
      state.SkipWithError(completion.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(completion->text);
  }
  state.counters["completions_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

void BM_RawCurlReference(benchmark::State& state) {
  const std::string url = Server()->base_url() + "/v1/chat/completions";
  const std::string body =
      R"({"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are terse."},)"
      R"({"role":"user","content":"What is six times seven?"}]})";
  CURL* curl = curl_easy_init();
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, Discard);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  // The same Accept-Encoding as the provider, so both get the same (compressed) response.
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "gzip");
  for (auto _ : state) {
    if (curl_easy_perform(curl) != CURLE_OK) {
      state.SkipWithError("curl_easy_perform failed");
      break;
    }
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  state.counters["completions_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(BM_Provider, keepalive_on, true)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK_CAPTURE(BM_Provider, keepalive_off, false)->Threads(1)->Threads(8)->UseRealTime();
BENCHMARK(BM_RawCurlReference)->Threads(1)->Threads(8)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
