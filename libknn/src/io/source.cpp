#include "io/source.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

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
  index();
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
  if (kind_ == Kind::text) index();
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

std::size_t Source::lines_before(std::size_t offset) const {
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
