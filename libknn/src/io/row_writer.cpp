#include "io/row_writer.hpp"

#include <limits>

#include "knn/error.hpp"

namespace knn::detail {

namespace {

constexpr float kMissingCell = std::numeric_limits<float>::quiet_NaN();

std::string column_named(const std::vector<std::string>& names, std::size_t col) { return "column " + quote(names[col]); }

}  // namespace

// A number with a decimal comma where the mark is a point, in a file whose delimiter is another:
// the option that reads it. Else "".
std::string RowWriter::decimal_comma_advice(std::string_view cell) const {
  if (plan_.decimal != '.' || plan_.delimiter == ',' || !decimal_comma_number(cell)) return "";
  return " (a decimal comma: " + param("decimal") + " ',' reads it)";
}

RowWriter::RowWriter(const std::string& name, const ReadPlan& plan, Dataset& data, PartState& st, float* dest,
                     std::size_t room)
    : name_(name), plan_(plan), data_(data), st_(st), dest_(dest), room_(room), d_(data.feature_names.size()) {}

float* RowWriter::slot(std::size_t line) {
  if (rows_ == room_) throw Error::at(name_, line, 0, "more rows than lines (internal error)");
  return dest_ + rows_ * d_;
}

void RowWriter::number_cell(std::size_t line, std::size_t c, std::size_t f, std::string_view cell, float& out,
                            RowCells& row) {
  float v = kMissingCell;
  switch (classify_cell(cell, plan_.na, plan_.decimal, v)) {
    case CellKind::number:
      break;
    case CellKind::missing:
      row.missing_feature = true;
      v = kMissingCell;
      break;
    case CellKind::not_finite: {
      std::string message = Error::at(name_, line, c + 1,
                                      "not a finite number: " + quote(cell) + " in " + column_named(data_.column_names, c))
                                .detail();
      if (plan_.read_as[f] == ReadAs::number) throw Error(message);
      if (st_.not_finite[f].second.empty()) st_.not_finite[f] = {line, std::move(message)};
      v = kMissingCell;
      break;
    }
    case CellKind::text:
      if (plan_.read_as[f] == ReadAs::number)
        throw Error::at(name_, line, c + 1,
                        "not a finite number: " + quote(cell) + " in " + column_named(data_.column_names, c) +
                            (plan_.numbers_from.empty() ? ", which " + param("numeric") + " reads as numbers"
                                                        : ", a numeric column in " + plan_.numbers_from) +
                            decimal_comma_advice(cell));
      st_.text[f] = 1;  // the column is categorical: the caller reads the file again
      v = kMissingCell;
      break;
  }
  out = v;
}

void RowWriter::text_cell(std::size_t f, std::string_view cell, float& out, RowCells& row) {
  const std::string_view t = trim(cell);
  if (plan_.na.contains(t)) {
    row.missing_feature = true;
    out = kMissingCell;
  } else {
    out = st_.levels[f].code(t);
  }
}

void RowWriter::label_cell(std::size_t line, std::size_t c, std::string_view cell, RowCells& row) {
  row.label = trim(cell);
  row.has_label = true;
  if (row.label.empty() || plan_.na.contains(row.label)) {
    row.missing_label = true;
    if (plan_.training && !plan_.drop_missing)
      throw Error::at(name_, line, c + 1,
                      "missing label " + quote(cell) + " in " + column_named(data_.column_names, c) +
                          " (rows with a missing label can be dropped with " + param("drop_missing") + ")");
  }
}

void RowWriter::id_cell(std::string_view cell, RowCells& row) {
  row.id = trim(cell);
  row.has_id = true;
}

void RowWriter::finish_row(std::size_t line, const RowCells& row) {
  const std::size_t record = st_.records++;
  if (plan_.training && plan_.drop_missing && (row.missing_label || (plan_.drop_features && row.missing_feature))) return;
  if (row.has_label) {
    if (row.missing_label) {
      data_.missing_labels.push_back(data_.labels.size());
      data_.labels.emplace_back();
    } else {
      data_.labels.emplace_back(row.label);
    }
  }
  if (row.has_id) data_.ids.emplace_back(row.id);
  if (plan_.drop_missing) st_.record_of_row.push_back(record);
  data_.lines.push_back(line);
  ++rows_;
}

}  // namespace knn::detail
