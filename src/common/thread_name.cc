#include "common/thread_name.h"

#include <pthread.h>

namespace seer {

void set_thread_name(const std::string& name) {
  // Longer names make pthread_setname_np fail (ERANGE); the first 15 characters do.
  (void)pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace seer
