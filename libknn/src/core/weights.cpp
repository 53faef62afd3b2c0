#include "knn/weights.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cmath>
#include <cstdlib>

#include "arith/weights.hpp"
#include "io/text_format.hpp"
#include "knn/error.hpp"

namespace knn {

namespace {
double parse_param(const std::string& text, const std::string& whole) {
  const char* b = text.c_str();
  char* e = nullptr;
  errno = 0;
  const double v = std::strtod(b, &e);
  if (text.empty() || *e != '\0' || errno == ERANGE || !std::isfinite(v) || !(v > 0.0))
    throw Error::parameter("weights", "parameter " + quote(text) + " in " + quote(whole) +
                                       " must be a finite number > 0");
  return v;
}
}  // namespace

Weights Weights::parse(const std::string& text) {
  const auto colon = text.find(':');
  const std::string name = text.substr(0, colon);
  const bool has_param = colon != std::string::npos;
  Weights w;
  if (name == "uniform") {
    w.kind = Kind::uniform;
  } else if (name == "distance") {
    w.kind = Kind::distance;
  } else if (name == "gaussian") {
    w.kind = Kind::gaussian;
    w.param = 1.0;
  } else if (name == "inverse") {
    w.kind = Kind::inverse;
    w.param = 0.1;
  } else if (name == "subtract") {
    w.kind = Kind::subtract;
    w.param = 1.0;
  } else {
    throw Error::parameter("weights", "unknown weight function " + quote(text) +
                                       " (expected uniform, distance, gaussian[:SIGMA], inverse[:C] or subtract[:C])");
  }
  if (has_param) {
    if (w.kind == Kind::uniform || w.kind == Kind::distance)
      throw Error::parameter("weights", quote(text) + ": " + name + " takes no parameter");
    w.param = parse_param(text.substr(colon + 1), text);
  }
  return w;
}

std::string Weights::to_string() const {
  switch (kind) {
    case Kind::uniform: return "uniform";
    case Kind::distance: return "distance";
    case Kind::gaussian: return "gaussian:" + format_double(param);
    case Kind::inverse: return "inverse:" + format_double(param);
    case Kind::subtract: return "subtract:" + format_double(param);
  }
  return "?";
}

double Weights::weight(double d) const { return arith::weight({kind, param}, d); }

void neighbor_weights(const Weights& w, const double* distances, std::size_t k, double* out) {
  double sum = 0.0;
  if (w.kind == Weights::Kind::distance && k > 0 && distances[0] == 0.0) {
    // Neighbours at distance 0 take all the weight (distances are ascending, so they lead).
    for (std::size_t i = 0; i < k; ++i) out[i] = distances[i] == 0.0 ? 1.0 : 0.0;
    return;
  }
  for (std::size_t i = 0; i < k; ++i) sum += (out[i] = w.weight(distances[i]));
  if (!(sum > 0.0) || !std::isfinite(sum))
    for (std::size_t i = 0; i < k; ++i) out[i] = 1.0;
}

}  // namespace knn
