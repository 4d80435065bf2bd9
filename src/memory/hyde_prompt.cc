// The HyDE request of mend/memory/retriever.h: what the model is asked to write for a task.
#include "mend/base/utf8.h"
#include "mend/memory/retriever.h"

namespace mend::memory {

std::string HydeSystemPrompt() {
  return "You help a coding agent recall lessons from earlier failures. Given a task (and maybe "
         "an error), write the lesson an experienced engineer would most likely have learned "
         "from failing at a task like it, in this form and nothing else:\n"
         "LESSON: <the situation, in general terms>\n"
         "MISTAKE: <the typical mistake and the error it causes, with the usual error message>\n"
         "CORRECTION: <what to do instead>\n"
         "Name the tools, commands, error messages and technical terms involved. Keep it under "
         "120 words.";
}

std::string HydeUserMessage(const RetrievalQuery& query) {
  std::string message = "TASK:\n" + TruncateUtf8Bytes(query.task, 1500);
  if (!query.error.empty()) message += "\n\nERROR:\n" + TruncateUtf8Bytes(query.error, 800);
  return message;
}

}  // namespace mend::memory
