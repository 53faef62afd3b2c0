#pragma once
// Where one reader's data rows go: each row's features straight into the caller's matrix, its
// label, identifier and line beside it, and what the cells told of their columns (a text cell,
// a number float32 cannot hold, the texts of a categorical column). The rules of a cell are
// here, once, for the record-at-a-time reader (io/rows_read.cpp) and the plain-line reader
// (io/plain_lines.cpp) alike.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/level_dictionary.hpp"
#include "io/rows_read.hpp"
#include "knn/dataset.hpp"

namespace knn::detail {

/// What one reader found beside the rows it wrote.
struct PartState {
  std::vector<char> text;                  // per feature read as infer: a text cell was seen
  std::vector<LevelDictionary> levels;     // per feature read as text
  std::vector<std::size_t> record_of_row;  // with drop_missing: the record index of each kept row
  std::size_t records = 0;
  std::size_t dropped_whole = 0;           // a shard read from the whole file: the rows it dropped
  // Per feature read as infer: the first number that float32 cannot hold (line, message). An
  // error unless a text cell makes the column categorical after all.
  std::vector<std::pair<std::size_t, std::string>> not_finite;

  explicit PartState(std::size_t features) : text(features, 0), levels(features), not_finite(features) {}
};

/// A row's cells outside the numbers, as the cells are read.
struct RowCells {
  std::string_view label, id;
  bool has_label = false, has_id = false, missing_label = false, missing_feature = false;
};

class RowWriter {
 public:
  /// Rows go to dest + i * d for row i, room for `room` rows; data gets the labels, identifiers
  /// and lines (its column and feature names set).
  RowWriter(const std::string& name, const ReadPlan& plan, Dataset& data, PartState& st, float* dest, std::size_t room);

  const ReadPlan& plan() const { return plan_; }
  /// Where the features of the next row go. Throws where the rows outnumber the room.
  float* slot(std::size_t line);
  /// Cell `cell` of file column c (feature f, read as number or inferred) of the row at `line`,
  /// into `out`; a missing cell is NaN and marks the row.
  void number_cell(std::size_t line, std::size_t c, std::size_t f, std::string_view cell, float& out, RowCells& row);
  /// The same for a feature read as text: its code among the column's texts.
  void text_cell(std::size_t f, std::string_view cell, float& out, RowCells& row);
  /// The label cell of file column c. Throws for a missing label of a training row that is not
  /// to be dropped.
  void label_cell(std::size_t line, std::size_t c, std::string_view cell, RowCells& row);
  static void id_cell(std::string_view cell, RowCells& row);
  /// Keeps the row written at slot() (or drops it, by drop_missing).
  void finish_row(std::size_t line, const RowCells& row);

  std::size_t rows() const { return rows_; }

 private:
  std::string decimal_comma_advice(std::string_view cell) const;

  const std::string& name_;
  const ReadPlan& plan_;
  Dataset& data_;
  PartState& st_;
  float* dest_;
  std::size_t room_;
  std::size_t d_;
  std::size_t rows_ = 0;
};

}  // namespace knn::detail
