#include "kv/kv_chunk_codec.h"

#include <cstring>

#include <fmt/format.h>

namespace seer {

namespace {

template <typename T>
void put(std::string& out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // the build targets little-endian machines only
  out.append(b, sizeof(T));
}

template <typename T>
T get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

const char* kv_decode_status_name(KvDecodeStatus s) {
  switch (s) {
    case KvDecodeStatus::Ok: return "ok";
    case KvDecodeStatus::Stale: return "stale";
    case KvDecodeStatus::Corrupt: break;
  }
  return "corrupt";
}

uint64_t kv_checksum(std::span<const char> bytes, uint64_t seed) {
  uint64_t h = seed;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    h ^= get<uint64_t>(bytes.data() + i);
    h *= 0x100000001b3ull;
    h ^= h >> 31;
  }
  for (; i < bytes.size(); ++i) {
    h ^= static_cast<unsigned char>(bytes[i]);
    h *= 0x100000001b3ull;
  }
  return h ^ (bytes.size() * 0x9e3779b97f4a7c15ull);
}

std::string encode_kv_entry(const KvEntry& e) {
  std::string body;
  body.reserve(e.tokens.size() * 4 + e.payload.size());
  for (int32_t t : e.tokens) put(body, t);
  body += e.payload;
  std::string out;
  out.reserve(kKvEntryHeaderBytes + body.size());
  put(out, kKvEntryMagic);
  put(out, kKvEntryVersion);
  put(out, static_cast<uint16_t>(e.kind));
  put(out, e.fingerprint);
  put(out, e.position);
  put(out, static_cast<int32_t>(e.tokens.size()));
  put(out, static_cast<uint64_t>(e.payload.size()));
  put(out, kv_checksum(body));
  return out + body;
}

KvDecodeResult decode_kv_entry(std::span<const char> bytes, KvEntryKind kind, uint64_t fingerprint,
                               int32_t position) {
  KvDecodeResult r;
  auto bad = [&](KvDecodeStatus s, std::string why) {
    r.status = s;
    r.why = std::move(why);
    return r;
  };
  if (bytes.size() < kKvEntryHeaderBytes) return bad(KvDecodeStatus::Corrupt, fmt::format("{} bytes, shorter than a header", bytes.size()));
  const char* p = bytes.data();
  if (get<uint32_t>(p) != kKvEntryMagic) return bad(KvDecodeStatus::Corrupt, "bad magic");
  if (get<uint16_t>(p + 4) != kKvEntryVersion)
    return bad(KvDecodeStatus::Stale, fmt::format("format version {}", get<uint16_t>(p + 4)));
  if (get<uint16_t>(p + 6) != static_cast<uint16_t>(kind)) return bad(KvDecodeStatus::Corrupt, "wrong entry kind");
  if (get<uint64_t>(p + 8) != fingerprint)
    return bad(KvDecodeStatus::Stale, fmt::format("model fingerprint {:016x}", get<uint64_t>(p + 8)));
  const auto pos = get<int32_t>(p + 16);
  const auto n = get<int32_t>(p + 20);
  const auto payload = get<uint64_t>(p + 24);
  if (pos != position) return bad(KvDecodeStatus::Corrupt, fmt::format("position {} where {} was asked", pos, position));
  const uint64_t body = bytes.size() - kKvEntryHeaderBytes;
  if (n < 0 || payload > body || static_cast<uint64_t>(n) * 4 != body - payload)
    return bad(KvDecodeStatus::Corrupt, fmt::format("sizes ({} tokens, {} payload bytes) do not fit {} bytes", n,
                                                    payload, bytes.size()));
  if (kv_checksum(bytes.subspan(kKvEntryHeaderBytes)) != get<uint64_t>(p + 32))
    return bad(KvDecodeStatus::Corrupt, "checksum mismatch");
  r.status = KvDecodeStatus::Ok;
  r.entry.kind = kind;
  r.entry.fingerprint = fingerprint;
  r.entry.position = pos;
  r.entry.tokens.resize(static_cast<size_t>(n));
  if (n > 0) std::memcpy(r.entry.tokens.data(), p + kKvEntryHeaderBytes, static_cast<size_t>(n) * 4);
  r.entry.payload.assign(p + kKvEntryHeaderBytes + static_cast<size_t>(n) * 4, payload);
  return r;
}

}  // namespace seer
