// The hardware lab's measuring kernels: the one place simdex measures a machine. Every
// benchmark's machine limits (bench/common/machine.cc) and every lab experiment (bench/lab/)
// use these, so a figure means the same thing wherever it is printed. docs/lab.md.
#pragma once

#include "simdex/lab/branch.h"
#include "simdex/lab/chase.h"
#include "simdex/lab/counters.h"
#include "simdex/lab/limits.h"
#include "simdex/lab/stats.h"
#include "simdex/lab/streams.h"
#include "simdex/lab/system.h"
#include "simdex/lab/threads.h"
#include "simdex/lab/timing.h"
#include "simdex/lab/validity.h"
