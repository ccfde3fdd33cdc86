#pragma once
// A guard for multi-document YAML read with yaml-cpp (header-only: for code that links yaml-cpp).

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <optional>
#include <sstream>
#include <string>

namespace headroom::sim {

// yaml-cpp 0.7 never returns from YAML::LoadAll on a token that cannot start a node (a stray ","
// or "]" after a document): it reports empty document after empty document at the same place. The
// documents are walked here first, one at a time, and the place of such a token is returned (the
// caller reports it); a malformed document throws YAML::ParserException as LoadAll would.
inline std::optional<YAML::Mark> yaml_stray_token(const std::string& text) {
  class Probe : public YAML::EventHandler {
   public:
    int nodes = 0;
    YAML::Mark first;
    bool null_only = true;
    void OnDocumentStart(const YAML::Mark& mark) override {
      nodes = 0;
      first = mark;
      null_only = true;
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, true); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark, false); }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
      node(mark, false);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
      node(mark, false);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
      node(mark, false);
    }
    void OnMapEnd() override {}

   private:
    void node(const YAML::Mark& mark, bool null) {
      if (nodes++ == 0) first = mark;
      null_only = null_only && null;
    }
  };
  std::istringstream in(text);
  YAML::Parser parser(in);
  Probe probe;
  bool empty_before = false;
  int at_before = -1;
  while (parser.HandleNextDocument(probe)) {
    const bool empty = probe.nodes <= 1 && probe.null_only;
    if (empty && empty_before && probe.first.pos == at_before) return probe.first;
    empty_before = empty;
    at_before = probe.first.pos;
  }
  return std::nullopt;
}

}  // namespace headroom::sim
