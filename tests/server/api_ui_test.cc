// The web UI's static files: served from the binary with their types and security headers, nothing
// else under /ui/, and every file the UI refers to is embedded.
#include <gmock/gmock.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "server/ui_files.h"
#include "tests/server/server_fixture.h"

namespace mend::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string Header(const httplib::Headers& headers, const std::string& name) {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

const UiFile* Embedded(std::string_view path) {
  for (const UiFile& file : UiFiles()) {
    if (file.path == path) return &file;
  }
  return nullptr;
}

// The embedded path a module specifier names from a file in `dir` ("pages/"), "./" and "../"
// resolved; "" when it leaves the UI's folder.
std::string ResolveImport(const std::string& dir, const std::string& spec) {
  const std::string joined = dir + spec;
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= joined.size()) {
    size_t end = joined.find('/', start);
    if (end == std::string::npos) end = joined.size();
    const std::string part = joined.substr(start, end - start);
    if (part == "..") {
      if (parts.empty()) return "";
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string path;
  for (const std::string& part : parts) path += (path.empty() ? "" : "/") + part;
  return path;
}

void ExpectSecurityHeaders(const httplib::Headers& headers) {
  const std::string csp = Header(headers, "Content-Security-Policy");
  EXPECT_THAT(csp, HasSubstr("default-src 'self'"));
  EXPECT_THAT(csp, HasSubstr("script-src 'self';"));
  EXPECT_THAT(csp, HasSubstr("frame-ancestors 'none'"));
  EXPECT_THAT(csp, Not(HasSubstr("unsafe-inline")));
  EXPECT_THAT(csp, Not(HasSubstr("unsafe-eval")));
  EXPECT_EQ(Header(headers, "X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(Header(headers, "X-Frame-Options"), "DENY");
}

TEST_F(ServerTest, RootServesTheIndexPage) {
  StartServer();
  Reply reply = Get("/");
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(Header(reply.headers, "Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(Header(reply.headers, "Cache-Control"), "no-cache");
  ExpectSecurityHeaders(reply.headers);
  const UiFile* index = Embedded("index.html");
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(reply.text, index->bytes);
  EXPECT_THAT(reply.text, HasSubstr("<script type=\"module\" src=\"/ui/app.js\"></script>"));
}

TEST_F(ServerTest, EveryEmbeddedFileIsServedWithItsType) {
  StartServer();
  ASSERT_FALSE(UiFiles().empty());
  for (const UiFile& file : UiFiles()) {
    SCOPED_TRACE(std::string(file.path));
    Reply reply = Get("/ui/" + std::string(file.path));
    ASSERT_EQ(reply.status, 200);
    EXPECT_EQ(reply.text, file.bytes);
    EXPECT_EQ(Header(reply.headers, "Content-Type"), file.content_type);
    EXPECT_EQ(Header(reply.headers, "ETag"), file.etag);
    ExpectSecurityHeaders(reply.headers);
  }
  EXPECT_EQ(Embedded("app.js")->content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(Embedded("style.css")->content_type, "text/css; charset=utf-8");
}

TEST_F(ServerTest, MatchingEntityTagAnswersNotModified) {
  StartServer();
  const UiFile* app = Embedded("app.js");
  ASSERT_NE(app, nullptr);
  Reply reply = Get("/ui/app.js", {{"If-None-Match", std::string(app->etag)}});
  EXPECT_EQ(reply.status, 304);
  EXPECT_TRUE(reply.text.empty());
  Reply stale = Get("/ui/app.js", {{"If-None-Match", "\"0000000000000000\""}});
  EXPECT_EQ(stale.status, 200);
  EXPECT_EQ(stale.text, app->bytes);
}

TEST_F(ServerTest, UnknownUiFileIsNotFound) {
  StartServer();
  for (const std::string path : {"/ui/nope.js", "/ui/", "/ui/pages", "/ui/APP.JS"}) {
    SCOPED_TRACE(path);
    Reply reply = Get(path);
    EXPECT_EQ(reply.status, 404);
    EXPECT_EQ(reply.body["error"]["code"], "NOT_FOUND");
    EXPECT_EQ(Header(reply.headers, "X-Content-Type-Options"), "nosniff");
  }
}

TEST_F(ServerTest, PathTraversalFindsNothing) {
  StartServer();
  for (const std::string path :
       {"/ui/../api_ui.cc", "/ui/%2e%2e/api_ui.cc", "/ui/..%2fapi_ui.cc", "/ui/./app.js",
        "/ui//app.js", "/ui/pages/../app.js", "/ui/%2fetc%2fpasswd", "/ui/app.js%00.png",
        "/ui/.hidden", "/ui/..\\api_ui.cc"}) {
    SCOPED_TRACE(path);
    Reply reply = Get(path);
    EXPECT_EQ(reply.status, 404);
    EXPECT_THAT(reply.text, Not(HasSubstr("namespace mend")));
  }
}

TEST_F(ServerTest, UiFilesNeedNoTokenButTheApiDoes) {
  ServerOptions options;
  options.token = "s3cret";
  StartServer({}, options);
  EXPECT_EQ(Get("/").status, 200);
  EXPECT_EQ(Get("/ui/app.js").status, 200);
  EXPECT_EQ(Get("/api/v1/runs").status, 401);
}

// The policy forbids inline script and inline event handlers; the page must not need them.
TEST(UiFilesTest, IndexPageHasNoInlineScriptOrHandlers) {
  const UiFile* index = Embedded("index.html");
  ASSERT_NE(index, nullptr);
  const std::string html(index->bytes);
  std::regex script_tag("<script\\b[^>]*>");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), script_tag);
       it != std::sregex_iterator(); ++it) {
    EXPECT_THAT(it->str(), HasSubstr("src=\"/ui/")) << it->str();
  }
  EXPECT_FALSE(std::regex_search(html, std::regex("\\son[a-z]+\\s*=", std::regex::icase)));
  EXPECT_THAT(html, Not(HasSubstr("style=\"")));
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
}

// Every /ui/ URL in the page and every relative import of a module resolves to an embedded file,
// and no script loads anything from another origin.
TEST(UiFilesTest, EveryReferenceResolvesToAnEmbeddedFile) {
  const std::string html(Embedded("index.html")->bytes);
  std::regex ui_url("\"/ui/([^\"]+)\"");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), ui_url);
       it != std::sregex_iterator(); ++it) {
    EXPECT_NE(Embedded((*it)[1].str()), nullptr) << (*it)[1].str();
  }
  // `import ... from "x";` / `export ... from "x";` at the start of a line, or `import("x")`.
  std::regex import_from(
      "(?:(?:^|\\n)(?:import|export)\\b[^;\"]*\\bfrom\\s*|\\bimport\\s*\\(\\s*)\"([^\"]+)\"");
  int imports = 0;
  for (const UiFile& file : UiFiles()) {
    if (!file.path.ends_with(".js")) continue;
    const std::string text(file.bytes);
    EXPECT_THAT(text, Not(HasSubstr("innerHTML"))) << file.path;
    EXPECT_THAT(text, Not(HasSubstr("insertAdjacentHTML"))) << file.path;
    EXPECT_THAT(text, Not(HasSubstr("eval("))) << file.path;
    const std::string dir(file.path.substr(0, file.path.rfind('/') + 1));
    for (auto it = std::sregex_iterator(text.begin(), text.end(), import_from);
         it != std::sregex_iterator(); ++it) {
      std::string spec = (*it)[1].str();
      SCOPED_TRACE(std::string(file.path) + " imports " + spec);
      ASSERT_THAT(spec, StartsWith("."));
      const std::string path = ResolveImport(dir, spec);
      EXPECT_NE(Embedded(path), nullptr) << path;
      ++imports;
    }
  }
  EXPECT_GT(imports, 20);  // the pattern still finds the imports
}

}  // namespace
}  // namespace mend::server
