#pragma once
// Whole-file reading with a size bound, for the readers that parse a file as one text (scenario
// YAML, Kubernetes manifests) or line by line into records (slurm.conf, sacctmgr/sshare tables,
// load curves). A device such as /dev/zero, a pipe that never ends or a multi-gigabyte log named
// in place of a configuration file is refused at the bound, with the file and line where it falls,
// instead of growing memory until the machine gives out.

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>

namespace headroom::sim {

// Bounds used by the readers (bytes).
// One scenario, manifest or site file. yaml-cpp holds a document in about 90 bytes of memory per
// byte of text (a 14 MB list of 400,000 tenants took 1.3 GB): 16 MiB keeps a YAML file under 1.5 GB.
inline constexpr std::size_t kMaxConfigBytes = std::size_t{16} << 20;
// One slurm.conf (or a file it Includes) or gres.conf: read line by line into records, a few bytes
// of memory a byte of text; a site that lists every node on its own line fits.
inline constexpr std::size_t kMaxSiteFileBytes = std::size_t{64} << 20;
inline constexpr std::size_t kMaxTableBytes = std::size_t{256} << 20;  // one exported table or load curve

// The rest of `in` (opened on `file`), at most `max_bytes` long. A longer input is an InputError
// at `file`, on the line where the bound falls, saying that `what` (e.g. "a scenario file") is
// never that large; an input that cannot be read is an InputError at `file` too.
std::string read_capped(std::istream& in, const std::string& file, std::size_t max_bytes, std::string_view what);

}  // namespace headroom::sim
