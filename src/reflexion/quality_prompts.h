#pragma once

#include <cstddef>
#include <string_view>

// The prompts of the quality hooks (VerifyHook, RefineHook), kept together so their wording and
// their output markup can be reviewed side by side. docs/reflexion.md describes the protocol.
namespace mend::reflexion::internal {

// The draft answer is cut to this many code points in prompts, to bound cost on huge outputs.
inline constexpr size_t kMaxDraftChars = 12000;
inline constexpr double kQualityTemperature = 0.2;

// Verify, call 1: plan questions. User message: "TASK:\n<task>\n\nDRAFT ANSWER:\n<draft>".
inline constexpr std::string_view kVerifyPlanSystem =
    "You check answers for factual mistakes. Given a task and a draft answer to it, write up to "
    "{N} short verification questions that test the facts and claims the draft relies on. Each "
    "question must make sense on its own, without the draft. Write one question per line and "
    "nothing else. If the draft makes no checkable claim, write nothing.";

// Verify, call 2: answer independently. The draft is deliberately not shown, so the answers
// cannot simply repeat it. User message: "TASK:\n<task>\n\nQUESTIONS:\n1. ...\n2. ...".
inline constexpr std::string_view kVerifyAnswerSystem =
    "Answer each question below on its own, from what you know, as accurately and briefly as "
    "you can. Write one answer per line, numbered like the questions. Say \"unknown\" when you "
    "are not sure.";

// Verify, call 3: compare. User message: task, draft, questions and the independent answers.
inline constexpr std::string_view kVerifyJudgeSystem =
    "You compare a draft answer with independent answers to verification questions about it. If "
    "the draft agrees with the independent answers, reply with <verdict>consistent</verdict>. If "
    "any claim of the draft contradicts them, reply with <verdict>discrepancy</verdict> followed "
    "by <revised>the complete corrected answer to the task</revised>.";

// Refine, call 1: critique and score. User message: "TASK:\n<task>\n\nDRAFT ANSWER:\n<draft>".
inline constexpr std::string_view kRefineCritiqueSystem =
    "You are a demanding reviewer. Judge how well the draft answer solves the task: correctness, "
    "completeness and clarity. Reply with <score>N</score>, where N is a whole number from 1 "
    "(useless) to 10 (excellent), and <critique>the concrete problems and how to fix "
    "them</critique>.";

// Refine, call 2: revise. User message: task, draft and the critique.
inline constexpr std::string_view kRefineReviseSystem =
    "Rewrite the draft answer so that it fixes every problem the critique names while keeping "
    "what was right. Reply with <revised>the complete improved answer</revised>.";

}  // namespace mend::reflexion::internal
