// slurm.conf and gres.conf, read as slurmctld reads them (slurm.conf(5), gres.conf(5)): one
// `Key=Value ...` record a line, '#' starts a comment, a trailing '\' continues the line, keys are
// case-insensitive, `Include FILE` reads another file (relative to slurm.conf's folder). Global
// keys the slurm policy models become its parameters; NodeName and PartitionName records become
// node pools and partitions.
// Long file: the three site-file readers share the record reader, the hostlist counting and the
// hostile-input checks (issue #31) that keep them in step with slurmctld; split along those seams
// (reader, slurm.conf, pipe tables) when it grows further.
#include "policies/slurm/slurm_conf.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "policies/common/param_text.hpp"
#include "policies/slurm/hostlist.hpp"
#include "policies/slurm/slurm.hpp"
#include "sim/errors.hpp"
#include "sim/read_text.hpp"
#include "sim/text.hpp"

namespace headroom::policies::slurm {

namespace {

constexpr int kMaxIncludeDepth = 16;
constexpr std::size_t kMaxConfBytes = std::size_t{256} << 20;  // slurm.conf and its Includes together
// The scenario's own limits (models/cluster.hpp): a site file may describe no larger a cluster
// than a scenario may.
constexpr std::int64_t kMaxHosts = Hostlist::kMaxHosts;
// The names of all NodeName lines together: a million names of 64 bytes. Names are not held (they
// are made again from their line's hostlist when needed), but hashing, pool naming and lookups
// take time in proportion.
constexpr std::int64_t kMaxNodeNameBytes = 64LL << 20;
// The names of the hostlists of partitions, NodeSets and gres.conf lines together, each made to
// be looked up: twenty lists of the largest names NodeName lines may define.
constexpr std::int64_t kMaxMembershipNameBytes = 20 * kMaxNodeNameBytes;
constexpr std::int64_t kMaxGpusPerNode = models::kMaxNodeGpus;
constexpr std::int64_t kMaxCpusPerNode = models::kMaxNodeCpus;
// NodeName's Weight: a uint32 (INFINITE, its largest value, is read as one less).
constexpr std::int64_t kMaxNodeWeight = 4'294'967'295;
// Node memberships (a node in a partition, a gres.conf line applied to a node) of all lines
// together: a 1 MiB file of `PartitionName=pN Nodes=ALL` lines over a million nodes must not run
// for hours. Twenty partitions over the largest cluster a scenario allows.
constexpr std::int64_t kMaxMemberships = 20'000'000;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  return out;
}

// A PriorityWeightTRES weight as slurmctld reads it (_tres_weight_item, SchedMD/slurm
// src/common/slurm_protocol_api.c): strtod, then a unit letter (K, M, G, T or P, any case) that
// divides the weight by 1024 for each step above the TRES's base unit (MB for Mem, none for CPU and
// GRES/gpu; get_convert_unit_val): "Mem=2G" weighs 2/1024, "Mem=2M" and "Mem=2" weigh 2. The weight
// in shortest decimal form; "" when the text is no such number (the policy's check then names it).
std::string slurm_tres_weight(std::string_view tres, const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  double w = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(w)) return "";
  if (*end != '\0') {
    const std::string_view units = "KMGTP";
    const auto unit = units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(*end))));
    if (unit == std::string_view::npos || end[1] != '\0') return "";
    const std::size_t base = tres == "mem" ? 2 : 0;  // UNIT_MEGA for mem, UNIT_NONE for the others
    for (std::size_t step = base; step < unit + 1; ++step) w /= 1024.0;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, w);
  return std::string(buf, r.ptr);
}

struct Item {
  std::string key;  // as written
  std::string value;
};

struct Record {
  std::string file;
  int line = 0;
  std::vector<Item> items;
  const std::string* get(std::string_view key) const {
    for (const auto& i : items)
      if (lower(i.key) == key) return &i.value;
    return nullptr;
  }
};

[[noreturn]] void fail(const std::string& file, int line, const std::string& msg) {
  throw sim::InputError(file, line, 0, "", msg);
}

bool space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Splits a logical line into Key=Value items as parse_config.c's keyvalue_pattern does
// (SchedMD/slurm src/common/parse_config.c): a key of letters, digits, '_' and '.', optional space
// around '=', then a "quoted" value or one without space. What does not match is slurmctld's
// "Parse error in file ... line N", so an error here.
std::vector<Item> tokenize(const std::string& text, const std::string& file, int line) {
  std::vector<Item> out;
  std::size_t i = 0;
  const auto word_at = [&](std::size_t at) {
    std::size_t e = at;
    while (e < text.size() && !space(text[e])) ++e;
    return text.substr(at, e - at);
  };
  while (true) {
    while (i < text.size() && space(text[i])) ++i;
    if (i >= text.size()) break;
    const std::size_t key_at = i;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_' || text[i] == '.'))
      ++i;
    std::string key = text.substr(key_at, i - key_at);
    std::size_t j = i;
    while (j < text.size() && space(text[j])) ++j;
    if (j < text.size() && std::string_view("+-*/").find(text[j]) != std::string_view::npos && j + 1 < text.size() &&
        text[j + 1] == '=')
      ++j;  // `Key+=Value`: an operator scontrol reads; the value is taken as written
    if (key.empty() || j >= text.size() || text[j] != '=')
      fail(file, line, "expected Key=Value, got " + shown(word_at(key_at)));
    i = j + 1;
    while (i < text.size() && space(text[i])) ++i;
    std::string value;
    if (i < text.size() && text[i] == '"') {
      const std::size_t close = text.find('"', i + 1);
      if (close == std::string::npos) fail(file, line, "a quote is not closed");
      value = text.substr(i + 1, close - i - 1);
      i = close + 1;
      if (i < text.size() && !space(text[i]))
        fail(file, line, key + ": expected a space after the closing quote, got " + shown(word_at(key_at)));
    } else {
      value = word_at(i);
      // `Key= Other=...` or `Key=` at the end: no value (slurmctld: a parse error).
      if (value.empty() || (i > j + 1 && value.find('=') != std::string::npos))
        fail(file, line, key + ": no value after '='");
      i += value.size();
    }
    out.push_back({std::move(key), std::move(value)});
  }
  return out;
}

// What reads slurm.conf and the files it includes.
struct ConfReader {
  // slurm.conf's folder: a relative Include names a file there, whichever file includes it
  // (get_extra_conf_path, SchedMD/slurm src/common/read_config.c).
  std::filesystem::path root;
  std::vector<std::string>* files = nullptr;  // every file read, in order
  std::vector<std::string> reading;           // the files being read (outermost first), as resolved
  std::size_t bytes = 0;                      // read so far, every file together
};

// Reads `path` into records. `from`/`from_line` name the Include line that named it (empty for
// slurm.conf and gres.conf); what goes wrong opening the file is said at that line.
void read_file(ConfReader& reader, const std::filesystem::path& path, const std::string& from, int from_line,
               const std::string& named, std::vector<Record>& out) {
  const std::string file = path.string();
  const auto fail_open = [&](const std::string& why) {
    if (from.empty()) fail(file, 0, why);
    fail(from, from_line, "Include " + named + ": " + why + " (" + file + ")");
  };
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status))
    fail_open("a folder, not a file (slurmctld reads nothing from it; Include names one file)");
  if (!std::filesystem::exists(status)) fail_open("no such file");
  std::string canonical = std::filesystem::weakly_canonical(path, ec).string();
  if (ec) canonical = file;
  if (std::find(reader.reading.begin(), reader.reading.end(), canonical) != reader.reading.end())
    fail_open("the file includes itself (an Include loop)");
  if (static_cast<int>(reader.reading.size()) > kMaxIncludeDepth) fail_open("Include nests more than 16 files deep");
  std::ifstream file_in(path, std::ios::binary);
  if (!file_in) fail_open(from.empty() ? "cannot read the Slurm configuration file" : "cannot read the file");
  // Each file, and all of them together, within a bound: an Include of a device or of a log, or a
  // file that includes a large one many times, is refused there, not read until memory runs out.
  std::string text;
  try {
    text = sim::read_capped(file_in, file, sim::kMaxSiteFileBytes, "a Slurm configuration file");
  } catch (const sim::InputError& e) {
    if (from.empty()) throw;
    fail_open(e.message());  // said at the Include line, as a file that cannot be opened is
  }
  std::istringstream in(std::move(text));
  reader.bytes += in.view().size();
  if (reader.bytes > kMaxConfBytes)
    fail_open("the configuration files read so far hold more than " + std::to_string(kMaxConfBytes >> 20) +
              " MiB together (a large file included many times?)");
  if (std::find(reader.files->begin(), reader.files->end(), file) == reader.files->end()) reader.files->push_back(file);
  reader.reading.push_back(canonical);
  std::string raw, logical;
  int line = 0, start = 0;
  while (std::getline(in, raw)) {
    ++line;
    // parse_config.c matches keys as [[:alnum:]_.]+ from the line's start: with a byte-order mark
    // before the first key, slurmctld stops with "Parse error in file ... line 1".
    if (line == 1 && raw.rfind("\xEF\xBB\xBF", 0) == 0)
      fail(file, 1,
           "the file starts with a UTF-8 byte-order mark (bytes EF BB BF), which slurmctld cannot parse (\"Parse error "
           "in file ... line 1\"): save it without one");
    if (const auto nul = raw.find('\0'); nul != std::string::npos)
      fail(file, line, "a NUL byte at column " + std::to_string(nul + 1) + " (not a text file?)");
    bool in_quote = false;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '"') in_quote = !in_quote;
      if (raw[i] == '#' && !in_quote) {
        raw.resize(i);
        break;
      }
    }
    if (const auto bad = sim::utf8_error(raw); bad != std::string::npos) {
      fail(file, line,
           "byte " + sim::hex_byte(static_cast<unsigned char>(raw[bad])) + " at column " + std::to_string(bad + 1) +
               " is not UTF-8 (names must be UTF-8 text: save the file as UTF-8)");
    }
    if (logical.empty()) start = line;
    // A trailing '\' (spaces and CR after it allowed) continues the line (_strip_continuation).
    std::size_t last = raw.size();
    while (last > 0 && space(raw[last - 1])) --last;
    const bool more = last > 0 && raw[last - 1] == '\\';
    if (more) {
      raw.resize(last - 1);
    } else if (!raw.empty() && raw.back() == '\r') {
      raw.pop_back();
    }
    logical += raw;
    if (more) continue;
    const std::string text = std::move(logical);
    logical.clear();
    std::size_t first = 0;
    while (first < text.size() && space(text[first])) ++first;
    if (first == text.size()) continue;
    // `Include FILE` (any case, then space): _parse_include_directive in parse_config.c.
    if (text.size() > first + 7 && lower(text.substr(first, 7)) == "include" && space(text[first + 7])) {
      std::vector<std::string> words;
      for (std::size_t i = first + 7; i < text.size();) {
        while (i < text.size() && space(text[i])) ++i;
        const std::size_t b = i;
        while (i < text.size() && !space(text[i])) ++i;
        if (i > b) words.push_back(text.substr(b, i - b));
      }
      if (words.size() != 1)
        fail(file, start, "expected `Include FILE`, got " + std::to_string(words.size()) + " words after Include");
      if (words[0].find('*') != std::string::npos)
        fail(file, start,
             "Include " + words[0] + ": slurmctld does not expand globs (\"Slurm does not support glob parsing\")");
      std::filesystem::path inc = words[0];
      if (inc.is_relative()) inc = reader.root / inc;
      read_file(reader, inc, file, start, words[0], out);
      continue;
    }
    std::vector<Item> items = tokenize(text, file, start);
    if (items.empty()) continue;
    out.push_back({file, start, std::move(items)});
  }
  reader.reading.pop_back();
}

std::int64_t to_int(const Record& r, const std::string& key, const std::string& v, std::int64_t lo, std::int64_t hi) {
  std::int64_t n = 0;
  const char* end = v.data() + v.size();
  auto [p, ec] = std::from_chars(v.data(), end, n);
  if (ec != std::errc() || p != end || v.empty() || n < lo || n > hi)
    fail(r.file, r.line,
         key + ": expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got " + shown(v));
  return n;
}

// What a node's Gres= says of its GPUs.
struct Gres {
  std::int64_t gpus = 0;
  std::string type;  // the one type named; empty when none or several
  // Each type named and its count, in the order first named ("" for untyped items): a node of
  // several types (gpu:tesla:2,gpu:kepler:2) is one node per type (see read_slurm_conf).
  std::vector<std::pair<std::string, std::int64_t>> types;
  std::vector<std::string> sharing;  // the mps and shard items as written (GPU sharing)
};

// "gpu:a100:8,gpu:2(S:0-1),mps:100" -> GPUs by type. A count may carry a size suffix as
// suffix_mult reads it (SchedMD/slurm src/common/slurm_protocol_defs.c: k or KiB = 1024, kb =
// 1000, m, g, t, p likewise): gpu:2k is 2048 GPUs, refused with the value above the scenario's
// per-node limit.
Gres parse_gres(const Record& r, const std::string& text) {
  Gres g;
  std::int64_t& gpus = g.gpus;
  std::string& type = g.type;
  bool several = false;
  std::size_t at = 0;
  while (at <= text.size()) {
    std::size_t end = at;
    int depth = 0;
    for (; end < text.size(); ++end) {
      if (text[end] == '(') ++depth;
      if (text[end] == ')') depth = std::max(depth - 1, 0);
      if (text[end] == ',' && depth == 0) break;
    }
    std::string item = text.substr(at, end - at);
    at = end + 1;
    item = item.substr(0, item.find('('));
    const auto c1 = item.find(':');
    if (item.substr(0, c1) == "mps" || item.substr(0, c1) == "shard") g.sharing.push_back(item);
    if (item.substr(0, c1) == "gpu") {
      std::string t, count = "1";
      if (c1 != std::string::npos) {
        const std::string rest = item.substr(c1 + 1);
        const auto c2 = rest.find(':');
        if (c2 != std::string::npos) {
          t = rest.substr(0, c2);
          count = rest.substr(c2 + 1);
        } else if (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest[0]))) {
          count = rest;
        } else {
          t = rest;
        }
      }
      std::size_t digits = 0;
      while (digits < count.size() && std::isdigit(static_cast<unsigned char>(count[digits]))) ++digits;
      static const std::map<std::string, std::int64_t> kSuffix = {{"", 1},
                                                                  {"k", 1024},
                                                                  {"kib", 1024},
                                                                  {"kb", 1000},
                                                                  {"m", 1 << 20},
                                                                  {"mib", 1 << 20},
                                                                  {"mb", 1'000'000},
                                                                  {"g", 1 << 30},
                                                                  {"gib", 1 << 30},
                                                                  {"gb", 1'000'000'000},
                                                                  {"t", 1LL << 40},
                                                                  {"tib", 1LL << 40},
                                                                  {"tb", 1'000'000'000'000},
                                                                  {"p", 1LL << 50},
                                                                  {"pib", 1LL << 50},
                                                                  {"pb", 1'000'000'000'000'000}};
      const auto mult = kSuffix.find(lower(count.substr(digits)));
      if (digits == 0 || mult == kSuffix.end())
        fail(r.file, r.line, "Gres: expected a GPU count like gpu:8 or gpu:a100:8, got " + shown(item));
      std::int64_t n = 0;
      const auto [p, ec] = std::from_chars(count.data(), count.data() + digits, n);
      if (ec != std::errc() || n > kMaxGpusPerNode * 2 || n * mult->second > kMaxGpusPerNode * 2 ||
          gpus + n * mult->second > kMaxGpusPerNode)
        fail(r.file, r.line,
             "Gres: " + shown(text) + " gives a node more than " + std::to_string(kMaxGpusPerNode) +
                 " GPUs (the most a scenario's pool may have per node)");
      gpus += n * mult->second;
      if (!t.empty()) {
        if (!type.empty() && type != t) several = true;
        if (type.empty()) type = t;
      }
      const auto same = std::find_if(g.types.begin(), g.types.end(), [&](const auto& x) { return x.first == t; });
      if (same == g.types.end()) {
        g.types.emplace_back(t, n * mult->second);
      } else {
        same->second += n * mult->second;
      }
    }
    if (end >= text.size()) break;
  }
  if (several) type.clear();
  if (!several) g.types.clear();
  return g;
}

// "gpu01","gpu02","gpu04" -> "gpu[01-02,04]" when they share a prefix and digit width; the
// `count` names come one at a time from name_at(i), in order.
template <class NameAt>
std::string compress_hostlist(std::size_t count, const NameAt& name_at) {
  std::string out;
  std::size_t i = 0;
  while (i < count) {
    const std::string n = name_at(i);
    std::size_t d = n.size();
    while (d > 0 && std::isdigit(static_cast<unsigned char>(n[d - 1]))) --d;
    if (d == n.size() || n.size() - d > 18) {  // no number, or one too long to count with
      out += (out.empty() ? "" : ",") + n;
      ++i;
      continue;
    }
    const std::string prefix = n.substr(0, d);
    const std::size_t width = n.size() - d;
    std::vector<std::pair<std::string, std::string>> ranges;
    std::size_t j = i;
    std::int64_t prev = -2;
    // Zero-padded numbers keep their width; unpadded ones (9, 10) go together.
    const bool padded = width > 1 && n[d] == '0';
    for (; j < count; ++j) {
      const std::string m = j == i ? n : name_at(j);
      if (m.size() <= prefix.size() || m.compare(0, prefix.size(), prefix) != 0) break;
      const std::string digits = m.substr(prefix.size());
      if (!std::all_of(digits.begin(), digits.end(), ::isdigit)) break;
      const bool m_padded = digits.size() > 1 && digits[0] == '0';
      if (digits.size() > 18 || (padded ? digits.size() != width : m_padded)) break;
      const std::int64_t v = std::stoll(digits);
      if (v == prev + 1 && !ranges.empty()) {
        ranges.back().second = digits;
      } else {
        ranges.emplace_back(digits, digits);
      }
      prev = v;
    }
    std::string body;
    for (const auto& [a, b] : ranges) body += (body.empty() ? "" : ",") + (a == b ? a : a + "-" + b);
    const bool bracket = ranges.size() > 1 || ranges[0].first != ranges[0].second;
    out += (out.empty() ? "" : ",") + prefix + (bracket ? "[" + body + "]" : body);
    i = j;
  }
  return out;
}

// What one NodeName line says of each of its nodes (kept once, not once a node: a line may name a
// million nodes).
struct NodeLine {
  const Record* record = nullptr;
  Hostlist hosts;
  std::int64_t first_gpu_node = -1;  // its first node in the GPU nodes (they follow in order); -1: no GPUs
  std::int64_t gpus = 0;
  std::string gpu_type;
  std::vector<std::pair<std::string, std::int64_t>> gpu_types;  // several types: each and its count
  std::int64_t cpus = 0;
  std::int64_t memory_mib = 0;
  std::int64_t weight = 1;
  std::set<std::string> features;  // Feature= (for NodeSet=... Feature=...)
};

// A node with GPUs (nodes without are only counted: they never make a pool).
struct NodeDef {
  int line_index = 0;                     // into the NodeLines
  std::uint32_t k = 0;                    // its name is the line's hosts.name(k)
  const std::string* gpu_type = nullptr;  // the line's, or gres.conf's Type= when the line names none
  std::vector<int> partitions;            // indices of the partitions, ascending
};

// Every defined node by name (duplicates, and the names partitions and gres.conf lines give): 16
// bytes a node and a table of 4-byte slots at most half full. No name is held: one whose hash
// matches is made again from its line's hostlist and compared.
class NodeIndex {
 public:
  struct Entry {
    std::uint64_t hash = 0;
    std::uint32_t line = 0;  // into the NodeLines
    std::uint32_t k = 0;     // the line's hosts.name(k)
  };
  explicit NodeIndex(const std::vector<NodeLine>& lines) : lines_(lines) {}

  // The node named `name`, or nullptr.
  const Entry* find(const std::string& name) const {
    if (slots_.empty()) return nullptr;
    const std::uint64_t h = name_hash(name);
    for (std::size_t s = h & (slots_.size() - 1);; s = (s + 1) & (slots_.size() - 1)) {
      if (slots_[s] == kEmpty) return nullptr;
      const Entry& e = entries_[slots_[s]];
      if (e.hash == h && lines_[e.line].hosts.name(e.k) == name) return &e;
    }
  }
  // Adds the node `name` (the line's k-th); when a node of that name is there already, adds nothing
  // and returns it.
  const Entry* add(const std::string& name, std::uint32_t line, std::uint32_t k) {
    if ((entries_.size() + 1) * 2 > slots_.size()) grow();
    const std::uint64_t h = name_hash(name);
    for (std::size_t s = h & (slots_.size() - 1);; s = (s + 1) & (slots_.size() - 1)) {
      if (slots_[s] == kEmpty) {
        slots_[s] = static_cast<std::uint32_t>(entries_.size());
        entries_.push_back({h, line, k});
        return nullptr;
      }
      const Entry& e = entries_[slots_[s]];
      if (e.hash == h && lines_[e.line].hosts.name(e.k) == name) return &e;
    }
  }

 private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  void grow() {
    slots_.assign(std::max<std::size_t>(1024, slots_.size() * 2), kEmpty);
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      std::size_t s = entries_[i].hash & (slots_.size() - 1);
      while (slots_[s] != kEmpty) s = (s + 1) & (slots_.size() - 1);
      slots_[s] = static_cast<std::uint32_t>(i);
    }
  }
  const std::vector<NodeLine>& lines_;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> slots_;
};

// Keys of slurm.conf that change scheduling but are not modelled: listed once as a warning.
const std::set<std::string>& unmodelled_keys() {
  static const std::set<std::string> k = {"defmempercpu",
                                          "defmempernode",

                                          "maxmempercpu",
                                          "maxmempernode",
                                          "enforcepartlimits",
                                          "overtimelimit",
                                          "accountingstorageenforce",
                                          "topologyplugin",
                                          "topologyparam",
                                          "priorityparameters",
                                          "prioritysitefactorplugins",
                                          "prioritysitefactorparameters",
                                          "jobrequeue"};
  return k;
}

// SchedulerParameters items that change no scheduling decision: accepted without a warning.
const std::set<std::string>& quiet_scheduler_parameters() {
  static const std::set<std::string> k = {"nohold_on_prolog_fail", "enable_user_top",        "salloc_wait_nodes",
                                          "sbatch_wait_nodes",     "requeue_setup_env_fail", "max_script_size"};
  return k;
}

// Partition fields the policy models, by lower-case name, and the parameter each becomes
// (partitions.<name>.<Field>); Nodes, Priority and OverSubscribe are read apart.
const std::map<std::string, std::string>& partition_fields() {
  static const std::map<std::string, std::string> k = {{"prioritytier", "PriorityTier"},
                                                       {"priorityjobfactor", "PriorityJobFactor"},
                                                       {"maxtime", "MaxTime"},
                                                       {"defaulttime", "DefaultTime"},
                                                       {"default", "Default"},
                                                       {"gracetime", "GraceTime"},
                                                       {"state", "State"},
                                                       {"defcpupergpu", "DefCpuPerGPU"},
                                                       {"defmempergpu", "DefMemPerGPU"}};
  return k;
}

// Records read as a whole but left out, with one warning.
constexpr std::array<std::string_view, 3> kUnreadRecords = {"frontendname", "downnodes", "switchname"};

// NodeName fields read (read_slurm_conf takes them by these lower-case names).
constexpr std::array<std::string_view, 11> kNodeFields = {"gres",    "cpus",           "procs",          "boards",
                                                          "sockets", "corespersocket", "threadspercore", "realmemory",
                                                          "weight",  "feature",        "state"};

// Partition fields that change scheduling but are not modelled.
const std::set<std::string>& unmodelled_partition_fields() {
  static const std::set<std::string> k = {"allowaccounts", "allowgroups",   "allowqos",           "denyaccounts",
                                          "denyqos",       "maxnodes",      "minnodes",           "maxcpuspernode",
                                          "qos",           "preemptmode",   "tresbillingweights", "lln",
                                          "maxmempercpu",  "defmempercpu",  "exclusiveuser",      "reqresv",

                                          "maxmempernode", "defmempernode", "maxcpuspersocket"};
  return k;
}

}  // namespace

std::vector<std::string> expand_hostlist(const std::string& list) {
  const Hostlist hosts(list);
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(hosts.size()));
  for (std::int64_t k = 0; k < hosts.size(); ++k) out.push_back(hosts.name(k));
  return out;
}

SlurmConfImport read_slurm_conf(const std::string& path) {
  SlurmConfImport out;
  ConfReader reader;
  reader.root = std::filesystem::path(path).parent_path();
  reader.files = &out.files;
  std::vector<Record> records;
  read_file(reader, path, "", 0, "", records);
  std::set<std::string> warned;
  auto warn_once = [&](const Record& r, const std::string& key, const std::string& what) {
    if (!warned.insert(lower(key)).second) return;
    out.warnings.push_back(r.file + ":" + std::to_string(r.line) + ": " + what);
  };
  auto set_param = [&](const Record& r, const std::string& key, const std::string& value) {
    out.params[key] = ParamValue{value, r.file, r.line, 0};
  };
  // Global keys the policy models, by lower-case name.
  std::map<std::string, std::string> modelled;
  for (const auto& k : param_keys())
    if (k.find('.') == std::string::npos) modelled[lower(k)] = k;

  std::vector<NodeLine> node_lines;
  std::vector<NodeDef> nodes;  // the nodes with GPUs, in file order
  NodeIndex node_at(node_lines);
  std::int64_t defined = 0, name_bytes = 0;  // nodes of all NodeName lines, and their names' bytes
  std::map<std::string, std::string> node_default, part_default;
  struct Part {
    const Record* record;
    std::map<std::string, std::string> fields;  // lower-case key -> value
    std::string name;
  };
  std::vector<Part> parts;
  struct NodeSet {
    const Record* record;
    std::string nodes, feature;  // Nodes= hostlist, Feature= name
  };
  std::map<std::string, NodeSet> nodesets;  // NodeSet name -> its record
  for (const Record& r : records) {
    const std::string head = lower(r.items[0].key);
    if (head == "nodename") {
      std::map<std::string, std::string> f = node_default;
      for (std::size_t i = 1; i < r.items.size(); ++i) f[lower(r.items[i].key)] = r.items[i].value;
      const std::string& list = r.items[0].value;
      if (list == "DEFAULT" || list == "default") {
        node_default = f;
        continue;
      }
      NodeLine d;
      d.record = &r;
      if (f.count("gres")) {
        Gres g = parse_gres(r, f["gres"]);
        d.gpus = g.gpus;
        d.gpu_type = std::move(g.type);
        d.gpu_types = std::move(g.types);
        if (!d.gpu_types.empty()) {
          std::string types;
          for (const auto& [t, n] : d.gpu_types) types += (types.empty() ? "" : ", ") + t + ":" + std::to_string(n);
          warn_once(r, "gres-several-types",
                    "NodeName " + list + ": GPUs of several types (" + types +
                        ") on one node: read as one node per type (pools named <nodes>-<type>), the node's CPUs and "
                        "memory shared out by GPU count; an untyped request for more GPUs on one node than one type "
                        "has does not fit there (Slurm would give it GPUs of both types)");
        }
        for (const std::string& item : g.sharing) {
          const std::string kind = item.substr(0, item.find(':'));
          warn_once(r, "gres-" + kind,
                    "Gres " + item + ": GPU sharing by " +
                        (kind == "mps" ? "CUDA MPS (gres/mps)" : "shards (gres/shard)") +
                        " is not modelled; jobs are given whole GPUs");
        }
      }
      if (f.count("cpus")) {
        d.cpus = to_int(r, "CPUs", f["cpus"], 0, kMaxCpusPerNode);
      } else if (f.count("procs")) {
        d.cpus = to_int(r, "Procs", f["procs"], 0, kMaxCpusPerNode);
      } else if (f.count("sockets") || f.count("corespersocket") || f.count("threadspercore")) {
        const auto get = [&](const char* k) {
          return f.count(k) ? to_int(r, k, f[k], 1, kMaxCpusPerNode) : std::int64_t{1};
        };
        const std::int64_t factors[] = {get("boards"), get("sockets"), get("corespersocket"), get("threadspercore")};
        d.cpus = 1;
        for (const std::int64_t n : factors) {
          d.cpus *= n;  // at most kMaxCpusPerNode squared: no overflow
          if (d.cpus > kMaxCpusPerNode)
            fail(r.file, r.line,
                 "Boards x Sockets x CoresPerSocket x ThreadsPerCore = " + std::to_string(factors[0]) + " x " +
                     std::to_string(factors[1]) + " x " + std::to_string(factors[2]) + " x " +
                     std::to_string(factors[3]) + " CPUs, more than " + std::to_string(kMaxCpusPerNode) +
                     " (the most a scenario's pool may have per node)");
        }
      }
      if (f.count("realmemory")) d.memory_mib = to_int(r, "RealMemory", f["realmemory"], 0, 1'000'000'000'000);
      // Weight is a uint32 (SchedMD/slurm src/common/read_config.c reads it with s_p_get_uint32 and
      // turns INFINITE into INFINITE - 1): sites write weights such as 127207.
      if (f.count("weight")) {
        d.weight = to_int(r, "Weight", f["weight"], 0, kMaxNodeWeight);
        if (d.weight == kMaxNodeWeight) d.weight = kMaxNodeWeight - 1;
      }
      if (f.count("feature")) {
        for (auto& feature : sim::split_on(f["feature"], ','))
          if (!feature.empty()) d.features.insert(std::move(feature));
      }
      if (f.count("state") && lower(f["state"]) == "future") continue;  // not yet in service
      if (f.count("state") && lower(f["state"]) == "cloud")
        warn_once(r, "state=cloud",
                  "State=CLOUD nodes are counted as powered up: power saving (a node booted for a job, "
                  "ResumeTimeout, SuspendTime) is not modelled");
      try {
        d.hosts = Hostlist(list);
      } catch (const std::invalid_argument& e) {
        fail(r.file, r.line, std::string("NodeName: ") + e.what());
      }
      if (defined + d.hosts.size() > kMaxHosts)
        fail(r.file, r.line, "NodeName " + shown(list) + ": more than 1,000,000 nodes with this line");
      name_bytes += d.hosts.name_bytes();
      if (name_bytes > kMaxNodeNameBytes)
        fail(r.file, r.line,
             "NodeName " + shown(list) + ": the node names of all NodeName lines take more than " +
                 std::to_string(kMaxNodeNameBytes) + " bytes (64 MiB) together with this line");
      const int line_index = static_cast<int>(node_lines.size());
      if (d.gpus > 0) d.first_gpu_node = static_cast<std::int64_t>(nodes.size());
      node_lines.push_back(std::move(d));
      const NodeLine& line = node_lines.back();
      std::string n;  // one buffer for the line's names
      for (std::int64_t k = 0; k < line.hosts.size(); ++k) {
        line.hosts.name_into(k, n);
        // slurmctld: "Duplicated NodeName %s in the config file", fatal (src/common/read_config.c).
        if (const auto* had = node_at.add(n, static_cast<std::uint32_t>(line_index), static_cast<std::uint32_t>(k))) {
          const Record& first = *node_lines[had->line].record;
          fail(r.file, r.line,
               "node " + shown(n) + " is defined twice (first at " + first.file + ":" + std::to_string(first.line) +
                   ")");
        }
        if (line.gpus > 0) nodes.push_back({line_index, static_cast<std::uint32_t>(k), nullptr, {}});
      }
      defined += line.hosts.size();
      if (line.gpus == 0) out.cpu_only_nodes += line.hosts.size();
    } else if (head == "partitionname") {
      std::map<std::string, std::string> f = part_default;
      for (std::size_t i = 1; i < r.items.size(); ++i) f[lower(r.items[i].key)] = r.items[i].value;
      if (r.items[0].value == "DEFAULT" || r.items[0].value == "default") {
        part_default = f;
        continue;
      }
      // slurmctld stops on a second PartitionName line of the same name ("duplicate entry for
      // partition", _build_single_partitionline_info in SchedMD/slurm src/slurmctld/read_config.c).
      for (const Part& p : parts)
        if (p.name == r.items[0].value)
          fail(r.file, r.line,
               "partition " + shown(p.name) + " is defined twice (first at " + p.record->file + ":" +
                   std::to_string(p.record->line) + "); slurmctld stops on a duplicate partition");
      parts.push_back({&r, f, r.items[0].value});
    } else if (head == "nodeset") {
      // NodeSet=name Nodes=hostlist | Feature=name: a name partitions' Nodes= may use for those nodes.
      NodeSet ns{&r, {}, {}};
      for (std::size_t i = 1; i < r.items.size(); ++i) {
        const std::string k = lower(r.items[i].key);
        if (k == "nodes")
          ns.nodes = r.items[i].value;
        else if (k == "feature")
          ns.feature = r.items[i].value;
      }
      if (ns.nodes.empty() == ns.feature.empty())
        fail(r.file, r.line, "NodeSet " + r.items[0].value + ": expected Nodes= or Feature= (one of them)");
      if (!nodesets.emplace(r.items[0].value, ns).second)
        fail(r.file, r.line, "NodeSet " + r.items[0].value + " is defined twice");
    } else if (std::find(kUnreadRecords.begin(), kUnreadRecords.end(), head) != kUnreadRecords.end()) {
      warn_once(r, head, r.items[0].key + " records are not read");
    } else {
      for (const auto& it : r.items) {
        const std::string k = lower(it.key);
        if (k == "schedulerparameters") {
          // The items the policy models are kept; the others warn once each (those that do not
          // change a scheduling decision are accepted quietly), as every other key of the file.
          const std::set<std::string>& kQuiet = quiet_scheduler_parameters();
          std::string kept;
          for (const std::string& item : sim::split_on(it.value, ',')) {
            if (item.empty()) continue;
            const std::string name = item.substr(0, item.find('='));
            if (std::find(kSchedulerParameters.begin(), kSchedulerParameters.end(), name) !=
                kSchedulerParameters.end()) {
              kept += (kept.empty() ? "" : ",") + item;
            } else if (!kQuiet.count(name)) {
              warn_once(r, "SchedulerParameters." + name,
                        "SchedulerParameters item " + item + " changes scheduling and is not modelled");
            }
          }
          if (!kept.empty()) set_param(r, "SchedulerParameters", kept);
        } else if (auto m = modelled.find(k);
                   m != modelled.end() && (k == "priorityweighttres" || k == "tresbillingweights")) {
          // Weights of the TRES the policy counts (CPU, Mem, GRES/gpu) are kept; those of other TRES
          // (GRES/gpu:l40s, Node, License/..., billing) warn once each. Slurm finds a TRES by its
          // type and name in any case (assoc_mgr_find_tres_pos, xstrcasecmp: its own testsuite sets
          // "cPu=1"), so a kept item is written with the policy's name for it.
          std::string kept;
          for (const std::string& item : sim::split_on(it.value, ',')) {
            if (item.empty()) continue;
            const std::size_t eq = item.find('=');
            const std::string tres = lower(item.substr(0, eq));
            if (tres == "cpu" || tres == "mem" || tres == "gres/gpu") {
              const std::string name = tres == "cpu" ? "CPU" : tres == "mem" ? "Mem" : "GRES/gpu";
              std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
              if (k == "priorityweighttres" && eq != std::string::npos) {
                // slurmctld's unit rule; TRESBillingWeights keeps the policy's (Mem per GB, a G
                // suffix dropped), the key being the policy's own (Slurm's is per partition).
                const std::string w = slurm_tres_weight(tres, value);
                if (!w.empty()) value = w;
              }
              kept += (kept.empty() ? "" : ",") + name + (eq == std::string::npos ? "" : "=" + value);
            } else {
              warn_once(r, it.key + "." + tres,
                        it.key + " item " + item + " is not modelled (the weights of CPU, Mem and GRES/gpu are)");
            }
          }
          if (!kept.empty()) set_param(r, m->second, kept);
        } else if (auto m = modelled.find(k); m != modelled.end()) {
          set_param(r, m->second, it.value);
        } else if (k == "authinfo") {
          const auto at = it.value.find("cred_expire=");
          if (at != std::string::npos) {
            std::string v = it.value.substr(at + 12);
            set_param(r, "cred_expire", v.substr(0, v.find(',')));
          }
        } else if (k == "priorityweightassoc") {
          set_param(r, "PriorityWeightAssoc", it.value);
        } else if (unmodelled_keys().count(k)) {
          warn_once(r, it.key, it.key + "=" + it.value + " changes scheduling and is not modelled");
        }
      }
    }
  }
  // Work spent on memberships (a partition's nodes, a gres.conf line's nodes), bounded whatever the
  // files hold.
  std::int64_t memberships = 0, membership_bytes = 0;
  const auto spend = [&](const Record& r, std::int64_t n) {
    memberships += n;
    if (memberships > kMaxMemberships)
      fail(r.file, r.line,
           "more than " + std::to_string(kMaxMemberships) +
               " node memberships (nodes of all partitions and gres.conf lines together) with this line");
  };
  // A hostlist of a partition, NodeSet or gres.conf line, its names' work spent.
  const auto member_list = [&](const Record& r, const std::string& list) {
    Hostlist hosts(list);
    spend(r, hosts.size());
    membership_bytes += hosts.name_bytes();
    if (membership_bytes > kMaxMembershipNameBytes)
      fail(r.file, r.line,
           "the node names of all partitions, NodeSets and gres.conf lines take more than " +
               std::to_string(kMaxMembershipNameBytes) + " bytes (1280 MiB) together with this line");
    return hosts;
  };
  // The index into `nodes` of the node named `name` that has GPUs; -1 when it has none, -2 when no
  // NodeName line defines it.
  const auto gpu_node = [&](const std::string& name) -> std::int64_t {
    const auto* e = node_at.find(name);
    if (e == nullptr) return -2;
    const NodeLine& l = node_lines[e->line];
    return l.first_gpu_node < 0 ? -1 : l.first_gpu_node + e->k;
  };
  for (auto& n : nodes) {
    const NodeLine& l = node_lines[n.line_index];
    if (!l.gpu_type.empty()) n.gpu_type = &l.gpu_type;
  }
  // gres.conf beside slurm.conf: GPU types for nodes whose Gres names none. slurmctld fails on a
  // gres.conf it cannot read ("error opening/reading", SchedMD/slurm src/interfaces/gres.c); a
  // folder there is refused too, since nothing would be read from it.
  const std::filesystem::path gres = reader.root / "gres.conf";
  std::vector<Record> grecs;
  std::error_code ec;
  if (std::filesystem::exists(gres, ec)) read_file(reader, gres, "", 0, "", grecs);
  for (const Record& r : grecs) {
    if (const std::string* detect = r.get("autodetect"); detect != nullptr && lower(*detect) != "off")
      warn_once(r, "gres-autodetect",
                "AutoDetect=" + *detect +
                    ": what the node's library would detect is not known here; the GPUs are slurm.conf's Gres= "
                    "counts, typed by Gres= or by gres.conf's Type=");
    const std::string* name = r.get("name");
    if (name != nullptr && (*name == "mps" || *name == "shard"))
      warn_once(r, "gres-" + *name,
                "Name=" + *name + ": GPU sharing by " +
                    (*name == "mps" ? "CUDA MPS (gres/mps)" : "shards (gres/shard)") +
                    " is not modelled; jobs are given whole GPUs");
    if (name == nullptr || *name != "gpu") continue;
    const std::string* type = r.get("type");
    if (type == nullptr) continue;
    // A node slurm.conf gives untyped GPUs takes the first Type= gres.conf names for it; a second,
    // different one (a node of several types) is said once.
    const auto give = [&](NodeDef& nd) {
      if (nd.gpu_type == nullptr) {
        nd.gpu_type = type;
      } else if (*nd.gpu_type != *type && node_lines[nd.line_index].gpu_type.empty() &&
                 node_lines[nd.line_index].gpu_types.empty()) {
        warn_once(r, "gres-conf-several-types",
                  "gres.conf names GPUs of types " + *nd.gpu_type + " and " + *type + " for node " +
                      node_lines[nd.line_index].hosts.name(nd.k) + ", whose slurm.conf Gres= names no type: read as " +
                      *nd.gpu_type + " (write Gres=gpu:TYPE:N,gpu:TYPE:N in slurm.conf to split them)");
      }
    };
    const std::string* list = r.get("nodename");
    if (list == nullptr) {
      spend(r, defined);
      for (auto& nd : nodes) give(nd);
      continue;
    }
    try {
      const Hostlist targets = member_list(r, *list);
      for (std::int64_t k = 0; k < targets.size(); ++k)
        if (const auto i = gpu_node(targets.name(k)); i >= 0) give(nodes[i]);
    } catch (const std::invalid_argument& e) {
      fail(r.file, r.line, std::string("NodeName: ") + e.what());
    }
  }
  // Partition membership.
  for (std::size_t pi = 0; pi < parts.size(); ++pi) {
    const Part& p = parts[pi];
    const Record& r = *p.record;
    const auto join = [&](std::size_t node) {
      auto& of = nodes[node].partitions;
      if (of.empty() || of.back() != static_cast<int>(pi)) of.push_back(static_cast<int>(pi));
    };
    const auto join_name = [&](const std::string& m) {
      const auto i = gpu_node(m);
      if (i == -2) {
        warn_once(r, "unknown-node-" + p.name,
                  "partition " + p.name + " names node \"" + m + "\", which no NodeName line defines");
        return;
      }
      if (i >= 0) join(static_cast<std::size_t>(i));
    };
    const auto nit = p.fields.find("nodes");
    if (nit == p.fields.end() || is_all_nodes(nit->second)) {
      spend(r, defined);
      for (std::size_t i = 0; i < nodes.size(); ++i) join(i);
      continue;
    }
    try {
      const Hostlist members = member_list(r, nit->second);
      for (std::int64_t mk = 0; mk < members.size(); ++mk) {
        const std::string m = members.name(mk);
        const auto set = nodesets.find(m);
        if (set == nodesets.end()) {
          join_name(m);
        } else if (!set->second.feature.empty()) {
          spend(r, defined);
          for (std::size_t i = 0; i < nodes.size(); ++i)
            if (node_lines[nodes[i].line_index].features.count(set->second.feature)) join(i);
        } else {
          try {
            const Hostlist set_nodes = member_list(r, set->second.nodes);
            for (std::int64_t k = 0; k < set_nodes.size(); ++k) join_name(set_nodes.name(k));
          } catch (const std::invalid_argument& e) {
            fail(set->second.record->file, set->second.record->line, std::string("Nodes: ") + e.what());
          }
        }
      }
    } catch (const std::invalid_argument& e) {
      fail(r.file, r.line, std::string("Nodes: ") + e.what());
    }
  }
  // Pools: nodes with GPUs, grouped by (NodeName line, partitions), in file order.
  std::vector<std::pair<int, std::vector<int>>> keys;
  std::map<std::pair<int, std::vector<int>>, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    NodeDef& n = nodes[i];
    std::sort(n.partitions.begin(), n.partitions.end());
    n.partitions.erase(std::unique(n.partitions.begin(), n.partitions.end()), n.partitions.end());
    std::pair<int, std::vector<int>> key{n.line_index, n.partitions};
    auto [at, added] = groups.try_emplace(key);
    if (added) keys.push_back(std::move(key));
    at->second.push_back(i);
  }
  std::map<std::string, std::vector<std::string>> pools_of_partition;
  for (const auto& key : keys) {
    const auto& idx = groups[key];
    const NodeDef& first = nodes[idx.front()];
    const NodeLine& line = node_lines[first.line_index];
    models::NodePool pool;
    // "gpu[01-04,07]" -> "gpu01-04_07": brackets are hostlist syntax in topology node names.
    pool.name = compress_hostlist(idx.size(), [&](std::size_t i) {
      const NodeDef& n = nodes[idx[i]];
      return node_lines[n.line_index].hosts.name(n.k);
    });
    std::replace(pool.name.begin(), pool.name.end(), ',', '_');
    pool.name.erase(std::remove_if(pool.name.begin(), pool.name.end(), [](char c) { return c == '[' || c == ']'; }),
                    pool.name.end());
    pool.nodes = static_cast<std::int32_t>(idx.size());
    pool.gpus_per_node = static_cast<std::int32_t>(line.gpus);
    pool.gpu_type = first.gpu_type == nullptr || first.gpu_type->empty() ? "gpu" : *first.gpu_type;
    pool.cpus_per_node = static_cast<std::int32_t>(line.cpus);
    pool.memory_gib = line.memory_mib / 1024;
    // A node of several GPU types (Gres=gpu:tesla:2,gpu:kepler:2) is one node per type, so that
    // --gres=gpu:kepler:N finds its kepler GPUs: the pools <name>-<type>, the node's CPUs and memory
    // shared out by GPU count.
    std::vector<models::NodePool> split;
    for (const auto& [type, count] : line.gpu_types) {
      models::NodePool part = pool;
      part.name = pool.name + "-" + (type.empty() ? "gpu" : type);
      part.gpus_per_node = static_cast<std::int32_t>(count);
      part.gpu_type = type.empty() ? "gpu" : type;
      part.cpus_per_node = static_cast<std::int32_t>(line.cpus * count / line.gpus);
      part.memory_gib = line.memory_mib * count / line.gpus / 1024;
      split.push_back(std::move(part));
    }
    if (split.empty()) split.push_back(pool);
    for (const auto& p : split) {
      out.cluster.pools.push_back(p);
      if (line.weight != 1)
        out.params["nodes." + p.name + ".Weight"] =
            ParamValue{std::to_string(line.weight), line.record->file, line.record->line, 0};
      for (const int pi : first.partitions) pools_of_partition[parts[pi].name].push_back(p.name);
    }
  }
  // Several partitions with Default=YES: slurmctld keeps the last one it reads as the default
  // ("changing default partition from A to B", _build_single_partitionline_info in SchedMD/slurm
  // src/slurmctld/read_config.c), so the earlier ones are read as Default=NO, said once.
  const auto says_yes = [](const std::string& v) {  // the values the policy reads as YES
    const std::string u = lower(v);
    return u == "yes" || u == "true" || u == "1";
  };
  const Part* default_part = nullptr;
  for (const Part& p : parts)
    if (const auto d = p.fields.find("default"); d != p.fields.end() && says_yes(d->second)) default_part = &p;
  for (const Part& p : parts) {
    const Record& r = *p.record;
    const auto& pools = pools_of_partition[p.name];
    if (pools.empty()) {
      warn_once(r, "partition-" + p.name, "partition " + p.name + " has no GPU nodes; left out");
      continue;
    }
    std::string list;
    for (const auto& n : pools) list += (list.empty() ? "" : ", ") + n;
    set_param(r, "partitions." + p.name + ".Nodes", "[" + list + "]");
    for (const auto& [k, v] : p.fields) {
      const std::map<std::string, std::string>& kFields = partition_fields();
      if (k == "default" && says_yes(v) && &p != default_part) {
        warn_once(r, "part-default-" + p.name,
                  "partition " + p.name + ": Default=YES here and on partition " + default_part->name + " (" +
                      default_part->record->file + ":" + std::to_string(default_part->record->line) +
                      "): slurmctld keeps the last one read, " + default_part->name + ", as the default");
      } else if (auto f = kFields.find(k); f != kFields.end()) {
        set_param(r, "partitions." + p.name + "." + f->second, v);
      } else if (k == "priority") {  // before Slurm 16.05: both tier and job factor
        set_param(r, "partitions." + p.name + ".PriorityTier", v);
        set_param(r, "partitions." + p.name + ".PriorityJobFactor", v);
      } else if (k == "oversubscribe" || k == "shared") {
        const std::string u = lower(v);
        if (u == "exclusive" || u == "no") {
          set_param(r, "partitions." + p.name + ".OverSubscribe", u == "no" ? "NO" : "EXCLUSIVE");
        } else {
          warn_once(r, "part-oversubscribe", "partition OverSubscribe=" + v + " is not modelled (NO, EXCLUSIVE are)");
        }
      } else if (unmodelled_partition_fields().count(k)) {
        warn_once(r, "part-" + k, "partition field " + k + "=" + v + " changes scheduling and is not modelled");
      }
    }
  }
  if (out.cluster.pools.empty())
    fail(path, 0,
         "no GPU nodes: no NodeName line has a Gres=gpu:... (" + std::to_string(out.cpu_only_nodes) +
             " CPU-only nodes)");
  return out;
}

namespace {

// A '|' table with a header row (sacctmgr -P, sshare -P): the rows as maps from lower-case
// column name to the cell (leading spaces kept), with their line numbers.
struct PipeTable {
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<int> lines;
};

PipeTable read_pipe_table(const std::string& path, std::initializer_list<const char*> required) {
  std::ifstream file_in(path, std::ios::binary);
  if (!file_in) fail(path, 0, "cannot read the file");
  std::istringstream in(sim::read_capped(file_in, path, sim::kMaxTableBytes, "a sacctmgr or sshare table"));
  PipeTable t;
  std::vector<std::string> header;
  std::string raw;
  int line = 0;
  while (std::getline(in, raw)) {
    ++line;
    // sacctmgr and sshare print no byte-order mark; one added by an editor is dropped, as CR line
    // ends are, so that the file reads as the clean one.
    if (line == 1 && raw.rfind("\xEF\xBB\xBF", 0) == 0) raw.erase(0, 3);
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (const auto nul = raw.find('\0'); nul != std::string::npos)
      fail(path, line, "a NUL byte at column " + std::to_string(nul + 1) + " (not a text file?)");
    if (raw.find_first_not_of(" \t") == std::string::npos) continue;
    auto cells = sim::split_on(raw, '|');
    // `-p` (not -P) ends every line with the delimiter.
    const std::size_t want = header.empty() ? cells.size() : header.size();
    if (cells.size() > 1 && cells.back().empty() && (header.empty() || cells.size() == want + 1)) cells.pop_back();
    if (header.empty()) {
      for (auto& c : cells) header.push_back(lower(c));
      for (const char* r : required)
        if (std::find(header.begin(), header.end(), r) == header.end())
          fail(path, line,
               std::string("missing column \"") + r + "\" in the header (export with -P, which prints one)");
      continue;
    }
    if (cells.size() != header.size())
      fail(
          path, line,
          "expected " + std::to_string(header.size()) + " cells as in the header, got " + std::to_string(cells.size()));
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (const auto bad = sim::utf8_error(cells[i]); bad != std::string::npos)
        fail(path, line,
             header[i] + ": " + shown(cells[i]) + " is not UTF-8 text (names must be UTF-8: save the file as UTF-8)");
      row[header[i]] = cells[i];
    }
    t.rows.push_back(std::move(row));
    t.lines.push_back(line);
  }
  if (header.empty()) fail(path, 0, "empty file; expected a header row");
  return t;
}

// "1-00:00:00", "00:05:00" -> whole seconds; empty -> empty.
std::string seconds_of(const std::string& path, int line, const std::string& key, const std::string& v) {
  if (v.empty()) return v;
  const auto t = parse_slurm_time(v, sim::kSecond);
  if (!t || *t < 0) fail(path, line, key + ": expected a time like 00:05:00, got \"" + v + "\"");
  return std::to_string(*t / sim::kSecond);
}

}  // namespace

SlurmConfImport read_sacctmgr_qos(const std::string& path) {
  const PipeTable t = read_pipe_table(path, {"name"});
  SlurmConfImport out;
  out.files.push_back(path);
  std::set<std::string> warned;
  std::map<std::string, int> qos_line;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    const int line = t.lines[i];
    const std::string name = std::string(trim(row.at("name")));
    if (name.empty()) fail(path, line, "Name: empty QOS name");
    // QOS names are unique in slurmdbd, so sacctmgr cannot print one twice: a damaged or edited file.
    if (const auto [at, added] = qos_line.emplace(name, line); !added)
      fail(path, line,
           "QOS " + shown(name) + " appears twice (first at line " + std::to_string(at->second) +
               "); sacctmgr prints each QOS once");
    const auto set = [&](const std::string& field, const std::string& v) {
      if (!v.empty()) out.params["qos." + name + "." + field] = ParamValue{v, path, line, 0};
    };
    for (const auto& [col, v] : row) {
      if (v.empty() || col == "name" || col == "preemptmode" || col == "id" || col == "description") continue;
      if (col == "priority") {
        set("Priority", v);
      } else if (col == "preempt") {
        set("Preempt", v);
      } else if (col == "usagefactor") {
        set("UsageFactor", v);
      } else if (col == "gracetime") {
        set("GraceTime", seconds_of(path, line, "GraceTime", v));
      } else if (col == "preemptexempttime") {
        set("PreemptExemptTime", v);
      } else if (col == "maxjobspu") {
        set("MaxJobsPerUser", v);
      } else if (col == "maxtrespu") {
        // "cpu=64,gres/gpu=8": the GPUs are modelled (policies/slurm/limits.hpp), the rest is not.
        std::string rest;
        for (const std::string& part : sim::split_on(v, ',')) {
          const std::string item = std::string(trim(part));
          if (item.empty()) continue;
          if (item.rfind("gres/gpu=", 0) == 0) {
            set("MaxGPUsPerUser", item.substr(9));
          } else {
            rest += (rest.empty() ? "" : ",") + item;
          }
        }
        if (!rest.empty() && warned.insert(col + ":" + rest).second)
          out.warnings.push_back(path + ":" + std::to_string(line) + ": QOS MaxTRESPU=" + rest + " (QOS " + name +
                                 ") changes scheduling and is not modelled (gres/gpu is)");
      } else if (col == "usagethres" || col == "flags" || col.rfind("grp", 0) == 0 || col.rfind("max", 0) == 0 ||
                 col.rfind("min", 0) == 0) {
        if (warned.insert(col).second)
          out.warnings.push_back(path + ":" + std::to_string(line) + ": QOS " + col + "=" + v + " (QOS " + name +
                                 ") changes scheduling and is not modelled");
      }
    }
  }
  return out;
}

SlurmConfImport read_sshare(const std::string& path) {
  const PipeTable t = read_pipe_table(path, {"account", "user", "rawshares", "rawusage"});
  SlurmConfImport out;
  out.files.push_back(path);
  std::vector<std::pair<std::size_t, std::string>> stack;  // (depth, account)
  std::map<std::string, std::vector<std::string>> users;
  std::map<std::string, int> account_line;
  std::set<std::string> has_user_rows;
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::string, int>> account_usage;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& row = t.rows[i];
    const int line = t.lines[i];
    const std::string& acc_cell = row.at("account");
    const std::size_t depth = acc_cell.find_first_not_of(' ');
    const std::string account = std::string(trim(acc_cell));
    const std::string user = std::string(trim(row.at("user")));
    const std::string shares = std::string(trim(row.at("rawshares")));
    const std::string usage = std::string(trim(row.at("rawusage")));
    if (account.empty() || depth == std::string::npos) fail(path, line, "Account: empty");
    if (account == "root" && user.empty()) continue;
    const auto num = [&](const std::string& col, const std::string& v) {
      if (v.empty() || v == "parent") return;
      double d = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
      if (ec != std::errc() || p != v.data() + v.size() || !std::isfinite(d) || d < 0)
        fail(path, line, col + ": expected a number, got \"" + v + "\"");
    };
    num("RawShares", shares);
    num("RawUsage", usage);
    if (!user.empty()) {
      // sshare prints a user's row under its account's: an account no row declared is a damaged file.
      if (account != "root" && !account_line.count(account))
        fail(path, line,
             "user " + shown(user) + " of account " + shown(account) +
                 ", which no earlier row declares (sshare -a prints an account's row before its users')");
      users[account].push_back(user);
      has_user_rows.insert(account);
      if (!usage.empty() && usage != "0") out.params["usage." + user] = ParamValue{usage, path, line, 0};
      continue;
    }
    while (!stack.empty() && stack.back().first >= depth) stack.pop_back();
    const std::string parent = stack.empty() ? "root" : stack.back().second;
    stack.emplace_back(depth, account);
    if (account_line.count(account)) fail(path, line, "account \"" + account + "\" appears twice");
    account_line[account] = line;
    order.push_back(account);
    out.params["accounts." + account + ".parent"] = ParamValue{parent, path, line, 0};
    if (!shares.empty() && shares != "parent") {
      std::string whole = shares.substr(0, shares.find('.'));
      out.params["accounts." + account + ".shares"] = ParamValue{whole, path, line, 0};
    }
    if (!usage.empty() && usage != "0") account_usage[account] = {usage, line};
  }
  for (const auto& a : order) {
    if (users.count(a)) {
      std::string list;
      for (const auto& u : users[a]) list += (list.empty() ? "" : ", ") + u;
      out.params["accounts." + a + ".users"] = ParamValue{"[" + list + "]", path, account_line[a], 0};
    }
    // An account's usage seeds the account's own leaf only when no user row holds it.
    if (!has_user_rows.count(a) && account_usage.count(a))
      out.params["usage." + a] = ParamValue{account_usage[a].first, path, account_usage[a].second, 0};
  }
  return out;
}

std::string site_keys_markdown() {
  const auto join = [](const auto& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + std::string(i);
    return out;
  };
  std::vector<std::string> modelled;
  for (const auto& k : param_keys())
    if (k.find('.') == std::string::npos && k != "cred_expire" && k != "slurm_conf" && k != "will_run_groups" &&
        k != "first_pass_backfill")
      modelled.push_back(k);
  std::vector<std::string> part_read = {"nodes", "priority", "oversubscribe (shared): no, exclusive"};
  for (const auto& [k, v] : partition_fields()) part_read.push_back(k);
  std::string out;
  out += "| File, record | Read (modelled) | Warned once (changes scheduling, not modelled) | Accepted quietly |\n";
  out += "|---|---|---|---|\n";
  out += "| slurm.conf, global keys | " + join(modelled) + ", AuthInfo (its cred_expire=) | " +
         join(unmodelled_keys()) +
         "; PriorityWeightTRES and TRESBillingWeights items other than CPU, Mem, GRES/gpu | every other key |\n";
  out += "| slurm.conf, SchedulerParameters items | " + join(kSchedulerParameters) + " | every other item | " +
         join(quiet_scheduler_parameters()) + " |\n";
  out += "| slurm.conf, NodeName | " + join(kNodeFields) +
         " (State=FUTURE: not in service yet) | State=CLOUD (counted as powered up); Gres mps and shard items; a node "
         "of several GPU types (read as one node per type) | every other field |\n";
  out += "| slurm.conf, PartitionName | " + join(part_read) + " | " + join(unmodelled_partition_fields()) +
         "; oversubscribe other than no, exclusive; a partition without GPU nodes (left out); Default=YES on a "
         "partition before another that has it (the last one read is the default, as in slurmctld) | every other "
         "field |\n";
  out +=
      "| slurm.conf, other records | Include, NodeSet (nodes, feature) | " + join(kUnreadRecords) + " (not read) | |\n";
  out +=
      "| gres.conf | Name=gpu with Type= (and NodeName=): the type of nodes whose Gres names none | Name=mps, "
      "Name=shard, AutoDetect=; a second Type= for one node | every other line |\n";
  out +=
      "\nRefused, naming file:line (slurmctld refuses them too, or they could not be read safely): a NodeName or "
      "PartitionName defined twice, a byte-order mark, a NUL byte, bytes that are not UTF-8, an Include of a "
      "folder, of a glob, of itself or more than " +
      std::to_string(kMaxIncludeDepth) + " deep, a hostlist of more than " + std::to_string(kMaxHosts) +
      " names (all NodeName lines together too), node names of more than " + std::to_string(kMaxNodeNameBytes) +
      " bytes together, more than " + std::to_string(kMaxGpusPerNode) + " GPUs or " + std::to_string(kMaxCpusPerNode) +
      " CPUs on a node, more than " + std::to_string(kMaxMemberships) + " node memberships, a key without a value.\n";
  return out;
}

}  // namespace headroom::policies::slurm
