#include "mend/lessonq/job.h"

#include <string>
#include <string_view>

#include "mend/base/hash.h"
#include "mend/base/utf8.h"

namespace mend::lessonq {

std::string NormalizeTask(std::string_view task) {
  return CollapseWhitespace(ToLowerUtf8(Trim(task)));
}

std::string JobIdFor(const LessonRequest& request) {
  std::string key = "task:" + NormalizeTask(request.task);
  key.push_back('\0');
  key += "trigger:" + ToLowerUtf8(Trim(request.trigger));
  key.push_back('\0');
  key += "attempt:";
  key += Trim(request.attempt);
  key.push_back('\0');
  key += "outcome:";
  key += Trim(request.outcome);
  const Sha256Digest digest = Sha256(key);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest.data()), 8));
}

bool IsJobId(std::string_view id) {
  if (id.size() != 16) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace mend::lessonq
