// The shared KV tier's entry format (kv/kv_chunk_codec.h): what is written reads
// back, and anything damaged, cut short, of another model or format, or at another
// position is rejected (the caller then recomputes).
#include <gtest/gtest.h>

#include "kv/kv_chunk_codec.h"

namespace seer {
namespace {

constexpr uint64_t kModel = 0x1234abcd5678ef90ull;

KvEntry chunk() {
  KvEntry e;
  e.kind = KvEntryKind::Chunk;
  e.fingerprint = kModel;
  e.position = 32;
  e.tokens = {5, 6, 7, 8};
  e.payload = std::string(100, '\0');
  for (size_t i = 0; i < e.payload.size(); ++i) e.payload[i] = static_cast<char>(i * 7);
  return e;
}

TEST(KvChunkCodec, RoundTrips) {
  const std::string bytes = encode_kv_entry(chunk());
  EXPECT_EQ(bytes.size(), kKvEntryHeaderBytes + 4 * 4 + 100);
  KvDecodeResult r = decode_kv_entry(bytes, KvEntryKind::Chunk, kModel, 32);
  ASSERT_EQ(r.status, KvDecodeStatus::Ok) << r.why;
  EXPECT_EQ(r.entry.tokens, chunk().tokens);
  EXPECT_EQ(r.entry.payload, chunk().payload);

  KvEntry h{KvEntryKind::History, kModel, 0, {1, 2, 3}, {}};
  KvDecodeResult hr = decode_kv_entry(encode_kv_entry(h), KvEntryKind::History, kModel, 0);
  ASSERT_EQ(hr.status, KvDecodeStatus::Ok) << hr.why;
  EXPECT_EQ(hr.entry.tokens, h.tokens);
  EXPECT_TRUE(hr.entry.payload.empty());
}

TEST(KvChunkCodec, RejectsAnyFlippedByte) {
  const std::string good = encode_kv_entry(chunk());
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    KvDecodeResult r = decode_kv_entry(bad, KvEntryKind::Chunk, kModel, 32);
    EXPECT_NE(r.status, KvDecodeStatus::Ok) << "byte " << i << " flipped was accepted";
  }
}

TEST(KvChunkCodec, RejectsTruncatedAndPaddedEntries) {
  const std::string good = encode_kv_entry(chunk());
  for (size_t n : {size_t{0}, size_t{3}, kKvEntryHeaderBytes - 1, kKvEntryHeaderBytes, good.size() - 1}) {
    KvDecodeResult r = decode_kv_entry(std::string_view(good).substr(0, n), KvEntryKind::Chunk, kModel, 32);
    EXPECT_EQ(r.status, KvDecodeStatus::Corrupt) << n << " bytes";
  }
  EXPECT_EQ(decode_kv_entry(good + "x", KvEntryKind::Chunk, kModel, 32).status, KvDecodeStatus::Corrupt);
}

TEST(KvChunkCodec, AnotherModelOrFormatIsStale) {
  const std::string good = encode_kv_entry(chunk());
  KvDecodeResult other = decode_kv_entry(good, KvEntryKind::Chunk, kModel + 1, 32);
  EXPECT_EQ(other.status, KvDecodeStatus::Stale);
  EXPECT_NE(other.why.find("fingerprint"), std::string::npos) << other.why;
  std::string v2 = good;
  v2[4] = 2;  // format version 2
  EXPECT_EQ(decode_kv_entry(v2, KvEntryKind::Chunk, kModel, 32).status, KvDecodeStatus::Stale);
}

TEST(KvChunkCodec, WrongPositionOrKindIsCorrupt) {
  const std::string good = encode_kv_entry(chunk());
  EXPECT_EQ(decode_kv_entry(good, KvEntryKind::Chunk, kModel, 0).status, KvDecodeStatus::Corrupt);
  EXPECT_EQ(decode_kv_entry(good, KvEntryKind::History, kModel, 32).status, KvDecodeStatus::Corrupt);
  EXPECT_EQ(decode_kv_entry(std::string(200, 'x'), KvEntryKind::Chunk, kModel, 32).status, KvDecodeStatus::Corrupt);
}

}  // namespace
}  // namespace seer
