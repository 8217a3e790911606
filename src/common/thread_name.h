#pragma once
// Names the calling thread as top -H, perf --sort comm, gdb and /proc/PID/task/*/comm
// show it ("seer-engine", "seer-http-1", "seer-compute-2", ...), so a profile or a
// taskset experiment can tell the server's threads apart. Linux keeps 15 characters.
#include <string>

namespace seer {

void set_thread_name(const std::string& name);

}  // namespace seer
