// SPDX-License-Identifier: Apache-2.0
// gpusched-replay: stand-alone front end of the replay command (see replay.hpp).
#include "replay.hpp"

int main(int argc, char** argv) { return gpusched_experiment::run_replay(argc, argv); }
