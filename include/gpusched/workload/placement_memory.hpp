// SPDX-License-Identifier: Apache-2.0
/// @file
/// `placement_memory` lives in `workload/history.hpp` with the other job history; this header
/// forwards there so that existing includes keep working.
#pragma once

#include "gpusched/workload/history.hpp"
