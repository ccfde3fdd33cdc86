# Run at build time by the target headroom_git_describe (CMakeLists.txt): writes OUT, a header
# defining HEADROOM_GIT_DESCRIBE as `git describe` of the source tree SRC says now, and leaves the
# file untouched when that did not change. So a commit (or an edit) after configuring shows in
# `headroom --version` and in each results file's version attribute, and an unchanged tree
# rebuilds nothing.
execute_process(COMMAND git describe --always --dirty --tags
                WORKING_DIRECTORY "${SRC}"
                OUTPUT_VARIABLE describe OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT describe)
  set(describe "unknown")  # not a git checkout (a source archive), or git is not installed
endif()
set(text "#define HEADROOM_GIT_DESCRIBE \"${describe}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
