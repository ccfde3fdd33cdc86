#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace headroom::sim {

// Bad user input: a scenario, a trace or a command-line value. Carries where it came from so the
// message names file, line and column (or row and field). Exit code 2 in the CLI.
class InputError : public std::runtime_error {
 public:
  // line/column are 1-based; 0 means unknown. `where` is a key path ("cluster.pools[0].nodes")
  // or a field name ("run time (field 4)"). Each of file, where and message is kept to 4 KiB: a
  // longer one (a file's value of megabytes quoted in it) keeps its start and end.
  InputError(std::string file, int line, int column, std::string where, std::string message);
  explicit InputError(std::string message);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& where() const { return where_; }
  const std::string& message() const { return message_; }

 private:
  struct Bounded {};  // the parts already kept to their bound
  InputError(Bounded, std::string file, int line, int column, std::string where, std::string message);
  std::string file_;
  int line_ = 0;
  int column_ = 0;
  std::string where_;
  std::string message_;
};

// Several input problems collected in one pass (e.g. scenario validation).
class InputErrors : public std::runtime_error {
 public:
  // Repeats (same file, line, column, key and message) are kept once.
  explicit InputErrors(std::vector<InputError> errors);
  const std::vector<InputError>& errors() const { return errors_; }

 private:
  struct Unique {};  // the errors hold no repeats
  InputErrors(Unique, std::vector<InputError> errors);
  std::vector<InputError> errors_;
};

// A broken invariant inside headroom: a bug, never the user's fault. Exit code 1 in the CLI.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void assertion_failed(const char* cond, const char* file, int line, const std::string& msg);

}  // namespace headroom::sim

#define HEADROOM_ASSERT(cond, msg)                                                    \
  do {                                                                                \
    if (!(cond)) ::headroom::sim::assertion_failed(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)
