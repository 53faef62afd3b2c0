#pragma once
// The bytes of a model file (docs/model-format.md): a model's record written with both
// checksums, and read back with every check the format lists, so that a damaged, foreign or newer
// file is one error line and never a crash or a large allocation.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "knn/dataset.hpp"
#include "knn/model.hpp"
#include "knn/preprocess.hpp"
#include "knn/scaler.hpp"

namespace knn::detail {

/// What a model file holds.
struct ModelRecord {
  ModelKind kind = ModelKind::neighbors;
  ModelParams params;  // without the backend options: those belong to the run
  Preprocessor prep;
  Scaler scaler;
  std::vector<std::string> classes;      // classifier: in class order
  std::vector<std::uint32_t> class_ids;  // classifier: one per row
  std::vector<double> targets;           // regressor: one per row
  /// Fitted on a data set: its columns (Dataset::layout()), with file_rows empty or one per row.
  std::shared_ptr<const Dataset> layout;
  std::size_t rows = 0, cols = 0;
  /// rows x cols floats, row-major: the scaled training rows. Decoded, they point into the
  /// file's bytes, at an offset that is a multiple of 64 (aligned as the bytes are).
  const void* values = nullptr;
};

/// The model file of `record`.
std::vector<std::uint8_t> encode_model(const ModelRecord& record);

/// The record of the `size` bytes of a model file at `data`, every check of
/// docs/model-format.md#what-a-reader-checks passed; `values` points into `data`. Throws
/// knn::Error "NAME: ..." naming `name`.
ModelRecord decode_model(const std::uint8_t* data, std::size_t size, const std::string& name);

}  // namespace knn::detail
