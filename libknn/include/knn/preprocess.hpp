#pragma once
// The preprocessing a model fits on its training rows before the search (docs/design.md#tabular-input):
// missing cells imputed (numeric columns by the chosen strategy, categorical columns by their most
// frequent category), categorical columns one-hot encoded over the categories of the training
// rows in byte order (a category they lack encodes as all zeros), numeric columns then scaled by
// the model's Scaler (one-hot columns are left as 0/1). scikit-learn's ColumnTransformer of
// SimpleImputer, OneHotEncoder(handle_unknown='ignore') and a scaler does the same.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "knn/communicator.hpp"
#include "knn/dataset.hpp"
#include "knn/error.hpp"
#include "knn/matrix.hpp"

namespace knn {

enum class Impute { none, mean, median, most_frequent };
Impute parse_impute(const std::string& text);  // "none" | "mean" | "median" | "most_frequent"
const char* to_string(Impute i);

/// Thrown by Preprocessor::transform for a missing cell it has no value for (fitted with
/// Impute::none). Callers that know the file name the cell with at().
class MissingValue : public Error {
 public:
  MissingValue(std::size_t r, std::size_t f, const std::string& message) : Error(message), row(r), feature(f) {}
  std::size_t row, feature;  // 0-based: the row given to transform, the feature column
  /// The same problem, named at FILE:LINE:COLUMN.
  Error at(const std::string& file, std::size_t line, std::size_t column) const;
};

/// One feature column as fitted.
struct FeaturePrep {
  std::string name;
  ColumnType type = ColumnType::numeric;
  /// Numeric: the value of a missing cell (NaN where nothing is imputed).
  float fill = 0.0f;
  bool has_fill = false;
  /// Categorical: the categories of the training rows in byte order, one encoded column each, and
  /// the index of the one a missing cell takes (-1: none).
  std::vector<std::string> categories;
  long fill_category = -1;
};

/// What transform() met on the way: cells filled in, and categories the training rows lacked.
struct PrepReport {
  std::size_t imputed = 0;
  std::size_t unknown_categories = 0;
  /// The features that held them, each once, in feature order.
  std::vector<std::string> unknown_in;
};

class Preprocessor {
 public:
  explicit Preprocessor(Impute impute = Impute::none) : impute_(impute) {}

  /// `features` numeric columns, nothing imputed: transform() returns its rows as they are.
  static Preprocessor numeric(std::size_t features);

  /// Fits on the rows of `data` (all of them, or those listed). Throws for a missing cell under
  /// Impute::none (naming the first, counting them all) and for a column without any value to
  /// impute from.
  void fit(const Dataset& data, const std::vector<std::size_t>* rows = nullptr);

  /// The encoded rows of `data` (all, or those listed): numeric columns as they are (imputed),
  /// categorical columns one-hot. Throws MissingValue, named at the data's file, line and column.
  Matrix transform(const Dataset& data, PrepReport* report = nullptr, const std::vector<std::size_t>* rows = nullptr) const;
  /// The same for rows of features typed as fitted, whose categorical cells index `levels`;
  /// throws MissingValue.
  Matrix transform(const Matrix& raw, const std::vector<std::vector<std::string>>& levels, PrepReport* report = nullptr) const;

  bool fitted() const { return !features_.empty(); }
  Impute impute() const { return impute_; }
  /// True when every feature is numeric: the encoded columns are the features.
  bool plain() const;
  /// Whether transform(data) is data.features as they are (every feature numeric, no cell
  /// missing), so that they can be searched without being encoded.
  bool keeps(const Dataset& data) const { return plain() && data.features.cols == width() && !data.has_missing(); }
  /// Columns of the encoded rows.
  std::size_t width() const;
  /// Per encoded column: a one-hot column, which scaling leaves as it is.
  std::vector<bool> one_hot_columns() const;
  /// The feature an encoded column comes from.
  std::size_t feature_of(std::size_t column) const;
  /// Names of the encoded columns: the feature's, or "feature=category" for one-hot ones.
  std::vector<std::string> column_names() const;
  const std::vector<FeaturePrep>& features() const { return features_; }

  /// Rebuilds a fitted preprocessor (a model file's).
  static Preprocessor from_parts(Impute impute, std::vector<FeaturePrep> features);

  /// How fit() combines the statistics of the rows of several ranks; the default keeps this
  /// process's. Each call gets this rank's values and returns every rank's, concatenated in rank order.
  struct Gather {
    std::function<std::vector<float>(std::vector<float>)> floats;
    std::function<std::vector<long long>(std::vector<long long>)> counts;
    std::function<void(const std::function<void()>&)> collective;
  };
  void fit(const Dataset& data, const std::vector<std::size_t>* rows, const Gather& gather);

 private:
  Impute impute_;
  std::vector<FeaturePrep> features_;
};

/// Throws the error fit() would throw on all of `data`'s rows (every rank's, where `comm` spans
/// several): a missing cell under Impute::none, a column with no value to impute from. A program
/// calls it right after loading, so that the training file's problem is the one reported.
void check_fillable(const Dataset& data, Impute impute, const std::shared_ptr<const Communicator>& comm = nullptr);

}  // namespace knn
