// MCP's JSON-RPC framing (src/mcp/jsonrpc.cc) and the rendering of a tools/call result for the
// model (src/mcp/client.cc): both read what an MCP server wrote, which mend does not control.
//
// Input: one message as a server would write it. Invariants: parsing never throws or crashes; a
// message that parses writes back as one line that parses to the same kind, id and method; the
// error of one that does not quotes at most a bounded part of it; a result renders as valid
// UTF-8 within the byte limit.
#include <string>

#include "fuzz/fuzz_util.h"
#include "mend/base/utf8.h"
#include "mend/mcp/client.h"
#include "mend/mcp/jsonrpc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend;
  using namespace mend::mcp;
  const std::string_view text = fuzz::AsText(data, size);
  Result<RpcMessage> parsed = ParseRpcMessage(text);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == StatusCode::kInvalidArgument, parsed.status().ToString());
    FUZZ_CHECK(parsed.status().message().size() < 1200, "an error that quotes too much");
    return 0;
  }
  const std::string line = SerializeRpcMessage(*parsed);
  FUZZ_CHECK(line.find('\n') == std::string::npos, "a serialised message with a newline");
  Result<RpcMessage> back = ParseRpcMessage(line);
  FUZZ_CHECK(back.ok(), "a message that does not read back: " + line);
  FUZZ_CHECK(back->kind == parsed->kind && back->id == parsed->id && back->method == parsed->method,
             "a message that reads back differently: " + line);
  if (parsed->kind == RpcMessage::Kind::kResult) {
    for (size_t limit : {size_t{0}, size_t{64}, size_t{4096}}) {
      const std::string rendered = RenderToolResult(parsed->result, limit);
      FUZZ_CHECK(IsValidUtf8(rendered), "a rendering that is not UTF-8");
      FUZZ_CHECK(rendered.size() <= limit || limit < 80, "a rendering over its limit");
    }
  }
  return 0;
}
