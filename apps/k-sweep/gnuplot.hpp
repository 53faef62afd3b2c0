#pragma once
// Finding and running gnuplot for --plot.
#include <filesystem>
#include <string>

namespace knn::sweep {

/// The gnuplot program: $KNN_GNUPLOT when set, else the one found at build time, else gnuplot on
/// PATH. `plot` (the --plot file) names the option in errors.
std::string find_gnuplot(const std::string& plot);

/// One gnuplot run in a temporary folder of its own, removed afterwards: the data files and the
/// script are written there, and the image is read back.
class GnuplotRun {
 public:
  GnuplotRun();
  ~GnuplotRun();
  GnuplotRun(const GnuplotRun&) = delete;
  GnuplotRun& operator=(const GnuplotRun&) = delete;

  /// The path of file `name` in the folder.
  std::filesystem::path file(const std::string& name) const { return dir_ / name; }
  /// Writes file `name` in the folder.
  void write(const std::string& name, const std::string& text) const;
  /// Runs `program` on the script file `script` and returns the bytes of the image file `image`.
  std::string image(const std::string& program, const std::string& script, const std::string& image) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace knn::sweep
