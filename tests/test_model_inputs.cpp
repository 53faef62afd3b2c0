// What a model reads its rows from: a caller's buffer through a MatrixView, searched in place, and
// class labels given as ids. A program of its own: it replaces the global operator new
// (allocation_watch.hpp) to record the largest allocation made while a search runs.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "knn/dataset.hpp"
#include "knn/error.hpp"
#include "knn/model.hpp"
#include "allocation_watch.hpp"
#include "test_util.hpp"


namespace {

struct Problem {
  knn::Matrix train, queries;
  std::vector<std::int64_t> ids;
  std::vector<std::string> texts;
};

Problem problem(std::uint64_t seed, std::size_t queries, std::size_t cols, std::size_t classes) {
  std::mt19937_64 rng(seed);
  Problem p;
  p.train = knn::test::random_matrix(200, cols, rng, -2.0f, 3.0f);
  p.queries = knn::test::random_matrix(queries, cols, rng, -2.5f, 3.5f);
  for (std::size_t i = 0; i < p.train.rows; ++i) {
    // Every class occurs: the first rows take each once.
    const auto id = static_cast<std::int64_t>(i < classes ? i : rng() % classes);
    p.ids.push_back(id);
    p.texts.push_back(std::to_string(id));
  }
  return p;
}

knn::ModelParams params(knn::Scaling scaling) {
  knn::ModelParams p;
  p.k = 7;
  p.weights = knn::Weights::parse("distance");
  p.scaling = scaling;
  p.backend.device = knn::Device::cpu;
  return p;
}

}  // namespace

// A view of a caller's buffer answers as the Matrix holding the same values, for every model.
TEST(ModelInputs, AViewOfACallersBufferAnswersAsAMatrix) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Problem p = problem(seed, 50, 9, 4);
  const std::vector<float> train_buffer = p.train.values, query_buffer = p.queries.values;
  const knn::MatrixView train_view(p.train.rows, p.train.cols, train_buffer.data());
  const knn::MatrixView query_view(p.queries.rows, p.queries.cols, query_buffer.data());
  for (knn::Scaling scaling : {knn::Scaling::none, knn::Scaling::minmax, knn::Scaling::standard}) {
    SCOPED_TRACE(knn::to_string(scaling));
    knn::KnnClassifier from_matrix(params(scaling)), from_view(params(scaling));
    from_matrix.fit(p.train, p.texts);
    from_view.fit(train_view, p.texts);
    EXPECT_EQ(from_view.save(), from_matrix.save());
    EXPECT_EQ(from_view.predict(query_view), from_matrix.predict(p.queries));
    EXPECT_EQ(from_view.predict_proba(query_view), from_matrix.predict_proba(p.queries));
    const knn::Neighbors a = from_view.kneighbors(query_view, 5), b = from_matrix.kneighbors(p.queries, 5);
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.distance, b.distance);

    std::vector<double> targets(p.ids.begin(), p.ids.end());
    knn::KnnRegressor r_matrix(params(scaling)), r_view(params(scaling));
    r_matrix.fit(p.train, targets);
    r_view.fit(train_view, targets);
    EXPECT_EQ(r_view.predict(query_view), r_matrix.predict(p.queries));
  }
}

// Labels given as class ids make the model that their texts "0".."C-1" make, byte for byte.
TEST(ModelInputs, ClassIdsFitAsTheirTexts) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  // 12 classes: as texts "10" and "11" sort before "2", as numbers after "9".
  const Problem p = problem(seed, 30, 5, 12);
  knn::KnnClassifier texts(params(knn::Scaling::minmax)), ids(params(knn::Scaling::minmax));
  texts.fit(p.train, p.texts);
  ids.fit(p.train, p.ids, 12);
  EXPECT_EQ(ids.classes(), texts.classes());
  EXPECT_EQ(ids.classes().at(11), "11");
  EXPECT_EQ(ids.save(), texts.save());
  EXPECT_EQ(ids.predict_ids(p.queries), texts.predict_ids(p.queries));
}

TEST(ModelInputs, ClassIdsOutOfRangeAreRefused) {
  const Problem p = problem(1, 3, 4, 3);
  std::vector<std::int64_t> bad = p.ids;
  bad[17] = 3;
  knn::KnnClassifier m(params(knn::Scaling::none));
  try {
    m.fit(p.train, bad, 3);
    FAIL() << "an id of 3 among 3 classes was accepted";
  } catch (const knn::Error& e) {
    EXPECT_EQ(std::string(e.what()), "fit: class id 3 of row 17 is not from 0 to 2");
  }
  bad[17] = -1;
  EXPECT_THROW(m.fit(p.train, bad, 3), knn::Error);
  EXPECT_THROW(m.fit(p.train, std::vector<std::int64_t>(5, 0), 3), knn::Error);  // one id per row
  EXPECT_THROW(m.fit(p.train, std::vector<std::int64_t>(p.train.rows, 0), 0), knn::Error);
  bad[17] = std::int64_t{1} << 40;  // beyond int as well
  EXPECT_THROW(m.fit(p.train, bad, 3), knn::Error);
}

// A fit that fails leaves the model as its previous fit made it: classes, rows and their labels.
TEST(ModelInputs, AFailedFitKeepsThePreviousModel) {
  const Problem p = problem(11, 25, 5, 4);
  knn::KnnClassifier m(params(knn::Scaling::minmax));
  m.fit(p.train, p.ids, 4);
  const std::vector<std::uint8_t> before = m.save();
  const std::vector<double> proba = m.predict_proba(p.queries);
  // Fewer rows than k: refused once the classes and ids of the new rows were made.
  const knn::Matrix few(3, p.train.cols, p.train.values.data());
  EXPECT_THROW(m.fit(few, std::vector<std::string>{"a", "b", "c"}), knn::Error);
  EXPECT_THROW(m.fit(few, std::vector<std::int64_t>{0, 1, 1}, 2), knn::Error);
  EXPECT_EQ(m.classes().size(), 4u);
  EXPECT_EQ(m.save(), before);
  EXPECT_EQ(m.predict_proba(p.queries), proba);

  knn::KnnRegressor r(params(knn::Scaling::none));
  const std::vector<double> targets(p.ids.begin(), p.ids.end());
  r.fit(p.train, targets);
  const std::vector<double> predicted = r.predict(p.queries);
  EXPECT_THROW(r.fit(few, std::vector<double>{1, 2, 3}), knn::Error);
  EXPECT_EQ(r.predict(p.queries), predicted);
}

#ifndef KNN_TEST_ASAN
// Unscaled queries are searched where they are: no allocation while predicting holds as many
// bytes as the queries. Scaled ones are copied once to be scaled, which the same record sees, so
// the record can tell a copy when there is one.
TEST(ModelInputs, UnscaledQueriesAreSearchedInPlace) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Problem p = problem(seed, 20000, 64, 3);
  const std::size_t query_bytes = p.queries.values.size() * sizeof(float);
  const knn::MatrixView queries(p.queries.rows, p.queries.cols, p.queries.values.data());
  for (knn::Scaling scaling : {knn::Scaling::none, knn::Scaling::minmax}) {
    SCOPED_TRACE(knn::to_string(scaling));
    knn::KnnClassifier m(params(scaling));
    m.fit(p.train, p.ids, 3);
    knn::test::LargestAllocation record;
    const std::vector<int> predicted = m.predict_ids(queries);
    const std::size_t seen = record.stop();
    ASSERT_EQ(predicted.size(), p.queries.rows);
    if (scaling == knn::Scaling::none)
      EXPECT_LT(seen, query_bytes) << "an allocation the size of the queries: they were copied";
    else
      EXPECT_GE(seen, query_bytes) << "scaled queries are copied once; the record missed it";
  }
}
#endif

// A model moved to another backend answers as before.
TEST(ModelInputs, SetBackendKeepsTheAnswers) {
  const std::uint64_t seed = knn::test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Problem p = problem(seed, 40, 6, 3);
  knn::KnnClassifier fitted(params(knn::Scaling::standard));
  EXPECT_THROW(fitted.set_backend({}), knn::Error);  // not fitted
  fitted.fit(p.train, p.ids, 3);
  const std::vector<std::uint8_t> bytes = fitted.save();
  knn::BackendOptions one_thread;
  one_thread.device = knn::Device::cpu;
  one_thread.threads = 1;
  knn::KnnClassifier loaded = knn::KnnClassifier::load(bytes.data(), bytes.size(), one_thread);
  loaded.set_backend(params(knn::Scaling::standard).backend);
  EXPECT_EQ(loaded.params().backend.threads, 0);
  EXPECT_EQ(loaded.predict_proba(p.queries), fitted.predict_proba(p.queries));
  EXPECT_EQ(loaded.save(), bytes);
}

// Query rows the preprocessing keeps as they are are searched where the data set holds them;
// others are encoded into the caller's storage, as encode() makes them.
TEST(ModelInputs, EncodeCopiesOnlyWhatItChanges) {
  const knn::Dataset data = knn::load_csv(std::string(KNN_SOURCE_DIR) + "/data/iris.csv", knn::CsvOptions{});
  knn::ModelParams mp = params(knn::Scaling::minmax);
  mp.impute = knn::Impute::mean;
  knn::KnnClassifier m(mp);
  m.fit(data);
  knn::Dataset queries = data;
  knn::Matrix storage;
  knn::MatrixView kept = m.encode(queries, storage);
  EXPECT_EQ(kept.data, queries.features.values.data()) << "numeric rows with no missing cell were copied";
  EXPECT_EQ(storage.values.size(), 0u);
  EXPECT_EQ(m.predict(queries), m.predict(m.encode(queries)));

  queries.features(3, 2) = std::numeric_limits<float>::quiet_NaN();
  knn::PrepReport report;
  const knn::MatrixView filled = m.encode(queries, storage, &report);
  EXPECT_EQ(filled.data, storage.values.data());
  EXPECT_EQ(report.imputed, 1u);
  EXPECT_EQ(storage.values, m.encode(queries).values);
}

// Queries in GPU memory are searched as they are, by one process's model on the GPU: a model
// that scales its rows refuses them naming scaling, and one on the CPU backend as
// knn::search_on_device does, naming the cuda backend; an unfitted one says so. (The GPU's
// answers: test_cuda_device_search and the Python package's device-array tests.)
TEST(ModelInputs, QueriesInGpuMemoryNeedAnUnscaledModelOnTheGpu) {
  const Problem p = problem(1, 2, 4, 3);
  std::int64_t index[2 * 7] = {};
  double distance[2 * 7] = {};
  const auto refusal = [&](const knn::KnnModel& m) {
    try {
      m.kneighbors_on_device(p.queries.values.data(), 2, 7, index, distance);
    } catch (const knn::Error& e) {
      return e.parameter_name() + ": " + e.what();
    }
    return std::string("(no error)");
  };
  knn::NearestNeighbors unfitted(params(knn::Scaling::none));
  EXPECT_NE(refusal(unfitted).find("not fitted"), std::string::npos) << refusal(unfitted);
  knn::NearestNeighbors scaled(params(knn::Scaling::minmax));
  scaled.fit(p.train);
  EXPECT_EQ(refusal(scaled).rfind("scaling: ", 0), 0u) << refusal(scaled);
  EXPECT_NE(refusal(scaled).find("fit it with scaling none"), std::string::npos) << refusal(scaled);
  knn::NearestNeighbors plain(params(knn::Scaling::none));
  plain.fit(p.train);
  EXPECT_NE(refusal(plain).find("cpu: this backend searches host memory"), std::string::npos) << refusal(plain);
  EXPECT_NE(refusal(plain).find("cuda backend"), std::string::npos) << refusal(plain);
  for (std::int64_t i : index) EXPECT_EQ(i, 0);  // nothing written
}
