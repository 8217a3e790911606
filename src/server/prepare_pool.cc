#include "server/prepare_pool.h"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "common/thread_name.h"

namespace seer::server {

PreparePool::PreparePool(PrepareOptions opts)
    : opts_(opts), pool_(std::make_unique<boost::asio::thread_pool>(static_cast<size_t>(std::max(opts.threads, 1)))) {}

PreparePool::~PreparePool() {
  stopping_.store(true);
  pool_->join();
}

bool PreparePool::try_submit(std::function<void(bool expired)> job) {
  if (pending_.fetch_add(1) >= opts_.max_pending) {
    pending_.fetch_sub(1);
    return false;
  }
  const auto queued = std::chrono::steady_clock::now();
  const auto budget = std::chrono::duration<double>(opts_.queue_budget_s);
  boost::asio::post(*pool_, [this, queued, budget, job = std::move(job)] {
    set_thread_name("seer-prepare");
    const bool expired = stopping_.load() || std::chrono::steady_clock::now() - queued > budget;
    struct Done {  // the count drops however the job ends
      std::atomic<size_t>& n;
      ~Done() { n.fetch_sub(1); }
    } done{pending_};
    job(expired);
  });
  return true;
}

}  // namespace seer::server
