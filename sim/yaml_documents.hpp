#pragma once
// A guard for YAML read with yaml-cpp (header-only: for code that links yaml-cpp).

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/errors.hpp"
#include "sim/interrupt.hpp"
#include "sim/text.hpp"

namespace headroom::sim {

// Bounds on what a YAML text may expand to before a reader walks it. yaml-cpp shares an aliased
// node rather than copying it, so a few hundred bytes of anchors reused nine levels deep ("billion
// laughs") parse at once, and it is the readers' walk, which meets the shared node again at every
// alias, that runs for hours. Kubernetes refuses such files the same way: gopkg.in/yaml.v2's
// decode.go (the fix of CVE-2019-11253) stops with "document contains excessive aliasing" once
// alias-driven decodes pass a budget of the order of 400,000, and an anchor containing itself is
// an error there too.
inline constexpr std::uint64_t kMaxYamlAliasNodes = 1'000'000;  // nodes reached through aliases, whole file
inline constexpr std::size_t kMaxYamlDepth = 256;               // nested lists and maps, aliases expanded
inline constexpr std::size_t kMaxYamlDocuments = 100'000;       // "---" documents in one file

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
// Load would. The walk also counts the nodes as a reader's walk would meet them (an alias counts
// its anchor's whole subtree each time it is reached) and throws sim::InputError naming `file`
// and the line of the alias, node or document that passes one of the bounds above; SIGINT /
// SIGTERM (sim::stop_requested) stop it with sim::Interrupted.
inline YamlDocuments walk_yaml_documents(const std::string& text, const std::string& file,
                                         std::size_t limit = std::numeric_limits<std::size_t>::max()) {
  class Probe : public YAML::EventHandler {
   public:
    std::vector<YamlDocument>& docs;
    const std::string& text;
    const std::string& file;
    Probe(std::vector<YamlDocument>& d, const std::string& t, const std::string& f) : docs(d), text(t), file(f) {}
    void OnDocumentStart(const YAML::Mark& mark) override {
      if (docs.size() >= kMaxYamlDocuments)
        refuse(mark, "more than " + thousands(kMaxYamlDocuments) + " YAML documents in one file; refusing it");
      docs.push_back({mark, mark, 0, false});
      open_.clear();
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
      leaf(mark, anchor);
      docs.back().lone_null = docs.back().nodes == 1;
    }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
      node(mark);
      for (const Open& o : open_)
        if (o.anchor == anchor && anchor != 0)
          refuse(mark, "an alias (" + alias_text(mark) +
                           ") inside the node its anchor names (the document would be infinite); refusing it");
      const Shape s = anchor < anchors_.size() ? anchors_[anchor] : Shape{};
      alias_nodes_ += s.nodes;
      if (alias_nodes_ > kMaxYamlAliasNodes)
        refuse(mark, "the document expands to more than " + thousands(kMaxYamlAliasNodes) +
                         " nodes through aliases (anchors reused, here " + alias_text(mark) + "); refusing it");
      if (open_.size() + s.height > kMaxYamlDepth)
        refuse(mark, "lists and maps nested more than " + thousands(kMaxYamlDepth) +
                         " levels deep through aliases (anchors reused, here " + alias_text(mark) + "); refusing it");
      add(s);
    }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string&) override {
      leaf(mark, anchor);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override {
      start(mark, anchor);
    }
    void OnSequenceEnd() override { end(); }
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override {
      start(mark, anchor);
    }
    void OnMapEnd() override { end(); }

   private:
    struct Shape {
      std::uint64_t nodes = 1;  // the subtree's nodes, aliases expanded
      std::size_t height = 0;   // lists and maps nested below its root, aliases expanded
    };
    struct Open {
      YAML::anchor_t anchor;
      Shape shape;  // so far
    };
    std::vector<Open> open_;      // the lists and maps being read, outermost first
    std::vector<Shape> anchors_;  // by anchor id (yaml-cpp numbers each anchor declared)
    std::uint64_t alias_nodes_ = 0;
    std::uint64_t events_ = 0;

    // The alias as written ("*name"), from the text at `mark`.
    std::string alias_text(const YAML::Mark& mark) const {
      if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text.size()) return "an alias";
      const std::size_t from = static_cast<std::size_t>(mark.pos);
      const std::size_t to = std::min(text.find_first_of(" \t\r\n,]}", from), from + 64);
      return text.substr(from, to - from);
    }
    [[noreturn]] void refuse(const YAML::Mark& mark, const std::string& message) const {
      throw InputError(file, mark.line >= 0 ? mark.line + 1 : 0, mark.column >= 0 ? mark.column + 1 : 0, "", message);
    }
    void node(const YAML::Mark& mark) {
      YamlDocument& d = docs.back();
      if (d.nodes++ == 0) d.first = mark;
      d.lone_null = false;
      if ((++events_ & 0xffff) == 0) check_interrupt();
    }
    void remember(YAML::anchor_t anchor, const Shape& s) {
      if (anchor == 0) return;
      if (anchors_.size() <= anchor) anchors_.resize(anchor + 1);
      anchors_[anchor] = s;
    }
    void add(const Shape& s) {
      if (open_.empty()) return;
      Shape& p = open_.back().shape;
      p.nodes = std::min<std::uint64_t>(p.nodes + s.nodes, kMaxYamlAliasNodes * 4);
      p.height = std::max(p.height, s.height + 1);
    }
    void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
      node(mark);
      remember(anchor, Shape{});
      add(Shape{});
    }
    void start(const YAML::Mark& mark, YAML::anchor_t anchor) {
      node(mark);
      if (open_.size() >= kMaxYamlDepth)
        refuse(mark, "lists and maps nested more than " + thousands(kMaxYamlDepth) + " levels deep; refusing it");
      open_.push_back({anchor, Shape{}});
    }
    void end() {
      if (open_.empty()) return;
      const Open o = open_.back();
      open_.pop_back();
      remember(o.anchor, o.shape);
      add(o.shape);
    }
  };
  YamlDocuments out;
  std::istringstream in(text);
  YAML::Parser parser(in);
  Probe probe(out.docs, text, file);
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
