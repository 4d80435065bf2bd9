// The improve editor's output protocol (src/improve/editor_protocol.cc, ParseEditorReply): the
// editor is a model, and what it writes is applied to an agent folder. Invariants: every edit
// targets a path RefusalForPath allows, holds valid UTF-8 within kMaxEditBytes whose lines all end
// with '\n', and no path appears twice; every refusal names a path RefusalForPath refuses for the
// same reason (or the content's); errors are kInvalidArgument.
#include <set>
#include <string>

#include "fuzz/fuzz_util.h"
#include "mend/base/utf8.h"
#include "mend/improve/editor_protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend;
  using namespace mend::improve;
  Result<EditorReply> reply = ParseEditorReply(fuzz::AsText(data, size));
  if (!reply.ok()) {
    FUZZ_CHECK(reply.status().code() == StatusCode::kInvalidArgument, reply.status().ToString());
    return 0;
  }
  std::set<std::string> paths;
  for (const FileEdit& edit : reply->edits) {
    FUZZ_CHECK(!RefusalForPath(edit.path).has_value(), "an edit of a refused path: " + edit.path);
    FUZZ_CHECK(paths.insert(edit.path).second, "two edits of " + edit.path);
    FUZZ_CHECK(IsValidUtf8(edit.content), "an edit that is not valid UTF-8");
    FUZZ_CHECK(edit.content.size() <= kMaxEditBytes, "an edit over kMaxEditBytes");
    FUZZ_CHECK(edit.content.empty() || edit.content.back() == '\n', "a last line without '\\n'");
  }
  for (const RefusedEdit& refused : reply->refused) {
    FUZZ_CHECK(IsValidUtf8(refused.path), "a refused path that is not valid UTF-8");
    const bool by_content = refused.refusal == EditRefusal::kInvalidContent ||
                            refused.refusal == EditRefusal::kTooLarge;
    // A path that was not UTF-8 is reported sanitized (U+FFFD): its refusal came from the raw
    // bytes, which RefusalForPath refuses as non-canonical before any other rule.
    const bool sanitized = refused.refusal == EditRefusal::kNonCanonicalPath &&
                           refused.path.find("\xEF\xBF\xBD") != std::string::npos;
    if (!by_content && !sanitized) {
      FUZZ_CHECK(RefusalForPath(refused.path) == refused.refusal,
                 "refused " + refused.path + " for another reason than RefusalForPath's");
    }
    FUZZ_CHECK(!EditRefusalName(refused.refusal).empty(), "an unnamed refusal");
  }
  return 0;
}
