// Kubernetes pod lists: the JSON of `kubectl get pods -A -o json` ({"kind": "List" or "PodList",
// "items": [Pod, ...]}), or a single Pod object; or the same as `kubectl get pods -o yaml` prints
// it (a List, a Pod, or several `---` documents, each a Pod or a List). One pod is one job; the
// mapping to models::Job is documented in traces/README.md. Syntax errors name the file, line and
// column; errors in a pod name its path (items[3].spec.containers[0].resources.requests.cpu) and,
// where it can be found, its line and column.

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "sim/errors.hpp"
#include "sim/quantity.hpp"
#include "sim/yaml_documents.hpp"
#include "traces/fields.hpp"
#include "traces/json_input.hpp"
#include "traces/table.hpp"

namespace headroom::traces::detail {

namespace {

using nlohmann::json;

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::string_view kGpuResource = "nvidia.com/gpu";

// The reader's tables; pod_list_keys_markdown() prints them for docs/importing.md.
// The queue: the first of these labels a pod has, else this annotation, else spec.priorityClassName.
constexpr const char* kQueueLabels[] = {"kueue.x-k8s.io/queue-name", "scheduling.volcano.sh/queue-name",
                                        "kai.scheduler/queue"};
constexpr const char* kQueueAnnotations[] = {"scheduling.volcano.sh/queue-name"};
// The job kind from the first ownerReference's kind (anything else: batch).
constexpr const char* kBatchOwners[] = {"Job", "CronJob"};
constexpr const char* kInferenceOwners[] = {"ReplicaSet", "Deployment", "StatefulSet", "DaemonSet"};
constexpr const char* kTrainOwners[] = {"PyTorchJob", "TFJob",  "MPIJob",  "XGBoostJob",
                                        "PaddleJob",  "JAXJob", "TrainJob"};
// Owners whose GPU pods that ran together are one pod set (one job of that many pods).
constexpr const char* kPodSetOwners[] = {"Job", "PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"};

bool listed(const auto& table, std::string_view s) {
  for (const char* t : table)
    if (s == t) return true;
  return false;
}

class Pods {
 public:
  Pods(LineReader& in, const ImportOptions& options) : in_(in), options_(options) {}

  models::Workload run() {
    w_.meta.format = "kubernetes";
    const json doc = parse();
    const json* items = nullptr;
    json single;
    if (!doc.is_object()) fail("", "expected a JSON object (a pod list from `kubectl get pods -o json`)");
    const std::string kind = string_at(doc, "kind", "");
    if (kind == "Pod") {
      single = json::array({doc});
      items = &single;
      prefix_ = "";
    } else {
      if (!kind.empty() && kind != "List" && kind != "PodList")
        fail("kind", "expected a List, PodList or Pod, got " + detail::quoted(kind));
      const auto it = doc.find("items");
      if (it == doc.end()) fail("items", "missing: a pod list has an \"items\" array");
      if (!it->is_array()) fail("items", "expected an array of pods");
      items = &*it;
      prefix_ = "items";
    }
    for (std::size_t i = 0; i < items->size(); ++i) {
      try {
        pod((*items)[i], i);
      } catch (const sim::InputError& e) {
        bad_row(w_, e, options_);
      }
    }
    for (const std::size_t i : running_) {
      models::Job& j = w_.jobs[i];
      j.runtime = latest_ - j.trace_start;
    }
    merge_pod_sets();
    if (!w_.jobs.empty()) {
      for (models::Job& j : w_.jobs) {
        j.submit -= origin_;
        if (j.trace_start >= 0) j.trace_start -= origin_;
        if (j.trace_end >= 0) j.trace_end -= origin_;
      }
      w_.meta.unix_start = origin_ / sim::kSecond;
    }
    return std::move(w_);
  }

 private:
  json parse() {
    // JSON starts with '{' (or '['); anything else is read as YAML.
    bool json_text = true;
    {
      LineReader peek(in_.path());
      std::string_view line;
      while (peek.next_line(line)) {
        const std::size_t first = line.find_first_not_of(" \t\r");
        if (first == std::string_view::npos) continue;
        json_text = line[first] == '{' || line[first] == '[';
        break;
      }
    }
    if (json_text) {
      CharStream stream(in_);
      return parse_json(in_, stream);
    }
    std::string text;
    std::string_view line;
    while (in_.next_line(line)) text.append(line).push_back('\n');
    yaml_ = true;
    std::vector<YAML::Node> docs;
    try {
      if (const auto stray = sim::walk_yaml_documents(text, in_.path()).stray)
        throw sim::InputError(in_.path(), stray->line + 1, stray->column + 1, "",
                              "malformed YAML: unexpected text where a value or a new key should be");
      docs = YAML::LoadAll(text);
    } catch (const YAML::Exception& e) {
      throw sim::InputError(in_.path(), e.mark.line + 1, e.mark.column + 1, "", "malformed YAML: " + e.msg);
    }
    std::vector<const YAML::Node*> present;
    for (const YAML::Node& d : docs)
      if (d.IsDefined() && !d.IsNull()) present.push_back(&d);
    if (present.size() == 1) return from_yaml(*present.front(), "");
    // Several documents: their pods, in order, as one list.
    json items = json::array();
    for (const YAML::Node* d : present) {
      const bool list = d->IsMap() && d->operator[]("items") && d->operator[]("items").IsSequence();
      if (list) {
        for (const YAML::Node& item : d->operator[]("items"))
          items.push_back(from_yaml(item, index("items", items.size())));
      } else {
        items.push_back(from_yaml(*d, index("items", items.size())));
      }
    }
    return json{{"kind", "List"}, {"items", std::move(items)}};
  }

  // A YAML node as JSON (plain scalars typed as YAML 1.2's core schema reads them: null, true /
  // false, integers, floats; quoted scalars stay strings), each value's line and column kept by path.
  json from_yaml(const YAML::Node& n, const std::string& path) {
    if ((++yaml_nodes_ & 0xffff) == 0) sim::check_interrupt();  // SIGINT / SIGTERM (sim/interrupt.hpp)
    const YAML::Mark m = n.Mark();
    if (m.line >= 0) marks_.try_emplace(path, m.line + 1, m.column + 1);
    switch (n.Type()) {
      case YAML::NodeType::Map: {
        json out = json::object();
        for (const auto& kv : n) {
          if (!kv.first.IsScalar())
            throw sim::InputError(in_.path(), kv.first.Mark().line + 1, kv.first.Mark().column + 1, path,
                                  "expected a string key");
          const std::string key = kv.first.Scalar();
          if (utf8_error(key) != std::string::npos)
            throw sim::InputError(in_.path(), kv.first.Mark().line + 1, kv.first.Mark().column + 1, path,
                                  "not UTF-8 text: a key is not valid UTF-8");
          const std::string child = key.find_first_of(".[/") == std::string::npos || path.empty()
                                        ? join(path, key)
                                        : path + "[\"" + key + "\"]";
          out[key] = from_yaml(kv.second, child);
        }
        return out;
      }
      case YAML::NodeType::Sequence: {
        json out = json::array();
        for (std::size_t i = 0; i < n.size(); ++i) out.push_back(from_yaml(n[i], index(path, i)));
        return out;
      }
      case YAML::NodeType::Scalar: {
        const std::string& v = n.Scalar();
        // kubectl's YAML reader refuses bytes that are not UTF-8 (go-yaml: "invalid leading UTF-8
        // octet"); a name with them must never reach a result file.
        if (const std::size_t bad = utf8_error(v); bad != std::string::npos) {
          throw sim::InputError(
              in_.path(), m.line + 1, m.column + 1, path,
              "not UTF-8 text: byte " + sim::hex_byte(static_cast<unsigned char>(v[bad])) + " is not valid UTF-8");
        }
        if (n.Tag() == "!") return v;  // quoted
        if (v == "~" || v == "null" || v == "Null" || v == "NULL") return nullptr;
        if (v == "true" || v == "True" || v == "TRUE") return true;
        if (v == "false" || v == "False" || v == "FALSE") return false;
        const char* b = v.data();
        const char* e = b + v.size();
        std::int64_t i = 0;
        if (const auto r = v.empty() ? std::from_chars_result{b, std::errc::invalid_argument}
                                     : std::from_chars(b + (v[0] == '+'), e, i);
            r.ptr == e && r.ec == std::errc()) {  // beyond int64: read as a float below
          numbers_.try_emplace(path, v);
          return i;
        }
        double d = 0;
        if (!v.empty() && v.find_first_of("0123456789") != std::string::npos &&
            std::from_chars(b + (v[0] == '+'), e, d).ptr == e) {
          numbers_.try_emplace(path, v);
          return d;
        }
        return v;
      }
      default: return nullptr;
    }
  }

  // Errors name the line and column of the field (the file is read again to find it, for the
  // first few errors only).
  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    if (yaml_) {
      // The value's own line, else the nearest enclosing one that has a place.
      std::string at = path;
      for (;;) {
        if (const auto it = marks_.find(at); it != marks_.end())
          throw sim::InputError(in_.path(), it->second.first, it->second.second, path, message);
        // requests["cpu"] was kept as requests.cpu (keys without '.', '[' or '/' are joined with '.').
        if (const std::size_t open = at.rfind("[\"");
            open != std::string::npos && at.size() > open + 4 && at.compare(at.size() - 2, 2, "\"]") == 0) {
          const std::string key = at.substr(open + 2, at.size() - open - 4);
          if (const auto it = marks_.find(join(at.substr(0, open), key)); it != marks_.end())
            throw sim::InputError(in_.path(), it->second.first, it->second.second, path, message);
        }
        const std::size_t cut = at.find_last_of(".[");
        if (cut == std::string::npos || at.empty()) break;
        at.resize(cut);
      }
      throw sim::InputError(in_.path(), 0, 0, path, message);
    }
    if (located_ < kMaxWarnings) {
      ++located_;
      const auto [line, column] = json_position(in_.path(), path);
      if (line > 0) throw sim::InputError(in_.path(), line, column, path, message);
    }
    throw sim::InputError(in_.path(), 0, 0, path, message);
  }

  static std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }
  static std::string index(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

  // obj[key] when it is an object; nullptr when absent or null. `path` names obj.
  const json* object_at(const json& obj, std::string_view key, const std::string& path) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    if (!it->is_object()) fail(join(path, key), "expected an object");
    return &*it;
  }
  const json* array_at(const json& obj, std::string_view key, const std::string& path) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    if (!it->is_array()) fail(join(path, key), "expected an array");
    return &*it;
  }
  std::string string_at(const json& obj, std::string_view key, const std::string& path) const {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return {};
    if (!it->is_string()) fail(join(path, key), "expected a string");
    return it->get<std::string>();
  }

  // An RFC 3339 time ("2024-05-01T10:00:00Z") in ms since the epoch, or -1 when absent.
  sim::Tick time_at(const json& obj, std::string_view key, const std::string& path) {
    const std::string v = string_at(obj, key, path);
    if (v.empty()) return -1;
    sim::Tick ms = 0;
    if (!parse_datetime(v, ms))
      fail(join(path, key), "expected a time like \"2024-05-01T10:00:00Z\", got " + detail::quoted(v));
    latest_ = std::max(latest_, ms);
    return ms;
  }

  // A quantity's text as written: a string's, or a number's (a YAML plain scalar as it was, a JSON
  // number as printed).
  std::string text_of(const json& v, const std::string& path) const {
    if (v.is_string()) return v.get<std::string>();
    if (const auto it = numbers_.find(path); it != numbers_.end()) return it->second;
    return v.dump();
  }

  // A Kubernetes quantity ("500m", "2", "1.5", "64Gi", "1e3") in base units; not negative, as the
  // API server validates a container's requests and limits (ValidateNonnegativeQuantity).
  double quantity(const json& v, const std::string& path) const {
    if (!v.is_number() && !v.is_string()) fail(path, "expected a quantity such as \"2\", \"500m\" or \"64Gi\"");
    const auto q = v.is_number() ? std::optional<double>(v.get<double>()) : sim::parse_quantity(v.get<std::string>());
    if (!q || !(*q >= 0) || !std::isfinite(*q))
      fail(path, "expected a non-negative quantity such as \"2\", \"500m\" or \"64Gi\", got " +
                     detail::quoted(text_of(v, path)));
    return *q;
  }

  struct Demand {
    double gpus = 0, cpus = 0, mem_bytes = 0;
  };

  // One container's requests (limits where a resource has no request: Kubernetes then sets the
  // request to the limit).
  Demand container(const json& c, const std::string& path) const {
    Demand d;
    if (!c.is_object()) fail(path, "expected a container object");
    const json* res = object_at(c, "resources", path);
    if (!res) return d;
    const std::string rpath = join(path, "resources");
    const json* req = object_at(*res, "requests", rpath);
    const json* lim = object_at(*res, "limits", rpath);
    const auto get = [&](std::string_view name, double& out) {
      const json* from = req && req->contains(name) ? req : lim && lim->contains(name) ? lim : nullptr;
      if (from == nullptr) return;
      const std::string qpath = join(rpath, from == req ? "requests" : "limits") + "[\"" + std::string(name) + "\"]";
      const json& v = from->at(std::string(name));
      if (name == kGpuResource) {
        // An extended resource: a non-negative integer (the API server: "must be an integer"),
        // here at most what a job's GPU count holds.
        const auto q = v.is_number() || v.is_string() ? (v.is_number() ? std::optional<double>(v.get<double>())
                                                                       : sim::parse_quantity(v.get<std::string>()))
                                                      : std::nullopt;
        if (!q || !(*q >= 0) || *q != std::floor(*q) || *q > static_cast<double>(kInt32Max))
          fail(qpath, "nvidia.com/gpu must be a whole number of GPUs from 0 to " + std::to_string(kInt32Max) +
                          ", got " + detail::quoted(text_of(v, qpath)));
        out = *q;
        return;
      }
      out = quantity(v, qpath);
      const double most = name == "cpu" ? static_cast<double>(kInt32Max) : 9.2e18;
      if (out > most)
        fail(qpath, "quantity " + detail::quoted(text_of(v, qpath)) + " is out of range (at most " +
                        (name == "cpu" ? std::to_string(kInt32Max) + " cores)" : std::string("8Ei bytes)")));
    };
    get(kGpuResource, d.gpus);
    get("cpu", d.cpus);
    get("memory", d.mem_bytes);
    return d;
  }

  // The pod's effective request: the sum over its containers, or the largest init container
  // where that is more (init containers run one at a time, before the others).
  Demand demand(const json& spec, const std::string& path) const {
    Demand sum, init;
    if (const json* cs = array_at(spec, "containers", path)) {
      for (std::size_t i = 0; i < cs->size(); ++i) {
        const Demand d = container((*cs)[i], index(join(path, "containers"), i));
        sum.gpus += d.gpus, sum.cpus += d.cpus, sum.mem_bytes += d.mem_bytes;
      }
    }
    if (const json* cs = array_at(spec, "initContainers", path)) {
      for (std::size_t i = 0; i < cs->size(); ++i) {
        const Demand d = container((*cs)[i], index(join(path, "initContainers"), i));
        init.gpus = std::max(init.gpus, d.gpus), init.cpus = std::max(init.cpus, d.cpus);
        init.mem_bytes = std::max(init.mem_bytes, d.mem_bytes);
      }
    }
    return {std::max(sum.gpus, init.gpus), std::max(sum.cpus, init.cpus), std::max(sum.mem_bytes, init.mem_bytes)};
  }

  static models::JobKind kind_of(std::string_view owner) {
    if (listed(kBatchOwners, owner)) return models::JobKind::Batch;
    if (listed(kInferenceOwners, owner)) return models::JobKind::Inference;
    if (listed(kTrainOwners, owner)) return models::JobKind::Train;
    return models::JobKind::Batch;
  }

  void warn(const std::string& where, const std::string& reason) {
    ++w_.meta.skipped;
    if (w_.meta.warnings.size() < kMaxWarnings) w_.meta.warnings.push_back(where + ": " + reason + ", job skipped");
  }

  void pod(const json& item, std::size_t i) {
    const std::string path = prefix_.empty() ? std::string() : index(prefix_, i);
    const std::string label = path.empty() ? std::string("pod") : path;
    ++w_.meta.rows;
    if (!item.is_object()) fail(label, "expected a pod object");
    const std::string kind = string_at(item, "kind", path);
    const json* meta = object_at(item, "metadata", path);
    const std::string mpath = join(path, "metadata");
    const std::string ns = meta ? string_at(*meta, "namespace", mpath) : std::string();
    const std::string name = meta ? string_at(*meta, "name", mpath) : std::string();
    const std::string who = label + " (" + (ns.empty() ? "default" : ns) + "/" + name + ")";
    if (!kind.empty() && kind != "Pod") {
      warn(who, "a " + kind + ", not a Pod");
      return;
    }
    if (!name.empty()) {  // a pod list names a pod once in its namespace (traces/README.md, "Bad rows")
      const auto [seen, fresh] = first_index_.try_emplace((ns.empty() ? "default" : ns) + "/" + name, i);
      if (!fresh)
        fail(join(mpath, "name"), "duplicate pod " + detail::quoted((ns.empty() ? "default" : ns) + "/" + name) +
                                      " (first at " + index(prefix_, seen->second) + ")");
    }
    models::Job j;
    std::string owner;  // the Job or training job whose pods form one pod set
    j.trace_id = static_cast<std::int64_t>(i);
    j.tenant = w_.tenants.intern(ns.empty() ? "default" : ns);
    std::string queue;
    if (meta) {
      if (const json* labels = object_at(*meta, "labels", mpath))
        for (const char* l : kQueueLabels)
          if (queue.empty()) queue = string_at(*labels, l, join(mpath, "labels"));
      if (queue.empty())
        if (const json* ann = object_at(*meta, "annotations", mpath))
          for (const char* a : kQueueAnnotations)
            if (queue.empty()) queue = string_at(*ann, a, join(mpath, "annotations"));
      if (const json* owners = array_at(*meta, "ownerReferences", mpath); owners && !owners->empty()) {
        const json& o = owners->front();
        const std::string opath = index(join(mpath, "ownerReferences"), 0);
        if (o.is_object()) {
          const std::string okind = string_at(o, "kind", opath);
          j.kind = kind_of(okind);
          if (forms_pod_set(okind))
            owner = (ns.empty() ? "default" : ns) + "/" + okind + "/" + string_at(o, "name", opath) + "/" +
                    string_at(o, "uid", opath);
        }
      }
    }
    const json* spec = object_at(item, "spec", path);
    const std::string spath = join(path, "spec");
    if (!spec) fail(spath, "missing: a pod has a spec");
    if (queue.empty()) queue = string_at(*spec, "priorityClassName", spath);
    j.queue = w_.queues.intern(queue.empty() ? "default" : queue);
    if (const auto it = spec->find("priority"); it != spec->end() && !it->is_null()) {
      if (!it->is_number_integer()) fail(join(spath, "priority"), "expected an integer");
      j.priority = static_cast<std::int32_t>(std::clamp<std::int64_t>(it->get<std::int64_t>(), -kInt32Max, kInt32Max));
    }
    j.preempt_never = string_at(*spec, "preemptionPolicy", spath) == "Never";
    if (const json* sel = object_at(*spec, "nodeSelector", spath)) {
      const std::string product = string_at(*sel, "nvidia.com/gpu.product", join(spath, "nodeSelector"));
      if (!product.empty()) j.gpu_type = intern_gpu_type(product);
    }
    const Demand d = demand(*spec, spath);
    if (d.gpus > static_cast<double>(kInt32Max))
      fail(spath, "the containers' nvidia.com/gpu requests add up to " + std::to_string(std::llround(d.gpus)) +
                      ", more than " + std::to_string(kInt32Max));
    j.gpus = static_cast<std::int32_t>(d.gpus);
    // KAI-Scheduler's (Run:ai's) GPU sharing: the annotation gpu-fraction "0.5" asks for half of
    // one GPU; such a pod requests no nvidia.com/gpu.
    if (const json* ann = meta ? object_at(*meta, "annotations", mpath) : nullptr) {
      const std::string apath = join(mpath, "annotations");
      if (const std::string frac = string_at(*ann, "gpu-fraction", apath); !frac.empty()) {
        double f = 0;
        const auto [end, ec] = std::from_chars(frac.data(), frac.data() + frac.size(), f);
        if (ec != std::errc() || end != frac.data() + frac.size() || !(f > 0) || f > 1)
          fail(join(apath, "gpu-fraction"),
               "expected a fraction of one GPU above 0 and at most 1, got " + detail::quoted(frac));
        if (j.gpus > 0)
          fail(join(apath, "gpu-fraction"),
               "a pod with gpu-fraction requests no nvidia.com/gpu, got " + std::to_string(j.gpus));
        if (const std::string n = string_at(*ann, "gpu-fraction-num-devices", apath); !n.empty() && n != "1") {
          warn(who, "gpu-fraction on " + n + " devices (gpu-fraction-num-devices) is not modelled");
          return;
        }
        j.gpus = 1;
        j.gpu_milli = static_cast<std::int32_t>(std::clamp(std::lround(f * 1000.0), 1L, 1000L));
        if (j.gpu_milli == 1000) j.gpu_milli = 0;
      }
    }
    j.cpus = static_cast<std::int32_t>(std::min(std::ceil(d.cpus - 1e-9), static_cast<double>(kInt32Max)));
    j.memory_mib = static_cast<std::int64_t>(std::min(std::ceil(d.mem_bytes / 1048576.0 - 1e-9), 1e15));
    if (j.gpus > 0) {
      j.nodes = 1;  // a pod runs on one node
      j.gpus_per_node = j.gpus;
    }
    if (j.gpus == 0) j.gpu_type = 0;

    if (!meta) fail(mpath, "missing: a pod has metadata");
    j.submit = time_at(*meta, "creationTimestamp", mpath);
    if (j.submit < 0) fail(join(mpath, "creationTimestamp"), "missing");
    origin_ = std::min(origin_, j.submit);
    const json* status = object_at(item, "status", path);
    const std::string stpath = join(path, "status");
    const std::string phase = status ? string_at(*status, "phase", stpath) : std::string();
    if (phase == "Succeeded") j.trace_status = models::TraceStatus::Completed;
    if (phase == "Failed") j.trace_status = models::TraceStatus::Failed;
    if (status) j.trace_start = time_at(*status, "startTime", stpath);
    if (j.trace_start >= 0 && j.trace_start < j.submit)
      fail(join(stpath, "startTime"), "startTime is before metadata.creationTimestamp");
    // The pod ends when its last container ends.
    sim::Tick finish = -1;
    bool all_terminated = false;
    if (status) {
      if (const json* cs = array_at(*status, "containerStatuses", stpath); cs && !cs->empty()) {
        all_terminated = true;
        for (std::size_t c = 0; c < cs->size(); ++c) {
          const std::string cpath = index(join(stpath, "containerStatuses"), c);
          if (!(*cs)[c].is_object()) fail(cpath, "expected an object");
          const json* state = object_at((*cs)[c], "state", cpath);
          const json* term = state ? object_at(*state, "terminated", join(cpath, "state")) : nullptr;
          if (!term) {
            all_terminated = false;
            continue;
          }
          finish = std::max(finish, time_at(*term, "finishedAt", join(join(cpath, "state"), "terminated")));
        }
      }
    }
    const bool ended = (phase == "Succeeded" || phase == "Failed" || all_terminated);
    if (j.trace_start < 0) {
      const bool waiting = phase == "Pending" || phase.empty();
      if (!waiting || options_.assume_runtime < 0) {
        warn(who, "never started (phase " + (phase.empty() ? std::string("unknown") : phase) + "), run time unknown" +
                      (waiting ? " (workload.assume_runtime or --assume-runtime queues it with an assumed one)" : ""));
        return;
      }
      // A waiting pod of a queue snapshot: submitted at its creation, run time assumed.
      j.runtime = options_.assume_runtime;
      ++assumed_;
      owners_.push_back(std::string());
      w_.jobs.push_back(j);
      return;
    }
    if (ended) {
      if (finish < 0) {
        warn(who, "ended (phase " + phase + ") without a container finishedAt, run time unknown");
        return;
      }
      if (finish < j.trace_start) fail(stpath, "a container finished before status.startTime");
      j.trace_end = finish;
      j.runtime = finish - j.trace_start;
    } else {
      running_.push_back(w_.jobs.size());  // still running: until the latest time in the file
    }
    owners_.push_back(j.gpus > 0 ? owner : std::string());
    w_.jobs.push_back(j);
  }

  // Pods of a Job (batch/v1, Indexed or not) or of a training job (PyTorchJob and the other
  // Kubeflow kinds: Master and Worker replicas) run as one pod set.
  static bool forms_pod_set(std::string_view owner) { return listed(kPodSetOwners, owner); }

  // The GPU pods of one owner that ran together (every one started before any ended) and ask for
  // the same GPUs become one job of that many pods (nodes = pods, gpus_per_node = one pod's GPUs):
  // the pod set a gang-aware scheduler places as a whole. Pods of a Job that ran one after
  // another (parallelism below completions) stay jobs of their own.
  void merge_pod_sets() {
    std::map<std::string, std::vector<std::size_t>> sets;
    for (std::size_t i = 0; i < w_.jobs.size(); ++i)
      if (!owners_[i].empty()) sets[owners_[i]].push_back(i);
    std::vector<bool> gone(w_.jobs.size(), false);
    for (const auto& [owner, members] : sets) {
      if (members.size() < 2) continue;
      const models::Job& first = w_.jobs[members.front()];
      sim::Tick last_start = 0, first_end = std::numeric_limits<sim::Tick>::max();
      bool same = true;
      for (const std::size_t m : members) {
        const models::Job& p = w_.jobs[m];
        same = same && p.gpus == first.gpus && p.gpu_type == first.gpu_type && p.gpu_milli == 0;
        last_start = std::max(last_start, p.trace_start);
        first_end = std::min(first_end, p.trace_start + p.runtime);
      }
      if (!same || last_start >= first_end) continue;
      models::Job set = first;
      set.gpus = 0, set.cpus = 0, set.memory_mib = 0;
      sim::Tick end = 0;
      bool failed = false, completed = true;
      for (const std::size_t m : members) {
        const models::Job& p = w_.jobs[m];
        set.submit = std::min(set.submit, p.submit);
        set.trace_start = std::min(set.trace_start, p.trace_start);
        end = std::max(end, p.trace_start + p.runtime);
        set.gpus += p.gpus;
        set.cpus += p.cpus;
        set.memory_mib += p.memory_mib;
        set.priority = std::max(set.priority, p.priority);
        failed = failed || p.trace_status == models::TraceStatus::Failed;
        completed = completed && p.trace_status == models::TraceStatus::Completed;
        if (m != members.front()) gone[m] = true;
      }
      set.nodes = static_cast<std::int32_t>(members.size());
      set.gpus_per_node = first.gpus;
      set.runtime = end - set.trace_start;
      set.trace_end = completed || failed ? end : -1;
      set.trace_status = failed      ? models::TraceStatus::Failed
                         : completed ? models::TraceStatus::Completed
                                     : models::TraceStatus::Unknown;
      w_.jobs[members.front()] = set;
    }
    std::size_t out = 0;
    for (std::size_t i = 0; i < w_.jobs.size(); ++i)
      if (!gone[i]) w_.jobs[out++] = w_.jobs[i];
    w_.jobs.resize(out);
  }

  std::uint16_t intern_gpu_type(std::string_view name) {
    for (std::size_t i = 0; i < w_.gpu_type_names.size(); ++i)
      if (w_.gpu_type_names[i] == name) return static_cast<std::uint16_t>(i + 1);
    w_.gpu_type_names.emplace_back(name);
    return static_cast<std::uint16_t>(w_.gpu_type_names.size());
  }

  LineReader& in_;
  const ImportOptions& options_;
  models::Workload w_;
  std::string prefix_;
  std::vector<std::size_t> running_;
  std::vector<std::string> owners_;  // per job: its pod-set owner, or empty
  sim::Tick latest_ = std::numeric_limits<sim::Tick>::min();
  std::size_t assumed_ = 0;  // pods that never started, given options_.assume_runtime
  sim::Tick origin_ = std::numeric_limits<sim::Tick>::max();
  mutable std::size_t located_ = 0;                             // errors located by json_position so far
  bool yaml_ = false;                                           // the file was YAML
  std::unordered_map<std::string, std::pair<int, int>> marks_;  // YAML: path -> line, column
  std::unordered_map<std::string, std::string> numbers_;        // YAML: path -> a number's text as written
  std::uint64_t yaml_nodes_ = 0;                                // converted by from_yaml
  std::unordered_map<std::string, std::size_t> first_index_;    // namespace/name -> the pod that had it first
};

}  // namespace

models::Workload import_kubernetes(LineReader& in, const ImportOptions& options) { return Pods(in, options).run(); }

}  // namespace headroom::traces::detail

namespace headroom::traces {

std::string pod_list_keys_markdown() {
  const auto join = [](const auto& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + std::string(i);
    return out;
  };
  using namespace detail;
  std::string out;
  out += "| pod list: object, field | Read | Skipped with a warning | Ignored |\n";
  out += "|---|---|---|---|\n";
  out +=
      "| the file | a List or PodList (items), a Pod, several `---` YAML documents of those | | every other top-level "
      "field |\n";
  out += "| items[] | kind Pod (or none) | any other kind | |\n";
  out +=
      "| metadata | name and namespace (one pod per namespace/name; no namespace is default, the tenant), "
      "creationTimestamp (the submit time), labels " +
      join(kQueueLabels) + " (the queue, first found), annotation " + join(kQueueAnnotations) +
      " (the queue, else spec.priorityClassName), ownerReferences[0].kind, annotations gpu-fraction and "
      "gpu-fraction-num-devices 1 (a fraction of one GPU) | gpu-fraction-num-devices other than 1 | every other "
      "field |\n";
  out += "| ownerReferences[0].kind | " + join(kBatchOwners) + " (batch); " + join(kInferenceOwners) +
         " (inference); " + join(kTrainOwners) + " (train); the GPU pods of one " + join(kPodSetOwners) +
         " that ran together are one pod set | | any other kind (batch, one job per pod) |\n";
  out += "| spec | containers[] and initContainers[] resources.requests (else limits) of " + std::string(kGpuResource) +
         ", cpu, memory; priority, preemptionPolicy Never, priorityClassName, nodeSelector nvidia.com/gpu.product "
         "(the GPU type) | | every other field and resource |\n";
  out +=
      "| status | phase (Succeeded, Failed, Pending), startTime, containerStatuses[].state.terminated.finishedAt | a "
      "pod that never started (no startTime), unless workload.assume_runtime gives it a run time | every other "
      "field |\n";
  out +=
      "\nRefused, naming the path (items[3].spec.containers[0].resources.requests.cpu) and, where found, line and "
      "column: a file that is not JSON or YAML, a kind other than List, PodList or Pod, a pod named twice, a pod "
      "without spec, metadata or creationTimestamp, nvidia.com/gpu that is not a whole number from 0 to 2147483647, "
      "a quantity out of range, a gpu-fraction outside (0, 1] or beside an nvidia.com/gpu request, a startTime "
      "before creationTimestamp.\n";
  return out;
}

}  // namespace headroom::traces
