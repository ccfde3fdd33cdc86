#include "traces/json_input.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "sim/errors.hpp"
#include "sim/interrupt.hpp"
#include "sim/text.hpp"

namespace headroom::traces::detail {

using nlohmann::json;

int CharStream::get() {
  while (pos_ >= line_.size()) {
    if (pending_newline_) {
      pending_newline_ = false;
      ++pos_;
      column_ = static_cast<int>(line_.size()) + 1;
      return '\n';
    }
    if (!in_.next_line(line_)) return -1;
    pos_ = 0;
    pending_newline_ = true;
    if (line_.empty()) continue;
  }
  column_ = static_cast<int>(pos_) + 1;
  return static_cast<unsigned char>(line_[pos_++]);
}

void JsonPath::on(json::parse_event_t event, const json& value) {
  switch (event) {
    case json::parse_event_t::object_start:
    case json::parse_event_t::array_start: start(event == json::parse_event_t::array_start); break;
    case json::parse_event_t::key:
      if (value.is_string()) key(value.get_ref<const std::string&>());
      break;
    case json::parse_event_t::object_end:
    case json::parse_event_t::array_end: end(); break;
    case json::parse_event_t::value: scalar(); break;
  }
}

std::string JsonPath::path() const {
  std::string out;
  for (const Level& l : levels_) {
    if (l.array) {
      out += '[';
      out += std::to_string(l.index);
      out += ']';
    } else if (!l.key.empty()) {
      if (!out.empty()) out += '.';
      out += l.key;
    }
  }
  return out;
}

namespace {

// A token quoted in a message, at most kShownToken bytes of it, cut on a UTF-8 character bound:
// its start for a number (its size is what is wrong), its end for the text nlohmann "last read"
// (the fault is where it stopped). A 3 MB string or number in a file must not become a 3 MB error
// message.
constexpr std::size_t kShownToken = 40;
std::string shown_token(std::string_view token, bool keep_end) {
  if (token.size() <= kShownToken) return std::string(token);
  const std::string size = " (" + std::to_string(token.size()) + " characters)";
  if (keep_end) {
    std::size_t from = token.size() - kShownToken;
    while (from < token.size() && sim::utf8_continuation(token[from])) ++from;
    return "..." + std::string(token.substr(from)) + size;
  }
  std::size_t to = kShownToken;
  while (to > 0 && sim::utf8_continuation(token[to])) --to;
  return std::string(token.substr(0, to)) + "..." + size;
}

// "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error while ..." ->
// "syntax error while ...", with a long token in it shortened (shown_token).
std::string reason(const json::exception& e) {
  std::string what = e.what();
  if (const std::size_t colon = what.find(": "); colon != std::string::npos)
    what = what.substr(colon + 2);
  else if (const std::size_t bracket = what.find("] "); bracket != std::string::npos)
    what = what.substr(bracket + 2);
  constexpr std::string_view kLastRead = "last read: '";
  if (const std::size_t at = what.find(kLastRead); at != std::string::npos && what.ends_with('\'')) {
    const std::size_t from = at + kLastRead.size();
    what = what.substr(0, from) + shown_token(std::string_view(what).substr(from, what.size() - 1 - from), true) + "'";
  }
  return what;
}

}  // namespace

namespace {

[[noreturn]] void too_deep(LineReader& in, CharStream& stream) {
  throw sim::InputError(
      in.path(), stream.line(), std::max(1, stream.column() - 1), "",
      "lists and objects nested more than " + std::to_string(kMaxJsonDepth) + " levels deep; refusing it");
}

// nlohmann's own DOM builder, plus the path, the depth bound and the stop flag. Without a
// callback this replaces json::parse(..., callback): nlohmann 3.11's callback parser scans the
// enclosing array for a discarded value at the end of every object, so an array of n objects
// took time in n^2 (a 1 MiB pod list of 350,000 "{}" items: about a minute).
class DomBuilder : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<json>;
  DomBuilder(json& root, LineReader& in, CharStream& stream, JsonPath& path)
      : Base(root, true), in_(in), stream_(stream), path_(path) {}

  bool null() { return value(Base::null()); }
  bool boolean(bool v) { return value(Base::boolean(v)); }
  bool number_integer(json::number_integer_t v) { return value(Base::number_integer(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return value(Base::number_unsigned(v)); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return value(Base::number_float(v, s)); }
  bool string(json::string_t& v) { return value(Base::string(v)); }
  bool binary(json::binary_t& v) { return value(Base::binary(v)); }
  bool start_object(std::size_t n) {
    start(false);
    return Base::start_object(n);
  }
  bool start_array(std::size_t n) {
    start(true);
    return Base::start_array(n);
  }
  bool key(json::string_t& k) {
    path_.key(k);
    return Base::key(k);
  }
  bool end_object() {
    path_.end();
    return Base::end_object();
  }
  bool end_array() {
    path_.end();
    return Base::end_array();
  }

 private:
  bool value(bool ok) {
    tick();
    path_.scalar();
    return ok;
  }
  void start(bool array) {
    if (path_.depth() >= kMaxJsonDepth) too_deep(in_, stream_);
    tick();
    path_.start(array);
  }
  void tick() {
    if ((++events_ & 0xffff) == 0) sim::check_interrupt();
  }
  LineReader& in_;
  CharStream& stream_;
  JsonPath& path_;
  std::uint64_t events_ = 0;
};

}  // namespace

json parse_json(LineReader& in, CharStream& stream, const json::parser_callback_t& callback) {
  JsonPath path;
  std::uint64_t events = 0;
  try {
    if (!callback) {
      json root;
      DomBuilder builder(root, in, stream, path);
      json::sax_parse(CharIterator(stream), CharIterator(), &builder, nlohmann::detail::input_format_t::json, true);
      return root;
    }
    // A callback that drops each record once read (Philly's jobs) keeps the enclosing array empty.
    return json::parse(
        CharIterator(stream), CharIterator(),
        [&](int depth, json::parse_event_t event, json& value) {
          if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
              depth >= kMaxJsonDepth)
            too_deep(in, stream);
          if ((++events & 0xffff) == 0) sim::check_interrupt();
          path.on(event, value);
          return callback(depth, event, value);
        },
        true);
  } catch (const json::out_of_range& e) {
    // nlohmann reports a number beyond a double (406) this way. The iterator reads one character
    // ahead of the parser: the parser's column is one less than the stream's.
    std::string what = reason(e);
    int column = stream.column() - 1;
    if (what.starts_with("number overflow parsing '")) {
      const std::string number = what.substr(what.find('\'') + 1, what.rfind('\'') - what.find('\'') - 1);
      what = "number out of range (beyond a double): " + shown_token(number, false);
      column -= static_cast<int>(number.size());  // the parser has read the character after it
    }
    throw sim::InputError(in.path(), stream.line(), std::max(1, column), path.path(), what);
  } catch (const json::parse_error& e) {
    throw sim::InputError(in.path(), stream.line(), std::max(1, stream.column() - 1), "", "invalid JSON: " + reason(e));
  } catch (const json::exception& e) {
    throw sim::InputError(in.path(), stream.line(), std::max(1, stream.column() - 1), path.path(),
                          "invalid JSON: " + reason(e));
  }
}

namespace {

// SAX events of nlohmann's parser: follows the path and stops at the value named `target`.
struct Locator {
  CharStream& stream;
  const std::string& target;
  JsonPath path;
  int line = 0, column = 0;

  bool found(int l, int c) {
    line = l;
    column = std::max(1, c);
    return false;  // stops the parser
  }
  bool value() {
    path.scalar();
    return true;
  }
  bool start(bool array) {
    // An element of an array starts at its '{' or '['. The iterator reads one character ahead of
    // the parser, so the stream's column is one past the parser's.
    if (!target.empty() && target.back() == ']' && path.path() == target)
      return found(stream.line(), stream.column() - 1);
    path.start(array);
    return true;
  }
  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(json::number_integer_t) { return value(); }
  bool number_unsigned(json::number_unsigned_t) { return value(); }
  bool number_float(json::number_float_t, const std::string&) { return value(); }
  bool string(std::string&) { return value(); }
  bool binary(json::binary_t&) { return value(); }
  bool start_object(std::size_t) { return start(false); }
  bool start_array(std::size_t) { return start(true); }
  bool end_object() {
    path.end();
    return true;
  }
  bool end_array() {
    path.end();
    return true;
  }
  bool key(std::string& k) {
    path.key(k);
    // The parser has just read the key's closing quote (and the iterator one character more).
    if (path.path() == target) return found(stream.line(), stream.column() - static_cast<int>(k.size()) - 2);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
};

}  // namespace

std::pair<int, int> json_position(const std::string& file, const std::string& target) {
  // A field that is missing is reported where its object is: the path is shortened until found.
  std::string path = target;
  for (int tries = 0; tries < 3 && !path.empty(); ++tries) {
    try {
      LineReader in(file);
      CharStream stream(in);
      Locator locator{stream, path, {}};
      (void)json::sax_parse(CharIterator(stream), CharIterator(), &locator);
      if (locator.line > 0) return {locator.line, locator.column};
    } catch (...) {
      return {0, 0};  // the file cannot be read again: the message goes without a position
    }
    const auto cut = path.find_last_of(".[");
    path.resize(cut == std::string::npos ? 0 : cut);
  }
  return {0, 0};
}

}  // namespace headroom::traces::detail
