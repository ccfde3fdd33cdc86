#include "apps/output_check.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "sim/errors.hpp"

namespace headroom::app {

namespace fs = std::filesystem;

namespace {

// The path with links, "." and ".." resolved as far as it exists.
fs::path resolved(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? fs::absolute(path) : p;
}

// Two names of one file: the same resolved path, or (both existing) the same inode.
bool same_file(const std::string& a, const std::string& b) {
  if (resolved(a) == resolved(b)) return true;
  std::error_code ec;
  return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec) && !ec;
}

// Whether a file may be created in `dir`: tried, not guessed from permission bits (root, read-only
// file systems, ACLs). The probe is removed at once.
bool folder_writable(const fs::path& dir) {
  const fs::path probe = dir / (".headroom-probe." + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return false;
  ::close(fd);
  ::unlink(probe.c_str());
  return true;
}

[[noreturn]] void fail(const PlannedOutput& out, const std::string& message) {
  throw sim::InputError(out.path, 0, 0, out.option, message);
}

// What an existing output path is when it is neither a regular file nor a folder (through links:
// /dev/stdout is a link to the terminal or pipe), or "" otherwise.
std::string special_kind(const std::string& path) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec || !fs::exists(st) || fs::is_regular_file(st) || fs::is_directory(st)) return {};
  if (fs::is_character_file(st)) return "a character device";
  if (fs::is_block_file(st)) return "a block device";
  if (fs::is_fifo(st)) return "a pipe (FIFO)";
  if (fs::is_socket(st)) return "a socket";
  return "not a regular file";
}

// An output is written under a temporary name and renamed into place: over a device that would
// put a regular file where the device was (run as root, `-o /dev/null` replaced /dev/null itself).
void refuse_special(const PlannedOutput& out, const std::string& path) {
  if (const std::string kind = special_kind(path); !kind.empty())
    fail(out, (path == out.path ? "output path is " : "would write " + path + ", which is ") + kind +
                  ", not a regular file: headroom writes a result under a temporary name and renames it into "
                  "place, which would replace it; give a regular file, or leave " +
                  out.option + " out to write none");
}

}  // namespace

void add_scenario_inputs(std::vector<CommandInput>& inputs, const scenarios::Scenario& scenario) {
  for (const auto& f : scenario.files) {
    bool known = false;
    for (const auto& in : inputs) known = known || in.path == f.path;
    if (!known) inputs.push_back({f.what, f.path});
  }
}

void check_outputs(const std::vector<PlannedOutput>& outputs, const std::vector<CommandInput>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& out = outputs[i];
    if (out.path.empty()) throw sim::InputError("", 0, 0, out.option, "expected a file name, got an empty path");
    for (const auto& in : inputs)
      if (!in.path.empty() && same_file(out.path, in.path))
        fail(out, "output path is the " + in.what + " " + in.path +
                      ", an input of this command; writing it would destroy the input (give another file name)");
    for (std::size_t j = 0; j < i; ++j)
      if (same_file(out.path, outputs[j].path))
        fail(out, "output path is also the output of " + outputs[j].option + "; give two different files");
    std::error_code ec;
    if (fs::is_directory(out.path, ec)) fail(out, "output path is a directory; give a file name");
    refuse_special(out, out.path);
    const fs::path dir = fs::absolute(out.path).parent_path();
    if (!fs::is_directory(dir, ec)) fail(out, "output directory does not exist");
    if (!folder_writable(dir)) fail(out, "output directory " + dir.string() + " is not writable");
  }
}

void check_output_folder(const std::string& option, const std::string& folder, const std::vector<std::string>& names,
                         const std::vector<CommandInput>& inputs) {
  const PlannedOutput out{option, folder};
  if (folder.empty()) throw sim::InputError("", 0, 0, option, "expected a folder, got an empty path");
  std::error_code ec;
  if (fs::exists(folder, ec) && !fs::is_directory(folder, ec)) fail(out, "expected a folder, got a file");
  // The nearest existing ancestor is where the folder (and its parents) would be created.
  fs::path existing = fs::absolute(folder);
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.parent_path())
    existing = existing.parent_path();
  if (!folder_writable(existing)) fail(out, "folder " + existing.string() + " is not writable");
  for (const auto& name : names) {
    const std::string path = (fs::path(folder) / name).string();
    refuse_special(out, path);
    for (const auto& in : inputs)
      if (!in.path.empty() && same_file(path, in.path))
        fail(out, "would write " + path + ", which is the " + in.what + " " + in.path +
                      ", an input of this command (give another folder)");
  }
}

std::string check_output_name(const std::string& text) {
  return text.empty() ? "expected a file name, got an empty path" : std::string();
}

}  // namespace headroom::app
