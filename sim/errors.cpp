#include "sim/errors.hpp"

#include <set>
#include <tuple>

#include "sim/text.hpp"

namespace headroom::sim {

namespace {
// Each part of a message at most kMaxPart bytes: a file's value of megabytes (a policy name, a
// path, a key) is named by its start and end, not copied whole into the error. Cut on UTF-8
// character bounds, so the message stays valid UTF-8 when the value was.
constexpr std::size_t kMaxPart = 4096, kKeepHead = 3000, kKeepTail = 500;
std::string bounded(std::string text) {
  if (text.size() <= kMaxPart) return text;
  auto on_char = [&](std::size_t at) {  // back to the first byte of the character at `at`
    while (at > 0 && utf8_continuation(text[at])) --at;
    return at;
  };
  const std::size_t head = on_char(kKeepHead), tail = on_char(text.size() - kKeepTail);
  return text.substr(0, head) + "[... " + std::to_string(tail - head) + " bytes left out ...]" + text.substr(tail);
}

std::string compose(const std::string& file, int line, int column, const std::string& where,
                    const std::string& message) {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) {
      out += ':' + std::to_string(line);
      if (column > 0) out += ':' + std::to_string(column);
    }
    out += ": ";
  }
  if (!where.empty()) out += where + ": ";
  out += message;
  return out;
}

std::string join(const std::vector<InputError>& errors) {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += '\n';
    out += e.what();
  }
  return out;
}
}  // namespace

InputError::InputError(std::string file, int line, int column, std::string where, std::string message)
    : InputError(Bounded{}, bounded(std::move(file)), line, column, bounded(std::move(where)),
                 bounded(std::move(message))) {}

InputError::InputError(Bounded, std::string file, int line, int column, std::string where, std::string message)
    : std::runtime_error(compose(file, line, column, where, message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      where_(std::move(where)),
      message_(std::move(message)) {}

InputError::InputError(std::string message) : InputError("", 0, 0, "", std::move(message)) {}

namespace {

// The errors with repeats left out, in their order: one file read for two keys (a slurm.conf named
// by both cluster.slurm_conf and policy.slurm_conf) reports the same problem once.
std::vector<InputError> without_repeats(std::vector<InputError> errors) {
  std::set<std::tuple<std::string, int, int, std::string, std::string>> seen;
  std::vector<InputError> out;
  out.reserve(errors.size());
  for (auto& e : errors)
    if (seen.insert({e.file(), e.line(), e.column(), e.where(), e.message()}).second) out.push_back(std::move(e));
  return out;
}

}  // namespace

InputErrors::InputErrors(std::vector<InputError> errors) : InputErrors(Unique{}, without_repeats(std::move(errors))) {}

InputErrors::InputErrors(Unique, std::vector<InputError> errors)
    : std::runtime_error(join(errors)), errors_(std::move(errors)) {}

void assertion_failed(const char* cond, const char* file, int line, const std::string& msg) {
  throw InternalError(std::string("internal error: ") + msg + " (" + cond + " at " + file + ":" + std::to_string(line) +
                      ")");
}

}  // namespace headroom::sim
