#pragma once
// A guard for YAML read with yaml-cpp (header-only: for code that links yaml-cpp).

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <cstddef>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace headroom::sim {

struct YamlDocument {
  YAML::Mark start;        // where the document starts
  YAML::Mark first;        // where its first node starts (start when it has none)
  int nodes = 0;           // its nodes
  bool lone_null = false;  // its one node is a null
};

struct YamlDocuments {
  std::vector<YamlDocument> docs;   // in order, up to the limit given
  std::optional<YAML::Mark> stray;  // a token that cannot start a node, if one was met
};

// yaml-cpp 0.7 never returns from YAML::Load / LoadAll on a token that cannot start a node (a stray
// "," or "]" after a value): it reports document after document, each a lone null at the same
// place. The documents are walked here first, one at a time (at most `limit`), and the walk stops
// at such a place (the caller reports it); a malformed document throws YAML::ParserException as
// Load would.
inline YamlDocuments walk_yaml_documents(const std::string& text,
                                         std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  class Probe : public YAML::EventHandler {
   public:
    std::vector<YamlDocument>& docs;
    explicit Probe(std::vector<YamlDocument>& d) : docs(d) {}
    void OnDocumentStart(const YAML::Mark& mark) override { docs.push_back({mark, mark, 0, false}); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
      node(mark);
      docs.back().lone_null = docs.back().nodes == 1;
    }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
      node(mark);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
      node(mark);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
      node(mark);
    }
    void OnMapEnd() override {}

   private:
    void node(const YAML::Mark& mark) {
      YamlDocument& d = docs.back();
      if (d.nodes++ == 0) d.first = mark;
      d.lone_null = false;
    }
  };
  YamlDocuments out;
  std::istringstream in(text);
  YAML::Parser parser(in);
  Probe probe(out.docs);
  for (std::size_t i = 0; i < limit && parser.HandleNextDocument(probe); ++i) {
    const std::size_t n = out.docs.size();
    if (n >= 2 && out.docs[n - 2].lone_null && out.docs[n - 1].lone_null &&
        out.docs[n - 2].first.pos == out.docs[n - 1].first.pos) {
      out.stray = out.docs[n - 1].first;
      break;
    }
  }
  return out;
}

}  // namespace headroom::sim
