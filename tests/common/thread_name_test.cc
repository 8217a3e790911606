#include "common/thread_name.h"

#include <pthread.h>

#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace seer {
namespace {

std::string name_in_thread(const std::string& name) {
  std::string seen;
  std::thread t([&] {
    set_thread_name(name);
    char buf[64] = {};
    pthread_getname_np(pthread_self(), buf, sizeof(buf));
    seen = buf;
  });
  t.join();
  return seen;
}

TEST(ThreadName, NamesTheCallingThread) { EXPECT_EQ(name_in_thread("seer-engine"), "seer-engine"); }

TEST(ThreadName, KeepsTheFirst15CharactersOfALongerName) {
  EXPECT_EQ(name_in_thread("seer-compute-123456"), "seer-compute-12");
}

}  // namespace
}  // namespace seer
