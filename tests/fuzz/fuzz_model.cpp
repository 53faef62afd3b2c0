// Fuzz target: the model file reader (knn::load_model over bytes in memory). Each input is read as
// it is, and again with its header's file size and both checksums recomputed, so that mutations
// also reach the checks behind the checksums: the sections, the metadata and what its values
// mean. A read either throws knn::Error with a one-line message, or gives a model that saves the
// very same bytes and answers queries (neighbours within its rows, classes among its classes), or
// refuses them with one error line.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_common.hpp"
#include "knn/error.hpp"
#include "knn/model.hpp"
#include "model_bytes.hpp"

namespace {

using knn::fuzz::require;

void answer(const knn::KnnModel& m) {
  const std::size_t width = m.preprocessor().width();
  knn::Matrix q(3, width);
  for (std::size_t j = 0; j < width; ++j) q(1, j) = 1.0f, q(2, j) = -0.5f;
  try {
    const knn::Neighbors nb = m.kneighbors(q);
    require(nb.index.size() == q.rows * m.params().k, "one list of k neighbours per query");
    for (std::size_t i = 0; i < nb.index.size(); ++i) {
      require(nb.index[i] >= 0 && static_cast<std::size_t>(nb.index[i]) < m.train_size(), "a neighbour outside the rows");
      require(!std::isnan(nb.distance[i]), "a distance is NaN");
    }
    if (const auto* c = dynamic_cast<const knn::KnnClassifier*>(&m)) {
      const std::vector<double> p = c->predict_proba(q);
      for (double v : p) require(v >= 0.0 && v <= 1.0, "a class share outside [0, 1]");
      for (const std::string& label : c->predict(q))
        require(c->encoder().encode(label) >= 0, "a prediction that is not a class");
    }
    if (const auto* r = dynamic_cast<const knn::KnnRegressor*>(&m))
      for (double v : r->predict(q)) require(!std::isnan(v), "a regression prediction is NaN");
  } catch (const knn::Error& e) {
    knn::fuzz::check_message(e.what());
  }
}

void read(const std::uint8_t* data, std::size_t size) {
  std::unique_ptr<knn::KnnModel> m;
  try {
    m = knn::load_model(data, size);
  } catch (const knn::Error& e) {
    knn::fuzz::check_message(e.what());
    return;
  }
  const std::vector<std::uint8_t> again = m->save();
  require(again.size() == size && std::memcmp(again.data(), data, size) == 0, "a model read saves other bytes");
  answer(*m);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  read(data, size);
  if (size >= knn::test::kModelHeader) {
    knn::test::Bytes sealed(data, data + size);
    knn::test::reseal(sealed);
    read(sealed.data(), sealed.size());
  }
  return 0;
}
