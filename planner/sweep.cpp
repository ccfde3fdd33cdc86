#include "planner/sweep.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <filesystem>
#include <limits>
#include <mutex>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "planner/compare.hpp"
#include "planner/run.hpp"
#include "results/check.hpp"
#include "results/hdf5_io.hpp"
#include "sim/errors.hpp"
#include "sim/interrupt.hpp"
#include "sim/parallel.hpp"
#include "sim/text.hpp"

namespace headroom::planner {

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : path) {
    if (c == '.') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::string yaml_text(const YAML::Node& n) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

bool as_index(const std::string& s, std::size_t& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// The named elements of the lists one tree's keys went through, by the path of the list ("tenants"):
// name -> index of the last element of that name. A point puts every swept key into one tree, and
// each key into a list of named elements (tenants.<name>.weight) would otherwise scan that list:
// V keys into lists of N elements, V x N.
class ListNames {
 public:
  // The index of the last element of `list` (at `path`) named `name`, or list.size().
  std::size_t find(const std::string& path, const YAML::Node& list, const std::string& name) {
    auto [it, added] = lists_.try_emplace(path);
    if (added)
      for (std::size_t e = 0; e < list.size(); ++e) {
        const YAML::Node element = list[e];
        if (!element.IsMap()) continue;
        const YAML::Node n = element["name"];
        if (n && n.IsScalar()) it->second[n.Scalar()] = e;
      }
    const auto hit = it->second.find(name);
    return hit == it->second.end() ? list.size() : hit->second;
  }
  // A value was put at `path`: a list at or below it was replaced, and a list whose element (or an
  // element's name) it was may hold other names now. Those are read again when next used.
  void changed(const std::string& path) {
    auto under = [](const std::string& a, const std::string& b) {  // b is a or below it
      return b.size() >= a.size() && b.compare(0, a.size(), a) == 0 && (b.size() == a.size() || b[a.size()] == '.');
    };
    std::erase_if(lists_, [&](const auto& entry) {
      const std::string& list = entry.first;
      if (under(path, list)) return true;
      if (!under(list, path)) return false;
      const std::string below = path.substr(list.size() + 1);  // "<element>" or "<element>.<rest>"
      const std::size_t dot = below.find('.');
      return dot == std::string::npos || below.compare(dot + 1, std::string::npos, "name") == 0;
    });
  }

 private:
  std::unordered_map<std::string, std::unordered_map<std::string, std::size_t>> lists_;
};

// Puts `value` at `segs` below `root` (`names`: the lists of this tree met so far). Returns "" or
// why the path does not exist.
std::string set_path(YAML::Node root, const std::vector<std::string>& segs, const YAML::Node& value, ListNames& names) {
  YAML::Node cur;
  cur.reset(root);
  std::string at;                  // the path of cur
  auto put = [&](auto&& assign) {  // the value, at the last segment below cur
    assign();
    names.changed(at.empty() ? segs.back() : at + "." + segs.back());
    return std::string();
  };
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const std::string& seg = segs[i];
    const bool last = i + 1 == segs.size();
    if (seg.empty()) return "empty segment in the key path";
    if (cur.IsSequence()) {
      std::size_t idx = cur.size();
      std::size_t k;
      if (as_index(seg, k))
        idx = k;
      else
        idx = names.find(at, cur, seg);
      if (idx >= cur.size()) return "no list element named \"" + seg + "\"";
      if (last) return put([&] { cur[idx] = value; });
      YAML::Node next = cur[idx];
      cur.reset(next);
    } else if (cur.IsMap() || cur.IsNull()) {
      if (last) return put([&] { cur[seg] = value; });
      if (!cur[seg] || cur[seg].IsScalar()) {
        if (cur[seg] && cur[seg].IsScalar() && segs[0] == "policy" && i == 0) {
          // `policy: fifo` written as a scalar: turn it into {name: fifo} before descending.
          YAML::Node m(YAML::NodeType::Map);
          m["name"] = cur[seg].Scalar();
          cur[seg] = m;
        } else if (cur[seg]) {
          return "\"" + seg + "\" is a value, not a map";
        }
      }
      YAML::Node next = cur[seg];
      cur.reset(next);
    } else {
      return "\"" + seg + "\" is a value, not a map";
    }
    at += (at.empty() ? "" : ".") + seg;
  }
  return "empty key path";
}

std::string describe(const SweepSpec& spec, const SweepPoint& p) {
  std::string out;
  for (std::size_t v = 0; v < spec.variables.size(); ++v)
    out += (out.empty() ? "" : ", ") + spec.variables[v].path + "=" + spec.variables[v].values[p.choice[v]];
  out += std::string(out.empty() ? "" : ", ") + "seed=" + std::to_string(p.seed);
  return out;
}

}  // namespace

SweepSpec load_sweep(const std::string& path) {
  return load_sweep(scenarios::load_scenario(path), path);  // validates everything else
}

SweepSpec load_sweep(const scenarios::Scenario& base, const std::string& path) {
  SweepSpec spec;
  spec.file = path;
  spec.text = base.text;
  const YAML::Node root = YAML::Load(spec.text);
  std::vector<sim::InputError> errors;
  auto err = [&](const YAML::Node& n, const std::string& where, const std::string& msg) {
    errors.emplace_back(path, n.Mark().line + 1, n.Mark().column + 1, where, msg);
  };
  std::optional<YAML::Node> variant_seeds;  // the key of `variants: {seed: [...]}` when given
  // Each key is tried with its first value on one copy of the file, in order, as a point is made
  // (point_scenario). The value put in is a copy too: a node of `root` put into `probe` would merge
  // every node of root's into probe's (yaml-cpp keeps one node set per document and merges them
  // on assignment), and then root's into the next copy's, so that V keys cost V^2 file sizes.
  YAML::Node probe = YAML::Clone(root);
  ListNames probe_names;
  if (const YAML::Node v = root["variants"]) {
    if (!v.IsMap()) {
      err(v, "variants", "expected a map of key path to list of values");
    } else {
      for (const auto& kv : v) {
        const std::string key = kv.first.Scalar();
        if (key == "seed") {  // the seeds to run, as `seeds: [...]` (issue #20)
          variant_seeds = kv.first;
          if (!kv.second.IsSequence() || kv.second.size() == 0) {
            err(kv.second, "variants.seed", "expected a non-empty list of seeds, e.g. [1, 2, 3]");
            continue;
          }
          for (const auto& e : kv.second) {
            std::uint64_t seed = 0;
            if (!e.IsScalar() || !YAML::convert<std::uint64_t>::decode(e, seed) ||
                (!e.Scalar().empty() && e.Scalar()[0] == '-'))
              err(e, "variants.seed", "expected a non-negative integer seed, got \"" + yaml_text(e) + "\"");
            else
              spec.seeds.push_back(seed);
          }
          continue;
        }
        Variable var;
        var.path = key;
        var.line = kv.first.Mark().line + 1;
        var.column = kv.first.Mark().column + 1;
        if (!kv.second.IsSequence() || kv.second.size() == 0) {
          err(kv.second, "variants." + key, "expected a non-empty list of values, e.g. [16, 24, 32]");
          continue;
        }
        for (const auto& val : kv.second) var.values.push_back(yaml_text(val));
        if (std::string why = set_path(probe, split_path(key), YAML::Clone(kv.second[0]), probe_names); !why.empty()) {
          err(kv.first, "variants." + key, "cannot vary this key: " + why);
          continue;
        }
        spec.variables.push_back(std::move(var));
      }
    }
  }
  if (const YAML::Node s = root["seeds"]; s && variant_seeds) {
    err(*variant_seeds, "variants.seed",
        "the seeds are given twice, here and under `seeds:` (line " + std::to_string(s.Mark().line + 1) +
            "); keep one");
  } else if (s) {
    if (s.IsScalar()) {
      std::uint64_t n = 0;
      if (!YAML::convert<std::uint64_t>::decode(s, n) || n == 0 || n > 100000) {
        err(s, "seeds", "expected a number of seeds >= 1 or a list of seeds, got \"" + s.Scalar() + "\"");
      } else {
        for (std::uint64_t i = 0; i < n; ++i) spec.seeds.push_back(base.seed + i);
      }
    } else if (s.IsSequence() && s.size() > 0) {
      for (const auto& e : s) {
        std::uint64_t v = 0;
        if (!e.IsScalar() || !YAML::convert<std::uint64_t>::decode(e, v) ||
            (!e.Scalar().empty() && e.Scalar()[0] == '-'))
          err(e, "seeds", "expected a non-negative integer seed");
        else
          spec.seeds.push_back(v);
      }
    } else {
      err(s, "seeds", "expected a number of seeds >= 1 or a list of seeds");
    }
  }
  if (spec.seeds.empty()) spec.seeds.push_back(base.seed);
  // Bounded: every point is made before the runs, and each run's figures are kept until the table
  // is written (a few kilobytes a run).
  if (errors.empty()) {
    unsigned __int128 runs = spec.seeds.size();
    for (const auto& v : spec.variables) runs = std::min<unsigned __int128>(runs * v.values.size(), UINT64_MAX);
    if (runs > static_cast<unsigned __int128>(kMaxSweepRuns)) {
      const bool by_variants = static_cast<bool>(root["variants"]);
      const YAML::Node at = by_variants ? root["variants"] : root["seeds"];
      const std::string count = runs > static_cast<unsigned __int128>(INT64_MAX)
                                    ? "more than " + sim::thousands(INT64_MAX)
                                    : sim::thousands(static_cast<std::int64_t>(runs));
      err(at, by_variants ? "variants" : "seeds",
          "the values and seeds make " + count + " runs, more than the " + sim::thousands(kMaxSweepRuns) +
              " one sweep holds (each run's figures are kept until the table is written): give fewer values or "
              "seeds, or split the values over several sweeps");
    }
  }
  if (!errors.empty()) throw sim::InputErrors(std::move(errors));
  return spec;
}

std::vector<SweepPoint> expand(const SweepSpec& spec) {
  std::vector<SweepPoint> out;
  std::vector<std::size_t> choice(spec.variables.size(), 0);
  while (true) {
    for (std::uint64_t seed : spec.seeds) out.push_back(SweepPoint{out.size(), choice, seed});
    std::size_t v = spec.variables.size();
    while (v > 0) {
      --v;
      if (++choice[v] < spec.variables[v].values.size()) break;
      choice[v] = 0;
      if (v == 0) return out;
    }
    if (spec.variables.empty()) return out;
  }
}

scenarios::Scenario point_scenario(const SweepSpec& spec, const SweepPoint& point) {
  // The point's scenario; with `skip` (a variable's index) that variable is left as the file has it.
  auto build = [&](std::size_t skip) {
    YAML::Node root = YAML::Load(spec.text);  // not the file again: it may have changed since
    root.remove("variants");
    root.remove("seeds");
    ListNames names;
    for (std::size_t v = 0; v < spec.variables.size(); ++v) {
      if (v == skip) continue;
      const auto& var = spec.variables[v];
      const std::string why = set_path(root, split_path(var.path), YAML::Load(var.values[point.choice[v]]), names);
      if (!why.empty()) throw sim::InputError(spec.file, var.line, var.column, "variants." + var.path, why);
    }
    root["seed"] = point.seed;
    YAML::Emitter e;
    e << root;
    return scenarios::parse_scenario(e.c_str(), spec.file);
  };
  try {
    scenarios::Scenario sc = build(spec.variables.size());
    // `policy: [slurm, volcano]` names systems: each runs as headroom compare runs it (its own
    // `policies:` block, the settings derived from `tenants:`, the scenario's Slurm partitions
    // as node selectors), so that a sweep and a compare of the same scenario agree.
    for (std::size_t v = 0; v < spec.variables.size(); ++v) {
      if (spec.variables[v].path != "policy") continue;
      const YAML::Node value = YAML::Load(spec.variables[v].values[point.choice[v]]);
      if (!value.IsScalar()) break;
      const scenarios::Scenario base = build(v);
      try {
        return scenario_for_policy(base, value.Scalar());
      } catch (const sim::InputError& x) {
        throw sim::InputError(
            spec.file, spec.variables[v].line, spec.variables[v].column, "variants.policy",
            "in run " + std::to_string(point.index) + " (" + describe(spec, point) + "): " + x.message());
      }
    }
    return sc;
  } catch (const sim::InputErrors& errs) {
    const auto& first = spec.variables.empty() ? Variable{} : spec.variables.front();
    std::vector<sim::InputError> out;
    for (const auto& x : errs.errors())
      out.emplace_back(spec.file, first.line, first.column, x.where(),
                       "in run " + std::to_string(point.index) + " (" + describe(spec, point) + "): " + x.message());
    throw sim::InputErrors(std::move(out));
  }
}

void check_points(const SweepSpec& spec, const std::vector<SweepPoint>& points, const std::atomic<bool>* stop,
                  const std::function<void(std::size_t, const scenarios::Scenario&)>& each) {
  std::vector<std::vector<sim::InputError>> point_errors(points.size());
  auto stopped = [&] { return stop != nullptr && stop->load(); };
  sim::parallel_ranges(points.size(), 16, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i != end && !stopped(); ++i) {
      try {
        const scenarios::Scenario sc = point_scenario(spec, points[i]);
        if (each) each(i, sc);
      } catch (const sim::InputErrors& e) {
        point_errors[i] = e.errors();
      } catch (const sim::InputError& e) {
        point_errors[i] = {e};
      }
    }
  });
  if (stopped()) throw sim::Interrupted();
  std::vector<sim::InputError> errors;
  for (auto& e : point_errors) errors.insert(errors.end(), e.begin(), e.end());
  if (!errors.empty()) throw sim::InputErrors(std::move(errors));
}

SweepResult run_sweep(const SweepSpec& spec, const SweepOptions& options) {
  SweepResult r;
  r.spec = spec;
  if (options.shard_count == 0 || options.shard_index >= options.shard_count)
    throw sim::InputError("", 0, 0, "--shard", "expected I/N with 0 <= I < N");
  r.points = expand(spec);
  const std::size_t n = r.points.size();
  r.shard_index = options.shard_index;
  r.shard_count = options.shard_count;
  for (std::size_t i = options.shard_index; i < n; i += options.shard_count) r.selected.push_back(i);
  // Every point is made and validated before any run, so that a bad value is reported whichever
  // shard meets it; its scenario is not kept (each run makes its own again: a few kilobytes a point
  // for a sweep of any size), only its trace announced to the cache. SIGINT stops this too.
  scenarios::TraceCache traces;  // the points' traces, each read once (the last point takes it over)
  check_points(spec, r.points, options.stop, [&](std::size_t i, const scenarios::Scenario& sc) {
    if (i % options.shard_count == options.shard_index) traces.expect(sc.workload);  // thread-safe
  });
  if (!options.keep_runs_dir.empty() && !std::filesystem::is_directory(options.keep_runs_dir))
    throw sim::InputError(options.keep_runs_dir, 0, 0, "", "directory for the runs' results does not exist");

  const std::size_t m = r.selected.size();
  r.results.resize(n);
  std::atomic<std::size_t> done{0};
  sim::parallel_ranges(m, 1, [&](std::size_t range_begin, std::size_t range_end) {
    for (std::size_t k = range_begin; k != range_end; ++k) {
      const std::size_t i = r.selected[k];
      PointResult& out = r.results[i];
      if (options.stop != nullptr && options.stop->load()) continue;
      try {
        RunOptions ro;
        ro.stop = options.stop;
        ro.traces = &traces;
        RunOutcome o = run_scenario(point_scenario(spec, r.points[i]), ro);
        if (o.cancelled) continue;
        out.summary = results::summarize(o.result);
        out.fairness = fairness_of(o);
        out.fairness.time.clear();
        out.fairness.share_over_time.clear();
        out.fairness.jain_over_time.clear();
        if (!options.keep_runs_dir.empty())
          results::write_hdf5(o.result, options.keep_runs_dir + "/run-" + std::to_string(i) + ".h5");
        out.status = RunStatus::Done;
      } catch (const sim::Interrupted&) {
        // SIGINT / SIGTERM while its trace was read (sim/interrupt.hpp): cancelled, as at an event.
      } catch (const std::exception& e) {
        out.status = RunStatus::Failed;
        out.error = e.what();
      }
      const std::size_t d = ++done;
      if (options.progress) options.progress(d, m);
    }
  });
  return r;
}

results::Table sweep_table(const SweepResult& r) {
  results::Table t;
  auto num = [&](const char* name) -> results::Column& {
    t.columns.push_back(results::Column{name, false, {}, {}});
    return t.columns.back();
  };
  auto text = [&](const std::string& name) -> results::Column& {
    t.columns.push_back(results::Column{name, true, {}, {}});
    return t.columns.back();
  };
  const std::size_t n = r.points.size();
  num("run");
  for (const auto& v : r.spec.variables) text(v.path);
  num("seed");
  text("status");
  // Waits count the jobs that never started, censored at the end of the run (lower bounds when
  // never_started is not 0).
  for (const char* k :
       {"jobs",           "completed",    "failed",           "cancelled",       "rejected",   "unfinished",
        "never_started",  "wait_mean_s",  "wait_median_s",    "wait_p95_s",      "wait_p99_s", "jct_mean_s",
        "jct_median_s",   "jct_p95_s",    "jct_p99_s",        "gpu_utilization", "makespan_s", "preemptions",
        "lost_gpu_hours", "starved_jobs", "pending_gpus_mean"})
    num(k);
  for (const char* k :
       {"jain_index", "jain_index_mean", "rho_max", "rho_mean", "min_share_ratio", "max_dominant_share", "max_wait_s"})
    num(k);
  // Fragmentation, quota borrowing and reclaims, cost (NaN where the scenario prices no GPU).
  for (const char* k : {"fragmentation", "borrowed_gpu_hours", "reclaims", "cost", "cost_per_gpu_hour",
                        "slo_attainment", "gpu_busy_utilization"})
    num(k);
  text("fingerprint");
  text("error");
  std::vector<std::size_t> rows = r.selected;
  if (rows.empty() && r.shard_count <= 1)
    for (std::size_t i = 0; i < n; ++i) rows.push_back(i);
  for (std::size_t i : rows) {
    const auto& p = r.points[i];
    const auto& res = r.results[i];
    const auto& s = res.summary;
    std::size_t c = 0;
    t.columns[c++].numbers.push_back(static_cast<double>(i));
    for (std::size_t v = 0; v < r.spec.variables.size(); ++v)
      t.columns[c++].strings.push_back(r.spec.variables[v].values[p.choice[v]]);
    t.columns[c++].numbers.push_back(static_cast<double>(p.seed));
    t.columns[c++].strings.push_back(res.status == RunStatus::Done     ? "done"
                                     : res.status == RunStatus::Failed ? "failed"
                                                                       : "cancelled");
    const bool ok = res.status == RunStatus::Done;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto put = [&](double v) { t.columns[c++].numbers.push_back(ok ? v : nan); };
    put(static_cast<double>(s.jobs));
    for (int st : {2, 3, 4, 5, 6}) put(static_cast<double>(s.by_state[static_cast<std::size_t>(st)]));
    put(static_cast<double>(s.never_started));
    put(s.wait.mean);
    put(s.wait.median);
    put(s.wait.p95);
    put(s.wait.p99);
    put(s.jct.mean);
    put(s.jct.median);
    put(s.jct.p95);
    put(s.jct.p99);
    put(s.gpu_utilization);
    put(s.makespan_s);
    put(static_cast<double>(s.preemptions));
    put(s.lost_gpu_hours);
    put(static_cast<double>(s.starved_jobs));
    put(s.pending_gpus_mean);
    const auto& f = res.fairness;
    put(f.jain);
    put(f.jain_mean);
    put(f.rho_max);
    put(f.rho_mean);
    put(f.min_share_ratio);
    put(f.max_dominant_share);
    put(f.max_wait_s);
    put(s.fragmentation);
    put(f.entitlements_set ? f.borrowed_gpu_hours : nan);  // no tenants set: nothing to borrow above
    put(f.reclaims < 0 ? nan : static_cast<double>(f.reclaims));
    put(s.priced ? s.cost : nan);
    put(s.priced ? s.cost_per_used_gpu_hour : nan);
    put(s.services.empty() ? nan : s.slo_attainment);
    put(s.gpu_busy_utilization);
    t.columns[c++].strings.push_back(ok ? s.fingerprint : "");
    t.columns[c++].strings.push_back(res.error);
  }
  t.attributes["scenario_file"] = r.spec.file;
  t.attributes["version"] = version_string();
  std::string names;
  for (const auto& c : t.columns) names += c.name + "\n";
  t.attributes["columns"] = names;
  if (r.shard_count > 1) {
    t.attributes["shard"] = std::to_string(r.shard_index) + "/" + std::to_string(r.shard_count);
    t.attributes["total_runs"] = std::to_string(n);
  }
  return t;
}

std::pair<std::size_t, std::size_t> parse_shard(const std::string& text) {
  const auto shard = results::parse_shard_text(text);
  if (!shard)
    throw sim::InputError(
        "", 0, 0, "--shard",
        "expected I/N with 0 <= I < N <= " + sim::thousands(kMaxSweepRuns) + " (e.g. 0/4), got \"" + text + "\"");
  return *shard;
}

results::Table merge_tables(const std::vector<results::Table>& shards, const std::vector<std::string>& names) {
  if (shards.empty()) throw sim::InputError("", 0, 0, "merge", "no input tables");
  auto bad = [&](std::size_t k, const std::string& why) {
    throw sim::InputError(k < names.size() ? names[k] : "", 0, 0, "", why);
  };
  auto attr = [](const results::Table& t, const std::string& key) {
    auto it = t.attributes.find(key);
    return it == t.attributes.end() ? std::string() : it->second;
  };
  const results::Table& first = shards.front();
  std::size_t shard_count = 1, total = 0;
  std::vector<bool> seen_shard;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const auto& t = shards[k];
    const results::SweepShape shape = results::check_sweep_table(t, k < names.size() ? names[k] : "");
    if (t.columns.size() != first.columns.size()) bad(k, "has other columns than " + names.front());
    for (std::size_t c = 0; c < t.columns.size(); ++c)
      if (t.columns[c].name != first.columns[c].name || t.columns[c].text != first.columns[c].text)
        bad(k, "column " + std::to_string(c) + " is \"" + t.columns[c].name + "\", expected \"" +
                   first.columns[c].name + "\" as in " + names.front());
    if (attr(t, "scenario_file") != attr(first, "scenario_file") || attr(t, "columns") != attr(first, "columns"))
      bad(k, "comes from another sweep (scenario " + attr(t, "scenario_file") + ") than " + names.front() + " (" +
                 attr(first, "scenario_file") + ")");
    const std::string sh = attr(t, "shard");
    const std::size_t i = shape.shard_index, n = shape.shard_count, tot = shape.total_runs;
    if (k == 0) {
      shard_count = n;
      total = tot;
      seen_shard.assign(n, false);
    } else if (n != shard_count || tot != total) {
      bad(k, "is shard " + sh + " of a sweep of " + std::to_string(tot) + " runs; " + names.front() + " is of " +
                 std::to_string(shard_count) + " shards and " + std::to_string(total) + " runs");
    }
    if (seen_shard[i]) bad(k, "shard " + std::to_string(i) + "/" + std::to_string(n) + " given twice");
    seen_shard[i] = true;
  }
  std::string missing;
  for (std::size_t i = 0; i < seen_shard.size(); ++i)
    if (!seen_shard[i]) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
  if (!missing.empty())
    throw sim::InputError("", 0, 0, "merge",
                          "missing shard(s) " + missing + " of " + std::to_string(shard_count) + " (" +
                              std::to_string(total) + " runs in all)");
  // Rows by run index (check_sweep_table: each a whole number below its table's total_runs, which
  // every shard shares).
  std::vector<std::pair<std::size_t, std::size_t>> where(total, {SIZE_MAX, 0});
  for (std::size_t k = 0; k < shards.size(); ++k) {
    for (std::size_t row = 0; row < shards[k].rows(); ++row) {
      const double run = shards[k].columns[0].numbers[row];
      auto& w = where[static_cast<std::size_t>(run)];
      if (w.first != SIZE_MAX) bad(k, "run " + std::to_string(static_cast<std::size_t>(run)) + " appears twice");
      w = {k, row};
    }
  }
  for (std::size_t i = 0; i < total; ++i)
    if (where[i].first == SIZE_MAX)
      throw sim::InputError("", 0, 0, "merge", "run " + std::to_string(i) + " is missing");
  results::Table out;
  for (const auto& c : first.columns) out.columns.push_back(results::Column{c.name, c.text, {}, {}});
  for (const auto& [k, row] : where) {
    for (std::size_t c = 0; c < out.columns.size(); ++c) {
      const auto& src = shards[k].columns[c];
      if (src.text)
        out.columns[c].strings.push_back(src.strings[row]);
      else
        out.columns[c].numbers.push_back(src.numbers[row]);
    }
  }
  out.attributes = first.attributes;
  out.attributes.erase("shard");
  out.attributes.erase("total_runs");
  return out;
}

}  // namespace headroom::planner
