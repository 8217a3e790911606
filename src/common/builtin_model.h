#pragma once
// The built-in default model (models/stories260K.gguf, shipped with seer): found
// next to the running executable, so it works from a build tree or an install
// prefix whatever the working directory.
#include <optional>
#include <string>
#include <vector>

namespace seer {

inline constexpr const char* kBuiltinModelFile = "stories260K.gguf";

// The places searched, in order: <exe dir>/models/ (build tree), then
// <exe dir>/../share/seer/models/ (install prefix).
std::vector<std::string> builtin_model_candidates();
// The first candidate that exists.
std::optional<std::string> builtin_model_path();

// `given` when set; otherwise the built-in model, announced on stderr as
// "<command>: no --model given; using the built-in model ...". Throws seer::Error
// naming the places searched when it is missing.
std::string model_or_builtin(const std::string& given, const char* command);

}  // namespace seer
