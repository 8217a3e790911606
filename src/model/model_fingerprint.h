#pragma once
// A model fingerprint for K/V shared between replicas (docs/deploy.md): K/V
// computed by one replica is valid on another only for the same weights, the same
// K/V element type and the same block layout. Hashes the hyper-parameters, every
// weight tensor's name, type and shape, a sample of each tensor's bytes (so two
// fine-tunes of one architecture differ), the K/V type and the block size.
// Cheap: reads at most 12 KiB per tensor.
#include <cstdint>

#include "model/kv_type.h"
#include "model/model_file.h"

namespace seer {

uint64_t model_fingerprint(const ModelFile& model, KvType kv_type, int32_t block_size);

}  // namespace seer
