// Issue #31: Slurm's site files (slurm.conf with Include, gres.conf, `sacctmgr show qos -P`,
// `sshare -a -l -P`) that are hostile or damaged are refused naming file:line and the value, or,
// where slurmctld reads them, read as the clean file. Each case names what slurmctld does (SchedMD/
// slurm src/common/parse_config.c, read_config.c, src/slurmctld/read_config.c, gres.c).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/pipeline.hpp"
#include "models/job.hpp"
#include "policies/slurm/hostlist.hpp"
#include "policies/slurm/slurm.hpp"
#include "policies/slurm/slurm_conf.hpp"
#include "results/summary.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"
#include "tests/generated_docs.hpp"
#include "tests/temp_dir.hpp"
#include "traces/import.hpp"

using namespace headroom;
namespace slurm = policies::slurm;
using headroom::testing::TempDir;

namespace {

const std::string kSlurm = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/imports/slurm/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The message of the InputError `f` throws ("" when it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const sim::InputError& e) {
    return e.what();
  }
  return "";
}

std::string conf_error(const std::string& path) {
  return error_of([&] { slurm::read_slurm_conf(path); });
}

// The parameters and pools as one text, to compare two reads.
std::string summary(const slurm::SlurmConfImport& c) {
  std::string s;
  for (const auto& [k, v] : c.params) s += k + "=" + v.text + "\n";
  for (const auto& p : c.cluster.pools)
    s += p.name + " " + std::to_string(p.nodes) + "x" + std::to_string(p.gpus_per_node) + " " + p.gpu_type + " " +
         std::to_string(p.cpus_per_node) + "\n";
  return s + "cpu-only " + std::to_string(c.cpu_only_nodes) + "\n";
}

// `text` with every LF turned into CRLF.
std::string crlf(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\n' ? std::string("\r\n") : std::string(1, c);
  return out;
}

// The fixture site (slurm.conf + slurm-nodes.conf + gres.conf) copied into `dir`, each file passed
// through `edit`.
template <class F>
std::string copy_site(const TempDir& dir, F edit) {
  for (const char* f : {"slurm-nodes.conf", "gres.conf"}) dir.write(f, edit(slurp(kSlurm + f)));
  return dir.write("slurm.conf", edit(slurp(kSlurm + "slurm.conf")));
}

// ---- hostlists ----

TEST(SlurmSiteFiles, HostlistIsCountedBeforeItIsExpanded) {
  // A billion names in 22 bytes: refused at once, not after std::bad_alloc.
  TempDir dir;
  const std::string conf = dir.write("slurm.conf", "ClusterName=x\nNodeName=h[0-999][0-999][0-999] Gres=gpu:1\n");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(conf_error(conf),
            conf + ":2: NodeName: hostlist \"h[0-999][0-999][0-999]\" names more than 1,000,000 hosts");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  try {
    slurm::expand_hostlist("a[0-9999][0-9999]");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "hostlist \"a[0-9999][0-9999]\" names more than 1,000,000 hosts");
  }
}

TEST(SlurmSiteFiles, NodesOfAllLinesAreBoundedBeforeExpanding) {
  TempDir dir;
  const std::string conf =
      dir.write("slurm.conf", "NodeName=a[0-9] Gres=gpu:1\nNodeName=b[000000-999999] Gres=gpu:1\n");
  EXPECT_EQ(conf_error(conf), conf + ":2: NodeName \"b[000000-999999]\": more than 1,000,000 nodes with this line");
}

TEST(SlurmSiteFiles, PartitionMembershipsAreBounded) {
  // 401 partitions over 50,000 nodes: 20,050,000 memberships, refused at the 401st partition (a
  // 1 MiB file of such lines over a million nodes would otherwise run for hours).
  TempDir dir;
  std::string text = "NodeName=n[00000-49999] Gres=gpu:8\n";
  for (int i = 0; i < 401; ++i) text += "PartitionName=p" + std::to_string(i) + " Nodes=ALL\n";
  const std::string conf = dir.write("slurm.conf", text);
  EXPECT_EQ(conf_error(conf), conf +
                                  ":402: more than 20000000 node memberships (nodes of all partitions and gres.conf "
                                  "lines together) with this line");
}

// The peak resident memory this process reaches while running `f`, in MiB; -1 where Linux cannot
// reset the peak (/proc/self/clear_refs) or a sanitizer holds freed memory back (ASan's quarantine).
template <class F>
double peak_mib_during(F f) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  f();
  return -1;
#else
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  f();
  return -1;
#endif
#endif
  const auto status_kib = [](const std::string& field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind(field + ":", 0) == 0) return std::stod(line.substr(field.size() + 1));
    return -1.0;
  };
  std::ofstream clear("/proc/self/clear_refs");
  if (!(clear << "5" << std::flush)) {
    f();
    return -1;
  }
  const double before = status_kib("VmRSS");
  f();
  return (status_kib("VmHWM") - before) / 1024;
#endif
}

TEST(SlurmSiteFiles, HostlistNamesAreMadeOneAtATimeInSlurmsOrder) {
  const slurm::Hostlist a("gpu[01-03,7],login1");
  ASSERT_EQ(a.size(), 5);
  EXPECT_EQ(a.name(0), "gpu01");
  EXPECT_EQ(a.name(2), "gpu03");
  EXPECT_EQ(a.name(3), "gpu7");
  EXPECT_EQ(a.name(4), "login1");
  EXPECT_EQ(a.name_bytes(), 3 * 5 + 4 + 6);
  const slurm::Hostlist b("r[1-2]n[0-1]x");
  ASSERT_EQ(b.size(), 4);
  EXPECT_EQ(b.name(1), "r1n1x");
  EXPECT_EQ(b.name(2), "r2n0x");
  EXPECT_EQ(b.name_bytes(), 4 * 5);
  // Unpadded numbers grow a digit (a9, a10); padded ones keep the lower bound's width.
  EXPECT_EQ(slurm::Hostlist("a[9-10]").name_bytes(), 2 + 3);
  EXPECT_EQ(slurm::Hostlist("n[008-1000]").name_bytes(), 992 * 4 + 5);
  for (const std::string list : {"gpu[01-03,7],login1", "h[5-999]=m[5-999]", "a,b,,c[1-3]d[7-9,10]", "x[0-99999]"}) {
    const slurm::Hostlist h(list);
    const auto names = slurm::expand_hostlist(list);
    ASSERT_EQ(static_cast<std::size_t>(h.size()), names.size()) << list;
    std::int64_t bytes = 0;
    for (std::size_t k = 0; k < names.size(); ++k) {
      bytes += static_cast<std::int64_t>(names[k].size());
      if (k % 997 == 0) {
        EXPECT_EQ(h.name(static_cast<std::int64_t>(k)), names[k]) << list;
      }
    }
    EXPECT_EQ(h.name_bytes(), bytes) << list;
  }
}

TEST(SlurmSiteFiles, CpuOnlyNodesAreCountedNotHeld) {
  // The fuzzer's 69-byte hostlist of 990,025 CPU-only nodes (tests/data/crashers/slurm_conf/
  // hostlist-990k-cpu-only.conf) took 336 MB in a release build: a name, a NodeDef and a hash entry
  // a node. They are counted, a partition may still name them, and a GPU line beside them is a pool.
  TempDir dir;
  const std::string conf = dir.write("slurm.conf",
                                     "NodeName=h[5-999]=mPriorityWeightA[5-999] CPUs=4\n"
                                     "NodeName=g[1-2] Gres=gpu:a100:4\n"
                                     "PartitionName=p Nodes=g[1-2],h5=mPriorityWeightA999,h7=mPriorityWeightA[5-6]\n");
  slurm::SlurmConfImport c;
  const auto t0 = std::chrono::steady_clock::now();
  const double peak = peak_mib_during([&] { c = slurm::read_slurm_conf(conf); });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  if (peak >= 0) {
    EXPECT_LT(peak, 64) << "MiB";
  }
  EXPECT_EQ(c.cpu_only_nodes, 995 * 995);
  ASSERT_EQ(c.cluster.pools.size(), 1u);
  EXPECT_EQ(c.cluster.pools[0].name, "g1-2");
  EXPECT_EQ(c.cluster.pools[0].nodes, 2);
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();  // every node the partition names is defined
  EXPECT_EQ(c.params.at("partitions.p.Nodes").text, "[g1-2]");
}

TEST(SlurmSiteFiles, NodeNamesAreBoundedInBytes) {
  // 320 bytes naming a million nodes of 306 bytes each: 1.1 GB and 4 s before the bound.
  TempDir dir;
  const std::string list = std::string(300, 'n') + "[0-999999]";
  const std::string conf = dir.write("slurm.conf", "NodeName=" + list + "\n");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(conf_error(conf), conf + ":1: NodeName \"" + list.substr(0, 80) +
                                  "...\": the node names of all NodeName lines take more than 67108864 bytes (64 "
                                  "MiB) together with this line");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  // The bound is of all lines together: two lines of 38 MB of names each.
  const std::string half = std::string(70, 'a') + "[000000-499999]";
  const std::string conf2 = dir.write("two.conf", "NodeName=" + half + " CPUs=1\nNodeName=b" + half + " CPUs=1\n");
  EXPECT_EQ(conf_error(conf2), conf2 + ":2: NodeName " + slurm::shown("b" + half) +
                                   ": the node names of all NodeName lines take more than 67108864 bytes (64 MiB) "
                                   "together with this line");
}

TEST(SlurmSiteFiles, CpuOnlyNodeDeclaredTwiceNamesBothLines) {
  TempDir dir;
  const std::string conf =
      dir.write("slurm.conf", "NodeName=c[1-3] CPUs=4\nNodeName=g1 Gres=gpu:1\nNodeName=c[4-5],c2 CPUs=8\n");
  EXPECT_EQ(conf_error(conf), conf + ":3: node \"c2\" is defined twice (first at " + conf + ":1)");
  const std::string same = dir.write("same.conf", "NodeName=g[1-2,2] Gres=gpu:1\n");
  EXPECT_EQ(conf_error(same), same + ":1: node \"g2\" is defined twice (first at " + same + ":1)");
}

TEST(SlurmSiteFiles, PartitionOfAnUndefinedNodeWarnsOnce) {
  TempDir dir;
  const std::string conf =
      dir.write("slurm.conf", "NodeName=c1 CPUs=4\nNodeName=g[1-2] Gres=gpu:1\nPartitionName=p Nodes=c1,g[1-3],x9\n");
  const auto c = slurm::read_slurm_conf(conf);
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_EQ(c.warnings[0], conf + ":3: partition p names node \"g3\", which no NodeName line defines");
  EXPECT_EQ(c.params.at("partitions.p.Nodes").text, "[g1-2]");
}

// ---- byte-order marks, CRLF, NUL, non-UTF-8 ----

TEST(SlurmSiteFiles, ByteOrderMarkInSlurmConfIsRefusedAsSlurmctldDoes) {
  // parse_config.c's key pattern does not match the BOM: "Parse error in file ... line 1".
  TempDir dir;
  const std::string conf = copy_site(dir, [](const std::string& s) { return s; });
  dir.write("slurm.conf", "\xEF\xBB\xBF" + slurp(conf));
  EXPECT_EQ(conf_error(conf), conf +
                                  ":1: the file starts with a UTF-8 byte-order mark (bytes EF BB BF), which "
                                  "slurmctld cannot parse (\"Parse error in file ... line 1\"): save it without one");
}

TEST(SlurmSiteFiles, ByteOrderMarkInIncludedFileAndGresConfIsRefused) {
  TempDir dir;
  const std::string conf = copy_site(dir, [](const std::string& s) { return s; });
  const std::string nodes = dir.write("slurm-nodes.conf", "\xEF\xBB\xBF" + slurp(kSlurm + "slurm-nodes.conf"));
  const std::string bom = ":1: the file starts with a UTF-8 byte-order mark (bytes EF BB BF)";
  EXPECT_EQ(conf_error(conf).substr(0, nodes.size() + bom.size()), nodes + bom);
  dir.write("slurm-nodes.conf", slurp(kSlurm + "slurm-nodes.conf"));
  const std::string gres = dir.write("gres.conf", "\xEF\xBB\xBF" + slurp(kSlurm + "gres.conf"));
  EXPECT_EQ(conf_error(conf).substr(0, gres.size() + bom.size()), gres + bom);
}

TEST(SlurmSiteFiles, CrlfSiteReadsAsTheClean) {
  // Regression guard: fgets keeps the CR and the key pattern takes it as space.
  TempDir clean_dir, crlf_dir;
  const auto clean = slurm::read_slurm_conf(copy_site(clean_dir, [](const std::string& s) { return s; }));
  const auto dos = slurm::read_slurm_conf(copy_site(crlf_dir, crlf));
  EXPECT_EQ(summary(dos), summary(clean));
  EXPECT_EQ(dos.params.at("SchedulerParameters").text, clean.params.at("SchedulerParameters").text);
}

TEST(SlurmSiteFiles, ContinuationWithSpaceAfterTheBackslashJoinsLines) {
  // _strip_continuation skips trailing space (CR included) before looking for the '\'.
  TempDir dir;
  const std::string conf = dir.write(
      "slurm.conf", "NodeName=g[1-2] \\  \r\n  Gres=gpu:a100:8\r\nPriorityWeightAge=7 \\\t\nPriorityMaxAge=1-0\n");
  const auto c = slurm::read_slurm_conf(conf);
  ASSERT_EQ(c.cluster.pools.size(), 1u);
  EXPECT_EQ(c.cluster.pools[0].gpus_per_node, 8);
  EXPECT_EQ(c.params.at("PriorityWeightAge").text, "7");
  EXPECT_EQ(c.params.at("PriorityMaxAge").text, "1-0");
}

TEST(SlurmSiteFiles, NulByteIsRefusedWithLineAndColumn) {
  TempDir dir;
  const char text[] = "ClusterName=x\nNodeName=g1\0x Gres=gpu:4\n";
  const std::string conf = dir.write("slurm.conf", std::string(text, sizeof text - 1));
  EXPECT_EQ(conf_error(conf), conf + ":2: a NUL byte at column 12 (not a text file?)");
}

TEST(SlurmSiteFiles, NonUtf8NamesAreRefusedButNotInComments) {
  TempDir dir;
  const std::string node = dir.write("node.conf", "NodeName=g\xE9[1-2] Gres=gpu:4\n");
  EXPECT_EQ(conf_error(node),
            node + ":1: byte 0xe9 at column 11 is not UTF-8 (names must be UTF-8 text: save the file as UTF-8)");
  const std::string part = dir.write("part.conf", "NodeName=g[1-2] Gres=gpu:4\nPartitionName=gr\xFC\x6E Nodes=ALL\n");
  EXPECT_EQ(conf_error(part),
            part + ":2: byte 0xfc at column 17 is not UTF-8 (names must be UTF-8 text: save the file as UTF-8)");
  // A Latin-1 comment is no name: read as without it.
  const std::string comment = dir.write("comment.conf", "# M\xFCller's nodes\nNodeName=g[1-2] Gres=gpu:4\n");
  EXPECT_EQ(slurm::read_slurm_conf(comment).cluster.pools.size(), 1u);
}

// ---- Include ----

TEST(SlurmSiteFiles, IncludeOfAMissingFileNamesTheIncludeLine) {
  TempDir dir;
  const std::string conf = dir.write("slurm.conf", "ClusterName=x\n\nInclude nodes.conf\n");
  EXPECT_EQ(conf_error(conf), conf + ":3: Include nodes.conf: no such file (" + dir.path("nodes.conf") + ")");
}

TEST(SlurmSiteFiles, IncludeOfAFolderIsRefused) {
  TempDir dir;
  std::filesystem::create_directories(dir.path("nodes.d"));
  const std::string conf = dir.write("slurm.conf", "NodeName=g[1-2] Gres=gpu:4\nInclude nodes.d\n");
  EXPECT_EQ(conf_error(conf), conf +
                                  ":2: Include nodes.d: a folder, not a file (slurmctld reads nothing from it; "
                                  "Include names one file) (" +
                                  dir.path("nodes.d") + ")");
}

// A device or an endless pipe named as slurm.conf, as an Include, as gres.conf or as an exported
// table is refused at a bound (64 MiB a configuration file, 256 MiB a table), not read until memory
// runs out: /dev/zero took 4.8 GB in 10 s before the bound.
TEST(SlurmSiteFiles, ADeviceIsRefusedAtABoundWithBoundedMemory) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  const std::string tail = ": a device, an endless pipe or a log named in its place?";
  std::string err;
  double peak = peak_mib_during([&] { err = conf_error("/dev/zero"); });
  EXPECT_EQ(err, "/dev/zero:1: more than 64 MiB, far more than a Slurm configuration file ever holds" + tail);
  if (peak >= 0) {
    EXPECT_LT(peak, 400) << "MiB";
  }
  TempDir dir;
  const std::string conf = dir.write("slurm.conf", "NodeName=g[1-2] Gres=gpu:4\nInclude /dev/zero\n");
  EXPECT_EQ(conf_error(conf), conf +
                                  ":2: Include /dev/zero: more than 64 MiB, far more than a Slurm configuration "
                                  "file ever holds" +
                                  tail + " (/dev/zero)");
  peak = peak_mib_during([&] { err = error_of([&] { slurm::read_sshare("/dev/zero"); }); });
  EXPECT_EQ(err, "/dev/zero:1: more than 256 MiB, far more than a sacctmgr or sshare table ever holds" + tail);
  if (peak >= 0) {
    EXPECT_LT(peak, 1200) << "MiB";
  }
  EXPECT_EQ(error_of([&] { slurm::read_sacctmgr_qos("/dev/zero"); }),
            "/dev/zero:1: more than 256 MiB, far more than a sacctmgr or sshare table ever holds" + tail);
}

// Files included many times add up: past 256 MiB read in all, the Include that passes it is refused.
TEST(SlurmSiteFiles, IncludesTogetherAreBounded) {
  TempDir dir;
  dir.write("big.conf", std::string(std::size_t{60} << 20, '#'));
  std::string text = "NodeName=g[1-2] Gres=gpu:4\n";
  for (int i = 0; i < 5; ++i) text += "Include big.conf\n";
  const std::string conf = dir.write("slurm.conf", text);
  EXPECT_EQ(conf_error(conf), conf +
                                  ":6: Include big.conf: the configuration files read so far hold more than 256 MiB "
                                  "together (a large file included many times?) (" +
                                  dir.path("big.conf") + ")");
}

TEST(SlurmSiteFiles, IncludeOfAGlobIsRefusedAsSlurmctldDoes) {
  TempDir dir;
  const std::string conf = dir.write("slurm.conf", "NodeName=g[1-2] Gres=gpu:4\ninclude nodes/*.conf\n");
  EXPECT_EQ(conf_error(conf), conf +
                                  ":2: Include nodes/*.conf: slurmctld does not expand globs (\"Slurm does not "
                                  "support glob parsing\")");
}

TEST(SlurmSiteFiles, IncludeOfItselfNamesTheIncludeLine) {
  TempDir dir;
  const std::string conf = dir.write("slurm.conf", "NodeName=g[1-2] Gres=gpu:4\n\\\n\nInclude part.conf\n");
  const std::string part = dir.write("part.conf", "PartitionName=p Nodes=ALL\n# loop\nInclude slurm.conf\n");
  EXPECT_EQ(conf_error(conf),
            part + ":3: Include slurm.conf: the file includes itself (an Include loop) (" + conf + ")");
}

TEST(SlurmSiteFiles, RelativeIncludeIsFoundBesideSlurmConf) {
  // get_extra_conf_path: a relative Include names a file in slurm.conf's folder, whichever file
  // includes it.
  TempDir dir;
  std::filesystem::create_directories(dir.path("sub"));
  const std::string conf = dir.write("slurm.conf", "Include sub/nodes.conf\n");
  const std::string nodes = dir.write("sub/nodes.conf", "NodeName=g[1-2] Gres=gpu:4\nInclude parts.conf\n");
  const std::string parts = dir.write("parts.conf", "PartitionName=p Nodes=ALL\n");
  const auto c = slurm::read_slurm_conf(conf);
  EXPECT_EQ(c.params.at("partitions.p.Nodes").text, "[g1-2]");
  EXPECT_EQ(c.files, (std::vector<std::string>{conf, dir.path("sub/nodes.conf"), parts}));
}

TEST(SlurmSiteFiles, FilesListsEveryIncludeAndGresConf) {
  const auto c = slurm::read_slurm_conf(kSlurm + "slurm.conf");
  EXPECT_EQ(c.files,
            (std::vector<std::string>{kSlurm + "slurm.conf", kSlurm + "slurm-nodes.conf", kSlurm + "gres.conf"}));
}

TEST(SlurmSiteFiles, EmptyIncludedFileReadsAsNone) {
  // s_p_parse_file: 'file "..." is empty', and on.
  TempDir dir;
  dir.write("empty.conf", "");
  const std::string with = dir.write("slurm.conf", "NodeName=g[1-2] Gres=gpu:4\nInclude empty.conf\n");
  EXPECT_EQ(slurm::read_slurm_conf(with).cluster.pools.size(), 1u);
}

TEST(SlurmSiteFiles, GresConfThatIsAFolderIsRefused) {
  TempDir dir;
  std::filesystem::create_directories(dir.path("gres.conf"));
  const std::string conf = dir.write("slurm.conf", "NodeName=g[1-2] Gres=gpu:4\n");
  EXPECT_EQ(conf_error(conf),
            dir.path("gres.conf") + ": a folder, not a file (slurmctld reads nothing from it; Include names one file)");
}

// ---- sizes ----

TEST(SlurmSiteFiles, GpusPerNodeAboveThePoolLimitAreRefused) {
  TempDir dir;
  const std::string conf = dir.write("slurm.conf", "NodeName=g[1-2] Gres=gpu:a100:100000\n");
  EXPECT_EQ(conf_error(conf), conf +
                                  ":1: Gres: \"gpu:a100:100000\" gives a node more than 1024 GPUs (the most a "
                                  "scenario's pool may have per node)");
  // gpu:2k is 2048 GPUs to Slurm (suffix_mult), not 2.
  const std::string suffix = dir.write("k.conf", "NodeName=g[1-2] Gres=gpu:2k\n");
  EXPECT_EQ(conf_error(suffix), suffix +
                                    ":1: Gres: \"gpu:2k\" gives a node more than 1024 GPUs (the most a scenario's pool "
                                    "may have per node)");
  const std::string sum = dir.write("sum.conf", "NodeName=g1 Gres=gpu:a:1000,gpu:b:1000\n");
  EXPECT_NE(conf_error(sum).find(":1: Gres: \"gpu:a:1000,gpu:b:1000\" gives a node more than 1024 GPUs"),
            std::string::npos);
  const std::string one_k = dir.write("1k.conf", "NodeName=g1 Gres=gpu:1K\n");
  EXPECT_EQ(slurm::read_slurm_conf(one_k).cluster.pools.at(0).gpus_per_node, 1024);
}

TEST(SlurmSiteFiles, CpuTopologyOverflowIsRefused) {
  TempDir dir;
  const std::string conf =
      dir.write("slurm.conf", "NodeName=g1 Gres=gpu:4 Sockets=100000 CoresPerSocket=100000 ThreadsPerCore=100000\n");
  EXPECT_EQ(conf_error(conf), conf +
                                  ":1: Boards x Sockets x CoresPerSocket x ThreadsPerCore = 1 x 100000 x 100000 x "
                                  "100000 CPUs, more than 1000000 (the most a scenario's pool may have per node)");
}

TEST(SlurmSiteFiles, HugeAndNegativeNumbersAreRefusedWithTheValue) {
  TempDir dir;
  const std::string mem = dir.write("mem.conf", "NodeName=g1 Gres=gpu:4 RealMemory=99999999999999999999\n");
  EXPECT_EQ(conf_error(mem),
            mem + ":1: RealMemory: expected an integer from 0 to 1000000000000, got \"99999999999999999999\"");
  const std::string gres = dir.write("gres.conf.txt", "NodeName=g1 Gres=gpu:a100:1e30\n");
  EXPECT_EQ(conf_error(gres), gres + ":1: Gres: expected a GPU count like gpu:8 or gpu:a100:8, got \"gpu:a100:1e30\"");
}

// ---- malformed records ----

TEST(SlurmSiteFiles, KeyWithoutValueIsRefused) {
  // keyvalue_pattern wants a value after '=': slurmctld's "Parse error".
  TempDir dir;
  const std::string conf = dir.write("slurm.conf", "NodeName= Gres=gpu:4\n");
  EXPECT_EQ(conf_error(conf), conf + ":1: NodeName: no value after '='");
  const std::string end = dir.write("end.conf", "NodeName=g1 Gres=gpu:4\nClusterName=\n");
  EXPECT_EQ(conf_error(end), end + ":2: ClusterName: no value after '='");
}

TEST(SlurmSiteFiles, StrayWordIsRefused) {
  TempDir dir;
  const std::string conf = dir.write("slurm.conf", "NodeName=g1 Gres=gpu:4 Default\n");
  EXPECT_EQ(conf_error(conf), conf + ":1: expected Key=Value, got \"Default\"");
}

TEST(SlurmSiteFiles, SpaceAroundEqualsReadsAsWithout) {
  // keyvalue_pattern allows space on both sides of '='.
  TempDir dir;
  const std::string spaced = dir.write("a.conf", "NodeName = g[1-2]  Gres= gpu:a100:8\nPartitionName =p Nodes= ALL\n");
  const std::string tight = dir.write("b.conf", "NodeName=g[1-2] Gres=gpu:a100:8\nPartitionName=p Nodes=ALL\n");
  EXPECT_EQ(summary(slurm::read_slurm_conf(spaced)), summary(slurm::read_slurm_conf(tight)));
}

// ---- objects declared twice ----

TEST(SlurmSiteFiles, PartitionDeclaredTwiceIsRefusedNamingBothLines) {
  // slurmctld: fatal "duplicate entry for partition" (src/slurmctld/read_config.c).
  TempDir dir;
  const std::string conf = dir.write("slurm.conf", "NodeName=g[1-2] Gres=gpu:4\nPartitionName=p Nodes=g1\n");
  const std::string more = dir.write("more.conf", "PartitionName=p Nodes=g2 PriorityTier=5\n");
  dir.write("slurm.conf", slurp(conf) + "Include more.conf\n");
  EXPECT_EQ(conf_error(conf), more + ":1: partition \"p\" is defined twice (first at " + conf +
                                  ":2); slurmctld stops on a duplicate partition");
}

TEST(SlurmSiteFiles, NodeDeclaredTwiceNamesBothLines) {
  TempDir dir;
  const std::string conf = dir.write("slurm.conf", "NodeName=g[1-4] Gres=gpu:4\nNodeName=g3 Gres=gpu:8\n");
  EXPECT_EQ(conf_error(conf), conf + ":2: node \"g3\" is defined twice (first at " + conf + ":1)");
}

// ---- sacctmgr and sshare outputs ----

TEST(SlurmSiteFiles, QosTwiceIsRefused) {
  TempDir dir;
  const std::string qos = dir.write("qos.txt", "Name|Priority\nnormal|0\nhigh|100\nnormal|5\n");
  EXPECT_EQ(error_of([&] { slurm::read_sacctmgr_qos(qos); }),
            qos + ":4: QOS \"normal\" appears twice (first at line 2); sacctmgr prints each QOS once");
}

TEST(SlurmSiteFiles, ByteOrderMarkAndCrlfInSacctmgrAndSshareReadAsTheClean) {
  TempDir dir;
  const std::string qos = dir.write("qos.txt", "\xEF\xBB\xBF" + crlf(slurp(kSlurm + "qos.txt")));
  const std::string share = dir.write("sshare.txt", "\xEF\xBB\xBF" + crlf(slurp(kSlurm + "sshare.txt")));
  const auto params_of = [](const slurm::SlurmConfImport& c) {
    std::string s;
    for (const auto& [k, v] : c.params) s += k + "=" + v.text + "@" + std::to_string(v.line) + "\n";
    return s;
  };
  EXPECT_EQ(params_of(slurm::read_sacctmgr_qos(qos)), params_of(slurm::read_sacctmgr_qos(kSlurm + "qos.txt")));
  EXPECT_EQ(params_of(slurm::read_sshare(share)), params_of(slurm::read_sshare(kSlurm + "sshare.txt")));
}

TEST(SlurmSiteFiles, SshareUserOfAnUndeclaredAccountIsRefused) {
  TempDir dir;
  const std::string share = dir.write("sshare.txt",
                                      "Account|User|RawShares|RawUsage\nroot|||0\n vision||3|0\n  vision|alice|1|0\n"
                                      "  nlp|bob|1|0\n");
  EXPECT_EQ(error_of([&] { slurm::read_sshare(share); }),
            share +
                ":5: user \"bob\" of account \"nlp\", which no earlier row declares (sshare -a prints an account's row "
                "before its users')");
}

TEST(SlurmSiteFiles, PipeTablesRefuseNulNonUtf8AndNonFiniteUsage) {
  TempDir dir;
  const char text[] = "Name|Priority\nnor\0mal|0\n";
  const std::string nul = dir.write("qos.txt", std::string(text, sizeof text - 1));
  EXPECT_EQ(error_of([&] { slurm::read_sacctmgr_qos(nul); }), nul + ":2: a NUL byte at column 4 (not a text file?)");
  const std::string latin = dir.write("q2.txt", "Name|Priority\nh\xF6h|0\n");
  EXPECT_EQ(error_of([&] { slurm::read_sacctmgr_qos(latin); }),
            latin + ":2: name: \"h\\xf6h\" is not UTF-8 text (names must be UTF-8: save the file as UTF-8)");
  const std::string inf =
      dir.write("sshare.txt", "Account|User|RawShares|RawUsage\nroot|||0\n vision||3|0\n  vision|alice|1|inf\n");
  EXPECT_EQ(error_of([&] { slurm::read_sshare(inf); }), inf + ":4: RawUsage: expected a number, got \"inf\"");
}

}  // namespace

// ---- GRES as Slurm's own documentation configures it (tests/data/imports/slurm-gres) ----

namespace {

const std::string kGres = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/imports/slurm-gres/";

std::string pools_of(const slurm::SlurmConfImport& c) {
  std::string s;
  for (const auto& p : c.cluster.pools)
    s += p.name + " " + std::to_string(p.nodes) + "x" + std::to_string(p.gpus_per_node) + " " + p.gpu_type + "\n";
  return s;
}

std::string warnings_of(const slurm::SlurmConfImport& c) {
  std::string s;
  for (const auto& w : c.warnings) s += w + "\n";
  return s;
}

}  // namespace

TEST(SlurmGres, NodeOfTwoTypesIsOneNodePerTypeAndTypedJobsRunOnIt) {
  // Slurm's MIG example: one A100 and two 3g.20gb slices a node. Read before as 3 GPUs of no type,
  // so a job asking for gpu:a100_3g.20gb was rejected ("Requested node configuration is not
  // available") where Slurm runs it.
  const std::string conf = kGres + "mig/slurm.conf";
  const auto c = slurm::read_slurm_conf(conf);
  EXPECT_EQ(pools_of(c), "tux1-16-a100 16x1 a100\ntux1-16-a100_3g.20gb 16x2 a100_3g.20gb\n");
  EXPECT_EQ(warnings_of(c),
            conf +
                ":3: NodeName tux[1-16]: GPUs of several types (a100:1, a100_3g.20gb:2) on one node: "
                "read as one node per type (pools named <nodes>-<type>), the node's CPUs and memory "
                "shared out by GPU count; an untyped request for more GPUs on one node than one type has "
                "does not fit there (Slurm would give it GPUs of both types)\n");
  TempDir dir;
  dir.write("jobs.sacct",
            "JobID|User|Submit|Start|Elapsed|State|AllocTRES\n"
            "1|alice|2024-05-01T10:00:00|2024-05-01T10:00:00|00:20:00|COMPLETED|gres/gpu:a100_3g.20gb=2\n"
            "2|bob|2024-05-01T10:00:00|2024-05-01T10:00:00|00:10:00|COMPLETED|gres/gpu:a100=1\n"
            "3|carol|2024-05-01T10:00:00|2024-05-01T10:00:00|00:10:00|COMPLETED|gres/gpu:a100=2\n");
  const std::string path =
      dir.write("s.yaml", "name: mig\ncluster: {slurm_conf: " + conf + "}\npolicy: {name: slurm, slurm_conf: " + conf +
                              "}\nworkload: {trace: jobs.sacct}\n");
  const auto r = app::run_scenario(scenarios::load_scenario(path)).result;
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].state, static_cast<std::uint8_t>(models::JobState::Completed));
  EXPECT_EQ(r.jobs[0].pool, 1);  // the 3g.20gb slices
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(r.jobs[1].state, static_cast<std::uint8_t>(models::JobState::Completed));
  EXPECT_EQ(r.jobs[1].pool, 0);
  // Two a100 on one node do not exist: as --gres=gpu:a100:2 per node, Slurm spreads it over two nodes.
  EXPECT_EQ(r.jobs[2].state, static_cast<std::uint8_t>(models::JobState::Completed));
  EXPECT_EQ(r.jobs[2].pool, 0);
}

TEST(SlurmGres, MpsAndAutoDetectWarnOnceEach) {
  const std::string conf = kGres + "mps/slurm.conf", gres = kGres + "mps/gres.conf";
  const auto c = slurm::read_slurm_conf(conf);
  EXPECT_EQ(pools_of(c), "tux0-7-tesla 8x2 tesla\ntux0-7-kepler 8x2 kepler\n");
  // gres.conf's Name=mps lines say nothing the slurm.conf warning has not said.
  EXPECT_EQ(warnings_of(c),
            conf +
                ":3: NodeName tux[0-7]: GPUs of several types (tesla:2, kepler:2) on one node: read as one node per "
                "type (pools named <nodes>-<type>), the node's CPUs and memory shared out by GPU count; an untyped "
                "request for more GPUs on one node than one type has does not fit there (Slurm would give it GPUs of "
                "both types)\n" +
                conf +
                ":3: Gres mps:400: GPU sharing by CUDA MPS (gres/mps) is not modelled; jobs are given whole GPUs\n" +
                gres +
                ":2: AutoDetect=nvml: what the node's library would detect is not known here; the GPUs are "
                "slurm.conf's Gres= counts, typed by Gres= or by gres.conf's Type=\n");
}

TEST(SlurmGres, ShardsWarnAndSeveralGresConfTypesKeepTheFirst) {
  const std::string conf = kGres + "shard/slurm.conf", gres = kGres + "shard/gres.conf";
  const auto c = slurm::read_slurm_conf(conf);
  EXPECT_EQ(pools_of(c), "tux1-16 16x2 gtx1080\n");
  EXPECT_EQ(warnings_of(c),
            conf +
                ":3: Gres shard:64: GPU sharing by shards (gres/shard) is not modelled; jobs are given whole GPUs\n" +
                gres +
                ":3: AutoDetect=nvml: what the node's library would detect is not known here; the GPUs are "
                "slurm.conf's Gres= counts, typed by Gres= or by gres.conf's Type=\n" +
                gres +
                ":5: gres.conf names GPUs of types gtx1080 and gtx1070 for node tux1, whose slurm.conf Gres= names "
                "no type: read as gtx1080 (write Gres=gpu:TYPE:N,gpu:TYPE:N in slurm.conf to split them)\n");
}

TEST(SlurmGres, PartitionPerGpuDefaultsPlaceJobsThatNameNoCpus) {
  // DefCpuPerGPU and DefMemPerGPU give a job that names no CPUs (memory) its share per GPU: on a
  // 4-GPU node of 32 CPUs with DefCpuPerGPU=16, two 1-GPU jobs fill the CPUs and the third waits.
  // MaxMemPerNode still warns.
  TempDir dir;
  const std::string conf =
      dir.write("slurm.conf",
                "NodeName=g1 Gres=gpu:a100:4 CPUs=32 RealMemory=512000\n"
                "PartitionName=gpu Nodes=ALL DefMemPerGPU=16000 DefCpuPerGPU=16 MaxMemPerNode=500000 Default=YES\n");
  const auto c = slurm::read_slurm_conf(conf);
  EXPECT_EQ(warnings_of(c), conf + ":2: partition field maxmempernode=500000 changes scheduling and is not modelled\n");
  EXPECT_EQ(c.params.at("partitions.gpu.DefCpuPerGPU").text, "16");
  EXPECT_EQ(c.params.at("partitions.gpu.DefMemPerGPU").text, "16000");
  const auto run = [&](const std::string& trace) {
    dir.write("jobs.sacct", trace);
    const std::string path = dir.write("s.yaml",
                                       "name: defs\ncluster: {slurm_conf: slurm.conf}\npolicy: {name: slurm, "
                                       "slurm_conf: slurm.conf}\nworkload: {trace: jobs.sacct}\n");
    return app::run_scenario(scenarios::load_scenario(path)).result;
  };
  const std::string head = "JobID|User|Submit|Start|Elapsed|State|AllocTRES\n";
  const auto r = run(head +
                     "1|a|2024-05-01T10:00:00|2024-05-01T10:00:00|00:30:00|COMPLETED|gres/gpu=1\n"
                     "2|b|2024-05-01T10:00:00|2024-05-01T10:00:00|00:30:00|COMPLETED|gres/gpu=1\n"
                     "3|c|2024-05-01T10:00:00|2024-05-01T10:00:00|00:30:00|COMPLETED|gres/gpu=1\n");
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(r.jobs[1].start, 0);
  EXPECT_EQ(r.jobs[2].start, 30 * sim::kMinute);  // 16 CPUs each: the third waits for a pair
  // A job that names its CPUs keeps them: three 1-GPU jobs of 8 CPUs all start.
  const auto named = run(head +
                         "1|a|2024-05-01T10:00:00|2024-05-01T10:00:00|00:30:00|COMPLETED|cpu=8,gres/gpu=1\n"
                         "2|b|2024-05-01T10:00:00|2024-05-01T10:00:00|00:30:00|COMPLETED|cpu=8,gres/gpu=1\n"
                         "3|c|2024-05-01T10:00:00|2024-05-01T10:00:00|00:30:00|COMPLETED|cpu=8,gres/gpu=1\n");
  ASSERT_EQ(named.jobs.size(), 3u);
  EXPECT_EQ(named.jobs[2].start, 0);
}

TEST(SlurmRunSummary, MakespanAndUtilizationEndWithTheLastJobNotItsTimeLimit) {
  // The BioMedIA site (tests/data/imports/slurm-site): its gpus partition's MaxTime is 7 days, and
  // backfill keeps a wake-up at the waiting 8-GPU job's time limit (10:50). The jobs end at 10:30:
  // the run, its makespan and its utilization end there (they ran to 10:50 before).
  const std::string dir = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/imports/slurm-site/";
  const auto sc = scenarios::parse_scenario(
      "name: biomedia\ncluster: {slurm_conf: slurm.conf}\npolicy: {name: slurm, slurm_conf: slurm.conf}\n"
      "workload: {trace: jobs.sacct}\n",
      dir + "inline.yaml");
  const auto run = app::run_scenario(sc);
  const auto& r = run.result;
  EXPECT_EQ(r.sim_end - r.sim_start, 30 * sim::kMinute);
  const auto s = results::summarize(r);
  EXPECT_DOUBLE_EQ(s.makespan_s, 1800);
  // 8x20 + 8x20 + 8x10 + 4x10 GPU-minutes on 20 GPUs over 30 minutes.
  EXPECT_NEAR(s.gpu_utilization, 440.0 / 600.0, 1e-12);
  // The events are the ones the issue #38 backfill rules give (0682c7afd32b07d2 before them); the
  // run end moved, the events did not.
  EXPECT_EQ(r.fingerprint, "f9f2e822d0870f74");
}

TEST(SlurmSiteFiles, NegativeTresWeightsAreReadAsSlurmReadsThem) {
  // slurm_get_tres_weight_array reads each weight with strtod, no sign check: a negative GPU weight
  // lowers the priority of GPU-heavy jobs. Weights of TRES the policy does not count warn.
  TempDir dir;
  const std::string conf = dir.write("slurm.conf",
                                     "PriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=-1000,GRES/gpu:l40s=15000\n"
                                     "NodeName=g[1-2] Gres=gpu:l40s:4 CPUs=32\n");
  const auto c = slurm::read_slurm_conf(conf);
  EXPECT_EQ(c.params.at("PriorityWeightTRES").text, "CPU=1000,Mem=2000,GRES/gpu=-1000");
  EXPECT_EQ(warnings_of(c), conf +
                                ":1: PriorityWeightTRES item GRES/gpu:l40s=15000 is not modelled (the weights of CPU, "
                                "Mem and GRES/gpu are)\n");
  const slurm::Config config = slurm::parse_config(c.params);
  EXPECT_EQ(config.w_tres.at("GRES/gpu"), -1000);
  // The sum is clamped at 1 as priority_p_set does: a job of all the GPUs and nothing else.
  slurm::Factors f;
  f.tres["GRES/gpu"] = 1.0;
  EXPECT_EQ(slurm::multifactor_priority(config, f), 1u);
  f.tres["CPU"] = 1.0;
  f.tres["Mem"] = 1.0;
  EXPECT_EQ(slurm::multifactor_priority(config, f), 2000u);  // 1000 + 2000 - 1000
  // Billing weights stay non-negative.
  const std::string bad = dir.write("bad.conf", "TRESBillingWeights=CPU=1,GRES/gpu=-2\nNodeName=g1 Gres=gpu:1\n");
  EXPECT_THROW(slurm::parse_config(slurm::read_slurm_conf(bad).params), sim::InputError);
}

TEST(SlurmSiteFiles, SlurmTestsuiteTresWeightsWithNegativeItemsReadAsSlurmReadsThem) {
  // Slurm's own testsuite (test3.5, GPL-2.0-or-later; tests/data/imports/slurm-testsuite) sets a
  // partition's TRESBillingWeights to a list with negative items, a weight written ".3" and a TRES
  // type in mixed case, and checks slurmctld keeps it. The value is taken out of the excerpt as is.
  const std::string excerpt =
      slurp(std::string(HEADROOM_SOURCE_DIR) + "/tests/data/imports/slurm-testsuite/test3.5-lines-227-247.exp");
  const std::string set = "set tres_line \"";
  const auto at = excerpt.find(set);
  ASSERT_NE(at, std::string::npos);
  const std::string weights = excerpt.substr(at + set.size(), excerpt.find('"', at + set.size()) - at - set.size());
  ASSERT_EQ(weights, "cPu=1,mem=-0.5G,node=.3,energy=-10");

  // Where test3.5 puts it, a partition's TRESBillingWeights: per-partition billing is not modelled,
  // so the list is one warning quoting it, and nothing is refused.
  TempDir dir;
  const std::string part = dir.write("part.conf",
                                     "NodeName=g[1-2] Gres=gpu:4 CPUs=32 RealMemory=256000\n"
                                     "PartitionName=gpu Nodes=g[1-2] Default=YES TRESBillingWeights=" +
                                         weights + "\n");
  const auto p = slurm::read_slurm_conf(part);
  EXPECT_EQ(pools_of(p), "g1-2 2x4 gpu\n");
  EXPECT_EQ(warnings_of(p),
            part + ":2: partition field tresbillingweights=" + weights + " changes scheduling and is not modelled\n");
  EXPECT_TRUE(slurm::parse_config(p.params).billing.empty());  // billing stays by CPUs

  // The same list as PriorityWeightTRES (slurmctld reads both with slurm_get_tres_weight_array):
  // the type in any case is CPU, as assoc_mgr_find_tres_pos compares it (before: "cPu=1" was kept
  // as written and the policy refused it); Mem's -0.5G is -0.5 / 1024, Slurm dividing a weight
  // given in G by 1024 for a TRES counted in MB; Node and energy, which headroom does not count,
  // warn once each.
  const std::string prio = dir.write(
      "prio.conf", "PriorityWeightTRES=" + weights + "\nNodeName=g[1-2] Gres=gpu:4 CPUs=32 RealMemory=256000\n");
  const auto c = slurm::read_slurm_conf(prio);
  EXPECT_EQ(c.params.at("PriorityWeightTRES").text, "CPU=1,Mem=-0.00048828125");
  EXPECT_EQ(warnings_of(c),
            prio + ":1: PriorityWeightTRES item node=.3 is not modelled (the weights of CPU, Mem and GRES/gpu are)\n" +
                prio +
                ":1: PriorityWeightTRES item energy=-10 is not modelled (the weights of CPU, Mem and GRES/gpu "
                "are)\n");
  const slurm::Config config = slurm::parse_config(c.params);
  EXPECT_EQ(config.w_tres.at("CPU"), 1.0);
  EXPECT_EQ(config.w_tres.at("Mem"), -0.5 / 1024);
  EXPECT_EQ(config.w_tres.size(), 2u);
  // Slurm's unit rule on other weights: M is Mem's own unit (2M weighs 2), G on CPU is 1024^3.
  const std::string units = dir.write("units.conf",
                                      "PriorityWeightTRES=MEM=2M,Cpu=2048g,gres/GPU=3k\n"
                                      "NodeName=g1 Gres=gpu:1\n");
  EXPECT_EQ(slurm::read_slurm_conf(units).params.at("PriorityWeightTRES").text,
            "Mem=2,CPU=1.9073486328125e-06,GRES/gpu=0.0029296875");
}

// ---- Lab clusters' own slurm.conf, as published (tests/data/imports/slurm-labs) ----

namespace {

const std::string kLabs = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/imports/slurm-labs/";

// The jobs of `trace` (a sacct export) run on the site of `conf` under its own rules.
results::RunResult run_site(const TempDir& dir, const std::string& conf, const std::string& trace) {
  dir.write("jobs.sacct", trace);
  const std::string path =
      dir.write("s.yaml", "name: lab\ncluster: {slurm_conf: " + conf + "}\npolicy: {name: slurm, slurm_conf: " + conf +
                              "}\nworkload: {trace: jobs.sacct}\n");
  return app::run_scenario(scenarios::load_scenario(path)).result;
}

}  // namespace

TEST(SlurmLabSites, ShineClusterPartitionDefaultRecordGivesEveryPartitionItsCpusPerGpu) {
  // The SHINE lab cluster's slurm.conf (GPL-3.0): tab-separated, two SlurmctldHost lines, and a
  // PartitionName=DEFAULT record holding Nodes= and DefCpuPerGPU=2, which both partitions inherit.
  const std::string conf = kLabs + "shine/slurm.conf";
  const auto c = slurm::read_slurm_conf(conf);
  EXPECT_EQ(pools_of(c), "coruscant 1x8 gpu\ndagobah 1x8 gpu\neureka 1x10 gpu\ntatooine 1x4 gpu\nhoth 1x8 gpu\n");
  EXPECT_EQ(c.cluster.pools[2].cpus_per_node, 48);  // Boards x SocketsPerBoard x CoresPerSocket x ThreadsPerCore
  EXPECT_EQ(c.cluster.pools[3].cpus_per_node, 20);
  EXPECT_EQ(warnings_of(c), "");
  for (const char* part : {"speedy", "normal"}) {
    EXPECT_EQ(c.params.at(std::string("partitions.") + part + ".DefCpuPerGPU").text, "2") << part;
    EXPECT_EQ(c.params.at(std::string("partitions.") + part + ".Nodes").text,
              "[coruscant, dagobah, eureka, tatooine, hoth]")
        << part;
  }
  EXPECT_EQ(c.params.at("partitions.speedy.PriorityTier").text, "2");
  EXPECT_EQ(c.params.at("partitions.speedy.Default").text, "YES");
  EXPECT_EQ(c.params.at("partitions.speedy.MaxTime").text, "6:00:00");
  EXPECT_EQ(c.params.at("partitions.normal.MaxTime").text, "5-00:00:00");
  EXPECT_EQ(c.params.at("SchedulerType").text, "sched/builtin");
  // 38 GPUs: a 10-GPU job fits only eureka; two 8-GPU jobs take two of the 8-GPU nodes at once.
  TempDir dir;
  const auto r = run_site(dir, conf,
                          "JobID|User|Partition|Submit|Start|Elapsed|State|AllocTRES\n"
                          "1|a|speedy|2024-05-01T10:00:00|2024-05-01T10:00:00|01:00:00|COMPLETED|gres/gpu=10\n"
                          "2|b|normal|2024-05-01T10:00:00|2024-05-01T10:00:00|01:00:00|COMPLETED|gres/gpu=8\n"
                          "3|c|normal|2024-05-01T10:00:00|2024-05-01T10:00:00|01:00:00|COMPLETED|gres/gpu=8\n");
  ASSERT_EQ(r.jobs.size(), 3u);
  for (const auto& j : r.jobs) {
    EXPECT_EQ(j.state, static_cast<std::uint8_t>(models::JobState::Completed));
    EXPECT_EQ(j.start, 0);
  }
  EXPECT_EQ(r.jobs[0].pool, 2);  // eureka
}

TEST(SlurmLabSites, TwoDefaultPartitionsReadAsSlurmctldReadsThem) {
  // The Packwood group's single-node OpenHPC slurm.conf (GPL-3.0) gives Default=YES to both of
  // its partitions. slurmctld logs "changing default partition from parallel to gpu" and keeps the
  // last; headroom refused the file ("more than one partition has Default: YES") before.
  const std::string conf = kLabs + "packwood/slurm.conf";
  const auto c = slurm::read_slurm_conf(conf);
  EXPECT_EQ(pools_of(c), "packwoodgpu 1x2 nvidia\n");
  EXPECT_EQ(c.cluster.pools[0].cpus_per_node, 6);
  EXPECT_EQ(c.cluster.pools[0].memory_gib, 124);  // RealMemory=127956 MB
  EXPECT_EQ(warnings_of(c), conf + ":168: partition parallel: Default=YES here and on partition gpu (" + conf +
                                ":169): slurmctld keeps the last one read, gpu, as the default\n" + conf +
                                ":168: partition field defmempercpu=512 changes scheduling and is not modelled\n");
  EXPECT_EQ(c.params.count("partitions.parallel.Default"), 0u);
  EXPECT_EQ(c.params.at("partitions.gpu.Default").text, "YES");
  EXPECT_EQ(c.params.at("partitions.parallel.OverSubscribe").text, "NO");  // Shared=NO
  const slurm::Config config = slurm::parse_config(c.params);
  ASSERT_EQ(config.partitions.size(), 2u);
  for (const auto& p : config.partitions) EXPECT_EQ(p.is_default, p.name == "gpu") << p.name;
  // A job that names no partition runs in the default one, beside a job sent to the other.
  TempDir dir;
  const auto r = run_site(dir, conf,
                          "JobID|User|Partition|Submit|Start|Elapsed|State|AllocTRES\n"
                          "1|a||2024-05-01T10:00:00|2024-05-01T10:00:00|00:30:00|COMPLETED|gres/gpu=1\n"
                          "2|b|parallel|2024-05-01T10:00:00|2024-05-01T10:00:00|00:30:00|COMPLETED|gres/gpu=1\n"
                          "3|c|gpu|2024-05-01T10:00:00|2024-05-01T10:00:00|00:30:00|COMPLETED|gres/gpu=1\n");
  ASSERT_EQ(r.jobs.size(), 3u);
  EXPECT_EQ(r.jobs[0].start, 0);
  EXPECT_EQ(r.jobs[1].start, 0);
  EXPECT_EQ(r.jobs[2].start, 30 * sim::kMinute);  // two GPUs on the one node
}

TEST(SlurmLabSites, LambdaWorkstationReadsAsIs) {
  // A Lambda 8-GPU workstation's slurm.conf and gres.conf (MIT): CPUs from Sockets x CoresPerSocket
  // x ThreadsPerCore, untyped GPUs, gres.conf lines with CPUs= affinity and no Type=.
  const std::string conf = kLabs + "lambda/slurm.conf";
  const auto c = slurm::read_slurm_conf(conf);
  EXPECT_EQ(pools_of(c), "lambda 1x8 gpu\n");
  EXPECT_EQ(c.cluster.pools[0].cpus_per_node, 64);
  EXPECT_EQ(c.cluster.pools[0].memory_gib, 503);  // RealMemory=515867 MB
  EXPECT_EQ(warnings_of(c), "");
  EXPECT_EQ(c.params.at("SchedulerType").text, "sched/builtin");
  EXPECT_EQ(c.params.at("partitions.debug.Default").text, "YES");
}

TEST(SlurmSiteFiles, NodeWeightIsAUint32AsSlurmReadsIt) {
  // SLAC's SDF configuration weighs nodes by memory (Weight=127207, 56217); Slurm reads Weight as a
  // uint32 (read_config.c, s_p_get_uint32) and INFINITE as INFINITE - 1. 65533 was the limit
  // before, and the file was refused.
  TempDir dir;
  const std::string conf =
      dir.write("slurm.conf",
                "NodeName=nu-gpu[01-03] CPUs=32 RealMemory=191567 Gres=gpu:v100:4 Weight=127207\n"
                "NodeName=ml-gpu[01-11] CPUs=48 RealMemory=191552 Gres=gpu:geforce_rtx_2080_ti:10 Weight=56217\n"
                "NodeName=big CPUs=48 Gres=gpu:v100:4 Weight=4294967295\n"
                "PartitionName=shared Default=yes Nodes=ALL\n");
  const auto c = slurm::read_slurm_conf(conf);
  EXPECT_EQ(c.params.at("nodes.nu-gpu01-03.Weight").text, "127207");
  EXPECT_EQ(c.params.at("nodes.ml-gpu01-11.Weight").text, "56217");
  EXPECT_EQ(c.params.at("nodes.big.Weight").text, "4294967294");
  const slurm::Config config = slurm::parse_config(c.params);
  EXPECT_EQ(config.node_weight.at("nu-gpu01-03"), 127207);
  // The lightest nodes are used first: a 4-GPU job goes to ml-gpu (56217), not nu-gpu (127207).
  const auto r = run_site(dir, conf,
                          "JobID|User|Submit|Start|Elapsed|State|AllocTRES\n"
                          "1|a|2024-05-01T10:00:00|2024-05-01T10:00:00|00:30:00|COMPLETED|gres/gpu=4\n");
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_EQ(r.jobs[0].pool, 1);
  const std::string over = dir.write("over.conf", "NodeName=g1 Gres=gpu:1 Weight=4294967296\n");
  EXPECT_EQ(conf_error(over), over + ":1: Weight: expected an integer from 0 to 4294967295, got \"4294967296\"");
}

// ---- docs/importing.md: the table of keys is the readers' own tables ----

namespace {

// The sacct part of the table, from traces::sacct_columns().
std::string sacct_keys_markdown() {
  std::string read, required;
  for (const auto& [name, req] : traces::sacct_columns()) {
    read += (read.empty() ? "" : ", ") + name;
    if (req) required += (required.empty() ? "" : ", ") + name;
  }
  return "\nsacct exports (with a header row, `--fields`, or Open XDMoD's header-less 26- and 25-field lists) read the "
         "columns " +
         read + "; other columns are ignored. Required: " + required +
         ", the job id from JobID or JobIDRaw, the run time from Elapsed, ElapsedRaw or End - Start, the GPUs from "
         "AllocTRES, AllocGRES, ReqTRES or ReqGRES; without State every job's status is unknown; a layout other than "
         "JobID, Elapsed, Timelimit, State says which columns stood in (one warning).\n";
}

}  // namespace

TEST(ImportingDocs, SlurmKeyTableIsTheReadersOwnTables) {
  const std::string path = std::string(HEADROOM_SOURCE_DIR) + "/docs/importing.md";
  const std::string begin =
      "<!-- generated: slurm keys (SlurmSiteFiles' ImportingDocs test; HEADROOM_UPDATE_DOCS=1 "
      "rewrites it) -->\n";
  const std::string end = "<!-- end of generated slurm keys -->";
  const std::string want = slurm::site_keys_markdown() + sacct_keys_markdown();
  const auto block = headroom::testing::generated_block(path, begin, end, want);
  ASSERT_TRUE(block.has_value()) << path << " has no generated block";
  const std::string& have = *block;
  EXPECT_EQ(have, want) << "run with HEADROOM_UPDATE_DOCS=1 to rewrite the block";
  // Every key the reader warns about or reads is on the page (spot checks of each table).
  for (const char* key : {"defmempergpu", "PriorityWeightTRES", "bf_window", "max_script_size", "switchname",
                          "corespersocket", "ElapsedRaw", "TimelimitRaw"})
    EXPECT_NE(have.find(key), std::string::npos) << key;
}
