#include "policies/slurm/hostlist.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace headroom::policies::slurm {

namespace {

// The bytes of lo..hi each written with at least `width` digits.
std::int64_t range_bytes(std::int64_t lo, std::int64_t hi, std::size_t width) {
  std::int64_t total = 0, low = 0, high = 9;  // the numbers of d digits: [low, high]
  for (std::size_t d = 1; d <= 19 && low <= hi; ++d) {
    const std::int64_t a = std::max(lo, low), b = std::min(hi, high);
    if (a <= b) total += (b - a + 1) * static_cast<std::int64_t>(std::max(width, d));
    low = high + 1;
    high = high > INT64_MAX / 10 ? INT64_MAX : high * 10 + 9;
  }
  return total;
}

}  // namespace

std::string shown(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  constexpr std::size_t kMax = 80;
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > kMax) out += "...";
  return out + "\"";
}

std::uint64_t name_hash(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

Hostlist::Hostlist(const std::string& list) {
  std::size_t i = 0;
  while (i < list.size()) {
    // One host expression: text with [ranges] brackets, up to a comma outside brackets.
    std::size_t end = i;
    int depth = 0;
    for (; end < list.size(); ++end) {
      if (list[end] == '[') ++depth;
      if (list[end] == ']') --depth;
      if (depth < 0 || depth > 1) throw std::invalid_argument("unbalanced brackets in hostlist " + shown(list));
      if (list[end] == ',' && depth == 0) break;
    }
    if (depth != 0) throw std::invalid_argument("unclosed '[' in hostlist " + shown(list));
    const std::string expr = list.substr(i, end - i);
    i = end + 1;
    if (expr.empty()) continue;
    Expr e;
    e.first = size_;
    std::size_t k = 0;
    std::string literal;
    std::int64_t literal_bytes = 0;
    std::vector<std::int64_t> bracket_bytes;  // all values of a bracket written once each
    while (k < expr.size()) {
      if (expr[k] != '[') {
        const std::size_t open = std::min(expr.find('[', k), expr.size());
        literal += expr.substr(k, open - k);
        k = open;
        continue;
      }
      const std::size_t close = expr.find(']', k);
      const std::string spec = expr.substr(k + 1, close - k - 1);
      k = close + 1;
      Bracket b;
      std::int64_t bytes = 0;
      std::size_t s = 0;
      while (s <= spec.size()) {
        const std::size_t comma = spec.find(',', s);
        const std::string r = spec.substr(s, comma == std::string::npos ? std::string::npos : comma - s);
        s = comma == std::string::npos ? spec.size() + 1 : comma + 1;
        const std::size_t dash = r.find('-');
        const std::string a = r.substr(0, dash), z = dash == std::string::npos ? a : r.substr(dash + 1);
        const auto digits = [](const std::string& x) {
          return !x.empty() && x.size() < 10 && std::all_of(x.begin(), x.end(), ::isdigit);
        };
        if (!digits(a) || !digits(z) || std::stoll(z) < std::stoll(a))
          throw std::invalid_argument("expected ranges like [1-4,7] in hostlist " + shown(list) + ", got " + shown(r));
        Range range{std::stoll(a), std::stoll(z), a.size(), b.size};
        b.size += range.hi - range.lo + 1;
        bytes += range_bytes(range.lo, range.hi, range.width);
        b.ranges.push_back(range);
        if (b.size > kMaxHosts) break;
      }
      e.size *= b.size;  // both at most kMaxHosts + a range: no overflow
      if (e.size > kMaxHosts)
        throw std::invalid_argument("hostlist " + shown(list) + " names more than 1,000,000 hosts");
      literal_bytes += static_cast<std::int64_t>(literal.size());
      e.literals.push_back(std::move(literal));
      literal.clear();
      e.brackets.push_back(std::move(b));
      bracket_bytes.push_back(bytes);
    }
    if (size_ + e.size > kMaxHosts)
      throw std::invalid_argument("hostlist " + shown(list) + " names more than 1,000,000 hosts");
    literal_bytes += static_cast<std::int64_t>(literal.size());
    e.literals.push_back(std::move(literal));
    // Each name holds every literal, and each value of a bracket appears in size / bracket-size names.
    bytes_ += e.size * literal_bytes;
    for (std::size_t g = 0; g < e.brackets.size(); ++g) bytes_ += bracket_bytes[g] * (e.size / e.brackets[g].size);
    for (std::size_t g = e.brackets.size(); g-- > 1;)
      e.brackets[g - 1].stride = e.brackets[g].stride * e.brackets[g].size;  // at most e.size
    size_ += e.size;
    exprs_.push_back(std::move(e));
  }
}

std::string Hostlist::name(std::int64_t k) const {
  std::string out;
  name_into(k, out);
  return out;
}

void Hostlist::name_into(std::int64_t k, std::string& out) const {
  const auto e =
      std::upper_bound(exprs_.begin(), exprs_.end(), k, [](std::int64_t v, const Expr& x) { return v < x.first; }) - 1;
  // The bracket values, last bracket fastest.
  out.assign(e->literals[0]);
  for (std::size_t g = 0; g < e->brackets.size(); ++g) {
    const std::int64_t at = (k - e->first) / e->brackets[g].stride % e->brackets[g].size;
    const auto& ranges = e->brackets[g].ranges;
    const auto r = std::upper_bound(ranges.begin(), ranges.end(), at,
                                    [](std::int64_t v, const Range& x) { return v < x.before; }) -
                   1;
    char digits[24];
    const char* end = std::to_chars(digits, digits + sizeof digits, r->lo + (at - r->before)).ptr;
    const auto n = static_cast<std::size_t>(end - digits);
    if (n < r->width) out.append(r->width - n, '0');
    out.append(digits, n);
    out += e->literals[g + 1];
  }
}

}  // namespace headroom::policies::slurm
