// `seer serve --shared-kv` restores K/V onto the conversation cache's host tier:
// without one (--swap-blocks 0, or a policy whose cache has no host tier) it is
// refused at start-up, naming what to give, before anything listens.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/run_seer.h"

namespace seer::testing {
namespace {

std::string tiny_model_file() {
  static const std::string path = [] {
    std::string out = scratch_dir() + "/serve_shared_kv_tiny.gguf";
    auto m = run_seer({"make-model", "--shape", "tiny", "--out", out, "--seed", "3"});
    EXPECT_EQ(m.exit_code, 0) << m.err;
    return out;
  }();
  return path;
}

// Nothing needs to listen there: the flags are refused before any connection.
const char* const kUrl = "redis://127.0.0.1:9";

// A loopback port this test holds, so that a server that accepted the flags would
// fail to bind (with another message) instead of serving for ever.
class HeldPort {
 public:
  HeldPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    socklen_t len = sizeof a;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(fd_, 1) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port_ = ntohs(a.sin_port);
  }
  ~HeldPort() { close(fd_); }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  std::string port() const { return std::to_string(port_); }

 private:
  int fd_ = -1;
  int port_ = 0;
};

std::vector<std::string> serve(const HeldPort& held, std::vector<std::string> flags) {
  std::vector<std::string> args = {"serve", "--model", tiny_model_file(), "--host", "127.0.0.1", "--port", held.port(),
                                   "--shared-kv", kUrl};
  args.insert(args.end(), flags.begin(), flags.end());
  return args;
}

TEST(ServeSharedKvCli, WithoutAHostTierItIsRefusedNamingSwapBlocks) {
  HeldPort held;
  auto r = run_seer(serve(held, {"--policy", "pensieve", "--swap-blocks", "0"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--shared-kv"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--swap-blocks"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("listening"), std::string::npos) << r.out;
  auto zero = run_seer(serve(held, {"--policy", "seer", "--swap-blocks", "0"}));
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_NE(zero.err.find("--swap-blocks"), std::string::npos) << zero.err;
}

TEST(ServeSharedKvCli, APolicyWhoseCacheHasNoHostTierIsRefusedNamingOnesThatDo) {
  // sarathi keeps no conversation K/V; pensieve-gpu keeps it on the device only;
  // vllm with prefix reuse too: none has a tier to restore into.
  HeldPort held;
  for (std::vector<std::string> policy : {std::vector<std::string>{"--policy", "sarathi"}, {"--policy", "pensieve-gpu"},
                                          {"--policy", "vllm", "--prefix-reuse"}}) {
    policy.insert(policy.end(), {"--swap-blocks", "64"});
    auto r = run_seer(serve(held, policy));
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("--shared-kv"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("pensieve, seer"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("listening"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace seer::testing
