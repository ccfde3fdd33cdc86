// Fair-share (src/plugins/priority/multifactor/fair_tree.c: Fair Tree, _calc_tree_fs; and
// priority_multifactor.c _set_assoc_fs_factor: classic fair-share, PriorityFlags=NO_FAIR_TREE)
// over the association tree.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "policies/slurm/slurm.hpp"

namespace headroom::policies::slurm {

// ---------------------------------------------------------------------------------------------
// Fair-share arithmetic.

int AssocTree::add(const std::string& n, int par, double sh, bool user) {
  const int id = static_cast<int>(name.size());
  name.push_back(n);
  parent.push_back(par);
  shares.push_back(sh);
  is_user.push_back(user);
  children.emplace_back();
  if (par >= 0) children[static_cast<std::size_t>(par)].push_back(id);
  return id;
}

namespace {

// Subtree usage of every node from the users' usage (non-users' own entries are ignored).
std::vector<double> subtree_usage(const AssocTree& t, const std::vector<double>& usage) {
  const std::size_t n = t.name.size();
  std::vector<double> u(n, 0.0);
  // Children may be added after their parent or before; walk depth-first from root.
  std::vector<std::pair<int, bool>> stack{{0, false}};
  while (!stack.empty()) {
    auto [i, done] = stack.back();
    stack.pop_back();
    const auto si = static_cast<std::size_t>(i);
    if (done) {
      if (t.is_user[si]) {
        u[si] = si < usage.size() ? usage[si] : 0.0;
      } else {
        for (int c : t.children[si]) u[si] += u[static_cast<std::size_t>(c)];
      }
      continue;
    }
    stack.push_back({i, true});
    for (int c : t.children[si]) stack.push_back({c, false});
  }
  return u;
}

// Per association: the sum of `v` over its children, in the children's order (so every sibling
// sees the same sum as a per-sibling loop would give, once per parent instead of once per child).
std::vector<double> child_sums(const AssocTree& t, const std::vector<double>& v) {
  std::vector<double> sum(t.name.size(), 0.0);
  for (std::size_t p = 0; p < sum.size(); ++p)
    for (int c : t.children[p]) sum[p] += v[static_cast<std::size_t>(c)];
  return sum;
}

}  // namespace

std::vector<double> classic_fairshare(const AssocTree& t, const std::vector<double>& usage, double dampening) {
  const std::size_t n = t.name.size();
  const auto u = subtree_usage(t, usage);
  const double total = u[0];
  std::vector<double> s(n, 1.0), ue(n, 0.0), f(n, 1.0);
  std::vector<int> order{0};
  for (std::size_t k = 0; k < order.size(); ++k)
    for (int c : t.children[static_cast<std::size_t>(order[k])]) order.push_back(c);
  const auto shares_under = child_sums(t, t.shares);
  for (int i : order) {
    const auto si = static_cast<std::size_t>(i);
    const int p = t.parent[si];
    if (p < 0) continue;
    const auto sp = static_cast<std::size_t>(p);
    const double sib = shares_under[sp];
    const double norm = sib > 0 ? t.shares[si] / sib : 0.0;
    s[si] = s[sp] * norm;
    const double ua = total > 0 ? u[si] / total : 0.0;
    ue[si] = p == 0 ? ua : ua + (ue[sp] - ua) * norm;
    f[si] = s[si] > 0 ? std::exp2(-(ue[si] / s[si]) / dampening) : 0.0;
  }
  return f;
}

std::vector<double> fair_tree_fairshare(const AssocTree& t, const std::vector<double>& usage,
                                        std::vector<double>* level_fs) {
  const std::size_t n = t.name.size();
  const auto u = subtree_usage(t, usage);
  std::vector<double> lf(n, 0.0), f(n, 0.0);
  const auto shares_under = child_sums(t, t.shares), usage_under = child_sums(t, u);
  for (std::size_t i = 1; i < n; ++i) {
    const auto p = static_cast<std::size_t>(t.parent[i]);
    const double sib = shares_under[p];
    const double sib_usage = usage_under[p];
    const double sn = sib > 0 ? t.shares[i] / sib : 0.0;
    const double un = sib_usage > 0 ? u[i] / sib_usage : 0.0;
    lf[i] = sn == 0 ? 0.0 : (un == 0 ? std::numeric_limits<double>::infinity() : sn / un);
  }
  double users = 0;
  for (std::size_t i = 0; i < n; ++i) users += t.is_user[i] ? 1 : 0;
  double rank = users;
  // Depth-first over siblings sorted by level FS (fair_tree.c _calc_tree_fs).
  auto visit = [&](auto&& self, std::vector<int> sibs) -> void {
    std::stable_sort(sibs.begin(), sibs.end(),
                     [&](int a, int b) { return lf[static_cast<std::size_t>(a)] > lf[static_cast<std::size_t>(b)]; });
    bool have_prev = false;
    double prev_lf = 0, prev_hi = 0;
    std::size_t i = 0;
    while (i < sibs.size()) {
      const auto si = static_cast<std::size_t>(sibs[i]);
      if (t.is_user[si]) {
        if (have_prev && lf[si] == prev_lf) {
          f[si] = prev_hi / users;
        } else {
          prev_hi = rank;
          f[si] = rank / users;
        }
        rank -= 1;
        have_prev = true;
        prev_lf = lf[si];
        ++i;
        continue;
      }
      // Tied sibling accounts have their children merged.
      std::size_t j = i;
      std::vector<int> merged;
      while (j < sibs.size() && !t.is_user[static_cast<std::size_t>(sibs[j])] &&
             lf[static_cast<std::size_t>(sibs[j])] == lf[si]) {
        for (int c : t.children[static_cast<std::size_t>(sibs[j])]) merged.push_back(c);
        ++j;
      }
      const double hi = (have_prev && lf[si] == prev_lf) ? prev_hi : rank;
      self(self, merged);
      have_prev = true;
      prev_lf = lf[si];
      prev_hi = hi;
      i = j;
    }
  };
  visit(visit, t.children[0]);
  if (level_fs != nullptr) *level_fs = lf;
  return f;
}
}  // namespace headroom::policies::slurm
