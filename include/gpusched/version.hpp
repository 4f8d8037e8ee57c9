// SPDX-License-Identifier: Apache-2.0
/// @file
/// The library version: the single source of truth, parsed by CMake for `project(VERSION)`.
#pragma once

/// Major version: 0 while the API may still change between minor releases.
#define GPUSCHED_VERSION_MAJOR 0
/// Minor version.
#define GPUSCHED_VERSION_MINOR 1
/// Patch version.
#define GPUSCHED_VERSION_PATCH 0

/// Version as one integer: major * 10000 + minor * 100 + patch.
#define GPUSCHED_VERSION \
  (GPUSCHED_VERSION_MAJOR * 10000 + GPUSCHED_VERSION_MINOR * 100 + GPUSCHED_VERSION_PATCH)
