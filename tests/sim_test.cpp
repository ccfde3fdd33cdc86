#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "sim/engine.hpp"
#include "sim/errors.hpp"
#include "sim/event_queue.hpp"
#include "sim/fingerprint.hpp"
#include "sim/read_text.hpp"
#include "sim/rng.hpp"
#include "sim/suggest.hpp"
#include "sim/text.hpp"
#include "sim/time.hpp"

namespace hs = headroom::sim;
using hs::EventClass;

TEST(EventQueue, OrdersByTimeThenClassThenSequence) {
  hs::EventQueue q;
  q.push(20, EventClass::JobSubmit, 1);
  q.push(10, EventClass::Schedule, 2);
  q.push(10, EventClass::JobSubmit, 3);
  q.push(10, EventClass::JobFinish, 4);
  q.push(10, EventClass::JobSubmit, 5);
  q.push(5, EventClass::Sample, 6);
  std::vector<std::uint64_t> order;
  while (!q.empty()) order.push_back(q.pop().payload);
  EXPECT_EQ(order, (std::vector<std::uint64_t>{6, 4, 3, 5, 2, 1}));
}

TEST(EventQueue, CancelledEventsNeverRun) {
  hs::EventQueue q;
  auto a = q.push(10, EventClass::JobFinish, 1);
  auto b = q.push(5, EventClass::JobFinish, 2);
  q.push(7, EventClass::JobFinish, 3);
  EXPECT_EQ(q.live_size(), 3u);
  EXPECT_TRUE(q.cancel(b));
  EXPECT_FALSE(q.cancel(b)) << "second cancel of the same event";
  EXPECT_EQ(q.live_size(), 2u);
  EXPECT_EQ(q.next_time(), 7);
  EXPECT_EQ(q.pop().payload, 3u);
  EXPECT_TRUE(q.cancel(a));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.next_time(), hs::kNever);
  EXPECT_FALSE(q.cancel(12345)) << "unknown id";
}

TEST(EventQueue, CancelAfterRunIsRejected) {
  hs::EventQueue q;
  auto a = q.push(1, EventClass::Timer, 9);
  EXPECT_EQ(q.pop().payload, 9u);
  EXPECT_FALSE(q.cancel(a));
}

TEST(EventQueue, ManyEqualTimesKeepInsertionOrder) {
  hs::EventQueue q;
  for (std::uint64_t i = 0; i < 1000; ++i) q.push(42, EventClass::JobSubmit, i);
  for (std::uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(q.pop().payload, i);
}

// Events pushed at the time of the last pop wait in the queue's list for the current time; they
// still run in (time, class, sequence) order among the heap's events of that time.
TEST(EventQueue, EventsPushedForTheCurrentTimeKeepTheOrder) {
  hs::EventQueue q;
  q.push(10, EventClass::JobSubmit, 1);
  q.push(10, EventClass::Sample, 2);
  q.push(10, EventClass::JobFinish, 3);
  q.push(11, EventClass::NodeChange, 4);
  EXPECT_EQ(q.pop().payload, 3u);  // the clock is at 10 now
  q.push(10, EventClass::Schedule, 5);
  q.push(10, EventClass::JobSubmit, 6);
  q.push(10, EventClass::JobEvict, 7);
  q.push(10, EventClass::Schedule, 8);
  q.push(10, EventClass::NodeChange, 9);
  EXPECT_EQ(q.next_time(), 10);
  EXPECT_EQ(q.live_size(), 8u);
  std::vector<std::uint64_t> order;
  std::vector<hs::Tick> times;
  while (!q.empty()) {
    const hs::Event e = q.pop();
    order.push_back(e.payload);
    times.push_back(e.time);
    if (e.payload == 9) q.push(10, EventClass::JobFinish, 10);  // pushed while others of 10 wait
    if (e.payload == 8) q.push(10, EventClass::Timer, 11);      // a lower class than events already run
    if (e.payload == 2) q.push(12, EventClass::JobFinish, 12);  // later: into the heap
  }
  EXPECT_EQ(order, (std::vector<std::uint64_t>{9, 10, 7, 1, 6, 5, 8, 11, 2, 4, 12}));
  EXPECT_EQ(times, (std::vector<hs::Tick>{10, 10, 10, 10, 10, 10, 10, 10, 10, 11, 12}));
}

TEST(EventQueue, CancelsEventsPushedForTheCurrentTime) {
  hs::EventQueue q;
  q.push(5, EventClass::Timer, 1);
  q.push(9, EventClass::Timer, 2);
  EXPECT_EQ(q.pop().payload, 1u);
  const auto a = q.push(5, EventClass::JobFinish, 3);
  const auto b = q.push(5, EventClass::Schedule, 4);
  EXPECT_TRUE(q.cancel(a));
  EXPECT_FALSE(q.cancel(a));
  EXPECT_EQ(q.live_size(), 2u);
  EXPECT_EQ(q.next_time(), 5);
  EXPECT_EQ(q.pop().payload, 4u);
  EXPECT_FALSE(q.cancel(b)) << "already ran";
  const auto c = q.push(5, EventClass::Schedule, 5);
  EXPECT_TRUE(q.cancel(c));
  EXPECT_EQ(q.next_time(), 9) << "the cancelled event at the current time is skipped";
  EXPECT_EQ(q.pop().payload, 2u);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.live_size(), 0u);
}

// The queue alone allows pushing before the last pop's time (the engine does not): the events
// waiting at the current time then still run after the earlier one, in order.
TEST(EventQueue, EventPushedInThePastStillRunsFirst) {
  hs::EventQueue q;
  q.push(10, EventClass::Timer, 1);
  q.push(20, EventClass::Timer, 2);
  EXPECT_EQ(q.pop().payload, 1u);
  q.push(10, EventClass::Sample, 3);
  q.push(10, EventClass::JobFinish, 4);
  q.push(7, EventClass::Sample, 5);
  q.push(7, EventClass::Timer, 6);
  EXPECT_EQ(q.next_time(), 7);
  EXPECT_EQ(q.pop().payload, 6u);
  q.push(7, EventClass::JobSubmit, 7);
  q.push(10, EventClass::Timer, 8);
  std::vector<std::uint64_t> order;
  while (!q.empty()) order.push_back(q.pop().payload);
  EXPECT_EQ(order, (std::vector<std::uint64_t>{7, 5, 4, 8, 3, 2}));
}

// Random pushes (a third of them at the current time), pops and cancels against a std::set of
// (time, class, sequence): the same events come out in the same order.
TEST(EventQueue, MatchesAnOrderedSetUnderRandomOperations) {
  using Key = std::tuple<hs::Tick, int, hs::EventId>;
  hs::RngStream rng(7, "tests/event-queue");
  hs::EventQueue q;
  std::set<Key> model;
  std::vector<hs::EventId> ids;
  hs::Tick now = 0;
  for (int step = 0; step < 20000; ++step) {
    const std::uint64_t op = rng.below(10);
    if (op < 5 || model.empty()) {
      const hs::Tick t = rng.below(3) == 0 ? now : now + rng.between(0, 50);
      static constexpr std::array<EventClass, 7> kClasses = {
          EventClass::NodeChange, EventClass::JobFinish, EventClass::JobEvict, EventClass::JobSubmit,
          EventClass::Timer,      EventClass::Schedule,  EventClass::Sample};
      const EventClass cls = kClasses[rng.below(kClasses.size())];
      const hs::EventId id = q.push(t, cls, static_cast<std::uint64_t>(step));
      model.emplace(t, static_cast<int>(cls), id);
      ids.push_back(id);
    } else if (op < 8) {
      const hs::Event e = q.pop();
      ASSERT_EQ(Key(e.time, static_cast<int>(e.cls), e.seq), *model.begin()) << "step " << step;
      model.erase(model.begin());
      now = e.time;
    } else {
      const hs::EventId id = ids[rng.below(ids.size())];
      const auto it = std::find_if(model.begin(), model.end(), [&](const Key& k) { return std::get<2>(k) == id; });
      ASSERT_EQ(q.cancel(id), it != model.end()) << "step " << step;
      if (it != model.end()) model.erase(it);
    }
    ASSERT_EQ(q.live_size(), model.size());
    ASSERT_EQ(q.next_time(), model.empty() ? hs::kNever : std::get<0>(*model.begin()));
  }
  while (!q.empty()) {
    const hs::Event e = q.pop();
    ASSERT_EQ(Key(e.time, static_cast<int>(e.cls), e.seq), *model.begin());
    model.erase(model.begin());
  }
  EXPECT_TRUE(model.empty());
}

namespace {
struct Recorder : hs::EventHandler {
  std::vector<std::pair<hs::Tick, std::uint64_t>> seen;
  void handle(const hs::Event& e, hs::Engine& engine) override {
    seen.emplace_back(e.time, e.payload);
    if (e.payload < 3) engine.schedule(e.time + 10, EventClass::Timer, e.payload + 1);
  }
};
}  // namespace

TEST(Engine, RunsInOrderAndStopsAtHorizon) {
  hs::Engine engine;
  engine.schedule(0, EventClass::Timer, 0);
  Recorder r;
  EXPECT_EQ(engine.run(r, 15), 2u);
  EXPECT_EQ(engine.now(), 10);
  EXPECT_EQ(engine.run(r), 2u);
  ASSERT_EQ(r.seen.size(), 4u);
  EXPECT_EQ(r.seen.back(), (std::pair<hs::Tick, std::uint64_t>{30, 3}));
  EXPECT_THROW(engine.schedule(5, EventClass::Timer), hs::InternalError) << "scheduling in the past is a bug";
}

TEST(Engine, FingerprintDependsOnOrderAndContent) {
  auto run = [](std::uint64_t first) {
    hs::Engine e;
    e.schedule(0, EventClass::Timer, first);
    Recorder r;
    e.run(r);
    return e.fingerprint().hex();
  };
  EXPECT_EQ(run(0), run(0));
  EXPECT_NE(run(0), run(1));
  EXPECT_EQ(run(0).size(), 16u);
}

TEST(Rng, NamedStreamsAreReproducibleAndIndependent) {
  hs::RngStream a(7, "arrivals"), b(7, "arrivals"), c(7, "failures"), d(8, "arrivals");
  const auto x = a.next_u64();
  EXPECT_EQ(x, b.next_u64());
  EXPECT_NE(x, c.next_u64());
  EXPECT_NE(x, d.next_u64());
}

TEST(Rng, DistributionsHaveTheRightMoments) {
  hs::RngStream r(42, "moments");
  const int n = 200000;
  double su = 0, se = 0, sn = 0, sn2 = 0;
  std::vector<int> counts(6, 0);
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    su += u;
    se += r.exponential(2.0);
    const double z = r.normal(3.0, 2.0);
    sn += z;
    sn2 += (z - 3.0) * (z - 3.0);
    counts[r.below(6)]++;
  }
  EXPECT_NEAR(su / n, 0.5, 0.005);
  EXPECT_NEAR(se / n, 0.5, 0.01);
  EXPECT_NEAR(sn / n, 3.0, 0.02);
  EXPECT_NEAR(sn2 / n, 4.0, 0.05);
  for (int c : counts) EXPECT_NEAR(c, n / 6.0, n * 0.01);
  for (int i = 0; i < 1000; ++i) {
    const auto v = r.between(-3, 3);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
  }
}

TEST(Rng, FixedSequenceIsPinned) {
  // Pins the generator so a change to it (which would change every seeded result) is noticed.
  hs::RngStream r(1);
  const std::uint64_t first = r.next_u64();
  hs::RngStream again(1);
  EXPECT_EQ(first, again.next_u64());
  std::set<std::uint64_t> distinct;
  for (int i = 0; i < 1000; ++i) distinct.insert(r.next_u64());
  EXPECT_EQ(distinct.size(), 1000u);
}

TEST(Time, ParsesDurations) {
  EXPECT_EQ(hs::parse_duration("90"), 90 * hs::kSecond);
  EXPECT_EQ(hs::parse_duration("90s"), 90 * hs::kSecond);
  EXPECT_EQ(hs::parse_duration("500ms"), 500);
  EXPECT_EQ(hs::parse_duration("15m"), 15 * hs::kMinute);
  EXPECT_EQ(hs::parse_duration("2h"), 2 * hs::kHour);
  EXPECT_EQ(hs::parse_duration("7d"), 7 * hs::kDay);
  EXPECT_EQ(hs::parse_duration("1w"), 7 * hs::kDay);
  EXPECT_EQ(hs::parse_duration("1h30m"), 90 * hs::kMinute);
  EXPECT_EQ(hs::parse_duration("1.5s"), 1500);
  EXPECT_EQ(hs::parse_duration(" 3d "), 3 * hs::kDay);
  EXPECT_FALSE(hs::parse_duration(""));
  EXPECT_FALSE(hs::parse_duration("abc"));
  EXPECT_FALSE(hs::parse_duration("5 parsecs"));
  EXPECT_FALSE(hs::parse_duration("-5s"));
  EXPECT_FALSE(hs::parse_duration("99999999999999999999d"));
  EXPECT_FALSE(hs::parse_duration("10x"));
}

TEST(Time, FormatsDurations) {
  EXPECT_EQ(hs::format_duration(1500), "1.5 s");
  EXPECT_EQ(hs::format_duration(3723 * hs::kSecond), "01:02:03");
  EXPECT_EQ(hs::format_duration(hs::kDay + 3723 * hs::kSecond), "1d 01:02:03");
}

TEST(Errors, MessageNamesFileLineColumnAndKey) {
  hs::InputError e("a.yaml", 3, 7, "cluster.pools[0].nodes", "expected an integer");
  EXPECT_STREQ(e.what(), "a.yaml:3:7: cluster.pools[0].nodes: expected an integer");
  hs::InputError f("t.swf", 12, 0, "", "bad");
  EXPECT_STREQ(f.what(), "t.swf:12: bad");
}

TEST(Errors, AFilesValueOfMegabytesKeepsItsStartAndEnd) {
  // A scenario naming a 3 MB policy or trace path: the error keeps 3,000 bytes of the start and
  // 500 of the end of each part, cut on UTF-8 character bounds.
  const std::string name = "\xc3\xa9" + std::string(2999, 'x') + std::string(3'000'000, 'y') + "tail";
  hs::InputError e("s.yaml", 15, 9, "policy.name", "unknown policy \"" + name + "\"");
  const std::string kept = "unknown policy \"";
  const std::size_t total = kept.size() + name.size() + 1;
  // 3,000 bytes: the 16 of the prefix, "é" (2 bytes) and 2,982 x.
  const std::string head = kept + "\xc3\xa9" + std::string(2982, 'x');
  const std::string tail = std::string(495, 'y') + "tail\"";
  EXPECT_EQ(e.message(), head + "[... " + std::to_string(total - 3000 - 500) + " bytes left out ...]" + tail);
  EXPECT_EQ(hs::utf8_error(e.message()), std::string::npos);
  EXPECT_EQ(std::string(e.what()), "s.yaml:15:9: policy.name: " + e.message());
  // A cut that would fall inside a character moves back to its first byte.
  const std::string wide = std::string(2999, 'a') + "\xc3\xa9" + std::string(5000, 'b');
  const hs::InputError w("", 0, 0, "", wide);
  EXPECT_EQ(w.message().substr(0, 3008), std::string(2999, 'a') + "[... 4502");
  // Parts within 4 KiB are kept whole.
  const std::string fits(4096, 'z');
  EXPECT_EQ(hs::InputError("f", 1, 1, fits, fits).where(), fits);
}

// A whole-file read stops one byte past its bound: the text up to the bound is returned whole, one
// byte more is an error on the line where the bound falls, naming what the file should have been.
TEST(ReadCapped, TextUpToTheBoundIsReadAndOneByteMoreIsAnErrorAtItsLine) {
  std::istringstream exact("a\nb\nc\n");
  EXPECT_EQ(hs::read_capped(exact, "f.txt", 6, "a test file"), "a\nb\nc\n");
  std::istringstream longer("a\nb\nc\n");
  try {
    hs::read_capped(longer, "f.txt", 4, "a test file");
    FAIL() << "no error";
  } catch (const hs::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "f.txt:3: more than 4 bytes, far more than a test file ever holds: a device, an endless pipe or a log "
                 "named in its place?");
  }
  // Bounds in whole MiB are said so; the bound is read in chunks, never all at once.
  std::istringstream big(std::string((std::size_t{1} << 20) + 1, '\n'));
  try {
    hs::read_capped(big, "g.txt", std::size_t{1} << 20, "a small file");
    FAIL() << "no error";
  } catch (const hs::InputError& e) {
    EXPECT_EQ(e.line(), (1 << 20) + 1);
    EXPECT_EQ(e.message(),
              "more than 1 MiB, far more than a small file ever holds: a device, an endless pipe or a log named in "
              "its place?");
  }
  std::istringstream empty("");
  EXPECT_EQ(hs::read_capped(empty, "e.txt", 0, "a test file"), "");
}

// One file read for two keys (a slurm.conf named by cluster.slurm_conf and policy.slurm_conf)
// gives the same error twice: it is reported once, in the order found; errors that differ in
// any part stay.
TEST(Errors, RepeatsAreReportedOnce) {
  const hs::InputErrors all(
      {hs::InputError("slurm.conf", 0, 0, "", "no GPU nodes"), hs::InputError("s.yaml", 2, 1, "cluster", "bad"),
       hs::InputError("slurm.conf", 0, 0, "", "no GPU nodes"), hs::InputError("slurm.conf", 1, 0, "", "no GPU nodes")});
  ASSERT_EQ(all.errors().size(), 3u);
  EXPECT_EQ(all.errors()[0].file(), "slurm.conf");
  EXPECT_EQ(all.errors()[1].file(), "s.yaml");
  EXPECT_EQ(all.errors()[2].line(), 1);
  const std::string what = all.what();
  std::size_t times = 0;
  for (auto at = what.find("no GPU nodes"); at != std::string::npos; at = what.find("no GPU nodes", at + 1)) ++times;
  EXPECT_EQ(times, 2u) << what;  // slurm.conf and slurm.conf:1
}

TEST(Suggest, FindsCloseMatchesOnly) {
  const std::vector<std::string> keys = {"horizon", "seed", "workload", "cluster"};
  EXPECT_EQ(hs::closest_match("horizn", keys), "horizon");
  EXPECT_EQ(hs::closest_match("Seed", keys), "seed");
  EXPECT_FALSE(hs::closest_match("zzzzzz", keys));
}

// The calendar arithmetic shared by the trace readers (dates to ticks), the result files' calendar
// text and prime time's local clock.
TEST(Calendar, DaysFromCivilAndBackAgree) {
  EXPECT_EQ(hs::days_from_civil(1970, 1, 1), 0);
  EXPECT_EQ(hs::days_from_civil(2000, 3, 1), 11017);
  EXPECT_EQ(hs::days_from_civil(1969, 12, 31), -1);
  const hs::CivilDate leap = hs::civil_from_days(hs::days_from_civil(2024, 2, 29));
  EXPECT_EQ(leap.year, 2024);
  EXPECT_EQ(leap.month, 2u);
  EXPECT_EQ(leap.day, 29u);
  for (std::int64_t d = -800000; d <= 800000; d += 997) {
    const hs::CivilDate c = hs::civil_from_days(d);
    ASSERT_EQ(hs::days_from_civil(c.year, c.month, c.day), d) << d;
  }
}
