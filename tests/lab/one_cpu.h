// What `taskset -c N` gives a process, for the calling test thread alone: only its first
// allowed CPU, restored when the scope ends (the lab reads the allowed CPUs per thread).
#pragma once

#include <sched.h>

#include "simdex/lab/threads.h"

namespace simdex::lab_test {

class only_one_cpu {
 public:
  only_one_cpu() {
    sched_getaffinity(0, sizeof saved_, &saved_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(lab::allowed_cpus().front(), &one);
    sched_setaffinity(0, sizeof one, &one);
  }
  ~only_one_cpu() { sched_setaffinity(0, sizeof saved_, &saved_); }
  only_one_cpu(const only_one_cpu&) = delete;
  only_one_cpu& operator=(const only_one_cpu&) = delete;

 private:
  cpu_set_t saved_{};
};

}  // namespace simdex::lab_test
