// docs/cli.md's flag tables are the command line's own definitions: every command mend registers
// has a section there, and every flag and argument of a command is a row of its section's table
// (or of a shared table the section links to), and nothing else is. So the page cannot drift.
// docs/README.md, the index of docs/, links every page.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mend/base/memory_file_system.h"
#include "tests/cli/repository_file.h"

namespace mend::cli {
namespace {

// One heading of the page and the lines up to the next heading.
struct Section {
  std::string title;
  std::vector<std::string> lines;
};

// The anchor a Markdown renderer gives a heading: lower case, punctuation dropped, spaces as '-'.
std::string Slug(const std::string& title) {
  std::string slug;
  for (char c : title) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (c == ' ' || c == '-' || c == '_') {
      slug += c == ' ' ? '-' : c;
    }
  }
  return slug;
}

// The page's sections by anchor, skipping fenced code blocks (a `#` there is not a heading).
std::map<std::string, Section> SectionsOf(const std::string& page) {
  std::map<std::string, Section> sections;
  std::istringstream in(page);
  std::string line;
  Section* current = nullptr;
  bool in_code = false;
  while (std::getline(in, line)) {
    if (line.starts_with("```")) in_code = !in_code;
    if (!in_code && line.starts_with("#")) {
      const size_t text = line.find_first_not_of('#');
      const std::string title = line.substr(line.find_first_not_of(' ', text));
      current = &sections[Slug(title)];
      current->title = title;
      continue;
    }
    if (current != nullptr) current->lines.push_back(line);
  }
  return sections;
}

// The names in the first cell of each row of the first table of `slug`'s section; a cell that
// links to another section ("[provider flags](#provider-flags)") stands for that section's rows.
std::set<std::string> TableNames(const std::map<std::string, Section>& sections,
                                 const std::string& slug, int depth = 0) {
  std::set<std::string> names;
  auto section = sections.find(slug);
  if (section == sections.end() || depth > 2) return names;
  static const std::regex kCode("`([^`]+)`");
  static const std::regex kLink("\\]\\(#([a-z0-9_-]+)\\)");
  int row = 0;
  for (const std::string& line : section->second.lines) {
    if (!line.starts_with("|")) {
      if (row > 0) break;  // the end of the first table
      continue;
    }
    if (++row <= 2) continue;  // the header and the separator
    const std::string cell = line.substr(1, line.find('|', 1) - 1);
    std::smatch link;
    if (std::regex_search(cell, link, kLink)) {
      names.merge(TableNames(sections, link[1].str(), depth + 1));
      continue;
    }
    for (std::sregex_iterator it(cell.begin(), cell.end(), kCode), end; it != end; ++it) {
      names.insert((*it)[1].str());
    }
  }
  return names;
}

// The names a command defines: its flags (--long and -s), its positional arguments and, at the
// top level, --version; not --help, which every command has.
std::set<std::string> CliNames(CLI::App& command) {
  std::set<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    if (option == command.get_help_ptr() || option == command.get_help_all_ptr()) continue;
    for (const std::string& name : option->get_lnames()) names.insert("--" + name);
    for (const std::string& name : option->get_snames()) names.insert("-" + name);
    if (!option->nonpositional()) names.insert(option->get_name(true));
  }
  return names;
}

// Every command and subcommand under `command`, by path ("mend memory search").
void Walk(CLI::App& command, const std::string& path, std::map<std::string, CLI::App*>& out) {
  out[path] = &command;
  for (CLI::App* sub : command.get_subcommands([](CLI::App*) { return true; })) {
    Walk(*sub, path + " " + sub->get_name(), out);
  }
}

// A command's section: "## `mend run`"; the top level's is "Global options".
std::string SlugOf(const std::string& path) {
  return path == "mend" ? "global-options" : Slug(path);
}

std::string Join(const std::set<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

class CliReferenceTest : public ::testing::Test {
 protected:
  CliReferenceTest() : ctx_{env_, out_, err_, fs_, CliInput{}}, app_(MakeCliApp(ctx_)) {
    Walk(*app_, "mend", commands_);
    sections_ = SectionsOf(ReadRepositoryFile("docs/cli.md"));
  }

  std::map<std::string, std::string> env_;
  std::ostringstream out_;
  std::ostringstream err_;
  MemoryFileSystem fs_;
  CliContext ctx_;
  std::unique_ptr<CLI::App> app_;
  std::map<std::string, CLI::App*> commands_;
  std::map<std::string, Section> sections_;
};

TEST_F(CliReferenceTest, EveryCommandHasASection) {
  ASSERT_GT(commands_.size(), 30u);
  for (const auto& [path, command] : commands_) {
    const auto section = sections_.find(SlugOf(path));
    ASSERT_NE(section, sections_.end()) << "docs/cli.md has no section `" << path << "`";
    if (path != "mend") {
      EXPECT_EQ(section->second.title, "`" + path + "`");
    }
  }
}

TEST_F(CliReferenceTest, EverySectionOfACommandNamesOne) {
  for (const auto& [slug, section] : sections_) {
    if (!section.title.starts_with("`mend")) continue;
    const std::string path = section.title.substr(1, section.title.size() - 2);
    EXPECT_TRUE(commands_.contains(path))
        << "docs/cli.md documents `" << path << "`, which mend does not have";
  }
}

TEST_F(CliReferenceTest, EachTableHoldsExactlyItsCommandsFlags) {
  for (const auto& [path, command] : commands_) {
    const std::set<std::string> defined = CliNames(*command);
    const std::set<std::string> documented = TableNames(sections_, SlugOf(path));
    std::set<std::string> missing;
    std::set<std::string> extra;
    for (const std::string& name : defined) {
      if (!documented.contains(name)) missing.insert(name);
    }
    for (const std::string& name : documented) {
      if (!defined.contains(name)) extra.insert(name);
    }
    EXPECT_TRUE(missing.empty()) << "`" << path << "` has " << Join(missing)
                                 << ", missing from its table in docs/cli.md";
    EXPECT_TRUE(extra.empty()) << "docs/cli.md lists " << Join(extra) << " under `" << path
                               << "`, which it does not have";
  }
}

TEST_F(CliReferenceTest, SharedTablesAreTheFlagsOfTheirConfigurationKeys) {
  // The flags of every configuration key under provider. and recover.: the rows of the two
  // shared tables the commands' tables link to.
  CLI::App provider;
  AddProviderFlags(provider, ctx_);
  EXPECT_EQ(TableNames(sections_, "provider-flags"), CliNames(provider));
  CLI::App recover;
  AddConfigFlags(recover, ctx_, "recover.");
  EXPECT_EQ(TableNames(sections_, "recovery-flags"), CliNames(recover));
}

// docs/README.md is the index of docs/: every page there is linked from it.
TEST(DocsIndexTest, EveryPageIsInTheIndex) {
  const std::string index = ReadRepositoryFile("docs/README.md");
  int pages = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(MEND_SOURCE_DIR) + "/docs")) {
    const std::string name = entry.path().filename().string();
    if (!name.ends_with(".md") || name == "README.md") continue;
    ++pages;
    EXPECT_NE(index.find("](" + name + ")"), std::string::npos)
        << "docs/README.md does not link to " << name;
  }
  EXPECT_GT(pages, 30);
}

}  // namespace
}  // namespace mend::cli
