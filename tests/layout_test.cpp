// The source layout's rules (issue #30, DESIGN.md "Layout"): only policies/ names a scheduling
// system; each mirrored system is a folder of its own with a README; no policy source grows past
// 800 lines without saying why at its top.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kRoot = HEADROOM_SOURCE_DIR;
const std::vector<std::string> kSystems = {"kubernetes", "volcano", "slurm", "kai", "kueue"};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> sources(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".cpp" || ext == ".hpp")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Literal {
  std::string text;
  int line;
};

// The string literals of C++ source outside comments (escapes kept as written; raw strings are
// read up to their closing delimiter), and every #include line's path in `includes`.
std::vector<Literal> literals(const std::string& src, std::vector<std::string>& includes) {
  std::vector<Literal> out;
  int line = 1;
  for (std::size_t i = 0; i < src.size(); ++i) {
    const char c = src[i];
    if (c == '\n') {
      ++line;
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '/') {
      while (i < src.size() && src[i] != '\n') ++i;
      --i;
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '*') {
      for (i += 2; i + 1 < src.size() && !(src[i] == '*' && src[i + 1] == '/'); ++i)
        if (src[i] == '\n') ++line;
      ++i;
      continue;
    }
    if (c == '\'') {  // a character literal ('"' must not open a string)
      for (++i; i < src.size() && src[i] != '\''; ++i)
        if (src[i] == '\\') ++i;
      continue;
    }
    if (c == '#' && src.compare(i, 8, "#include") == 0) {
      const auto open = src.find('"', i), end = src.find('\n', i);
      if (open != std::string::npos && open < end) {
        const auto close = src.find('"', open + 1);
        includes.push_back(src.substr(open + 1, close - open - 1));
        i = close;
      }
      continue;
    }
    if (c == 'R' && i + 1 < src.size() && src[i + 1] == '"') {
      const auto paren = src.find('(', i);
      const std::string close = ")" + src.substr(i + 2, paren - i - 2) + "\"";
      const auto end = src.find(close, paren);
      const std::string body = src.substr(paren + 1, end - paren - 1);
      out.push_back({body, line});
      for (char b : body) line += b == '\n';
      i = end + close.size() - 1;
      continue;
    }
    if (c == '"') {
      std::string text;
      for (++i; i < src.size() && src[i] != '"'; ++i) {
        if (src[i] == '\\') text += src[i++];
        text += src[i];
      }
      out.push_back({text, line});
    }
  }
  return out;
}

TEST(Layout, OnlyPoliciesNameASystem) {
  // planner/, scenarios/, apps/, results/ and gui/ ask the SystemModule registry: none switches
  // on a system's name or includes a system's folder.
  int checked = 0;
  for (const char* dir : {"planner", "scenarios", "apps", "results", "gui"}) {
    for (const auto& path : sources(kRoot / dir)) {
      ++checked;
      std::vector<std::string> includes;
      for (const auto& lit : literals(read(path), includes))
        for (const auto& system : kSystems)
          EXPECT_NE(lit.text, system) << path.string() << ":" << lit.line << ": the system name \"" << system
                                      << "\" as a string literal (ask policies/system_module.hpp instead)";
      for (const auto& inc : includes)
        for (const auto& system : kSystems)
          EXPECT_FALSE(inc.starts_with("policies/" + system + "/"))
              << path.string() << ": includes " << inc << " (a system's folder is private to policies/)";
    }
  }
  EXPECT_GT(checked, 50);
}

TEST(Layout, TheScannerSeesLiteralsNotComments) {
  std::vector<std::string> includes;
  const auto lits = literals(
      "#include \"policies/slurm/slurm.hpp\"\n// \"kai\" in a comment\n/* \"kueue\" */ auto a = \"slurm\";\n"
      "char q = '\"'; auto b = R\"x(volcano)x\"; auto c = \"say \\\"kai\\\"\";\n",
      includes);
  ASSERT_EQ(lits.size(), 3u);
  EXPECT_EQ(lits[0].text, "slurm");
  EXPECT_EQ(lits[0].line, 3);
  EXPECT_EQ(lits[1].text, "volcano");
  EXPECT_EQ(lits[2].text, "say \\\"kai\\\"");
  ASSERT_EQ(includes.size(), 1u);
  EXPECT_EQ(includes[0], "policies/slurm/slurm.hpp");
}

TEST(Layout, EachSystemIsAFolderWithAReadme) {
  for (const auto& system : kSystems) {
    const fs::path dir = kRoot / "policies" / system;
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    EXPECT_TRUE(fs::is_regular_file(dir / "README.md")) << dir;
    EXPECT_TRUE(fs::is_regular_file(dir / "module.cpp")) << dir;
  }
  for (const char* dir : {"baselines", "common"}) EXPECT_TRUE(fs::is_directory(kRoot / "policies" / dir)) << dir;
  // Nothing is left loose at the top of policies/ but the API, the registry and the module type.
  for (const auto& path : sources(kRoot / "policies")) {
    if (path.parent_path() != kRoot / "policies") continue;
    EXPECT_TRUE(path.filename() == "api.hpp" || path.filename() == "registry.hpp" ||
                path.filename() == "registry.cpp" || path.filename() == "system_module.hpp")
        << path;
  }
}

TEST(Layout, NoPolicySourceOver800LinesWithoutAReason) {
  // A longer file says why in its opening comment, on a line starting "// Long file:".
  for (const auto& path : sources(kRoot / "policies")) {
    if (path.extension() != ".cpp") continue;
    const std::string text = read(path);
    const auto lines = std::count(text.begin(), text.end(), '\n');
    if (lines <= 800) continue;
    const auto reason = text.find("\n// Long file:");
    EXPECT_TRUE(text.starts_with("// Long file:") || (reason != std::string::npos && reason < 2000))
        << path.string() << " has " << lines << " lines and no \"// Long file:\" reason at its top";
  }
}

}  // namespace
