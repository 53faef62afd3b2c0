#include "io/source.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <new>
#include <string_view>

#include "knn/error.hpp"
#include "knn/stage_times.hpp"

namespace knn::detail {

namespace {

// The unit of reading and of the facts kept: large enough for a read to run at the memory's
// pace, small enough to be scanned while it is still in the cache.
constexpr std::size_t kBlock = std::size_t{1} << 20;

struct ClosedOnExit {
  int fd;
  ~ClosedOnExit() { ::close(fd); }
};

}  // namespace

Source::Source(const std::string& path, Kind kind) : name_(path), kind_(kind) {
  if (path == "-") {
    name_ = "<stdin>";
    read_stream(STDIN_FILENO);
    return;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error::at(path, 0, 0, kind == Kind::text ? "is a directory, not a CSV file" : "is a directory, not a model file");
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error::at(path, 0, 0, std::string("cannot open: ") + std::strerror(errno));
  const ClosedOnExit closed{fd};
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    map_file(fd, static_cast<std::size_t>(st.st_size));
  else
    read_stream(fd);  // a pipe or a device: read to its end
}

Source::~Source() {
  if (mapped_) ::munmap(mapped_, size_);
}

void Source::map_file(int fd, std::size_t size) {
  // Mapped, not copied: the pages are the page cache's own. Each thread touches its share of them
  // first in the scan below, so their faults are taken in parallel.
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) {
    read_stream(fd);
    return;
  }
  mapped_ = m;
  data_ = static_cast<const char*>(m);
  size_ = size;
  if (kind_ != Kind::text) return;
  try {
    open_text();
  } catch (...) {  // a constructor that throws runs no destructor
    if (mapped_) ::munmap(mapped_, size_);
    mapped_ = nullptr;
    throw;
  }
  stage_done("CSV: file mapped and indexed");
}

void Source::read_stream(int fd) {
  std::size_t got = 0;
  for (;;) {
    if (owned_.size() - got < kBlock) owned_.resize(std::max(owned_.size() * 2, got + kBlock));
    const ssize_t r = ::read(fd, owned_.data() + got, owned_.size() - got);
    if (r > 0) {
      got += static_cast<std::size_t>(r);
      continue;
    }
    if (r == 0) break;
    if (errno == EINTR) continue;
    throw Error::at(name_, 0, 0, std::string("read failed: ") + std::strerror(errno));
  }
  owned_.resize(got);
  data_ = owned_.data();
  size_ = owned_.size();
  if (kind_ == Kind::text) open_text();
}

namespace {

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// What a file that is not text is, by its first (and for Parquet its last) bytes, with how to
// get the table out of it as CSV text; empty when it is none of these.
std::string other_format(std::string_view t) {
  using namespace std::string_view_literals;
  if (starts_with(t, "PK\x03\x04"sv))
    return "a zip archive (an .xlsx workbook is one), not CSV text: extract the CSV file from it, or save the sheet as CSV";
  if (starts_with(t, "\xFD" "7zXZ\x00"sv)) return "compressed by xz, not CSV text: decompress it first (xz -d FILE), or give - and pipe xz -dc FILE in";
  if (t.size() >= 10 && starts_with(t, "BZh"sv) && t[3] >= '1' && t[3] <= '9' && t.substr(4, 6) == "\x31\x41\x59\x26\x53\x59"sv)
    return "compressed by bzip2, not CSV text: decompress it first (bunzip2 FILE), or give - and pipe bzcat FILE in";
  if (starts_with(t, "\x28\xB5\x2F\xFD"sv)) return "compressed by zstd, not CSV text: decompress it first (zstd -d FILE), or give - and pipe zstdcat FILE in";
  if (t.size() >= 8 && starts_with(t, "PAR1"sv) && t.substr(t.size() - 4) == "PAR1"sv)
    return "a Parquet file, not CSV text: write the table as CSV first (pandas: pd.read_parquet(FILE).to_csv(NEW, index=False))";
  return {};
}

}  // namespace

void Source::open_text() {
  const std::string_view t(data_, size_);
  if (t.size() >= 2 && static_cast<unsigned char>(t[0]) == 0x1F && static_cast<unsigned char>(t[1]) == 0x8B) inflate_gzip();
  else if (const std::string what = other_format(t); !what.empty()) throw Error::at(name_, 0, 0, what);
  index();
}

// The text a gzip file holds, in place of the file's bytes: every member of it (gzip files may
// be several streams one after another, as cat makes of two), fed to zlib in pieces that its
// 32-bit counts take. Zero bytes after the last member (padding) are ignored; any other bytes
// there are an error, as they are no gzip member and no part of the text.
void Source::inflate_gzip() {
  constexpr std::size_t kPiece = std::size_t{1} << 30;
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) throw Error::at(name_, 0, 0, "cannot start zlib to read its gzip stream");
  struct Ended {
    z_stream* zs;
    ~Ended() { inflateEnd(zs); }
  } ended{&zs};
  std::string out;
  std::size_t in_at = 0, out_at = 0;
  for (;;) {
    if (zs.avail_in == 0 && in_at < size_) {
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data_ + in_at));
      zs.avail_in = static_cast<uInt>(std::min(kPiece, size_ - in_at));
      in_at += zs.avail_in;
    }
    if (out.size() - out_at < kBlock) out.resize(std::max(out.size() * 2, out_at + kBlock));
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + out_at);
    zs.avail_out = static_cast<uInt>(std::min(kPiece, out.size() - out_at));
    const uInt room = zs.avail_out;
    const int r = inflate(&zs, Z_NO_FLUSH);
    out_at += room - zs.avail_out;
    if (r == Z_STREAM_END) {
      const std::size_t next = in_at - zs.avail_in;  // the first byte after this member
      const std::string_view rest(data_ + next, size_ - next);
      if (rest.find_first_not_of('\0') == std::string_view::npos) break;
      if (rest.size() < 2 || static_cast<unsigned char>(rest[0]) != 0x1F || static_cast<unsigned char>(rest[1]) != 0x8B)
        throw Error::at(name_, 0, 0, std::to_string(rest.size()) + " bytes after the end of its gzip stream are not gzip: cut them off, or " +
                                         "decompress the file with gzip -dc, which reads past them");
      if (inflateReset(&zs) != Z_OK) throw Error::at(name_, 0, 0, "cannot read its next gzip member");
      continue;
    }
    if (r == Z_MEM_ERROR) throw std::bad_alloc();
    if (r == Z_BUF_ERROR && zs.avail_in == 0 && in_at == size_)
      throw Error::at(name_, 0, 0, "its gzip stream ends early (a file cut short?): " + std::to_string(out_at) + " bytes of text read");
    if (r != Z_OK && r != Z_BUF_ERROR)
      throw Error::at(name_, 0, 0, std::string("not a valid gzip stream (") + (zs.msg ? zs.msg : "zlib error " + std::to_string(r)) + ")");
  }
  out.resize(out_at);
  out.shrink_to_fit();  // the doubling's spare room, up to the text's size again
  if (mapped_) {
    ::munmap(mapped_, size_);
    mapped_ = nullptr;
  }
  owned_ = std::move(out);
  data_ = owned_.data();
  size_ = owned_.size();
}

void Source::scan_block(std::size_t k) {
  const char* p = data_ + k * kBlock;
  const std::size_t len = std::min(kBlock, size_ - k * kBlock);
  block_lines_[k] = static_cast<std::size_t>(std::count(p, p + len, '\n'));
  if (const void* nul = std::memchr(p, '\0', len)) block_nul_[k] = static_cast<std::size_t>(static_cast<const char*>(nul) - p);
  block_quote_[k] = std::memchr(p, '"', len) != nullptr;
}

// The facts of every block, by all threads, then the file's: line ends before each block, the
// first NUL byte, whether there is a quote.
void Source::index() {
  const std::size_t blocks = (size_ + kBlock - 1) / kBlock;
  block_lines_.assign(blocks, 0);
  block_nul_.assign(blocks, npos);
  block_quote_.assign(blocks, 0);
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(blocks); ++k) scan_block(static_cast<std::size_t>(k));
  std::size_t before = 0;
  for (std::size_t k = 0; k < blocks; ++k) {
    const std::size_t n = block_lines_[k];
    block_lines_[k] = before;
    before += n;
    if (first_nul_ == npos && block_nul_[k] != npos) first_nul_ = k * kBlock + block_nul_[k];
    has_quote_ = has_quote_ || block_quote_[k];
  }
  block_lines_.push_back(before);
  block_nul_.clear();
  block_quote_.clear();
}

void Source::skip_lines(std::size_t lines) {
  if (lines == 0) return;
  const char* const end = data_ + size_;
  const char* at = data_ + begin_;
  for (std::size_t i = 0; i < lines && at; ++i) {
    const void* nl = std::memchr(at, '\n', static_cast<std::size_t>(end - at));
    at = nl ? static_cast<const char*>(nl) + 1 : nullptr;
  }
  if (!at || at == end) {  // nothing left to read
    const std::size_t has = lines_before(size()) + (size() && data()[size() - 1] != '\n' ? 1 : 0);
    throw Error::at(name_, 0, 0,
                    param("skip_lines") + " " + std::to_string(lines) + " passes over every line: the file has " + std::to_string(has) +
                        (has == 1 ? " line" : " lines") +
                        " (give the count of lines above the header, or above the first data row of a file without one)");
  }
  const std::size_t nul = first_nul_ == npos ? npos : first_nul_ + begin_;  // in the whole text
  begin_ = static_cast<std::size_t>(at - data_);
  if (nul == npos || nul >= begin_) {
    first_nul_ = nul == npos ? npos : nul - begin_;
  } else {  // the first NUL was in a skipped line: the next one, if any
    const void* next = std::memchr(data(), '\0', size());
    first_nul_ = next ? static_cast<std::size_t>(static_cast<const char*>(next) - data()) : npos;
  }
  // A quote in a skipped line (a quoted title) would send the rows down the one-reader path.
  if (has_quote_) has_quote_ = std::memchr(data(), '"', size()) != nullptr;
}

std::size_t Source::lines_before(std::size_t offset) const {
  offset += begin_;
  const std::size_t k = offset / kBlock;
  const char* block = data_ + k * kBlock;
  return block_lines_[k] + static_cast<std::size_t>(std::count(block, data_ + offset, '\n'));
}

void refuse_nul_bytes(const Source& source, char delim) {
  if (source.first_nul() == Source::npos) return;
  const char* const begin = source.data();
  const char* const end = begin + source.size();
  const char* const nul = begin + source.first_nul();
  const char* line_begin = nul;
  while (line_begin != begin && line_begin[-1] != '\n') --line_begin;
  const char* cell_begin = nul;
  while (cell_begin != line_begin && cell_begin[-1] != delim) --cell_begin;
  const char* cell_end = nul;
  while (cell_end != end && *cell_end != delim && *cell_end != '\n') ++cell_end;
  const auto line = 1 + source.lines_before(static_cast<std::size_t>(line_begin - begin));
  const auto column = 1 + static_cast<std::size_t>(std::count(line_begin, nul, delim));
  const std::string_view cell(cell_begin, static_cast<std::size_t>(cell_end - cell_begin));
  throw Error::at(source.name(), line, column, "NUL byte in " + quote(cell) + ": binary data, not CSV text");
}

}  // namespace knn::detail
