// docs/home.md, "Schema versions", is the code's own list: each versioned format with the version
// this build writes, and a history row for every version up to it, so a schema change that does not
// say what it changed fails here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/version_info.h"
#include "tests/cli/repository_file.h"

namespace mend::cli {
namespace {

using Row = std::vector<std::string>;

std::string Trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(' ');
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(' ') - begin + 1);
}

// The cells of a table row "| a | b |".
Row Cells(const std::string& line) {
  Row cells;
  std::string cell;
  for (size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|') {
      cells.push_back(Trim(cell));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

// The text of the first code span of `cell`, or the cell itself.
std::string FirstCode(const std::string& cell) {
  const size_t open = cell.find('`');
  if (open == std::string::npos) return cell;
  return cell.substr(open + 1, cell.find('`', open + 1) - open - 1);
}

// The data rows of every table in `section`, by the table's header row.
std::map<std::string, std::vector<Row>> Tables(const std::string& section) {
  std::map<std::string, std::vector<Row>> tables;
  std::istringstream in(section);
  std::string line, header;
  int row = 0;
  while (std::getline(in, line)) {
    if (!line.starts_with("|")) {
      row = 0;
      continue;
    }
    if (++row == 1) header = line;
    if (row > 2) tables[header].push_back(Cells(line));
  }
  return tables;
}

class SchemaVersionsDocsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string page = ReadRepositoryFile("docs/home.md");
    const size_t begin = page.find("\n## Schema versions\n");
    ASSERT_NE(begin, std::string::npos) << "docs/home.md has no section \"Schema versions\"";
    const size_t end = page.find("\n## ", begin + 1);
    tables_ = Tables(page.substr(begin, end == std::string::npos ? end : end - begin));
  }

  std::vector<Row> Table(const std::string& header) {
    auto it = tables_.find(header);
    EXPECT_NE(it, tables_.end()) << "no table headed " << header;
    return it == tables_.end() ? std::vector<Row>() : it->second;
  }

  std::map<std::string, std::vector<Row>> tables_;
};

TEST_F(SchemaVersionsDocsTest, TheCurrentVersionsAreTheCodes) {
  const std::vector<Row> rows = Table("| file | schema | kept in | version |");
  const std::vector<SchemaVersionInfo> versions = SchemaVersions();
  ASSERT_EQ(rows.size(), versions.size()) << "one row per versioned format, in the code's order";
  for (size_t i = 0; i < versions.size(); ++i) {
    const SchemaVersionInfo& v = versions[i];
    ASSERT_EQ(rows[i].size(), 4u);
    EXPECT_EQ(FirstCode(rows[i][0]), v.file) << "row " << i + 1;
    EXPECT_EQ(rows[i][1], v.schema) << "row " << i + 1;
    EXPECT_THAT(rows[i][2], ::testing::HasSubstr(v.key)) << v.file << " " << v.schema;
    EXPECT_EQ(rows[i][3], std::to_string(v.writes))
        << "docs/home.md, \"Schema versions\": " << v.file << " " << v.schema << " is at version "
        << v.writes << " in the code";
  }
}

TEST_F(SchemaVersionsDocsTest, EveryVersionSaysWhatItChanged) {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> history;
  for (const Row& row : Table("| file | schema | version | what changed |")) {
    ASSERT_EQ(row.size(), 4u);
    EXPECT_FALSE(row[3].empty()) << row[0] << " " << row[1] << " " << row[2];
    history[{FirstCode(row[0]), row[1]}].push_back(row[2]);
  }
  for (const SchemaVersionInfo& v : SchemaVersions()) {
    std::vector<std::string> expected;
    for (int64_t n = 1; n <= v.writes; ++n) expected.push_back(std::to_string(n));
    const std::pair<std::string, std::string> format(v.file, v.schema);
    EXPECT_EQ(history[format], expected)
        << "docs/home.md, \"Schema versions\": " << v.file << " " << v.schema
        << " needs one row per version, 1 to " << v.writes << ", in order";
    history.erase(format);
  }
  EXPECT_TRUE(history.empty()) << "rows for a format the code does not have: "
                               << history.begin()->first.first << " "
                               << history.begin()->first.second;
}

}  // namespace
}  // namespace mend::cli
