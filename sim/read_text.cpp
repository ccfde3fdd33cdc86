#include "sim/read_text.hpp"

#include <algorithm>
#include <array>

#include "sim/errors.hpp"

namespace headroom::sim {

std::string read_capped(std::istream& in, const std::string& file, std::size_t max_bytes, std::string_view what) {
  std::string text;
  std::array<char, 1 << 16> chunk{};
  while (in) {
    // Never more than one byte past the bound: that byte is enough to know the input is longer.
    const std::size_t room = max_bytes + 1 - text.size();
    in.read(chunk.data(), static_cast<std::streamsize>(std::min(chunk.size(), room)));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(max_bytes), '\n');
      const std::string bound = max_bytes % (std::size_t{1} << 20) == 0 ? std::to_string(max_bytes >> 20) + " MiB"
                                                                        : std::to_string(max_bytes) + " bytes";
      throw InputError(file, static_cast<int>(std::min<std::ptrdiff_t>(line, 1 << 30)), 0, "",
                       "more than " + bound + ", far more than " + std::string(what) +
                           " ever holds: a device, an endless pipe or a log named in its place?");
    }
  }
  if (in.bad()) throw InputError(file, 0, 0, "", "cannot read " + std::string(what) + " (a read error)");
  return text;
}

}  // namespace headroom::sim
