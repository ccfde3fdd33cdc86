// headroom's version string, alone in its file: the build rewrites git_describe.h when the tree's
// `git describe` changes (cmake/git_describe.cmake), and only this file is compiled again.
#include <string>

#include "git_describe.h"  // HEADROOM_GIT_DESCRIBE, written into the build tree
#include "planner/run.hpp"

#ifndef HEADROOM_VERSION
#define HEADROOM_VERSION "0.0.0"
#endif

namespace headroom::planner {

std::string version_string() {
  return std::string("headroom ") + HEADROOM_VERSION + " (" + HEADROOM_GIT_DESCRIBE + ")";
}

}  // namespace headroom::planner
