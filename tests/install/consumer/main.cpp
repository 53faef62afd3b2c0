// The README's "library in ten lines", as an installed-tree consumer.
#include <knn/knn.hpp>

#include <iostream>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  knn::Dataset data = knn::load_csv(argv[1], {});
  knn::KnnClassifier model({/*k=*/5});
  model.fit(data.features, data.labels);
  std::cout << "accuracy " << model.score(data.features, data.labels) << '\n';
  return 0;
}
