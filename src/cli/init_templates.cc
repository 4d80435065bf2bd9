// The texts of `mend init`'s templates. The comments in them are for the person who edits the
// folder next, so they say what each setting does and where the model comes from; the scripts are
// POSIX sh with only POSIX utilities, so a folder works wherever mend does.
#include "cli/init_templates.h"

#include <string>

namespace mend::cli {
namespace {

// The same in every agent.toml, in place of its `{model}` line: the folder names no model, so a run
// takes the home's.
constexpr std::string_view kModelComment =
    R"toml(# The model. This folder names none, so runs use the home's configuration: the environment
# (MEND_PROVIDER, MEND_MODEL, MEND_BASE_URL and MEND_API_KEY), else the [provider] table of
# config.toml in the mend home (docs/configuration.md), for example:
#
#   [provider]
#   name = "openai"                           # or "anthropic"
#   model = "gpt-4o-mini"
#   base_url = "http://127.0.0.1:11434/v1"    # only for another OpenAI-compatible server
#
# The provider, its URL and its key are set there, never in an agent folder. To pin this agent to
# one model of the configured provider, uncomment the next line (`mend run --model` still wins).
# model = "gpt-4o-mini")toml";

constexpr std::string_view kFixerAgent =
    R"toml(# The agent "{name}": it makes a project's failing checks pass. `mend init` wrote this folder
# from its fixer template; docs/agent_folder.md describes every key.
name = "{name}"
description = "Finds out why a project's checks fail and fixes the cause."

{model}

# The tools the model may call: built-in ones (docs/tools.md) and run_checks, the command tool of
# tools/run_checks.toml.
tools = ["list_dir", "read_file", "grep", "edit_file", "run_checks"]

# The project to work on, relative to this folder. Unset, runs work in the directory `mend run`
# is started from.
# workspace = "../project"

[limits]
max_steps = 30          # model turns
max_cost_usd = 1.0      # a run stops when its model calls have cost more
max_wall_seconds = 900  # or when it has taken longer

# An output check (docs/agent_folder.md, "[[checks]]"): a run_checks result that does not start
# with PASS gets this hint appended, so the model does not stop while the checks fail.
[[checks]]
tool = "run_checks"
kind = "regex"
pattern = "^PASS"
action = "hint"
message = "The checks still fail: find the cause in the output above, fix it with the smallest edit, and run run_checks again before you answer."
)toml";

constexpr std::string_view kFixerInstructions =
    R"md(You fix a software project whose checks fail. The workspace is the project.

1. Call run_checks to see what fails.
2. Read the files the failure points to; use grep to find where a name is defined or used.
3. Find the cause and fix it with the smallest edit_file change that removes it.
4. Call run_checks again, and go on until it reports PASS.

Do not weaken, skip or delete a check to make it pass, unless the task asks for that. When you are
done, answer with what was wrong, what you changed (file and line) and the last run_checks
verdict. If you cannot make the checks pass, say what you found and what you would try next.
)md";

constexpr std::string_view kFixerSkill = R"md(---
name: minimal-fix
description: "From a failing check to the smallest change that makes it pass."
---
# From a failing check to a fix

- Run the checks before reading anything: their output names the failing test, file or setting.
- Trust the check and doubt the code: a check that fails is usually right.
- Read the lines around the failure, not whole files; `read_file` takes an offset and a limit.
- Change one thing at a time with `edit_file`: the exact old text and its replacement.
- After every change, run the checks again. A new failure means the change was wrong or
  incomplete; undo it rather than pile another change on top.
)md";

constexpr std::string_view kFixerToolToml =
    R"toml(# run_checks, a command tool (docs/agent_folder.md, "tools/*.toml"): mend runs the command in the
# run's workspace with the call's arguments as JSON on standard input, and what it prints is the
# result the model sees. The script is a file of this folder, so it is named through ${AGENT_DIR}.
name = "run_checks"
description = "Runs the project's checks. The first line says PASS or FAIL; the checks' output follows."
command = ["${AGENT_DIR}/tools/run_checks.sh"]
# Running the checks changes nothing the agent works on (build outputs aside): read-only tools need
# no approval and still run under `mend run --shadow`.
read_only = true
timeout_seconds = 300

[parameters]
type = "object"
properties = {}
)toml";

constexpr std::string_view kFixerToolScript = R"sh(#!/bin/sh
# run_checks: runs the project's checks in the workspace and reports the verdict on the first line,
# PASS or FAIL, then the end of what the checks printed. It exits 0 either way: checks that fail
# are news for the agent, not a broken tool. Its arguments (an empty JSON object on standard input)
# are not needed.
#
# Put your project's check command on the CHECK line. Left empty, the first that fits the
# workspace is used: sh check.sh, make test, npm test, cargo test, go test ./..., pytest.
CHECK=""

if [ -z "$CHECK" ]; then
  if [ -f check.sh ]; then
    CHECK="sh check.sh"
  elif [ -f Makefile ] || [ -f makefile ] || [ -f GNUmakefile ]; then
    CHECK="make test"
  elif [ -f package.json ]; then
    CHECK="npm test"
  elif [ -f Cargo.toml ]; then
    CHECK="cargo test"
  elif [ -f go.mod ]; then
    CHECK="go test ./..."
  elif [ -f pyproject.toml ] || [ -f setup.py ] || [ -f pytest.ini ]; then
    CHECK="python3 -m pytest -q"
  else
    echo "run_checks: no check command for this workspace; set CHECK in $0" >&2
    exit 2
  fi
fi

output=$(sh -c "$CHECK" </dev/null 2>&1)
status=$?
if [ "$status" -eq 0 ]; then
  echo "PASS: $CHECK"
else
  echo "FAIL: $CHECK exited with status $status"
fi
printf '%s\n' "$output" | tail -n 200
)sh";

constexpr std::string_view kResearchAgent =
    R"toml(# The agent "{name}": it answers questions from the files of its workspace and cites them.
# `mend init` wrote this folder from its research template; docs/agent_folder.md describes every
# key.
name = "{name}"
description = "Answers questions from the files of its workspace, citing path and line."

{model}

# The tools the model may call: built-in ones (docs/tools.md) and search, the command tool of
# tools/search.toml. All of them only read.
tools = ["list_dir", "read_file", "search"]

# The files to answer from, relative to this folder. Unset, runs read the directory `mend run` is
# started from.
# workspace = "../docs"

[limits]
max_steps = 20          # model turns
max_cost_usd = 0.5      # a run stops when its model calls have cost more
max_wall_seconds = 600  # or when it has taken longer

# An output check (docs/agent_folder.md, "[[checks]]"): a search result without a single
# path:line: source, that is one where nothing matched, gets this hint appended.
[[checks]]
tool = "search"
kind = "regex"
pattern = '^[^:]+:[0-9]+:'
action = "hint"
message = "Nothing matched. Try a shorter phrase or another word, or find the likely files with list_dir; answer only from lines you have read, and cite them as path:line."
)toml";

constexpr std::string_view kResearchInstructions =
    R"md(You answer questions from the files in the workspace, and only from them.

1. Call search with the most specific words of the question; try synonyms and shorter phrases
   when nothing matches.
2. Read around the lines you found with read_file before you rely on them.
3. Answer briefly and cite every statement as path:line, for example `docs/setup.md:42`.

If the files do not answer the question, say so and say what you searched for. Do not fill gaps
from general knowledge.
)md";

constexpr std::string_view kResearchSkill = R"md(---
name: cite-sources
description: "How to find the lines that answer a question and cite them."
---
# Answering with sources

- A source is a path and a line number, exactly as search prints them: `notes/plan.md:12`.
- Quote or closely paraphrase what the line says; never cite a line you have not read.
- When two files disagree, give both, with their sources, and say which looks newer.
- End the answer with a "Sources:" line listing every path:line you used.
)md";

constexpr std::string_view kResearchToolToml =
    R"toml(# search, a command tool (docs/agent_folder.md, "tools/*.toml"): mend runs the command in the
# run's workspace with the call's arguments as JSON on standard input, and what it prints is the
# result the model sees. The script is a file of this folder, so it is named through ${AGENT_DIR}.
name = "search"
description = "Finds the lines of the workspace's files that contain a phrase, in any case. Prints path:line:text, at most 200 lines."
command = ["${AGENT_DIR}/tools/search.sh"]
read_only = true  # it only reads, so it needs no approval
timeout_seconds = 60

[parameters]
type = "object"
required = ["query"]
additionalProperties = false

[parameters.properties.query]
type = "string"
description = "the phrase to look for, matched as written but in any case"
minLength = 1
maxLength = 200
# search.sh takes the query out of the JSON with sed, which needs it free of quotes and backslashes.
pattern = '^[^"\\]+$'
)toml";

constexpr std::string_view kResearchToolScript = R"sh(#!/bin/sh
# search: prints the lines of the workspace's files that contain a phrase, in any case, as
# path:line:text. Its arguments come as JSON on standard input, {"query": "..."}; the schema in
# search.toml keeps quotes and backslashes out of the query, so sed can take it from there.
query=$(sed -n 's/.*"query"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' | head -n 1)
if [ -z "$query" ]; then
  echo 'search: expected {"query": "..."} on standard input' >&2
  exit 2
fi

# Hidden files and folders (.git, .venv, ...) are skipped. At most 200 lines: a phrase that
# matches more is better narrowed than read.
matches=$(find . -name '.?*' -prune -o -type f -exec grep -n -i -F -e "$query" /dev/null {} + \
  2>/dev/null | sed 's|^\./||' | head -n 200)
if [ -z "$matches" ]; then
  echo "no line contains \"$query\""
else
  printf '%s\n' "$matches"
fi
)sh";

constexpr std::string_view kEmptyAgent =
    R"toml(# The agent "{name}". `mend init` wrote this folder from its empty template: the smallest folder
# with one of each part. docs/agent_folder.md describes every key.
name = "{name}"
description = "A new agent."

{model}

# The tools the model may call: built-in ones (docs/tools.md, e.g. "read_file", "list_dir") and
# the command tools of tools/*.toml, here echo.
tools = ["echo"]

# An output check (docs/agent_folder.md, "[[checks]]"): an echo result longer than 64 KiB gets
# this hint appended.
[[checks]]
tool = "echo"
kind = "max_bytes"
max_bytes = 65536
message = "This output is long: ask for less."
)toml";

constexpr std::string_view kEmptyInstructions =
    R"md(You are a new agent. Replace this text with what you are for, how you should work and what
your answer should look like. It is the start of the system prompt of every run.
)md";

constexpr std::string_view kEmptySkill = R"md(---
name: example
description: "An example skill: replace it with something the agent should know."
---
# An example skill

Each file of skills/ is added to the system prompt after instructions.md, under its name and
description. Keep one topic per file.
)md";

constexpr std::string_view kEmptyToolToml =
    R"toml(# echo, a command tool (docs/agent_folder.md, "tools/*.toml"): mend runs the command in the
# run's workspace with the call's arguments as JSON on standard input, and what it prints is the
# result the model sees. The script is a file of this folder, so it is named through ${AGENT_DIR}.
name = "echo"
description = "Prints back the arguments it is called with."
command = ["${AGENT_DIR}/tools/echo.sh"]
read_only = true  # it changes nothing, so it needs no approval

[parameters]
type = "object"
required = ["text"]

[parameters.properties.text]
type = "string"
description = "any text"
)toml";

constexpr std::string_view kEmptyToolScript = R"sh(#!/bin/sh
# echo: the smallest command tool. It prints its arguments, the JSON object it gets on standard
# input; a non-zero exit status would make the call a tool error. Replace it with your program.
cat
echo
)sh";

}  // namespace

const std::vector<AgentTemplate>& AgentTemplates() {
  static const std::vector<AgentTemplate> templates = {
      {"fixer",
       "make the checks pass",
       {{"agent.toml", kFixerAgent},
        {"instructions.md", kFixerInstructions},
        {"skills/minimal-fix.md", kFixerSkill},
        {"tools/run_checks.toml", kFixerToolToml},
        {"tools/run_checks.sh", kFixerToolScript, TemplateFileMode::kExecutable}}},
      {"research",
       "what does this project do?",
       {{"agent.toml", kResearchAgent},
        {"instructions.md", kResearchInstructions},
        {"skills/cite-sources.md", kResearchSkill},
        {"tools/search.toml", kResearchToolToml},
        {"tools/search.sh", kResearchToolScript, TemplateFileMode::kExecutable}}},
      {"empty",
       "say hello",
       {{"agent.toml", kEmptyAgent},
        {"instructions.md", kEmptyInstructions},
        {"skills/example.md", kEmptySkill},
        {"tools/echo.toml", kEmptyToolToml},
        {"tools/echo.sh", kEmptyToolScript, TemplateFileMode::kExecutable}}},
  };
  return templates;
}

std::string RenderTemplateFile(const TemplateFile& file, std::string_view agent_name) {
  std::string text;
  std::string_view rest = file.text;
  // Only the two placeholders are replaced; any other brace (TOML, shell) is text.
  for (size_t at = rest.find('{'); at != std::string_view::npos; at = rest.find('{')) {
    text += rest.substr(0, at);
    rest.remove_prefix(at);
    if (rest.starts_with("{name}")) {
      text += agent_name;
      rest.remove_prefix(6);
    } else if (rest.starts_with("{model}")) {
      text += kModelComment;
      rest.remove_prefix(7);
    } else {
      text += '{';
      rest.remove_prefix(1);
    }
  }
  text += rest;
  return text;
}

const AgentTemplate* FindAgentTemplate(std::string_view name) {
  for (const AgentTemplate& t : AgentTemplates()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace mend::cli
