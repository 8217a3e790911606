#include "kernels/kernel_level.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "model/ggml_types.h"

#ifndef SEER_BUILD_MARCH
#define SEER_BUILD_MARCH "the compiler's default"
#endif

namespace seer {
namespace {

constexpr const char* kLevelEnv = "SEER_KERNEL_LEVEL";

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

bool cpu_has_flag(const std::string& flags, const std::string& flag) {
  return (" " + flags + " ").find(" " + flag + " ") != std::string::npos;
}

// Q8_0 has a kernel at every level, so its table says what a level carries.
const QDotKernel* level_probe(QIsa level) { return qdot_kernel(GgmlType::Q8_0, level); }

}  // namespace

bool parse_kernel_level(const std::string& name, QIsa& out) {
  for (QIsa isa : kAllQIsas)
    if (name == qisa_name(isa)) {
      out = isa;
      return true;
    }
  return false;
}

QIsa kernel_level_cap() {
  static const QIsa cap = [] {
    const char* v = std::getenv(kLevelEnv);
    if (!v || !*v) return QIsa::Amx;
    QIsa isa;
    if (!parse_kernel_level(v, isa))
      fail("{}={}: unknown kernel level (scalar, avx2, vnni, avx512 or amx)", kLevelEnv, v);
    return isa;
  }();
  return cap;
}

bool kernel_level_available(QIsa level) { return level_probe(level) != nullptr; }

std::string kernel_level_unavailable_reason(QIsa level) {
  if (kernel_level_available(level)) return {};
  if (level == QIsa::Amx) {
    const std::string flags = cpuinfo_field("flags");
    if (!cpu_has_flag(flags, "amx_int8") || !cpu_has_flag(flags, "amx_tile")) return "this CPU lacks AMX";
    if (level_probe(QIsa::Avx512) == nullptr) return "not compiled into this build (-march=" SEER_BUILD_MARCH ")";
    return "the OS refused the AMX tile registers, or SEER_NO_AMX is set";
  }
  return "not compiled into this build (-march=" SEER_BUILD_MARCH ")";
}

QIsa active_kernel_level() {
  static const QIsa level = [] {
    const QIsa cap = kernel_level_cap();
    for (QIsa isa : {QIsa::Amx, QIsa::Avx512, QIsa::Vnni, QIsa::Avx2})
      if (isa <= cap && kernel_level_available(isa)) return isa;
    return QIsa::Scalar;
  }();
  return level;
}

CpuSummary cpu_summary() {
  CpuSummary s;
  s.model = cpuinfo_field("model name");
  if (s.model.empty()) s.model = "unknown CPU";
  s.threads = static_cast<int>(std::thread::hardware_concurrency());
  const std::string flags = cpuinfo_field("flags");
  for (const char* f : {"avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                        "avx512_bf16", "amx_tile", "amx_int8"})
    if (cpu_has_flag(flags, f)) s.features.emplace_back(f);
  s.build_march = SEER_BUILD_MARCH;
  s.level = qisa_name(active_kernel_level());
  if (const char* v = std::getenv(kLevelEnv); v && *v) s.level_cap = v;
  for (QIsa isa : kAllQIsas)
    if (kernel_level_available(isa)) s.levels_available.emplace_back(qisa_name(isa));
  return s;
}

std::string cpu_summary_line() {
  const CpuSummary s = cpu_summary();
  std::ostringstream o;
  o << s.model << " (" << s.threads << " threads;";
  for (const auto& f : s.features) o << ' ' << f;
  o << "); build -march=" << s.build_march << "; kernel level " << s.level;
  if (!s.level_cap.empty()) o << " (" << kLevelEnv << '=' << s.level_cap << ')';
  return o.str();
}

}  // namespace seer
