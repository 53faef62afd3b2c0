#pragma once
// Model file bytes edited by tests and the fuzz target (docs/model-format.md#header): header
// fields read and written, and the file size and both checksums recomputed after an edit, so that
// a reader's checks past the checksums can be reached.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace knn::test {

using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kModelHeader = 128;
// Offsets of header fields.
constexpr std::size_t kVersionField = 8, kKindField = 12, kFileSizeField = 16, kRowsField = 24, kColumnsField = 32,
                      kMetaSizeField = 48, kLabelsOffsetField = 56, kLabelsSizeField = 64, kRowsOffsetField = 72,
                      kRowsSizeField = 80, kBodyCrcField = 88, kHeaderCrcField = 124;

inline std::uint64_t get_field(const Bytes& b, std::size_t at, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(b.at(at + i)) << (8 * i);
  return v;
}

inline void set_field(Bytes& b, std::size_t at, std::uint64_t v, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) b.at(at + i) = static_cast<std::uint8_t>(v >> (8 * i));
}

/// Sets the header's file size to the bytes' size and recomputes both checksums (bytes of at
/// least a header's length).
inline void reseal(Bytes& b) {
  set_field(b, kFileSizeField, b.size(), 8);
  set_field(b, kBodyCrcField, crc32_z(crc32_z(0, Z_NULL, 0), b.data() + kModelHeader, b.size() - kModelHeader), 4);
  set_field(b, kHeaderCrcField, crc32_z(crc32_z(0, Z_NULL, 0), b.data(), kHeaderCrcField), 4);
}

}  // namespace knn::test
