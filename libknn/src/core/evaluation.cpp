#include "knn/evaluation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "distributed/distributed.hpp"
#include "knn/error.hpp"
#include "knn/scores.hpp"

namespace knn {

Task parse_task(const std::string& text) {
  if (text == "classify" || text == "classification") return Task::classify;
  if (text == "regress" || text == "regression") return Task::regress;
  throw Error::parameter("task", "unknown task " + quote(text) + " (expected classify or regress)");
}

const char* to_string(Task t) { return t == Task::classify ? "classify" : "regress"; }

namespace {

// splitmix64: a tiny generator that a script in any language can reproduce exactly.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

void fold_shuffle(std::vector<std::size_t>& v, SplitMix64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.next() % i]);
}

struct Fold {
  std::vector<std::size_t> train, test;
};

Score summarize(const std::vector<double>& v) {
  Score s;
  for (double x : v) s.mean += x;
  s.mean /= static_cast<double>(v.size());
  for (double x : v) s.std += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(s.std / static_cast<double>(v.size()));
  return s;
}

// Rows of a leave-one-out whose removal changes the min-max scaler: the only row holding some
// column's minimum or maximum. Every other row shares the scaler fitted on all rows.
std::vector<bool> loo_changes_scaler(const Matrix& x, Scaling scaling) {
  std::vector<bool> special(x.rows, scaling == Scaling::standard);
  if (scaling != Scaling::minmax || x.rows < 2) return special;
  for (std::size_t j = 0; j < x.cols; ++j) {
    float lo = x(0, j), hi = x(0, j);
    for (std::size_t i = 1; i < x.rows; ++i) {
      lo = std::min(lo, x(i, j));
      hi = std::max(hi, x(i, j));
    }
    std::size_t nlo = 0, nhi = 0, ilo = 0, ihi = 0;
    for (std::size_t i = 0; i < x.rows; ++i) {
      if (x(i, j) == lo) nlo++, ilo = i;
      if (x(i, j) == hi) nhi++, ihi = i;
    }
    if (nlo == 1) special[ilo] = true;
    if (nhi == 1) special[ihi] = true;
  }
  return special;
}

// The same over the rows of every rank (this rank's rows are global rows offset..offset + rows):
// the minima and maxima, and how many rows hold them, are reduced over the ranks. Returns the
// flags of all `total` rows, the same on every rank.
std::vector<bool> loo_changes_scaler(const Matrix& x, Scaling scaling, const Communicator& comm, std::size_t offset,
                                     std::size_t total) {
  std::vector<bool> special(total, scaling == Scaling::standard);
  if (scaling != Scaling::minmax || total < 2) return special;
  const std::size_t d = x.cols;
  std::vector<double> lo(d, std::numeric_limits<double>::infinity()), hi(d, -std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < x.rows; ++i)
    for (std::size_t j = 0; j < d; ++j) {
      lo[j] = std::min(lo[j], static_cast<double>(x(i, j)));
      hi[j] = std::max(hi[j], static_cast<double>(x(i, j)));
    }
  comm.allreduce_min(lo.data(), d);
  comm.allreduce_max(hi.data(), d);
  // Per column: rows at the minimum, rows at the maximum, and (when one) which.
  std::vector<std::uint64_t> mine(4 * d, 0);
  for (std::size_t i = 0; i < x.rows; ++i)
    for (std::size_t j = 0; j < d; ++j) {
      if (x(i, j) == lo[j]) ++mine[4 * j], mine[4 * j + 1] = offset + i;
      if (x(i, j) == hi[j]) ++mine[4 * j + 2], mine[4 * j + 3] = offset + i;
    }
  const auto every = detail::gather_all(comm, mine);
  for (std::size_t j = 0; j < d; ++j)
    for (int side = 0; side < 2; ++side) {
      std::uint64_t count = 0, row = 0;
      for (std::size_t r = 0; r < every.size(); r += 4 * d) {
        count += every[r + 4 * j + 2 * side];
        if (every[r + 4 * j + 2 * side]) row = every[r + 4 * j + 2 * side + 1];
      }
      if (count == 1) special[row] = true;
    }
  return special;
}

std::vector<std::size_t> local_rows(std::size_t offset, std::size_t rows) {
  std::vector<std::size_t> v(rows);
  std::iota(v.begin(), v.end(), offset);
  return v;
}

// A scaling overflow named at its file, line and column (when the data set came from a file).
Error at_cell(const ScaleOverflow& e, const Dataset& d, std::size_t row) {
  const std::size_t line = row < d.lines.size() ? d.lines[row] : 0;
  const std::size_t col = e.col < d.feature_columns.size() ? d.feature_columns[e.col] + 1 : 0;
  return e.at(d.source, line, col);
}

}  // namespace

std::vector<int> assign_folds(std::size_t rows, const std::vector<int>* classes, int folds, std::uint64_t seed) {
  if (folds < 2) throw Error::parameter("folds", quote(std::to_string(folds)) + " is not a whole number >= 2");
  if (static_cast<std::size_t>(folds) > rows)
    throw Error::parameter("folds", quote(std::to_string(folds)) + ": that many folds need at least as many rows; the data has " +
                                     std::to_string(rows));
  SplitMix64 rng{seed};
  std::vector<std::vector<std::size_t>> groups;
  if (classes) {
    int m = -1;
    for (int c : *classes) m = std::max(m, c);
    groups.resize(static_cast<std::size_t>(m + 1));
    for (std::size_t i = 0; i < rows; ++i) groups[static_cast<std::size_t>((*classes)[i])].push_back(i);
  } else {
    groups.emplace_back(rows);
    std::iota(groups[0].begin(), groups[0].end(), std::size_t{0});
  }
  std::vector<int> fold(rows, 0);
  std::size_t dealt = 0;
  for (auto& g : groups) {
    fold_shuffle(g, rng);
    for (std::size_t i : g) fold[i] = static_cast<int>(dealt++ % static_cast<std::size_t>(folds));
  }
  return fold;
}

EvalResult evaluate(const Dataset& data, const EvalOptions& opt) {
  if (opt.ks.empty()) throw Error::parameter("ks", "no k given");
  for (std::size_t i = 0; i < opt.ks.size(); ++i)
    if (opt.ks[i] < 1 || (i && opt.ks[i] <= opt.ks[i - 1]))
      throw Error::parameter("ks", "k values must be >= 1, ascending and distinct");
  if (opt.weights.empty() || opt.metrics.empty()) throw Error("evaluate: no weights or metric given");
  if (!data.has_labels()) throw Error::at(data.source, 0, 0, "has no label column to score against");
  const FoldSpec& fs = opt.folds;
  const Dataset* test = fs.kind == FoldSpec::Kind::test ? fs.test : nullptr;
  if (fs.kind == FoldSpec::Kind::test) {
    if (!test) throw Error::parameter("test", "no test data given");
    if (!test->has_labels()) throw Error::at(test->source, 0, 0, "has no label column " + quote(data.label_name) + " to score against");
    if (test->dims() != data.dims())
      throw Error::at(test->source, 0, 0, "has " + std::to_string(test->dims()) + " features, " + data.source + " has " +
                                             std::to_string(data.dims()));
  }

  // Sharded: each rank passes its shard of `data` (see below); a test file every rank holds whole.
  const Communicator* comm = opt.backend.comm.get();
  const bool sharded = distributed(comm);

  EvalResult res;
  res.task = opt.task;
  const bool cls = opt.task == Task::classify;
  res.score_names = cls ? std::vector<std::string>{"accuracy", "balanced_accuracy", "f1_macro"}
                        : std::vector<std::string>{"rmse", "mae", "r2"};

  // Targets of the data rows (then of the test rows, appended).
  LabelEncoder enc;
  std::vector<int> cls_all;
  std::vector<double> y_all;
  // Sharded: `data` holds this rank's rows (global data.row_offset + i); folds, labels and
  // targets are planned over all rows, the same on every rank.
  const std::size_t local_n = data.size(), nt = test ? test->size() : 0;
  const std::size_t n = sharded ? data.all_rows() : local_n;
  if (cls) {
    std::vector<std::string> labels = data.labels;
    if (test) labels.insert(labels.end(), test->labels.begin(), test->labels.end());
    if (sharded) {
      enc.fit(detail::all_labels(*comm, labels));
      cls_all = detail::gather_all(*comm, enc.encode(data.labels));
      if (test) {
        const auto t = enc.encode(test->labels);
        cls_all.insert(cls_all.end(), t.begin(), t.end());
      }
    } else {
      enc.fit(labels);
      cls_all = enc.encode(labels);
    }
    res.classes = enc.classes();
  } else {
    collective(comm, [&] { y_all = numeric_targets(data); });
    if (sharded) y_all = detail::gather_all(*comm, y_all);
    if (test) {
      const auto yt = numeric_targets(*test);
      y_all.insert(y_all.end(), yt.begin(), yt.end());
    }
  }

  // Folds as (training rows, held-out rows); leave-one-out is planned separately below.
  std::vector<Fold> folds;
  std::size_t smallest_train = n;
  if (fs.kind == FoldSpec::Kind::kfold) {
    std::vector<int> own(cls_all.begin(), cls_all.begin() + static_cast<std::ptrdiff_t>(cls ? n : 0));
    const auto f = assign_folds(n, cls ? &own : nullptr, fs.folds, fs.seed);
    folds.resize(static_cast<std::size_t>(fs.folds));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t g = 0; g < folds.size(); ++g) (static_cast<int>(g) == f[i] ? folds[g].test : folds[g].train).push_back(i);
    for (const auto& g : folds) smallest_train = std::min(smallest_train, g.train.size());
  } else if (fs.kind == FoldSpec::Kind::loo) {
    if (n < 2) throw Error::parameter("loo", "leave-one-out needs at least 2 rows");
    smallest_train = n - 1;
  }
  const std::size_t kmax = opt.ks.back();
  if (kmax > smallest_train)
    throw Error::parameter("ks", quote(std::to_string(kmax)) + " is larger than the " + std::to_string(smallest_train) +
                                 " training rows of " + (fs.kind == FoldSpec::Kind::test ? "the training file" : "the smallest fold") +
                                 "; the largest allowed k is " + std::to_string(smallest_train));

  const auto backend = make_backend(opt.backend);
  const std::size_t combos = opt.metrics.size() * opt.weights.size(), nk = opt.ks.size();
  // scores[combo][k][score] -> values per fold
  std::vector<std::vector<std::vector<std::vector<double>>>> scores(
      combos, std::vector<std::vector<std::vector<double>>>(nk, std::vector<std::vector<double>>(res.score_names.size())));
  if (cls) res.confusion.assign(combos, std::vector<std::vector<std::size_t>>(enc.size(), std::vector<std::size_t>(enc.size(), 0)));

  // Scores one fold's held-out rows for one combination; pc / py hold their predictions for every
  // k, k-major (ks.size() x held.size()).
  auto score_fold = [&](std::size_t combo, const std::vector<std::size_t>& held, const std::vector<int>& pc,
                        const std::vector<double>& py) {
    const std::size_t m = held.size();
    for (std::size_t ki = 0; ki < nk; ++ki) {
      if (cls) {
        std::vector<int> t(m), p(pc.begin() + static_cast<std::ptrdiff_t>(ki * m), pc.begin() + static_cast<std::ptrdiff_t>((ki + 1) * m));
        for (std::size_t i = 0; i < m; ++i) t[i] = cls_all[held[i]];
        auto& s = scores[combo][ki];
        s[0].push_back(accuracy(t, p));
        s[1].push_back(balanced_accuracy(t, p));
        s[2].push_back(f1_macro(t, p));
        if (ki + 1 == nk) {
          auto& cm = res.confusion[combo];
          for (std::size_t i = 0; i < m; ++i) ++cm[static_cast<std::size_t>(t[i])][static_cast<std::size_t>(p[i])];
        }
      } else {
        std::vector<double> t(m), p(py.begin() + static_cast<std::ptrdiff_t>(ki * m), py.begin() + static_cast<std::ptrdiff_t>((ki + 1) * m));
        for (std::size_t i = 0; i < m; ++i) t[i] = y_all[held[i]];
        auto& s = scores[combo][ki];
        s[0].push_back(rmse(t, p));
        s[1].push_back(mae(t, p));
        s[2].push_back(r2(t, p));
      }
    }
  };

  // Searches `queries` among `train` (already scaled) once per metric at kmax, then predicts
  // every k for every weight function. `held` maps query rows to rows of cls_all / y_all.
  // `prepared`: train as the backend keeps it, from fit_scaler_prepared, or null to prepare it here.
  // `query_scaler`: where set, `queries` are unscaled and each search scales them (SearchRequest).
  auto predict_all = [&](const Matrix& train, const std::vector<std::size_t>& train_rows, const Matrix& queries,
                         const std::vector<std::int64_t>* exclude, std::vector<std::vector<int>>& pc,
                         std::vector<std::vector<double>>& py, std::shared_ptr<const PreparedTrain> prepared = nullptr,
                         const Scaler* query_scaler = nullptr) {
    // Sharded: train_rows are this rank's rows of the fold's training part, by global index.
    const std::vector<std::int64_t> keys(train_rows.begin(), train_rows.end());
    std::vector<int> tc;
    std::vector<double> ty;
    for (std::size_t r : train_rows) {
      if (cls) tc.push_back(cls_all[r]);
      else ty.push_back(y_all[r]);
    }
    pc.assign(combos, {});
    py.assign(combos, {});
    if (!prepared && train.rows) prepared = backend->prepare(train);
    for (std::size_t mi = 0; mi < opt.metrics.size(); ++mi) {
      SearchRequest req;
      req.train = &train;
      req.prepared = prepared.get();
      req.queries = &queries;
      req.k = kmax;
      req.metric = opt.metrics[mi];
      req.exclude = exclude ? exclude->data() : nullptr;
      req.scaler = query_scaler;
      Neighbors nb;
      const int* nc = tc.data();
      const double* ny = ty.data();
      std::vector<int> mc;
      std::vector<double> my;
      if (sharded) {
        // Global neighbours, each with its row's class id or target: vote over those by position.
        std::vector<double> own(tc.begin(), tc.end());
        if (!cls) own = ty;
        nb = detail::positional(detail::search_sharded(*backend, req, *comm, 0, own.data(), my, keys.data()));
        mc.assign(my.begin(), my.end());
        nc = mc.data();
        ny = my.data();
      } else {
        nb = search(*backend, req);
      }
      for (std::size_t wi = 0; wi < opt.weights.size(); ++wi) {
        const std::size_t combo = mi * opt.weights.size() + wi;
        if (cls) {
          pc[combo].resize(nk * queries.rows);
          backend->vote(nb, nc, enc.size(), opt.weights[wi], opt.ks, pc[combo].data(), nullptr);
        } else {
          py[combo].resize(nk * queries.rows);
          backend->average(nb, ny, opt.weights[wi], opt.ks, py[combo].data());
        }
      }
    }
  };

  std::vector<std::vector<int>> pc;
  std::vector<std::vector<double>> py;
  if (fs.kind == FoldSpec::Kind::loo) {
    // Pooled: all n held-out predictions are scored together (a fold of one row has no RMSE or R^2
    // of its own), so the reported standard deviation is 0.
    res.folds = n;
    const auto special = sharded ? loo_changes_scaler(data.features, opt.scaling, *comm, data.row_offset, n)
                                 : loo_changes_scaler(data.features, opt.scaling);
    std::vector<std::size_t> shared_rows, all(n);
    std::iota(all.begin(), all.end(), std::size_t{0});
    for (std::size_t i = 0; i < n; ++i)
      if (!special[i]) shared_rows.push_back(i);
    std::vector<std::vector<int>> pooled_c(combos, std::vector<int>(nk * n));
    std::vector<std::vector<double>> pooled_y(combos, std::vector<double>(nk * n));
    auto place = [&](const std::vector<std::size_t>& rows) {
      for (std::size_t c = 0; c < combos; ++c)
        for (std::size_t ki = 0; ki < nk; ++ki)
          for (std::size_t i = 0; i < rows.size(); ++i) {
            if (cls) pooled_c[c][ki * n + rows[i]] = pc[c][ki * rows.size() + i];
            else pooled_y[c][ki * n + rows[i]] = py[c][ki * rows.size() + i];
          }
    };
    std::size_t done = 0;
    if (!shared_rows.empty()) {
      Scaler sc(opt.scaling);
      Matrix train, q;
      std::shared_ptr<const PreparedTrain> prepared;
      std::vector<std::size_t> train_rows = all;
      if (sharded) {
        // Every rank's rows train; the shared rows of every rank, scaled, are the queries.
        train = data.features;
        sc.fit(train, *comm);
        sc.transform(train);
        train_rows = local_rows(data.row_offset, local_n);
        std::vector<std::size_t> mine;
        for (std::size_t g : shared_rows)
          if (g >= data.row_offset && g < data.row_offset + local_n) mine.push_back(g - data.row_offset);
        q.values = detail::gather_all(*comm, take_rows(train, mine).values);
        q.rows = shared_rows.size();
        q.cols = data.dims();
      } else {
        train = backend->fit_scaler_prepared(sc, data.features, prepared);
        q = take_rows(train, shared_rows);
      }
      std::vector<std::int64_t> ex(shared_rows.begin(), shared_rows.end());
      predict_all(train, train_rows, q, &ex, pc, py, prepared);
      place(shared_rows);
      done += shared_rows.size();
      if (opt.progress) opt.progress(done, n);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!special[i]) continue;
      std::vector<std::size_t> rest;
      Scaler sc(opt.scaling);
      Matrix train, q;
      std::shared_ptr<const PreparedTrain> prepared;
      const bool mine = sharded && i >= data.row_offset && i < data.row_offset + local_n;
      if (sharded) {
        // This rank's rows less row i, and row i itself (from the rank that holds it) as the query.
        std::vector<std::size_t> local;
        for (std::size_t r = 0; r < local_n; ++r)
          if (data.row_offset + r != i) local.push_back(r), rest.push_back(data.row_offset + r);
        train = take_rows(data.features, local);
        sc.fit(train, *comm);
        sc.transform(train);
        const std::vector<float> own = mine ? take_rows(data.features, {i - data.row_offset}).values : std::vector<float>{};
        q.values = detail::gather_all(*comm, own);
        q.rows = 1;
        q.cols = data.dims();
      } else {
        for (std::size_t r = 0; r < n; ++r)
          if (r != i) rest.push_back(r);
        train = backend->fit_scaler_prepared(sc, take_rows(data.features, rest), prepared);
        q = take_rows(data.features, {i});
      }
      if (sharded) {
        collective(comm, [&] {
          try {
            sc.transform(q);
          } catch (const ScaleOverflow& e) {
            throw mine ? at_cell(e, data, i - data.row_offset) : Error("");
          }
        });
        predict_all(train, rest, q, nullptr, pc, py, prepared);
      } else {
        try {
          predict_all(train, rest, q, nullptr, pc, py, prepared, &sc);  // the search scales the query
        } catch (const ScaleOverflow& e) {
          throw at_cell(e, data, i);
        }
      }
      place({i});
      if (opt.progress) opt.progress(++done, n);
    }
    for (std::size_t c = 0; c < combos; ++c) score_fold(c, all, pooled_c[c], pooled_y[c]);
  } else {
    if (fs.kind == FoldSpec::Kind::test) {
      Fold f;
      f.train.resize(n);
      std::iota(f.train.begin(), f.train.end(), std::size_t{0});
      for (std::size_t i = 0; i < nt; ++i) f.test.push_back(n + i);
      folds.push_back(std::move(f));
    }
    res.folds = folds.size();
    for (std::size_t fi = 0; fi < folds.size(); ++fi) {
      const Fold& f = folds[fi];
      Scaler sc(opt.scaling);
      Matrix train, q;
      std::shared_ptr<const PreparedTrain> prepared;
      std::vector<std::size_t> train_rows = f.train;
      if (sharded) {
        // This rank's part of the fold's training rows; the held-out rows of every rank, in
        // global order, as the queries.
        const std::size_t lo = data.row_offset, hi = lo + local_n;
        std::vector<std::size_t> local_train, local_test;
        train_rows.clear();
        for (std::size_t g : f.train)
          if (g >= lo && g < hi) local_train.push_back(g - lo), train_rows.push_back(g);
        for (std::size_t g : f.test)
          if (g >= lo && g < hi) local_test.push_back(g - lo);
        train = take_rows(data.features, local_train);
        sc.fit(train, *comm);
        sc.transform(train);
        if (!test) {
          q.values = detail::gather_all(*comm, take_rows(data.features, local_test).values);
          q.rows = f.test.size();
          q.cols = data.dims();
        }
      } else {
        train = backend->fit_scaler_prepared(sc, take_rows(data.features, f.train), prepared);
      }
      if (test) q = test->features;
      else if (!sharded) q = take_rows(data.features, f.test);
      // A query value that overflows once scaled: the cell of the file it came from.
      const auto at_query = [&](const ScaleOverflow& e) {
        const Dataset& src = test ? *test : data;
        const std::size_t row = test ? e.row : f.test[e.row];
        if (!sharded || test) return at_cell(e, src, row);
        // The row may be another rank's: the rank that holds it names its line.
        const bool mine = row >= data.row_offset && row < data.row_offset + local_n;
        return mine ? at_cell(e, data, row - data.row_offset) : Error("");
      };
      if (sharded) {
        collective(comm, [&] {
          try {
            sc.transform(q);
          } catch (const ScaleOverflow& e) {
            throw at_query(e);
          }
        });
        predict_all(train, train_rows, q, nullptr, pc, py, prepared);
      } else {
        try {
          predict_all(train, train_rows, q, nullptr, pc, py, prepared, &sc);  // the search scales the queries
        } catch (const ScaleOverflow& e) {
          throw at_query(e);
        }
      }
      for (std::size_t c = 0; c < combos; ++c) score_fold(c, f.test, pc[c], py[c]);
      if (opt.progress) opt.progress(fi + 1, folds.size());
    }
  }

  for (std::size_t mi = 0; mi < opt.metrics.size(); ++mi)
    for (std::size_t wi = 0; wi < opt.weights.size(); ++wi)
      for (std::size_t ki = 0; ki < nk; ++ki) {
        SweepRow row;
        row.k = opt.ks[ki];
        row.metric = opt.metrics[mi];
        row.weights = opt.weights[wi];
        for (const auto& v : scores[mi * opt.weights.size() + wi][ki]) row.scores.push_back(summarize(v));
        res.rows.push_back(std::move(row));
      }
  // Best: highest accuracy or lowest RMSE; a tie goes to the smaller k, then to the earlier row.
  for (std::size_t i = 1; i < res.rows.size(); ++i) {
    const double a = res.rows[i].scores[0].mean, b = res.rows[res.best].scores[0].mean;
    const bool better = cls ? a > b : a < b;
    if (better || (a == b && res.rows[i].k < res.rows[res.best].k)) res.best = i;
  }
  return res;
}

}  // namespace knn
