#pragma once

// What every command checks about the files it will write, before it does any work: an output is
// never one of the command's inputs (the scenario, the trace, a shard, a result), its folder exists
// and may be written, and two outputs of one command are different files.

#include <string>
#include <vector>

#include "scenarios/scenario.hpp"

namespace headroom::app {

// One file the command will write, and the option that named it ("-o", "--csv").
struct PlannedOutput {
  std::string option;
  std::string path;
};

// One file the command reads, and what it is ("scenario", "trace", "shard table", "result").
struct CommandInput {
  std::string what;
  std::string path;
};

// Every file a loaded scenario read (scenarios::Scenario::files: the scenario, its trace, each
// site file and its Includes, each manifest), appended to `inputs` (a path already there is left).
void add_scenario_inputs(std::vector<CommandInput>& inputs, const scenarios::Scenario& scenario);

// Throws sim::InputError (exit 2) naming the output and the option when an output path is empty,
// names a folder or an existing device, named pipe or socket (an output is renamed into place),
// lies in a folder that does not exist or may not be written, is (or resolves to,
// through links, "..", or a hard link) an input, or is the path of another output. Outputs with
// an empty path that the user did not give are left out by the caller.
void check_outputs(const std::vector<PlannedOutput>& outputs, const std::vector<CommandInput>& inputs);

// A folder the command writes files into (--keep-runs): it may be created; when it exists it must
// be a writable folder, and no input may be one of the files `names` it will write there.
void check_output_folder(const std::string& option, const std::string& folder, const std::vector<std::string>& names,
                         const std::vector<CommandInput>& inputs);

// CLI11 validator for output options: "" is an error ("-o ''" would otherwise mean no output).
std::string check_output_name(const std::string& text);

}  // namespace headroom::app
