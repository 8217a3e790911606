#pragma once
// The admission scans a batch former runs over a queue (waiting or swapped), built
// on ScheduleSession::bring_in: the queue's front while it fits (FCFS), and first
// fit [S3] over a whole queue.
#include <cstdint>
#include <functional>
#include <vector>

#include "scheduler/parts/schedule_session.h"

namespace seer {

// The first chunk (tokens) to bring a queued request in with; 0: not now.
using ChunkRule = std::function<int32_t(const Request&)>;

// Brings in the front of `queue` while chunk() is > 0 and it fits; stops at the
// first that does not (no skipping ahead). Returns how many came in.
int32_t admit_front_while_fits(ScheduleSession& s, RequestQueue& queue, const ChunkRule& chunk);

// First fit, in two steps so no scan walks a queue it changes. Collect: the
// requests of `queue`, in its order, whose reservation alone fits the memory
// available now (a necessary condition; a caller may reorder them).
std::vector<Request*> collect_fitting(const ScheduleSession& s, const RequestQueue& queue);
// Admit: brings in every candidate, in order, whose chunk() is > 0 and that fits
// what is left; a misfit does not stop the scan. Stops when the batch is full.
// Returns how many came in.
int32_t admit_each(ScheduleSession& s, const std::vector<Request*>& candidates, const ChunkRule& chunk);

}  // namespace seer
