// A data set's columns without its rows: what a model keeps of the file it was fitted on.
#include "knn/dataset.hpp"

namespace knn {

Dataset Dataset::layout() const {
  Dataset l;
  l.source = source;
  l.feature_names = feature_names;
  l.label_name = label_name;
  l.features = Matrix(0, features.cols);
  l.feature_types = feature_types;
  l.column_names = column_names;
  l.feature_columns = feature_columns;
  l.label_column = label_column;
  l.id_name = id_name;
  l.id_column = id_column;
  l.unnamed_columns = unnamed_columns;
  l.ignore_elsewhere = ignore_elsewhere;
  l.options = options;
  l.options.shard = 0;
  l.options.shards = 1;
  return l;
}

}  // namespace knn
