#include "e2e/wait.h"

#include "e2e/server_process.h"

namespace seer::e2e {

std::optional<double> wait_for_metric(int port, const std::string& series, const std::function<bool(double)>& holds,
                                      std::chrono::milliseconds limit) {
  std::optional<double> last;
  wait_until(
      [&] {
        last = metric(port, series);
        return last && holds(*last);
      },
      limit);
  return last;
}

std::optional<double> wait_for_metric_eq(int port, const std::string& series, double value,
                                         std::chrono::milliseconds limit) {
  return wait_for_metric(port, series, [value](double v) { return v == value; }, limit);
}

}  // namespace seer::e2e
