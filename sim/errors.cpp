#include "sim/errors.hpp"

namespace headroom::sim {

namespace {
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
    : std::runtime_error(compose(file, line, column, where, message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      where_(std::move(where)),
      message_(std::move(message)) {}

InputError::InputError(std::string message) : InputError("", 0, 0, "", std::move(message)) {}

InputErrors::InputErrors(std::vector<InputError> errors)
    : std::runtime_error(join(errors)), errors_(std::move(errors)) {}

void assertion_failed(const char* cond, const char* file, int line, const std::string& msg) {
  throw InternalError(std::string("internal error: ") + msg + " (" + cond + " at " + file + ":" + std::to_string(line) +
                      ")");
}

}  // namespace headroom::sim
