// Streamed replies relayed by `mend proxy` (src/proxy/sse.cc, reply_observer.cc): whatever bytes
// an upstream sends as text/event-stream.
//
// Input: the first byte picks the API (mod 3) and the size of the pieces the bytes arrive in
// (1 to 64); the rest is the stream. Invariants: the parser yields the same events whatever the
// chunking; the observer never crashes, and once it saw the terminal event it stays complete;
// the non-streamed reader takes any body without crashing.
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "proxy/sse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend::proxy;
  if (size < 1) return 0;
  const ApiShape shape = static_cast<ApiShape>(data[0] % 3);
  const size_t piece = 1 + (data[0] >> 2) % 64;
  const std::string_view stream = mend::fuzz::AsText(data + 1, size - 1);

  SseParser whole(1 << 16);
  std::vector<SseEvent> expected;
  const mend::Status whole_status = whole.Feed(stream, expected);

  SseParser pieces(1 << 16);
  std::vector<SseEvent> got;
  mend::Status status;
  for (size_t at = 0; at < stream.size() && status.ok(); at += piece) {
    status = pieces.Feed(stream.substr(at, piece), got);
  }
  FUZZ_CHECK(status.ok() == whole_status.ok(), "chunking changed whether the stream parses");
  if (status.ok()) {
    FUZZ_CHECK(got.size() == expected.size(), "chunking changed the number of events");
    for (size_t i = 0; i < got.size(); ++i) {
      FUZZ_CHECK(got[i].event == expected[i].event && got[i].data == expected[i].data &&
                     got[i].id == expected[i].id,
                 "chunking changed event " + std::to_string(i));
    }
  }
  StreamObserver observer(shape);
  bool complete = false;
  for (const SseEvent& event : got) {
    observer.OnEvent(event);
    FUZZ_CHECK(!complete || observer.summary().complete, "a complete stream became incomplete");
    complete = observer.summary().complete;
  }
  (void)ParseReply(shape, stream);
  return 0;
}
