#pragma once
// Which kernel level a process runs, and what the CPU under it is.
//
// One binary carries several levels of the quantized dot and GEMM kernels (qdot.h):
// scalar, AVX2, 256-bit VNNI, 512-bit VNNI and AMX, each compiled where the compiler
// allows and chosen at run time. SEER_KERNEL_LEVEL=scalar|avx2|vnni|avx512|amx in the
// environment caps that choice for the whole process (read once), so the tests can run
// every level a machine supports and a benchmark can compare two on one machine. The
// float kernels and attention are fixed by the build's -march (x86-64-v3: AVX2;
// native on Zen 4 or Sapphire Rapids: AVX-512); the level does not change them.
#include <string>
#include <vector>

#include "kernels/qdot.h"

namespace seer {

// The level SEER_KERNEL_LEVEL asks for; Amx (no cap) when it is unset. An unknown
// value fails with the list of levels.
QIsa kernel_level_cap();
// Parses a level name ("scalar", "avx2", "vnni", "avx512", "amx").
bool parse_kernel_level(const std::string& name, QIsa& out);

// Whether this binary carries the level's kernels and this CPU can run them (for Amx:
// the kernel granted the tile registers). Scalar always can.
bool kernel_level_available(QIsa level);
// Why a level cannot run here ("not compiled into this build (-march=...)", "this CPU
// lacks AMX"); empty when it can.
std::string kernel_level_unavailable_reason(QIsa level);
// The highest available level at or below the cap: what the process runs.
QIsa active_kernel_level();

struct CpuSummary {
  std::string model;                 // /proc/cpuinfo "model name"
  int threads = 0;                   // hardware threads online
  std::vector<std::string> features; // of those the kernels use: avx2, fma, f16c, avx512f, ...
  std::string build_march;           // what the kernels were compiled for
  std::string level;                 // active_kernel_level()
  std::string level_cap;             // SEER_KERNEL_LEVEL, or "" when unset
  std::vector<std::string> levels_available;
};
CpuSummary cpu_summary();
// One line for logs and result files: "AMD EPYC (2 threads; avx2 ... avx512_vnni);
// build -march=native; kernel level avx512".
std::string cpu_summary_line();

}  // namespace seer
