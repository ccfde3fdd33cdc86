#pragma once

// Inference services: long-running deployments whose replicas (pods of N GPUs) an autoscaler adds
// and removes as a request-rate curve rises and falls. They compete for GPUs with the training
// jobs of the trace under whichever policy runs, so a mixed training + inference cluster can be
// planned (docs/services.md).
//
// The autoscaler is the Kubernetes HorizontalPodAutoscaler's algorithm
// (kubernetes/kubernetes pkg/controller/podautoscaler/horizontal.go, replica_calculator.go) on
// the service's utilization = requests / (replicas x throughput per replica):
//   * every `interval` (the controller's sync period, 15 s by default) the raw recommendation is
//     ceil(replicas x utilization / target) = ceil(rate / (throughput x target)), unless the
//     ratio utilization / target is within `tolerance` (0.1) of 1, when it is the current count;
//     it is clamped to [min_replicas, max_replicas];
//   * stabilization (stabilizeRecommendationWithBehaviors): the count moves up to the smallest
//     recommendation of the last scale_up_window (default 0 s: the newest) and down to the
//     largest of the last scale_down_window (default 300 s);
//   * the default scale-up policies allow at most max(100 % of the current count, 4 pods) more
//     per 15 s; scale-down is limited only by the window (100 % per 15 s).
// Metrics come from the load curve itself (every replica the deployment asks for counts), not
// from the pods that happen to run: the autoscaler's decisions do not depend on the cluster, so
// the replica schedule is computed before the simulation. A replica is one job of kind
// inference (models::Job::service) submitted when the count rises; when it falls, the newest
// replicas go first (a ReplicaSet deletes pending pods first; they are the newest ones): each is
// withdrawn then (models::Job::withdraw_at), leaving the queue if it never started.
//
// SLO attainment (evaluate_service) is measured against the replicas that actually ran: a
// replica serves up to `throughput` requests/s within the latency SLO (the figure a load test
// such as NVIDIA GenAI-Perf reports at the latency target), so at time t the service covers its
// demand when running(t) x throughput >= rate(t). Time attainment is the fraction of the
// service's life in which it does (the definition); request attainment is the fraction
// of requests served within the SLO, integral of min(rate, running x throughput) / integral of
// rate, both integrated in 1 s steps.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/job.hpp"
#include "sim/time.hpp"

namespace headroom::models {

using sim::Tick;

// Requests per second over time. Parametric: mean x (1 + amplitude x cos(2 pi (t - peak) / 24 h)),
// t counted from the simulation's time 0 (the trace's start); or, when `table` is not empty,
// piecewise constant from a CSV of (time, rate) rows: rate(t) = the last row at or before t
// (the first row's rate before it).
struct LoadCurve {
  double mean_rate = 0;                        // requests/s
  double diurnal_amplitude = 0;                // 0 .. 1
  Tick peak = 14 * sim::kHour;                 // time of day of the daily peak
  std::vector<std::pair<Tick, double>> table;  // sorted by time, strictly increasing
  double rate(Tick t) const;
};

// LoadCurve::rate at t = from, from + step, ... in turn (each t at least the last), the same
// doubles, cheaper: a table curve is read with a cursor instead of a search, a flat parametric
// one is one number, and a daily one over more than a day is looked up in one day of values (the
// phase of t is (t - peak) % 24 h, the same for t a day apart once t >= peak; before peak, where
// C++'s % is negative, it is computed as rate() does). evaluate_service reads it every second, the
// autoscaler every interval.
class StepRates {
 public:
  StepRates(const LoadCurve& load, Tick from, Tick to, Tick step);
  double at(Tick t) const;

 private:
  const LoadCurve& load_;
  std::vector<double> day_;  // rate at peak + r0 + i x step, i < 24 h / step; empty: not used
  Tick step_ = 1;
  mutable std::size_t next_ = 0;  // table rows at or before the last t read
};

struct Autoscaler {
  double target_utilization = 0.7;
  Tick interval = 15 * sim::kSecond;
  Tick scale_up_window = 0;
  Tick scale_down_window = 300 * sim::kSecond;
  double tolerance = 0.1;
};

struct ServiceSpec {
  std::string name;
  std::string tenant;
  std::string queue;  // empty: the workload's first queue, or "default"
  std::int32_t gpus_per_replica = 1;
  std::int32_t cpus_per_replica = 0;
  std::int64_t memory_mib_per_replica = 0;
  std::int32_t priority = 0;  // the pods' priority (Kubernetes PriorityClass value)
  bool preemptible = false;   // KAI/Run:ai: inference is non-preemptible by default
  double throughput = 0;      // requests/s one replica serves within the latency SLO
  std::int32_t min_replicas = 1;
  std::int32_t max_replicas = 1;
  Autoscaler autoscaler;
  LoadCurve load;
  Tick start = 0;
  Tick end = sim::kNever;  // kNever: to the end of the workload (build_workload decides)
};

// The autoscaler's replica count over [start, end): steps (time, count), the first at start.
std::vector<std::pair<Tick, std::int32_t>> autoscale(const ServiceSpec& s, Tick end);

// The replicas as jobs, in submit order: `service` is stored in Job::service, tenant and queue
// are the workload's ids. Every replica is withdrawn at its scale-down step or at `end`.
std::vector<Job> replica_jobs(const ServiceSpec& s, std::int32_t service, TenantId tenant, QueueId queue, Tick end);

struct ServiceSlo {
  double time_attainment = 0;     // fraction of [from, to) in which running x throughput >= rate
  double request_attainment = 0;  // requests served within the SLO / requests
  double mean_running = 0;        // replicas running, time-averaged
  double replica_gpu_hours = 0;   // GPU-hours the running replicas held
  double requests = 0;            // requests over [from, to)
};

// `runs`: the [start, end) intervals in which one replica ran (several per replica when it was
// preempted); `to` > `from`.
ServiceSlo evaluate_service(const ServiceSpec& s, const std::vector<std::pair<Tick, Tick>>& runs, Tick from, Tick to);

}  // namespace headroom::models
