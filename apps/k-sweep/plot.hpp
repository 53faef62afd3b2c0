#pragma once
// --plot: the score against k with a band of +-1 standard deviation, drawn by gnuplot.
#include <string>

#include "knn/evaluation.hpp"

namespace knn::sweep {

struct Settings;

enum class ImageType { svg, png };

/// The image type of the --plot file from its name's ending.
ImageType image_type(const std::string& plot);

/// The image file's bytes.
std::string plot_image(const EvalResult& res, const Settings& st);

}  // namespace knn::sweep
