#pragma once

// The docs pages' generated blocks (docs/importing.md's key tables): the text between `begin`
// and `end` markers is what a reader's own tables print. With HEADROOM_UPDATE_DOCS set and the
// block stale, the page is rewritten with `want` and the rewritten block returned.

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace headroom::testing {

// The block's text, or nullopt when the page lacks either marker.
inline std::optional<std::string> generated_block(const std::string& path, const std::string& begin,
                                                  const std::string& end, const std::string& want) {
  std::stringstream buf;
  buf << std::ifstream(path, std::ios::binary).rdbuf();
  std::string doc = buf.str();
  const auto b = doc.find(begin), e = doc.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b + begin.size()) return std::nullopt;
  const std::string have = doc.substr(b + begin.size(), e - b - begin.size());
  if (have != want && std::getenv("HEADROOM_UPDATE_DOCS") != nullptr) {
    doc.replace(b + begin.size(), e - b - begin.size(), want);
    std::ofstream(path, std::ios::binary) << doc;
    return want;
  }
  return have;
}

}  // namespace headroom::testing
