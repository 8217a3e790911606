#include "e2e/family_model.h"

#include <filesystem>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {

std::string family_model(const Family& f) {
  const std::string dir = seer::testing::scratch_dir();
  const std::string vocab = dir + "/" + f.name + "-vocab.gguf", model = dir + "/" + f.name + ".gguf";
  if (std::filesystem::exists(model)) return model;
  const std::string seer = seer::testing::seer_binary() + " ";
  std::string flags = std::string("make-model --shape tiny --type f16 --quiet ") + f.arch + " -o " + model;
  int status = 0;
  if (f.package) {
    const std::string json = seer::testing::hf_tokenizer_json(f.package);
    run_command(seer + "make-vocab --hf-tokenizer " + json + " --pre " + f.pre + " -o " + vocab + " 2>&1", &status);
    if (status != 0) return "";
    flags += " --tokenizer-from " + vocab;
  }
  if (f.fixture)
    flags += " --chat-template " + seer::testing::source_dir() + "/tests/data/chat_templates/" + f.fixture +
             "/template.jinja";
  run_command(seer + flags, &status);
  return status == 0 ? model : "";
}

}  // namespace seer::e2e
