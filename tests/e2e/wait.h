#pragma once
// Waiting for a condition with a deadline, for the end-to-end tests: never sleep a
// fixed time and never read a value that is still moving once. The predicate is
// polled until it holds (then the wait returns at once) or the deadline passes (then
// the test fails with the last value seen). Deadlines are generous because CI
// machines are shared and loaded; a passing test never waits for them.
//
// What the server guarantees once a response has ended is not moving and is read
// once, on purpose: /metrics is published before a step's outputs are delivered
// (server/async_engine.h), so a client that has its last chunk already sees that
// request's KV freed and its tokens counted. Waiting there would hide a regression.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>

namespace seer::e2e {

inline constexpr std::chrono::milliseconds kWaitLimit{30000};
inline constexpr std::chrono::milliseconds kPollInterval{10};

// Polls `holds` until it returns true or `limit` passes; returns its last answer.
inline bool wait_until(const std::function<bool()>& holds, std::chrono::milliseconds limit = kWaitLimit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (holds()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollInterval);
  }
}

// Polls the /metrics series of the server on `port` until `holds(value)`; returns
// the last value seen (nullopt while the series is absent or the server silent).
std::optional<double> wait_for_metric(int port, const std::string& series, const std::function<bool(double)>& holds,
                                      std::chrono::milliseconds limit = kWaitLimit);

// wait_for_metric until the series equals `value`.
std::optional<double> wait_for_metric_eq(int port, const std::string& series, double value,
                                         std::chrono::milliseconds limit = kWaitLimit);

}  // namespace seer::e2e
