// OTLP receiver ingest: an ExportTraceServiceRequest of 512 spans, as an SDK's batch processor
// sends it, decoded and written to observe.db; bench/run_otlp_ingest_bench prints the table.
//
//   BM_IngestProtobuf  DecodeOtlpTraces + SpanStore::Write (one transaction) per request, by real
//                      time: the receiver's work, disk included (goal >= 20,000 spans/s)
//   BM_IngestJson      the same for the OTLP/JSON encoding of the same spans
//   BM_DecodeProtobuf  the reference: decoding alone
//   BM_EncodeProtobuf  the reference: mend's exporter encoding the same spans
//   BM_StoreWrite      SpanStore::Write alone of the decoded spans, by real time
//
// Each request holds 16 traces of 32 spans (a root and its children), 8 attributes and one event
// per span, under a resource of 6 attributes that the receiver copies onto every span. Every
// iteration writes new trace ids, so nothing is replaced.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "mend/obs/otlp.h"
#include "mend/obs/otlp_decode.h"
#include "mend/obs/otlp_encode.h"
#include "mend/obs/span_store.h"

namespace mend::obs {
namespace {

constexpr int kTraces = 16;
constexpr int kSpansPerTrace = 32;
constexpr int kBatch = kTraces * kSpansPerTrace;

std::string Hex(uint64_t n, size_t width) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(width, '0');
  for (size_t i = width; i > 0 && n > 0; --i, n >>= 4) s[i - 1] = kDigits[n & 15];
  return s;
}

OtlpResource SdkResource() {
  OtlpResource r;
  r.attributes = {{"service.name", std::string("research-agent")},
                  {"service.version", std::string("1.4.2")},
                  {"host.name", std::string("worker-7")},
                  {"telemetry.sdk.language", std::string("python")},
                  {"telemetry.sdk.name", std::string("opentelemetry")},
                  {"telemetry.sdk.version", std::string("1.27.0")}};
  r.scope_name = "opentelemetry.instrumentation.openai";
  r.scope_version = "0.48b0";
  return r;
}

// Request number `request`'s spans: trace ids unique to it.
std::vector<SpanData> Batch(uint64_t request) {
  std::vector<SpanData> spans;
  spans.reserve(kBatch);
  const Time t0 = Time{} + std::chrono::seconds(1'700'000'000) + std::chrono::seconds(request);
  for (int t = 0; t < kTraces; ++t) {
    const std::string trace_id = Hex(request * kTraces + t + 1, 32);
    for (int i = 0; i < kSpansPerTrace; ++i) {
      SpanData s;
      s.context = {trace_id, Hex(static_cast<uint64_t>(i + 1), 16), 1};
      s.parent_span_id = i == 0 ? "" : Hex(1, 16);
      s.name = i == 0 ? "invoke_agent research" : "chat gpt-4o-mini";
      s.kind = i == 0 ? SpanKind::kServer : SpanKind::kClient;
      s.start = t0 + std::chrono::milliseconds(10 * i);
      s.end = s.start + std::chrono::milliseconds(i == 0 ? 2000 : 8);
      s.status = i % 16 == 5 ? SpanStatus::kError : SpanStatus::kUnset;
      s.attributes = {{"gen_ai.operation.name", std::string("chat")},
                      {"gen_ai.provider.name", std::string("openai")},
                      {"gen_ai.request.model", std::string("gpt-4o-mini")},
                      {"gen_ai.response.model", std::string("gpt-4o-mini-2024-07-18")},
                      {"gen_ai.usage.input_tokens", int64_t{1234}},
                      {"gen_ai.usage.output_tokens", int64_t{321}},
                      {"gen_ai.response.finish_reasons", std::vector<std::string>{"stop"}},
                      {"gen_ai.request.temperature", 0.2}};
      s.events = {{"gen_ai.choice", s.end, {{"index", int64_t{0}}}}};
      spans.push_back(std::move(s));
    }
  }
  return spans;
}

class TempStore {
 public:
  TempStore() {
    std::string pattern = (std::filesystem::current_path() / "otlp-ingest-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    dir_ = pattern;
    store_ = std::move(SpanStore::Open(dir_ + "/observe.db")).value();
  }
  ~TempStore() {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  SpanStore& store() { return *store_; }

 private:
  std::string dir_;
  std::unique_ptr<SpanStore> store_;
};

std::string Encode(OtlpProtocol protocol, uint64_t request) {
  const std::vector<SpanData> spans = Batch(request);
  return protocol == OtlpProtocol::kHttpJson ? EncodeOtlpJson(SdkResource(), spans)
                                             : EncodeOtlpProtobuf(SdkResource(), spans);
}

// Spans per second, and the request's size per span when there is a request.
void SetCounters(benchmark::State& state, size_t body_bytes) {
  state.SetItemsProcessed(state.iterations() * kBatch);
  if (body_bytes > 0) state.counters["bytes_per_span"] = static_cast<double>(body_bytes) / kBatch;
}

void Ingest(benchmark::State& state, OtlpProtocol protocol) {
  TempStore temp;
  uint64_t request = 0;
  size_t bytes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::string body = Encode(protocol, request++);
    bytes = body.size();
    state.ResumeTiming();
    Result<std::vector<SpanData>> spans = DecodeOtlpTraces(body, protocol);
    if (!spans.ok() || !temp.store().Write(*spans).ok()) {
      state.SkipWithError("ingest failed");
      break;
    }
  }
  SetCounters(state, bytes);
}
void BM_IngestProtobuf(benchmark::State& state) { Ingest(state, OtlpProtocol::kHttpProtobuf); }
void BM_IngestJson(benchmark::State& state) { Ingest(state, OtlpProtocol::kHttpJson); }
BENCHMARK(BM_IngestProtobuf)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IngestJson)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_DecodeProtobuf(benchmark::State& state) {
  const std::string body = Encode(OtlpProtocol::kHttpProtobuf, 0);
  for (auto _ : state) {
    Result<std::vector<SpanData>> spans = DecodeOtlpTraces(body, OtlpProtocol::kHttpProtobuf);
    benchmark::DoNotOptimize(spans);
  }
  SetCounters(state, body.size());
}
BENCHMARK(BM_DecodeProtobuf)->Unit(benchmark::kMillisecond);

void BM_EncodeProtobuf(benchmark::State& state) {
  const std::vector<SpanData> spans = Batch(0);
  const OtlpResource resource = SdkResource();
  size_t bytes = 0;
  for (auto _ : state) {
    std::string body = EncodeOtlpProtobuf(resource, spans);
    bytes = body.size();
    benchmark::DoNotOptimize(body);
  }
  SetCounters(state, bytes);
}
BENCHMARK(BM_EncodeProtobuf)->Unit(benchmark::kMillisecond);

void BM_StoreWrite(benchmark::State& state) {
  TempStore temp;
  uint64_t request = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::vector<SpanData> spans =
        DecodeOtlpTraces(Encode(OtlpProtocol::kHttpProtobuf, request++),
                         OtlpProtocol::kHttpProtobuf)
            .value();
    state.ResumeTiming();
    if (!temp.store().Write(spans).ok()) {
      state.SkipWithError("write failed");
      break;
    }
  }
  SetCounters(state, 0);
}
BENCHMARK(BM_StoreWrite)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mend::obs

BENCHMARK_MAIN();
