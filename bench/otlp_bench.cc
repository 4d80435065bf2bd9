// OTLP export cost: what ending a span costs the producing thread with an exporter whose collector
// never answers, next to ending it with no exporter; and protobuf against JSON encoding speed.

#include <benchmark/benchmark.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mend/base/clock.h"
#include "mend/base/random.h"
#include "mend/obs/otlp.h"
#include "mend/obs/trace.h"

namespace mend::obs {
namespace {

// A loopback socket that listens but never accepts: connections complete in the kernel's
// backlog, requests are never read and never answered (a hanging collector).
class Blackhole {
 public:
  Blackhole() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      std::abort();
    }
    port_ = ntohs(addr.sin_port);
  }
  ~Blackhole() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

void EndSpans(benchmark::State& state, Tracer& tracer) {
  for (auto _ : state) {
    Span span = tracer.StartSpan("execute_tool shell");
    span.SetAttribute("gen_ai.tool.name", "shell").SetAttribute("mend.step", 3);
    span.SetAttribute("gen_ai.tool.call.id", "call_0123456789");
    span.End();
  }
}

void BM_SpanEnd_NoExporter(benchmark::State& state) {
  SeededRandom random(1);
  Tracer tracer(TracerOptions{SystemClock::Default(), &random});
  EndSpans(state, tracer);
}
BENCHMARK(BM_SpanEnd_NoExporter)->ThreadRange(1, 1);

void BM_SpanEnd_HangingCollector(benchmark::State& state) {
  Blackhole hole;
  SeededRandom random(1);
  OtlpExporterOptions options;
  options.url = "http://127.0.0.1:" + std::to_string(hole.port()) + "/v1/traces";
  options.transport = NewCurlOtlpTransport();
  options.clock = SystemClock::Default();
  options.random = &random;
  options.resource = MakeOtlpResource("bench", "bench-host");
  std::shared_ptr<OtlpExporter> exporter = OtlpExporter::Create(std::move(options)).value();
  Tracer tracer(TracerOptions{SystemClock::Default(), &random});
  tracer.AddProcessor(exporter);
  EndSpans(state, tracer);
  exporter->Shutdown(std::chrono::milliseconds(100));
  state.counters["dropped"] = static_cast<double>(exporter->spans_dropped());
}
BENCHMARK(BM_SpanEnd_HangingCollector);

std::vector<SpanData> Batch() {
  SeededRandom random(2);
  std::vector<SpanData> spans(512);
  for (SpanData& s : spans) {
    s.context = {NewTraceId(random), NewSpanId(random), 1};
    s.parent_span_id = NewSpanId(random);
    s.name = "chat gpt-4o-mini";
    s.kind = SpanKind::kClient;
    s.start = Time{} + std::chrono::seconds(1'700'000'000);
    s.end = s.start + std::chrono::milliseconds(840);
    s.attributes = {{"gen_ai.operation.name", std::string("chat")},
                    {"gen_ai.provider.name", std::string("openai")},
                    {"gen_ai.request.model", std::string("gpt-4o-mini")},
                    {"gen_ai.usage.input_tokens", int64_t{1234}},
                    {"gen_ai.usage.output_tokens", int64_t{321}},
                    {"mend.cost_usd", 0.00042},
                    {"mend.step", int64_t{4}},
                    {"gen_ai.response.finish_reasons", std::vector<std::string>{"stop"}},
                    {"mend.run.id", std::string("run-0123456789abcdef")}};
    s.events = {{"heal.action", s.start, {{"heal.action", std::string("hint")}}}};
  }
  return spans;
}

void Encode(benchmark::State& state, OtlpProtocol protocol) {
  const std::vector<SpanData> spans = Batch();
  const OtlpResource resource = MakeOtlpResource("bench", "bench-host");
  size_t bytes = 0;
  for (auto _ : state) {
    std::string body = protocol == OtlpProtocol::kHttpJson ? EncodeOtlpJson(resource, spans)
                                                           : EncodeOtlpProtobuf(resource, spans);
    bytes = body.size();
    benchmark::DoNotOptimize(body);
  }
  state.counters["spans_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * spans.size()), benchmark::Counter::kIsRate);
  state.counters["bytes_per_span"] = static_cast<double>(bytes) / spans.size();
}
void BM_EncodeProtobuf(benchmark::State& state) { Encode(state, OtlpProtocol::kHttpProtobuf); }
void BM_EncodeJson(benchmark::State& state) { Encode(state, OtlpProtocol::kHttpJson); }
BENCHMARK(BM_EncodeProtobuf);
BENCHMARK(BM_EncodeJson);

}  // namespace
}  // namespace mend::obs

BENCHMARK_MAIN();
