#include "io/model_format.hpp"

#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "io/byte_codec.hpp"
#include "knn/error.hpp"

namespace knn::detail {

// The rows are copied to and from the file as they lie in memory.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "model files are little-endian, as this host");

// The helpers' namespace has a name of its own: the library builds in unity batches, where the
// anonymous namespaces of several files meet.
namespace model_file {

constexpr std::uint8_t kSignature[8] = {0x89, 'K', 'N', 'N', '\r', '\n', 0x1A, '\n'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderSize = 128;
constexpr std::uint64_t kNpos = std::numeric_limits<std::uint64_t>::max();

// Header fields (docs/model-format.md#header).
enum Field : std::size_t {
  kVersionAt = 8,
  kKindAt = 12,
  kFileSizeAt = 16,
  kRowsAt = 24,
  kColumnsAt = 32,
  kMetaOffsetAt = 40,
  kMetaSizeAt = 48,
  kLabelsOffsetAt = 56,
  kLabelsSizeAt = 64,
  kRowsOffsetAt = 72,
  kRowsSizeAt = 80,
  kBodyCrcAt = 88,
  kReservedAt = 92,
  kHeaderCrcAt = 124,
};

std::uint32_t crc32_of(const std::uint8_t* p, std::size_t n) {
  return static_cast<std::uint32_t>(crc32_z(crc32_z(0, Z_NULL, 0), p, n));
}

std::uint64_t align_up(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

void put(std::uint8_t* p, std::uint64_t v, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint64_t get(const std::uint8_t* p, std::size_t bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

// The enumerations' numbers in the file, in the order of each enum's values.
constexpr Weights::Kind kWeights[] = {Weights::Kind::uniform, Weights::Kind::distance, Weights::Kind::gaussian,
                                      Weights::Kind::inverse, Weights::Kind::subtract};
constexpr Metric kMetrics[] = {Metric::l2, Metric::l1, Metric::cosine};
constexpr Scaling kScalings[] = {Scaling::none, Scaling::minmax, Scaling::standard};
constexpr Impute kImputes[] = {Impute::none, Impute::mean, Impute::median, Impute::most_frequent};
constexpr ModelKind kKinds[] = {ModelKind::neighbors, ModelKind::classifier, ModelKind::regressor};  // 1, 2, 3
constexpr ColumnType kTypes[] = {ColumnType::numeric, ColumnType::categorical};

template <class E, std::size_t N>
std::uint32_t code_of(E value, const E (&values)[N]) {
  return static_cast<std::uint32_t>(std::find(values, values + N, value) - values);
}

std::uint64_t column_code(std::size_t column) { return column == Dataset::npos ? kNpos : column; }

void write_layout(ByteWriter& w, const Dataset* layout) {
  w.u8(layout ? 1 : 0);
  if (!layout) return;
  const Dataset& l = *layout;
  w.str(l.source);
  w.strs(l.column_names);
  w.u64s(l.feature_columns);
  w.u64(column_code(l.label_column));
  w.u64(column_code(l.id_column));
  w.u64s(l.unnamed_columns);
  w.strs(l.ignore_elsewhere);
  w.u64s(l.file_rows);
  const CsvOptions& o = l.options;
  w.u8(o.header ? 1 : 0);
  w.u8(static_cast<std::uint8_t>(o.delimiter));
  w.str(o.label);
  w.strs(o.ignore);
  w.strs(o.categorical);
  w.strs(o.numeric);
  w.strs(o.na_values);
  w.str(o.id);
  w.u8(o.drop_missing ? 1 : 0);
  w.u8(o.drop_missing_features ? 1 : 0);
}

std::vector<std::uint8_t> metadata(const ModelRecord& r) {
  ByteWriter w;
  w.u64(r.params.k);
  w.u32(code_of(r.params.weights.kind, kWeights));
  w.f64(r.params.weights.param);
  w.u32(code_of(r.params.metric, kMetrics));
  w.u32(code_of(r.params.scaling, kScalings));
  w.u32(code_of(r.params.impute, kImputes));
  w.u32(code_of(r.prep.impute(), kImputes));
  w.u64(r.prep.features().size());
  for (const FeaturePrep& f : r.prep.features()) {
    w.str(f.name);
    w.u32(code_of(f.type, kTypes));
    w.u8(f.has_fill ? 1 : 0);
    w.f32(f.fill);
    w.i64(f.fill_category);
    w.strs(f.categories);
  }
  w.u64(r.scaler.kept().size());
  for (bool k : r.scaler.kept()) w.u8(k ? 1 : 0);
  for (double v : r.scaler.offset()) w.f64(v);
  for (double v : r.scaler.scale()) w.f64(v);
  w.strs(r.classes);
  write_layout(w, r.layout.get());
  return w.bytes();
}

std::vector<std::uint8_t> encode(const ModelRecord& r) {
  const std::vector<std::uint8_t> meta = metadata(r);
  const std::uint64_t n = r.rows, d = r.cols;
  const std::uint64_t labels_offset = align_up(kHeaderSize + meta.size(), 8);
  const std::uint64_t labels_size = r.kind == ModelKind::classifier ? 4 * n : r.kind == ModelKind::regressor ? 8 * n : 0;
  const std::uint64_t rows_offset = align_up(labels_offset + labels_size, 64);
  const std::uint64_t rows_size = 4 * n * d;
  std::vector<std::uint8_t> out(rows_offset + rows_size, 0);
  std::uint8_t* h = out.data();
  std::memcpy(h, kSignature, sizeof kSignature);
  put(h + kVersionAt, kVersion, 4);
  put(h + kKindAt, code_of(r.kind, kKinds) + 1, 4);
  put(h + kFileSizeAt, out.size(), 8);
  put(h + kRowsAt, n, 8);
  put(h + kColumnsAt, d, 8);
  put(h + kMetaOffsetAt, kHeaderSize, 8);
  put(h + kMetaSizeAt, meta.size(), 8);
  put(h + kLabelsOffsetAt, labels_offset, 8);
  put(h + kLabelsSizeAt, labels_size, 8);
  put(h + kRowsOffsetAt, rows_offset, 8);
  put(h + kRowsSizeAt, rows_size, 8);
  std::copy(meta.begin(), meta.end(), out.begin() + kHeaderSize);
  std::uint8_t* labels = h + labels_offset;
  for (std::uint64_t i = 0; i < labels_size / 4 && r.kind == ModelKind::classifier; ++i) put(labels + 4 * i, r.class_ids[i], 4);
  for (std::uint64_t i = 0; i < labels_size / 8 && r.kind == ModelKind::regressor; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, &r.targets[i], 8);
    put(labels + 8 * i, bits, 8);
  }
  if (rows_size) std::memcpy(h + rows_offset, r.values, rows_size);
  put(h + kBodyCrcAt, crc32_of(h + kHeaderSize, out.size() - kHeaderSize), 4);
  put(h + kHeaderCrcAt, crc32_of(h, kHeaderCrcAt), 4);
  return out;
}

// The first of `count` floats at `p` that is not finite (its exponent bits all ones), or count.
std::uint64_t first_not_finite(const std::uint8_t* p, std::uint64_t count) {
  for (std::uint64_t i = 0; i < count; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, p + 4 * i, 4);  // a little-endian host (above)
    if ((bits & 0x7F800000u) == 0x7F800000u) return i;
  }
  return count;
}

// A file whose first 8 bytes differ from the signature, but whose header checksum matches its
// header with the signature in their place: a model file with damaged signature bytes.
bool damaged_signature(const std::uint8_t* p) {
  std::uint8_t header[kHeaderCrcAt];
  std::memcpy(header, p, sizeof header);
  std::memcpy(header, kSignature, sizeof kSignature);
  return crc32_of(header, sizeof header) == get(p + kHeaderCrcAt, 4);
}

class Decoder {
 public:
  Decoder(const std::uint8_t* data, std::size_t size, const std::string& name) : p_(data), size_(size), name_(name) {}

  ModelRecord run() {
    check_envelope();
    ModelRecord r;
    r.kind = kKinds[kind_ - 1];
    r.rows = n_;
    r.cols = d_;
    read_metadata(r);
    read_labels(r);
    const std::uint8_t* rows = p_ + rows_offset_;
    if (const std::uint64_t i = first_not_finite(rows, n_ * d_); i < n_ * d_)
      throw corrupt("training row " + std::to_string(i / d_ + 1) + ", column " + std::to_string(i % d_ + 1) + " is not a finite number");
    r.values = rows;
    return r;
  }

 private:
  Error fail(const std::string& what) const { return Error::at(name_, 0, 0, what); }
  Error corrupt(const std::string& what) const { return fail("corrupted model file: " + what); }

  // Signature, header checksum, version, size, body checksum, then the header's sections.
  void check_envelope() {
    if (size_ == 0) throw fail("empty file, not a model file");
    if (std::memcmp(p_, kSignature, std::min(size_, sizeof kSignature)) != 0) {
      if (size_ >= kHeaderSize && damaged_signature(p_))
        throw corrupt("the header's checksum does not match its bytes (the signature is damaged)");
      throw fail("not a model file (it does not begin with the model file signature)");
    }
    if (size_ < kHeaderSize)
      throw fail("truncated model file: " + std::to_string(size_) + " bytes, less than its header's " + std::to_string(kHeaderSize));
    const auto header_crc = static_cast<std::uint32_t>(get(p_ + kHeaderCrcAt, 4));
    if (crc32_of(p_, kHeaderCrcAt) != header_crc)
      throw corrupt("the header's checksum does not match its bytes (stored " + hex(header_crc) + ", computed " +
                    hex(crc32_of(p_, kHeaderCrcAt)) + ")");
    const std::uint64_t version = get(p_ + kVersionAt, 4);
    if (version == 0) throw corrupt("format version 0");
    if (version > kVersion)
      throw fail("model file format version " + std::to_string(version) + " is newer than this libknn reads (up to " +
                 std::to_string(kVersion) + "); read it with a newer libknn");
    const std::uint64_t file_size = get(p_ + kFileSizeAt, 8);
    if (size_ < file_size)
      throw fail("truncated model file: " + std::to_string(size_) + " bytes of the " + std::to_string(file_size) + " its header gives");
    if (size_ > file_size)
      throw corrupt(std::to_string(size_ - file_size) + " bytes after its end (its header gives " + std::to_string(file_size) + " bytes)");
    const auto body_crc = static_cast<std::uint32_t>(get(p_ + kBodyCrcAt, 4));
    const std::uint32_t body = crc32_of(p_ + kHeaderSize, size_ - kHeaderSize);
    if (body != body_crc)
      throw corrupt("its checksum does not match its bytes (stored " + hex(body_crc) + ", computed " + hex(body) + ")");
    check_sections();
  }

  void check_sections() {
    for (std::size_t i = kReservedAt; i < kHeaderCrcAt; ++i)
      if (p_[i]) throw corrupt("reserved header byte " + std::to_string(i) + " is not zero");
    kind_ = get(p_ + kKindAt, 4);
    if (kind_ < 1 || kind_ > 3) throw corrupt("unknown model kind " + std::to_string(kind_));
    n_ = get(p_ + kRowsAt, 8);
    d_ = get(p_ + kColumnsAt, 8);
    if (n_ == 0) throw corrupt("no training rows");
    // Each row takes 4 d bytes and a label: n and d are bounded by the file before any product.
    if (n_ > size_ || d_ > size_ / 4 || (d_ && n_ > size_ / 4 / d_))
      throw corrupt(std::to_string(n_) + " rows of " + std::to_string(d_) + " columns do not fit in " + std::to_string(size_) + " bytes");
    const std::uint64_t meta_offset = get(p_ + kMetaOffsetAt, 8), meta_size = get(p_ + kMetaSizeAt, 8);
    if (meta_offset != kHeaderSize || meta_size > size_ - kHeaderSize)
      throw corrupt("the metadata section (offset " + std::to_string(meta_offset) + ", " + std::to_string(meta_size) +
                    " bytes) is not within the file");
    meta_end_ = kHeaderSize + meta_size;
    const std::uint64_t labels_offset = get(p_ + kLabelsOffsetAt, 8), labels_size = get(p_ + kLabelsSizeAt, 8);
    const std::uint64_t label_bytes = kind_ == 2 ? 4 : kind_ == 3 ? 8 : 0;
    if (labels_offset != align_up(meta_end_, 8) || labels_size != label_bytes * n_ || labels_offset + labels_size > size_)
      throw corrupt("the labels section (offset " + std::to_string(labels_offset) + ", " + std::to_string(labels_size) +
                    " bytes) is not where its header's other sections put it");
    labels_offset_ = labels_offset;
    const std::uint64_t rows_offset = get(p_ + kRowsOffsetAt, 8), rows_size = get(p_ + kRowsSizeAt, 8);
    if (rows_offset != align_up(labels_offset + labels_size, 64) || rows_size != 4 * n_ * d_ || rows_offset + rows_size != size_)
      throw corrupt("the rows section (offset " + std::to_string(rows_offset) + ", " + std::to_string(rows_size) +
                    " bytes) is not where its header's other sections put it, at the end of the file");
    rows_offset_ = rows_offset;
    for (std::uint64_t i = meta_end_; i < labels_offset; ++i)
      if (p_[i]) throw corrupt("padding byte " + std::to_string(i) + " is not zero");
    for (std::uint64_t i = labels_offset + labels_size; i < rows_offset; ++i)
      if (p_[i]) throw corrupt("padding byte " + std::to_string(i) + " is not zero");
  }

  template <class E, std::size_t N>
  E enumerated(std::uint32_t code, const E (&values)[N], const char* what) const {
    if (code >= N) throw corrupt(std::string(what) + ": unknown value " + std::to_string(code));
    return values[code];
  }

  void read_metadata(ModelRecord& r) {
    const auto fail_at = [this](const std::string& what) { throw corrupt(what); };
    ByteReader<decltype(fail_at)> in(p_ + kHeaderSize, p_ + meta_end_, fail_at);
    ModelParams& params = r.params;
    params.k = in.u64("k");
    params.weights.kind = enumerated(in.u32("weights"), kWeights, "weights");
    params.weights.param = in.f64("weights parameter");
    params.metric = enumerated(in.u32("metric"), kMetrics, "metric");
    params.scaling = enumerated(in.u32("scaling"), kScalings, "scaling");
    params.impute = enumerated(in.u32("impute"), kImputes, "impute");
    if (params.k < 1 || params.k > n_) throw corrupt("k " + std::to_string(params.k) + " is not from 1 to the " + std::to_string(n_) + " rows");
    const bool named = params.weights.kind == Weights::Kind::uniform || params.weights.kind == Weights::Kind::distance;
    const double wp = params.weights.param;
    if (named ? wp != 0.0 : !(std::isfinite(wp) && wp > 0.0)) throw corrupt("weights parameter " + std::to_string(wp) + " is out of range");

    const Impute prep_impute = enumerated(in.u32("preprocessing impute"), kImputes, "preprocessing impute");
    // A feature takes at least 33 bytes: a name, a type, a fill flag and value, a fill category, a list.
    std::vector<FeaturePrep> features(in.count(33, "features"));
    std::size_t width = 0;
    for (std::size_t f = 0; f < features.size(); ++f) {
      FeaturePrep& fp = features[f];
      fp.name = in.str("feature name");
      fp.type = enumerated(in.u32("feature type"), kTypes, "feature type");
      const std::uint8_t has_fill = in.u8("feature fill flag");
      fp.fill = in.f32("feature fill");
      fp.fill_category = in.i64("feature fill category");
      fp.categories = in.strs("feature categories");
      const std::string which = "feature " + std::to_string(f + 1);
      if (has_fill > 1) throw corrupt(which + ": fill flag " + std::to_string(has_fill));
      fp.has_fill = has_fill;
      if (fp.type == ColumnType::numeric) {
        if (!fp.categories.empty() || fp.fill_category != -1 || (fp.has_fill ? !std::isfinite(fp.fill) : fp.fill != 0.0f))
          throw corrupt(which + ": a numeric feature with categories or without a valid fill value");
        ++width;
        continue;
      }
      if (fp.has_fill || fp.fill != 0.0f || fp.categories.empty() || fp.fill_category < -1 ||
          fp.fill_category >= static_cast<std::int64_t>(fp.categories.size()))
        throw corrupt(which + ": a categorical feature without categories or with a fill outside them");
      for (std::size_t c = 1; c < fp.categories.size(); ++c)
        if (!(fp.categories[c - 1] < fp.categories[c])) throw corrupt(which + ": categories not distinct and in byte order");
      width += fp.categories.size();
    }
    if (width != d_) throw corrupt("the features encode " + std::to_string(width) + " columns, the rows have " + std::to_string(d_));
    r.prep = Preprocessor::from_parts(prep_impute, std::move(features));

    const std::size_t kept_count = in.count(1, "scaler kept columns");
    std::vector<bool> kept(kept_count);
    for (std::size_t j = 0; j < kept_count; ++j) {
      const std::uint8_t k = in.u8("scaler kept column");
      if (k > 1) throw corrupt("scaler kept flag " + std::to_string(k));
      kept[j] = k;
    }
    if (kept != (r.prep.plain() ? std::vector<bool>{} : r.prep.one_hot_columns()))
      throw corrupt("the scaler's kept columns are not the one-hot columns of the features");
    std::vector<double> offset(d_), scale(d_);
    for (double& v : offset) v = in.f64("scaler offset");
    for (double& v : scale) v = in.f64("scaler scale");
    for (std::size_t j = 0; j < d_; ++j) {
      const bool identity = params.scaling == Scaling::none || (kept_count && kept[j]);
      if (!std::isfinite(offset[j]) || !std::isfinite(scale[j]) || !(scale[j] > 0.0) || (identity && (offset[j] != 0.0 || scale[j] != 1.0)))
        throw corrupt("scaler column " + std::to_string(j + 1) + ": offset " + std::to_string(offset[j]) + ", scale " +
                      std::to_string(scale[j]));
    }
    r.scaler = Scaler::from_parts(params.scaling, std::move(kept), std::move(offset), std::move(scale));

    r.classes = in.strs("classes");
    if ((kind_ == 2) != !r.classes.empty()) throw corrupt(std::to_string(r.classes.size()) + " classes for a model of kind " + std::to_string(kind_));
    LabelEncoder order;
    order.fit(r.classes);
    if (order.classes() != r.classes) throw corrupt("the classes are not distinct and in class order");

    const std::uint8_t has_layout = in.u8("layout flag");
    if (has_layout > 1) throw corrupt("layout flag " + std::to_string(has_layout));
    if (has_layout) r.layout = std::make_shared<const Dataset>(read_layout(in, r.prep));
    if (in.left()) throw corrupt("the metadata has " + std::to_string(in.left()) + " bytes after its last record");
  }

  template <class Reader>
  Dataset read_layout(Reader& in, const Preprocessor& prep) const {
    Dataset l;
    l.source = in.str("source");
    l.column_names = in.strs("column names");
    const std::size_t ncols = l.column_names.size();
    const auto column = [&](std::uint64_t c, const char* what) -> std::size_t {
      if (c == kNpos) return Dataset::npos;
      if (c >= ncols) throw corrupt(std::string(what) + " " + std::to_string(c) + " is not one of the " + std::to_string(ncols) + " columns");
      return static_cast<std::size_t>(c);
    };
    const std::vector<std::uint64_t> feature_columns = in.u64s("feature columns");
    const auto& features = prep.features();
    if (feature_columns.size() != features.size())
      throw corrupt(std::to_string(feature_columns.size()) + " feature columns for " + std::to_string(features.size()) + " features");
    std::vector<char> taken(ncols, 0);
    for (std::size_t f = 0; f < features.size(); ++f) {
      const std::uint64_t c = feature_columns[f];
      if (c >= ncols || taken[c] || l.column_names[c] != features[f].name)
        throw corrupt("feature column " + std::to_string(c) + " is not a distinct column named as feature " + std::to_string(f + 1));
      taken[c] = 1;
      l.feature_columns.push_back(static_cast<std::size_t>(c));
      l.feature_names.push_back(features[f].name);
      l.feature_types.push_back(features[f].type);
    }
    l.features = Matrix(0, features.size());
    l.label_column = column(in.u64("label column"), "label column");
    l.id_column = column(in.u64("id column"), "id column");
    if ((l.label_column != Dataset::npos && taken[l.label_column]) ||
        (l.id_column != Dataset::npos && (taken[l.id_column] || l.id_column == l.label_column)))
      throw corrupt("the label or identifier column is also a feature, or they are one column");
    if (l.label_column != Dataset::npos) l.label_name = l.column_names[l.label_column];
    if (l.id_column != Dataset::npos) l.id_name = l.column_names[l.id_column];
    for (std::uint64_t c : in.u64s("unnamed columns")) l.unnamed_columns.push_back(column(c, "unnamed column"));
    l.ignore_elsewhere = in.strs("ignore elsewhere");
    const std::vector<std::uint64_t> file_rows = in.u64s("file rows");
    if (!file_rows.empty() && file_rows.size() != n_)
      throw corrupt(std::to_string(file_rows.size()) + " file rows for " + std::to_string(n_) + " training rows");
    for (std::size_t i = 0; i < file_rows.size(); ++i) {
      if (i && file_rows[i] <= file_rows[i - 1]) throw corrupt("file rows not ascending");
      l.file_rows.push_back(static_cast<std::size_t>(file_rows[i]));
    }
    CsvOptions& o = l.options;
    o.header = flag(in.u8("header flag"), "header flag");
    o.delimiter = static_cast<char>(in.u8("delimiter"));
    o.label = in.str("label option");
    o.ignore = in.strs("ignore option");
    o.categorical = in.strs("categorical option");
    o.numeric = in.strs("numeric option");
    o.na_values = in.strs("na values option");
    o.id = in.str("id option");
    o.drop_missing = flag(in.u8("drop missing flag"), "drop missing flag");
    o.drop_missing_features = flag(in.u8("drop missing features flag"), "drop missing features flag");
    return l;
  }

  bool flag(std::uint8_t v, const char* what) const {
    if (v > 1) throw corrupt(std::string(what) + " " + std::to_string(v));
    return v;
  }

  void read_labels(ModelRecord& r) const {
    const std::uint8_t* at = p_ + labels_offset_;
    if (kind_ == 2) {
      r.class_ids.resize(n_);
      for (std::uint64_t i = 0; i < n_; ++i) {
        r.class_ids[i] = static_cast<std::uint32_t>(get(at + 4 * i, 4));
        if (r.class_ids[i] >= r.classes.size())
          throw corrupt("row " + std::to_string(i + 1) + " has class " + std::to_string(r.class_ids[i]) + " of " + std::to_string(r.classes.size()));
      }
    } else if (kind_ == 3) {
      r.targets.resize(n_);
      for (std::uint64_t i = 0; i < n_; ++i) {
        const std::uint64_t bits = get(at + 8 * i, 8);
        std::memcpy(&r.targets[i], &bits, 8);
        if (!std::isfinite(r.targets[i])) throw corrupt("row " + std::to_string(i + 1) + " has a target that is not a finite number");
      }
    }
  }

  const std::uint8_t* p_;
  std::size_t size_;
  const std::string& name_;
  std::uint64_t kind_ = 0, n_ = 0, d_ = 0, meta_end_ = 0, labels_offset_ = 0, rows_offset_ = 0;
};

}  // namespace model_file

std::vector<std::uint8_t> encode_model(const ModelRecord& record) { return model_file::encode(record); }

ModelRecord decode_model(const std::uint8_t* data, std::size_t size, const std::string& name) {
  return model_file::Decoder(data, size, name).run();
}

}  // namespace knn::detail
