#pragma once
// Little-endian numbers, strings and lists written to and read from bytes (the model file's
// metadata, docs/model-format.md). The reader never reads past its end: a count or a length is
// checked against the bytes left before anything is allocated for it.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace knn::detail {

static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE 754 binary32 and binary64");

class ByteWriter {
 public:
  template <class T>
  void number(T v) {
    static_assert(std::is_arithmetic_v<T>);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof v);
    for (std::size_t i = 0; i < sizeof v; ++i) bytes_.push_back(static_cast<std::uint8_t>(bits >> (8 * i)));
  }
  void u8(std::uint8_t v) { number(v); }
  void u32(std::uint32_t v) { number(v); }
  void u64(std::uint64_t v) { number(v); }
  void i64(std::int64_t v) { number(v); }
  void f32(float v) { number(v); }
  void f64(double v) { number(v); }
  void str(const std::string& s) {
    u64(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  void strs(const std::vector<std::string>& v) {
    u64(v.size());
    for (const auto& s : v) str(s);
  }
  template <class T>
  void u64s(const std::vector<T>& v) {
    u64(v.size());
    for (T x : v) u64(static_cast<std::uint64_t>(x));
  }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<std::uint8_t> bytes_;
};

/// Reads [begin, end). `fail(what)` is called (and must throw) when a read would pass the end.
template <class Fail>
class ByteReader {
 public:
  ByteReader(const std::uint8_t* begin, const std::uint8_t* end, Fail fail) : at_(begin), end_(end), fail_(fail) {}

  template <class T>
  T number(const char* what) {
    static_assert(std::is_arithmetic_v<T>);
    need(sizeof(T), what);
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) bits |= static_cast<std::uint64_t>(at_[i]) << (8 * i);
    at_ += sizeof(T);
    T v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  std::uint8_t u8(const char* what) { return number<std::uint8_t>(what); }
  std::uint32_t u32(const char* what) { return number<std::uint32_t>(what); }
  std::uint64_t u64(const char* what) { return number<std::uint64_t>(what); }
  std::int64_t i64(const char* what) { return number<std::int64_t>(what); }
  float f32(const char* what) { return number<float>(what); }
  double f64(const char* what) { return number<double>(what); }

  /// A count of items of at least `item_bytes` each, checked against the bytes left.
  std::size_t count(std::size_t item_bytes, const char* what) {
    const std::uint64_t n = u64(what);
    if (n > left() / item_bytes)
      fail_(std::string(what) + ": " + std::to_string(n) + (item_bytes == 1 ? " bytes pass" : " entries pass") + " the end of the metadata");
    return static_cast<std::size_t>(n);
  }
  std::string str(const char* what) {
    const std::size_t n = count(1, what);
    std::string s(reinterpret_cast<const char*>(at_), n);
    at_ += n;
    return s;
  }
  std::vector<std::string> strs(const char* what) {
    std::vector<std::string> v(count(sizeof(std::uint64_t), what));
    for (auto& s : v) s = str(what);
    return v;
  }
  std::vector<std::uint64_t> u64s(const char* what) {
    std::vector<std::uint64_t> v(count(sizeof(std::uint64_t), what));
    for (auto& x : v) x = u64(what);
    return v;
  }
  std::size_t left() const { return static_cast<std::size_t>(end_ - at_); }

 private:
  void need(std::size_t n, const char* what) {
    if (left() < n) fail_(std::string(what) + ": the metadata ends inside it");
  }
  const std::uint8_t* at_;
  const std::uint8_t* end_;
  Fail fail_;
};

}  // namespace knn::detail
