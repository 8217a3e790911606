// libFuzzer entry point: any byte string must either parse as GGUF (and yield a config
// or a seer::Error from config_from_gguf) or be rejected with seer::Error. Crashes,
// sanitizer reports, other exceptions and huge allocations are findings.
#include <cstddef>
#include <cstdint>

#include "common/error.h"
#include "model/gguf_file.h"
#include "model/gguf_summary.h"
#include "model/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto f = seer::GgufFile::parse(data, size, "fuzz-input");
    // Touch every tensor's bytes so out-of-range data pointers show up under ASan.
    uint8_t sum = 0;
    for (const auto& t : f->tensors())
      if (t.bytes) sum ^= t.data[0] ^ t.data[t.bytes - 1];
    (void)sum;
    for (const auto& kv : f->metadata()) (void)kv.second.summary();
    try {
      seer::summarize_tokenizer(*f);
    } catch (const seer::Error&) {
    }
    seer::config_from_gguf(*f);
  } catch (const seer::Error&) {
  }
  return 0;
}
