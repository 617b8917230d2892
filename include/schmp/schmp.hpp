// The one header a schmp program includes: the program contract (program.hpp for a dynamic schedule,
// rotation.hpp for rotating model blocks), typed messages (message.hpp), flags declared once (flags.hpp),
// collectives for reading a shared input (peers.hpp), extrapolation of iterates (extrapolation.hpp) and
// the job that runs it all (run.hpp).
#pragma once

#include "schmp/extrapolation.hpp"
#include "schmp/flags.hpp"
#include "schmp/message.hpp"
#include "schmp/peers.hpp"
#include "schmp/program.hpp"
#include "schmp/rotation.hpp"
#include "schmp/run.hpp"
