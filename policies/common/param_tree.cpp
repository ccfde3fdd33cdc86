#include "policies/common/param_tree.hpp"

namespace headroom::policies {
namespace {

// Flow style: "[a, {k: v}]", scalars plain or quoted; a key ends at ": " (values such as
// MIG profile names hold dots, never ": ").
class FlowParser {
 public:
  explicit FlowParser(std::string_view s) : s_(s) {}
  std::optional<ParamTree> parse() {
    ParamTree v = value(false);
    ws();
    if (!ok_ || i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  ParamTree value(bool in_map) {
    ParamTree v;
    if (++depth_ > 16) {
      ok_ = false;
      return v;
    }
    ws();
    if (eat('[')) {
      v.kind = ParamTree::List;
      if (!eat(']')) {
        do {
          v.items.push_back(value(false));
        } while (ok_ && eat(','));
        if (!eat(']')) ok_ = false;
      }
    } else if (eat('{')) {
      v.kind = ParamTree::Map;
      if (!eat('}')) {
        do {
          ParamTree k = scalar(true);
          if (!eat(':')) ok_ = false;
          if (!ok_) break;
          v.entries.emplace_back(k.text, value(true));
        } while (ok_ && eat(','));
        if (!eat('}')) ok_ = false;
      }
    } else {
      v = scalar(in_map);
    }
    --depth_;
    return v;
  }
  ParamTree scalar(bool key) {
    ParamTree v;
    ws();
    if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'')) {
      const char q = s_[i_++];
      while (i_ < s_.size() && s_[i_] != q) {
        if (q == '"' && s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
        v.text += s_[i_++];
      }
      if (i_ >= s_.size()) ok_ = false;
      ++i_;
      return v;
    }
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == ',' || c == '[' || c == ']' || c == '{' || c == '}') break;
      if (c == ':' && key && (i_ + 1 == s_.size() || s_[i_ + 1] == ' ')) break;
      v.text += c;
      ++i_;
    }
    while (!v.text.empty() && v.text.back() == ' ') v.text.pop_back();
    if (v.text.empty()) ok_ = false;
    return v;
  }
  std::string_view s_;
  std::size_t i_ = 0;
  int depth_ = 0;
  bool ok_ = true;
};

// The block-style subset of YAML (what the scenario reader emits for a nested list of maps):
// "- key: value" sequences and "key: value" maps by indentation; inline values may be flow.
class BlockParser {
 public:
  explicit BlockParser(std::string_view text) {
    std::size_t at = 0;
    while (at <= text.size()) {
      const auto nl = text.find('\n', at);
      std::string_view line = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
      at = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
      std::size_t indent = 0;
      while (indent < line.size() && line[indent] == ' ') ++indent;
      std::string rest(line.substr(indent));
      while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.pop_back();
      if (rest.empty() || rest.front() == '#') continue;
      lines_.push_back({static_cast<int>(indent), rest});
    }
  }
  std::optional<ParamTree> parse() {
    if (lines_.empty()) return std::nullopt;
    ParamTree v = node(lines_[0].indent);
    if (!ok_ || i_ != lines_.size()) return std::nullopt;
    return v;
  }

 private:
  struct Line {
    int indent;
    std::string text;
  };
  static bool is_item(const std::string& t) { return t == "-" || t.starts_with("- "); }

  ParamTree node(int indent) {
    ParamTree v;
    if (++depth_ > 16 || i_ >= lines_.size()) {
      ok_ = false;
      return v;
    }
    if (is_item(lines_[i_].text)) {
      v.kind = ParamTree::List;
      while (ok_ && i_ < lines_.size() && lines_[i_].indent == indent && is_item(lines_[i_].text)) {
        std::string rest = lines_[i_].text.substr(1);
        int extra = 1;
        while (!rest.empty() && rest.front() == ' ') {
          rest.erase(rest.begin());
          ++extra;
        }
        if (rest.empty()) {
          ++i_;
          if (i_ >= lines_.size() || lines_[i_].indent <= indent) {
            ok_ = false;
            break;
          }
          v.items.push_back(node(lines_[i_].indent));
        } else {
          lines_[i_] = {indent + extra, rest};
          v.items.push_back(node(indent + extra));
        }
      }
    } else if (const std::string& t = lines_[i_].text; t.find(": ") == std::string::npos && !t.ends_with(":")) {
      // A scalar or a flow collection on one line ("- priority", "- [priority, gang]").
      auto f = t.front() == '[' || t.front() == '{' || t.front() == '"' || t.front() == '\''
                   ? FlowParser(t).parse()
                   : std::optional<ParamTree>(ParamTree{ParamTree::Scalar, t, {}, {}});
      if (f)
        v = *f;
      else
        ok_ = false;
      ++i_;
    } else {
      v.kind = ParamTree::Map;
      while (ok_ && i_ < lines_.size() && lines_[i_].indent == indent && !is_item(lines_[i_].text)) {
        const std::string& t = lines_[i_].text;
        std::size_t colon = t.find(": ");
        if (colon == std::string::npos && t.ends_with(":")) colon = t.size() - 1;
        if (colon == std::string::npos || colon == 0) {
          ok_ = false;
          break;
        }
        std::string key = t.substr(0, colon);
        if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front())
          key = key.substr(1, key.size() - 2);
        std::string value = colon + 1 < t.size() ? t.substr(colon + 2) : "";
        ++i_;
        if (!value.empty()) {
          auto f = value.front() == '[' || value.front() == '{' || value.front() == '"' || value.front() == '\''
                       ? FlowParser(value).parse()
                       : std::optional<ParamTree>(ParamTree{ParamTree::Scalar, value, {}, {}});
          if (!f) {
            ok_ = false;
            break;
          }
          v.entries.emplace_back(key, *f);
        } else if (i_ < lines_.size() &&
                   (lines_[i_].indent > indent || (lines_[i_].indent == indent && is_item(lines_[i_].text)))) {
          v.entries.emplace_back(key, node(lines_[i_].indent));
        } else {
          ok_ = false;
        }
      }
    }
    --depth_;
    return v;
  }

  std::vector<Line> lines_;
  std::size_t i_ = 0;
  int depth_ = 0;
  bool ok_ = true;
};

}  // namespace

std::optional<ParamTree> parse_param_tree(std::string_view text) {
  std::size_t k = 0;
  while (k < text.size() && (text[k] == ' ' || text[k] == '\n')) ++k;
  if (k < text.size() && (text[k] == '[' || text[k] == '{')) return FlowParser(text).parse();
  return BlockParser(text).parse();
}

}  // namespace headroom::policies
