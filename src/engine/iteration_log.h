#pragma once
// The engine's iteration log (`seer serve --iteration-log FILE`): one JSON line per
// executed iteration with its measured time and the shape of its plan, so the
// simulator's cost model can be checked, and fitted, against what the real engine
// did (`seer sim validate --iteration-log`, `seer sim calibrate --from-log`;
// docs/simulator.md). Used on the engine thread only; owns its file.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace seer {

class IterationLog final : public EngineObserver {
 public:
  // Throws seer::Error when the file cannot be opened. bytes_per_block turns the
  // plan's block moves into bytes.
  IterationLog(const std::string& path, int64_t bytes_per_block);

  void on_plan(const StepPlan& plan) override;
  void on_iteration(const IterationStats& stats) override;

 private:
  std::ofstream out_;
  int64_t bytes_per_block_;
  std::string pending_chunks_;  // the last plan's chunks as a JSON array
  int64_t pending_swap_bytes_ = 0;
  int64_t pending_copy_bytes_ = 0;
};

}  // namespace seer
