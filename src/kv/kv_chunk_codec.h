#pragma once
// The byte format of shared-tier entries (kv/redis_kv_store.h, docs/deploy.md).
// Every value starts with a fixed header, little-endian:
//   magic "SKV1" (u32) | format version (u16) | kind (u16: 1 history, 2 chunk)
//   model fingerprint (u64) | first token position (i32) | token count (i32)
//   payload bytes (u64) | checksum (u64, of everything after the header)
// then the tokens (i32 each) and, for a chunk, the K/V bytes of its blocks as the
// backend stores them. A reader rejects anything whose magic, version, kind,
// fingerprint, position, sizes or checksum disagree: the caller recomputes instead.
//
// Pure functions; thread-safe.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace seer {

inline constexpr uint32_t kKvEntryMagic = 0x31564b53;  // "SKV1"
inline constexpr uint16_t kKvEntryVersion = 1;
inline constexpr size_t kKvEntryHeaderBytes = 40;

enum class KvEntryKind : uint16_t { History = 1, Chunk = 2 };

struct KvEntry {
  KvEntryKind kind = KvEntryKind::Chunk;
  uint64_t fingerprint = 0;
  int32_t position = 0;          // first token's position in the conversation
  std::vector<int32_t> tokens;   // the tokens whose K/V the payload holds (chunk) or the history
  std::string payload;           // K/V bytes (empty for a history)
};

enum class KvDecodeStatus { Ok, Corrupt, Stale };
const char* kv_decode_status_name(KvDecodeStatus s);  // "ok", "corrupt", "stale"

struct KvDecodeResult {
  KvDecodeStatus status = KvDecodeStatus::Corrupt;
  std::string why;  // for the log when not Ok
  KvEntry entry;
};

std::string encode_kv_entry(const KvEntry& e);
// Checks the header against what the reader expects: Stale for another model's
// fingerprint or format version, Corrupt for anything else that does not add up.
[[nodiscard]] KvDecodeResult decode_kv_entry(std::span<const char> bytes, KvEntryKind kind, uint64_t fingerprint,
                                             int32_t position);

// 64-bit checksum of `bytes` (FNV-1a over 8-byte words, then the tail).
uint64_t kv_checksum(std::span<const char> bytes, uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace seer
