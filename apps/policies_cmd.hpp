#pragma once

// `headroom policies`: the systems and baselines this build knows (the SystemModule registry),
// each with its summary, the parameter keys its `policy:` block accepts and the site files it
// reads, as `kubectl api-resources` lists what a cluster serves.

namespace headroom::app {

// `names`: one name a line (what headroom-gui reads); otherwise the full listing.
int cmd_policies(bool names, bool params);

}  // namespace headroom::app
