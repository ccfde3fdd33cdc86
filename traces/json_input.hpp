#pragma once

// Private to traces/: JSON read straight from a LineReader (plain or gzip) with nlohmann's parser,
// knowing at every moment the line and column of the last character read and the path of the value
// being parsed ("items[3].spec.containers[0]"), so that every error (a syntax error, a number out of
// range, a field of the wrong type) names file:line:column and the field.

#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/line_reader.hpp"

namespace headroom::traces::detail {

// The characters of a LineReader, lines joined with '\n'.
class CharStream {
 public:
  explicit CharStream(LineReader& in) : in_(in) {}
  // Next character, or -1 at the end.
  int get();
  int line() const { return in_.line_number(); }
  int column() const { return column_; }

 private:
  LineReader& in_;
  std::string_view line_;
  std::size_t pos_ = 0;
  bool pending_newline_ = false;
  int column_ = 0;
};

// A CharStream as the input iterator nlohmann's parser reads.
class CharIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CharIterator() = default;  // the end
  explicit CharIterator(CharStream& s) : s_(&s) { advance(); }
  const char& operator*() const { return c_; }
  CharIterator& operator++() {
    advance();
    return *this;
  }
  void operator++(int) { advance(); }
  bool operator==(const CharIterator& o) const { return s_ == o.s_; }
  bool operator!=(const CharIterator& o) const { return s_ != o.s_; }

 private:
  void advance() {
    const int c = s_->get();
    if (c < 0)
      s_ = nullptr;
    else
      c_ = static_cast<char>(c);
  }
  CharStream* s_ = nullptr;
  char c_ = 0;
};

// The path of the value the parser is on, fed with the events of a parser callback: keys after a
// dot ("spec.containers"), array elements as [i]; the root is "".
class JsonPath {
 public:
  void on(nlohmann::json::parse_event_t event, const nlohmann::json& value);
  void start(bool array) { levels_.push_back({array, 0, {}}); }
  void key(const std::string& k) {
    if (!levels_.empty()) levels_.back().key = k;
  }
  void end() {
    if (!levels_.empty()) levels_.pop_back();
    scalar();
  }
  void scalar() {  // a value (or a container, at its end) is complete
    if (!levels_.empty() && levels_.back().array) ++levels_.back().index;
  }
  std::string path() const;
  int depth() const { return static_cast<int>(levels_.size()); }

 private:
  struct Level {
    bool array = false;
    std::size_t index = 0;
    std::string key;
  };
  std::vector<Level> levels_;
};

// Lists and objects nested deeper than this are refused before they are built. Go's encoding/json
// (which kubectl and the API server use) stops at 10,000 ("exceeded max depth", scanner.go); a pod
// list nests about ten levels, and headroom's YAML readers stop at 256 (sim/yaml_documents.hpp).
inline constexpr int kMaxJsonDepth = 256;

// Parses the JSON of `in`. Nesting beyond kMaxJsonDepth throws sim::InputError at its '[' or '{';
// SIGINT / SIGTERM (sim::stop_requested) stop it with sim::Interrupted. `callback` is nlohmann's parser callback (may
// be empty). A syntax error or a number out of range (1e999) throws sim::InputError with the file, line, column and,
// for a number, the path of the field. `stream` reads `in` (the caller's, for the line and column of its own messages).
nlohmann::json parse_json(LineReader& in, CharStream& stream,
                          const nlohmann::json::parser_callback_t& callback = nullptr);

// Line and column in `file` where the value at `path` (as JsonPath writes it) is given: the start
// of its key for an object member, else its first character; {0, 0} when it is not found. Reads
// the file again: for error messages only.
std::pair<int, int> json_position(const std::string& file, const std::string& path);

}  // namespace headroom::traces::detail
