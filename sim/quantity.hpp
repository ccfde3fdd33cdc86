#pragma once

#include <optional>
#include <string_view>

namespace headroom::sim {

// A Kubernetes resource quantity ("2", "500m", "1.5", "64Gi", "1G", "1e3") in base units (cores,
// bytes, devices); nullopt when it is not one or is negative. Binary (Ki..Ei) and decimal (n, u,
// m, k, M..E) suffixes, or a decimal exponent, as apimachinery's resource.Quantity reads them.
std::optional<double> parse_quantity(std::string_view text);

}  // namespace headroom::sim
