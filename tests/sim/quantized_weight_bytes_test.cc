// The cost model's weight bytes per parameter for a model file whose matrices are
// block-quantized, one type or mixed per tensor: each tensor counts at its own type's
// block bytes / block elements.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "model/ggml_types.h"
#include "model/random_model.h"
#include "sim/sim_options.h"
#include "support/test_paths.h"

namespace seer {
namespace {

TEST(QuantizedWeightBytes, EveryTensorAtItsTypesBlockBytes) {
  RandomModelOptions o;
  o.shape = ModelShape{"quant-bytes", 2, 256, 4, 2, 512, 300, 64, 10000.0, 1e-5};
  o.type = GgmlType::Q4_K;
  o.tensor_types = {{"output.weight", GgmlType::Q6_K}, {"blk.1.ffn_down.weight", GgmlType::IQ4_XS}};
  o.progress = false;
  const std::string path = testing::scratch_dir() + "/quant-bytes.gguf";
  write_random_model(path, o);

  const double d = 256, ffn = 512, kv = 128, vocab = 300;
  const double layer = d * d * 2 + d * kv * 2 + 3 * d * ffn;  // q, o, k, v, gate, up, down
  const double params = 2 * layer + 2 * vocab * d;  // + embeddings and output (norms are not counted)
  auto bits = [](GgmlType t) { return ggml_bits_per_weight(*ggml_type_info(static_cast<uint32_t>(t))); };
  const double bytes = (2 * layer - d * ffn + vocab * d) * bits(GgmlType::Q4_K) / 8 +
                       d * ffn * bits(GgmlType::IQ4_XS) / 8 + vocab * d * bits(GgmlType::Q6_K) / 8 + 5 * d * 4;  // + 5 F32 norms

  SimOptions so;
  so.model = path;
  const SimSetup s = make_sim_setup(so);
  EXPECT_EQ(static_cast<double>(s.model.parameter_count()), params);
  EXPECT_NEAR(s.cost.weight_bytes_per_param, bytes / params, 1e-12);
  EXPECT_NEAR(s.cost.weight_bytes_per_param, 4.6 / 8, 0.1 / 8);  // ~4.6 bits per weight
}

}  // namespace
}  // namespace seer
