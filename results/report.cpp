#include "results/report.hpp"
