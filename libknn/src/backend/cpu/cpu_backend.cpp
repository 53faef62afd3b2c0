// Exact k-nearest-neighbour search on the CPU.
//
// A float32 pass (a matrix product for l2 and cosine, a vectorised sum for l1) gives each pair an
// approximate value a and a bound e on how far the defined distance can be from it, so the
// defined value lies in [a - e, a + e]. Per query we keep tau, the k-th smallest upper bound seen
// so far, and every row whose lower bound is <= tau. At least k rows have a defined value <= tau,
// so the true k-th value is <= tau, and every true neighbour (ties included) has a lower bound
// <= tau: the kept rows contain the answer. They are then ranked by the defined distance
// (arith::defined_distance), which is what every backend reports.
//
// The bounds e of each metric, and what underflow adds to them, are derived in
// docs/exactness.md (arith/bounds.hpp computes them).
#include "backend/cpu/cpu_backend.hpp"

#include "arith/bounds.hpp"

#define EIGEN_DONT_PARALLELIZE
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <vector>

#include <omp.h>

namespace knn::cpu {

namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Blocks sized for the matrix product: a 512 x 8192 float tile (16 MiB) per thread measured best
// on the 2-core AVX-512 machines this was tuned on; fewer queries get smaller blocks so that every
// thread has work.
constexpr std::size_t kMaxQueryBlock = 512;
constexpr std::size_t kTrainBlock = 8192;

// Candidates of one query: a max-heap of the k smallest upper bounds (its top is tau) and the
// rows whose lower bound was <= tau when they were seen, pruned now and then.
class Candidates {
 public:
  explicit Candidates(std::size_t k) : k_(k) { rows_.reserve(std::max<std::size_t>(64, 2 * k)); }
  double tau() const { return upper_.size() < k_ ? kInf : upper_.top(); }
  void offer(double lower, double upper, std::int64_t row) {
    if (!(lower <= upper) || !std::isfinite(lower) || !std::isfinite(upper)) {
      lower = -kInf;  // overflow or NaN in the fast pass: keep the row, let the exact pass decide
      upper = kInf;
    }
    if (lower > tau()) return;
    if (upper_.size() < k_) {
      upper_.push(upper);
    } else if (upper < upper_.top()) {
      upper_.pop();
      upper_.push(upper);
    }
    rows_.push_back({lower, row});
    if (rows_.size() >= 2 * k_ + 256) prune();
  }
  void prune() {
    const double t = tau();
    rows_.erase(std::remove_if(rows_.begin(), rows_.end(), [t](const Entry& e) { return e.lower > t; }),
                rows_.end());
  }
  struct Entry {
    double lower;
    std::int64_t row;
  };
  std::vector<Entry>& rows() { return rows_; }
  void reset() {
    rows_.clear();
    upper_ = {};
  }

 private:
  std::size_t k_;
  std::priority_queue<double> upper_;
  std::vector<Entry> rows_;
};

struct Ranked {
  double dist;
  std::int64_t row;
  bool operator<(const Ranked& o) const { return dist < o.dist || (dist == o.dist && row < o.row); }
};

// Ranks the kept rows by the defined distance and writes the k best.
void finish_query(Candidates& cand, const float* q, const Matrix& train, Metric metric, std::size_t k,
                  std::vector<Ranked>& scratch, std::int64_t* out_idx, double* out_dist) {
  cand.prune();
  scratch.clear();
  for (const auto& e : cand.rows())
    scratch.push_back({distance(q, train.row(static_cast<std::size_t>(e.row)), train.cols, metric), e.row});
  std::partial_sort(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(k), scratch.end());
  for (std::size_t i = 0; i < k; ++i) {
    out_idx[i] = scratch[i].row;
    out_dist[i] = scratch[i].dist;
  }
}

std::vector<double> squared_norms(MatrixView m) {
  std::vector<double> out(m.rows);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(m.rows); ++i) {
    const float* r = m.row(static_cast<std::size_t>(i));
    double s = 0.0;
    for (std::size_t j = 0; j < m.cols; ++j) s += static_cast<double>(r[j]) * r[j];
    out[static_cast<std::size_t>(i)] = s;
  }
  return out;
}

}  // namespace

Neighbors CpuBackend::search(const SearchRequest& req) const {
  const Matrix& train = *req.train;
  const MatrixView queries = req.queries;
  const std::size_t n = train.rows, nq = queries.rows, d = train.cols, k = req.k;
  const Metric metric = req.metric;

  Neighbors out;
  out.queries = nq;
  out.k = k;
  out.index.assign(nq * k, -1);
  out.distance.assign(nq * k, 0.0);
  if (nq == 0) return out;

  const double c = detail::fp32_dot_bound(d);
  const double c_l1 = detail::fp32_l1_bound(d);
  const double l2_abs = detail::l2_underflow(d);  // what underflow in the float products may lose
  const bool product = metric != Metric::l1;
  std::vector<double> tn, qn;
  std::vector<double> t_lower;  // l2: |t|^2 (1 - c), the training part of each lower bound
  if (product) {
    tn = squared_norms(train);
    qn = squared_norms(queries);
    t_lower.resize(n);
    for (std::size_t j = 0; j < n; ++j) t_lower[j] = tn[j] * (1.0 - c);
  }
  const int threads = threads_ > 0 ? threads_ : omp_get_max_threads();
  const std::size_t per_thread = (nq + 2 * static_cast<std::size_t>(threads) - 1) / (2 * static_cast<std::size_t>(threads));
  const std::size_t query_block = std::min(kMaxQueryBlock, std::max<std::size_t>(16, (per_thread + 15) / 16 * 16));
  const std::size_t blocks = (nq + query_block - 1) / query_block;

#pragma omp parallel num_threads(threads)
  {
    RowMat dots;
    std::vector<float> l1(product ? 0 : query_block * kTrainBlock);
    std::vector<Candidates> cand(query_block, Candidates(k));
    std::vector<Ranked> scratch;
#pragma omp for schedule(dynamic, 1)
    for (std::ptrdiff_t b = 0; b < static_cast<std::ptrdiff_t>(blocks); ++b) {
      const std::size_t q0 = static_cast<std::size_t>(b) * query_block;
      const std::size_t qb = std::min(query_block, nq - q0);
      for (std::size_t i = 0; i < qb; ++i) cand[i].reset();
      for (std::size_t t0 = 0; t0 < n; t0 += kTrainBlock) {
        const std::size_t tb = std::min(kTrainBlock, n - t0);
        if (product) {
          Eigen::Map<const RowMat> Q(queries.row(q0), static_cast<Eigen::Index>(qb), static_cast<Eigen::Index>(d));
          Eigen::Map<const RowMat> T(train.row(t0), static_cast<Eigen::Index>(tb), static_cast<Eigen::Index>(d));
          dots.resize(static_cast<Eigen::Index>(qb), static_cast<Eigen::Index>(tb));
          dots.noalias() = Q * T.transpose();
        } else {
          for (std::size_t i = 0; i < qb; ++i) {
            const float* qr = queries.row(q0 + i);
            for (std::size_t j = 0; j < tb; ++j) {
              const float* tr = train.row(t0 + j);
              float s = 0.0f;
#pragma omp simd reduction(+ : s)
              for (std::size_t f = 0; f < d; ++f) s += std::fabs(qr[f] - tr[f]);
              l1[i * kTrainBlock + j] = s;
            }
          }
        }
        for (std::size_t i = 0; i < qb; ++i) {
          const std::size_t q = q0 + i;
          const std::int64_t skip = req.exclude ? req.exclude[q] : -1;
          Candidates& cq = cand[i];
          if (metric == Metric::l2) {
            const float* row = dots.data() + i * tb;
            const double qq = qn[q];
            const double tau0 = cq.tau();
            if (tau0 < kInf) {
              // Most rows are far: a vectorised pass against the tau of the segment's start (which
              // only shrinks later) finds the few that can be candidates; they go through offer().
              // The small slack covers the different rounding of this rearranged lower bound.
              const double* tl = t_lower.data() + t0;
              const double limit = tau0 - qq * (1.0 - c) + l2_abs + (qq + std::fabs(tau0)) * 0x1p-40;
              constexpr std::size_t kChunk = 64;
              for (std::size_t j0 = 0; j0 < tb; j0 += kChunk) {
                const std::size_t j1 = std::min(tb, j0 + kChunk);
                double m = kInf;
#pragma omp simd reduction(min : m)
                for (std::size_t jj = j0; jj < j1; ++jj) m = std::min(m, tl[jj] - 2.0 * static_cast<double>(row[jj]));
                if (m > limit) continue;
                for (std::size_t jj = j0; jj < j1; ++jj) {
                  if (tl[jj] - 2.0 * static_cast<double>(row[jj]) > limit) continue;
                  const double norms = qq + tn[t0 + jj];
                  const double a = norms - 2.0 * static_cast<double>(row[jj]);
                  const double e = c * norms + l2_abs;
                  const auto r = static_cast<std::int64_t>(t0 + jj);
                  if (r != skip && a - e <= cq.tau()) cq.offer(a - e, a + e, r);
                }
              }
              continue;
            }
            for (std::size_t j = 0; j < tb; ++j) {
              const double norms = qq + tn[t0 + j];
              const double a = norms - 2.0 * static_cast<double>(row[j]);
              const double e = c * norms + l2_abs;
              if (a - e > cq.tau()) continue;
              const auto r = static_cast<std::int64_t>(t0 + j);
              if (r != skip) cq.offer(a - e, a + e, r);
            }
          } else if (metric == Metric::cosine) {
            const float* row = dots.data() + i * tb;
            const double nq_ = std::sqrt(qn[q]);
            for (std::size_t j = 0; j < tb; ++j) {
              const auto r = static_cast<std::int64_t>(t0 + j);
              if (r == skip) continue;
              const double nt = std::sqrt(tn[t0 + j]);
              if (nq_ == 0.0 || nt == 0.0) {
                cq.offer(1.0 - c, 1.0 + c, r);
                continue;
              }
              const double a = 1.0 - static_cast<double>(row[j]) / (nq_ * nt);
              const double e = c + detail::dot_underflow(d, nq_, nt) / (nq_ * nt);
              if (a - e > cq.tau()) continue;
              cq.offer(a - e, a + e, r);
            }
          } else {
            const float* row = l1.data() + i * kTrainBlock;
            for (std::size_t j = 0; j < tb; ++j) {
              const double a = row[j];
              const double e = c_l1 * a;
              if (a - e > cq.tau()) continue;
              const auto r = static_cast<std::int64_t>(t0 + j);
              if (r != skip) cq.offer(a - e, a + e, r);
            }
          }
        }
      }
      for (std::size_t i = 0; i < qb; ++i) {
        const std::size_t q = q0 + i;
        finish_query(cand[i], queries.row(q), train, metric, k, scratch, out.index.data() + q * k,
                     out.distance.data() + q * k);
      }
    }
  }
  return out;
}

}  // namespace knn::cpu
