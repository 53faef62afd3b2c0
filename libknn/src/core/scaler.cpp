#include "knn/scaler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <omp.h>

#include "arith/scaled_value.hpp"
#include "io/page_memory.hpp"
#include "io/text_format.hpp"
#include "knn/error.hpp"

namespace knn {

Scaling parse_scaling(const std::string& text) {
  if (text == "minmax") return Scaling::minmax;
  if (text == "standard") return Scaling::standard;
  if (text == "none") return Scaling::none;
  throw Error::parameter("scaling", "unknown scaling " + quote(text) + " (expected minmax, standard or none)");
}

const char* to_string(Scaling s) {
  switch (s) {
    case Scaling::minmax: return "minmax";
    case Scaling::standard: return "standard";
    case Scaling::none: return "none";
  }
  return "?";
}

void Scaler::fit(MatrixView train) {
  const std::size_t d = train.cols, n = train.rows;
  offset_.assign(d, 0.0);
  scale_.assign(d, 1.0);
  if (kind_ == Scaling::none || n == 0) return;
  if (kind_ == Scaling::minmax) {
    // On every core, with one loop's result bit for bit (a zero's sign included): thread t takes
    // the t-th of equal blocks of rows 1..n-1, starting from row 0's values and keeping the first
    // of equal values, and the blocks are merged in row order, each keeping the earlier.
    std::vector<double> lo(train.row(0), train.row(0) + d), hi = lo;
    const int threads = n * d >= (std::size_t{1} << 20) ? omp_get_max_threads() : 1;
    std::vector<std::vector<double>> block_lo(static_cast<std::size_t>(threads), lo), block_hi = block_lo;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
      const auto t = static_cast<std::size_t>(omp_get_thread_num()), count = static_cast<std::size_t>(omp_get_num_threads());
      std::vector<double>& my_lo = block_lo[t];
      std::vector<double>& my_hi = block_hi[t];
      const std::size_t first = 1 + (n - 1) * t / count, last = 1 + (n - 1) * (t + 1) / count;
      for (std::size_t i = first; i < last; ++i) {
        const float* r = train.row(i);
        for (std::size_t j = 0; j < d; ++j) {
          my_lo[j] = std::min(my_lo[j], static_cast<double>(r[j]));
          my_hi[j] = std::max(my_hi[j], static_cast<double>(r[j]));
        }
      }
    }
    for (std::size_t t = 0; t < block_lo.size(); ++t)
      for (std::size_t j = 0; j < d; ++j) {
        lo[j] = std::min(lo[j], block_lo[t][j]);
        hi[j] = std::max(hi[j], block_hi[t][j]);
      }
    set_min_max(lo, hi);
    return;
  }
  // Standard: two passes in double (mean, then centred squares) for accuracy.
  std::vector<double> sum(d, 0.0), sq(d, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) sum[j] += train(i, j);
  for (std::size_t j = 0; j < d; ++j) offset_[j] = sum[j] / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) {
      const double c = train(i, j) - offset_[j];
      sq[j] += c * c;
    }
  for (std::size_t j = 0; j < d; ++j) {
    const double sd = std::sqrt(sq[j] / static_cast<double>(n));
    scale_[j] = sd > 0.0 ? sd : 1.0;
  }
  keep_columns();
}

void Scaler::set_min_max(const std::vector<double>& lo, const std::vector<double>& hi) {
  if (kind_ != Scaling::minmax)
    throw Error(std::string("set_min_max: the scaler is ") + to_string(kind_) + ", not minmax");
  if (lo.size() != hi.size())
    throw Error("set_min_max: " + std::to_string(lo.size()) + " minima but " + std::to_string(hi.size()) + " maxima");
  offset_ = lo;
  scale_.resize(lo.size());
  for (std::size_t j = 0; j < lo.size(); ++j) {
    const double range = hi[j] - lo[j];
    scale_[j] = range > 0.0 ? range : 1.0;
  }
  keep_columns();
}

Scaler Scaler::from_parts(Scaling kind, std::vector<bool> kept, std::vector<double> offset, std::vector<double> scale) {
  Scaler s(kind, std::move(kept));
  s.offset_ = std::move(offset);
  s.scale_ = std::move(scale);
  return s;
}

void Scaler::keep_columns() {
  for (std::size_t j = 0; j < kept_.size() && j < offset_.size(); ++j)
    if (kept_[j]) offset_[j] = 0.0, scale_[j] = 1.0;
}

void Scaler::fit(MatrixView train, const Communicator& comm) {
  if (!distributed(&comm)) {
    fit(train);
    return;
  }
  const std::size_t d = train.cols, n = train.rows;
  offset_.assign(d, 0.0);
  scale_.assign(d, 1.0);
  if (kind_ == Scaling::none) return;
  if (kind_ == Scaling::minmax) {
    std::vector<double> lo(d, std::numeric_limits<double>::infinity()), hi(d, -std::numeric_limits<double>::infinity());
    for (std::size_t i = 0; i < n; ++i) {
      const float* r = train.row(i);
      for (std::size_t j = 0; j < d; ++j) {
        lo[j] = std::min(lo[j], static_cast<double>(r[j]));
        hi[j] = std::max(hi[j], static_cast<double>(r[j]));
      }
    }
    comm.allreduce_min(lo.data(), d);
    comm.allreduce_max(hi.data(), d);
    for (std::size_t j = 0; j < d; ++j)
      if (!(lo[j] <= hi[j])) lo[j] = hi[j] = 0.0;  // no rows on any rank: offset 0, scale 1
    set_min_max(lo, hi);
    return;
  }
  // Standard: each sum continues on the next rank where the previous one stopped, in row order,
  // exactly as the single loop of fit() adds; the last rank holds the totals.
  const int last = comm.size() - 1;
  std::vector<double> total(1, static_cast<double>(n));
  comm.receive_from_previous(total.data(), 1);
  if (comm.rank() > 0) total[0] += static_cast<double>(n);
  comm.send_to_next(total.data(), 1);
  comm.broadcast(total.data(), 1, last);
  const double rows = total[0];
  if (rows == 0.0) return;
  std::vector<double> sum(d, 0.0), sq(d, 0.0);
  comm.receive_from_previous(sum.data(), d);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) sum[j] += train(i, j);
  comm.send_to_next(sum.data(), d);
  comm.broadcast(sum.data(), d, last);
  for (std::size_t j = 0; j < d; ++j) offset_[j] = sum[j] / rows;
  comm.receive_from_previous(sq.data(), d);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) {
      const double c = train(i, j) - offset_[j];
      sq[j] += c * c;
    }
  comm.send_to_next(sq.data(), d);
  comm.broadcast(sq.data(), d, last);
  for (std::size_t j = 0; j < d; ++j) {
    const double sd = std::sqrt(sq[j] / rows);
    scale_[j] = sd > 0.0 ? sd : 1.0;
  }
  keep_columns();
}

namespace {

// Scaler::transform's arithmetic from `in` into `out` (the same rows, or other rows of the same
// size): rows of another width than the scaler's, or the first value that overflows float32 (with
// its row and column), are reported before anything is written.
void scale_into(MatrixView in, float* out, const std::vector<double>& offset, const std::vector<double>& scale,
                Scaling kind) {
  if (in.cols != offset.size())
    throw Error("scaler fitted on " + std::to_string(offset.size()) + " features, given " + std::to_string(in.cols));
  const std::size_t d = in.cols;
  // A query far outside a tiny training range can overflow float once scaled: never a silent inf.
  // The first such row is found after the parallel pass, then reported with its column and value.
  std::ptrdiff_t bad_row = static_cast<std::ptrdiff_t>(in.rows);
#pragma omp parallel for schedule(static) reduction(min : bad_row)
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(in.rows); ++i) {
    const float* r = in.row(static_cast<std::size_t>(i));
    for (std::size_t j = 0; j < d; ++j)
      if (!std::isfinite(arith::scaled_value(r[j], offset[j], scale[j]))) {
        bad_row = std::min(bad_row, i);
        break;
      }
  }
  if (bad_row < static_cast<std::ptrdiff_t>(in.rows)) {
    const auto i = static_cast<std::size_t>(bad_row);
    for (std::size_t j = 0; j < d; ++j)
      if (!std::isfinite(arith::scaled_value(in(i, j), offset[j], scale[j])))
        throw ScaleOverflow(i, j, in(i, j), kind);
  }
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(in.rows); ++i) {
    const float* r = in.row(static_cast<std::size_t>(i));
    float* o = out + static_cast<std::size_t>(i) * d;
    for (std::size_t j = 0; j < d; ++j) o[j] = arith::scaled_value(r[j], offset[j], scale[j]);
  }
}

}  // namespace

void Scaler::transform(Matrix& m) const {
  if (kind_ == Scaling::none) return;
  scale_into(m, m.values.data(), offset_, scale_, kind_);
}

Matrix Scaler::transformed(MatrixView m) const {
  if (kind_ == Scaling::none) return Matrix(m);
  Matrix out;
  detail::resize_prepared(out.values, m.size());  // fresh pages mapped by every thread
  out.rows = m.rows;
  out.cols = m.cols;
  scale_into(m, out.values.data(), offset_, scale_, kind_);
  return out;
}

ScaleOverflow::ScaleOverflow(std::size_t r, std::size_t c, float v, Scaling kind)
    : ScaleOverflow(r, c, v,
                    "row " + std::to_string(r + 1) + ", feature " + std::to_string(c + 1) + ": value " +
                        quote(format_double(v)) + " overflows float32 once scaled by the " + to_string(kind) +
                        " scaler fitted on the training rows") {}

Error ScaleOverflow::at(const std::string& file, std::size_t line, std::size_t column) const {
  return Error::at(file, line, column,
                   "value " + quote(format_double(value)) +
                       " overflows float32 once scaled by the scaler fitted on the training rows (far outside their range)");
}

}  // namespace knn
