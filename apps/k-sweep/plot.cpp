#include "plot.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "errors.hpp"
#include "gnuplot.hpp"
#include "knn/error.hpp"
#include "output_writer.hpp"
#include "settings.hpp"

namespace knn::sweep {

namespace {

// A gnuplot string literal in double quotes; a newline in `text` becomes gnuplot's line break.
std::string gp_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c < 0x20 ? '?' : static_cast<char>(c);
  }
  return out + '"';
}

// "#rrggbb" mixed with white: `amount` of the colour, the rest white.
std::string tint(const std::string& color, double amount) {
  char buf[8];
  unsigned rgb = static_cast<unsigned>(std::strtoul(color.c_str() + 1, nullptr, 16));
  unsigned out = 0;
  for (int shift = 16; shift >= 0; shift -= 8) {
    const double c = static_cast<double>((rgb >> shift) & 0xffu);
    out |= static_cast<unsigned>(std::lround(255.0 - amount * (255.0 - c))) << shift;
  }
  std::snprintf(buf, sizeof buf, "#%06x", out);
  return buf;
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// How the scores were made, the plot's second title line.
std::string validation_text(const EvalResult& res, const Settings& st) {
  const EvalOptions& eo = st.eval;
  std::string how;
  switch (eo.folds.kind) {
    case FoldSpec::Kind::kfold:
      how = std::to_string(res.folds) + "-fold cross-validation (" + (eo.task == Task::classify ? "stratified, " : "") +
            "seed " + std::to_string(eo.folds.seed) + ")";
      break;
    case FoldSpec::Kind::loo: how = "leave-one-out (pooled)"; break;
    case FoldSpec::Kind::test: how = "test file " + st.test_path; break;
    case FoldSpec::Kind::splits: how = std::to_string(res.folds) + " given splits"; break;
  }
  how += eo.scaling == Scaling::minmax ? ", min-max scaling" : eo.scaling == Scaling::standard ? ", standard scaling" : ", no scaling";
  if (!eo.folds.pooled()) how += "; band: mean +/- 1 standard deviation over folds";
  return how;
}

}  // namespace

ImageType image_type(const std::string& plot) {
  std::string ext = std::filesystem::path(plot).extension().string();
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".svg") return ImageType::svg;
  if (ext == ".png") return ImageType::png;
  throw app::option_error("plot", quote(plot) + ": unknown image type " + quote(ext) +
                                  " (the file name must end in .svg or .png)");
}

std::string plot_image(const EvalResult& res, const Settings& st) {
  const EvalOptions& eo = st.eval;
  const bool cls = eo.task == Task::classify;
  const std::string score = cls ? "accuracy" : "RMSE";
  GnuplotRun run;
  const std::string image_name = st.image == ImageType::svg ? "sweep.svg" : "sweep.png";

  // One data block per combination (blocks separated by two blank lines: gnuplot's `index`).
  const std::size_t per_combo = eo.ks.size(), combos = res.rows.size() / per_combo;
  std::ostringstream dat;
  for (std::size_t c = 0; c < combos; ++c) {
    if (c) dat << "\n\n";
    dat << "# " << res.rows[c * per_combo].weights.to_string() << ' ' << to_string(res.rows[c * per_combo].metric)
        << "\n# k mean std\n";
    for (std::size_t i = 0; i < per_combo; ++i) {
      const SweepRow& row = res.rows[c * per_combo + i];
      dat << row.k << ' ' << app::format_double(row.scores[0].mean) << ' ' << app::format_double(row.scores[0].std) << '\n';
    }
  }
  run.write("sweep.dat", dat.str());
  const SweepRow& best = res.rows[res.best];
  run.write("best.dat", std::to_string(best.k) + ' ' + app::format_double(best.scores[0].mean) + '\n');

  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};
  std::ostringstream gp;
  gp << "# k-sweep plot: score against k\n";
  if (st.image == ImageType::svg) {
    gp << "set terminal svg size 960,600 dynamic noenhanced font 'Sans,13' background rgb 'white'\n";
  } else {
    // pngcairo draws smoother lines than the libgd png terminal; use it when this gnuplot has it.
    gp << "if (strstrt(GPVAL_TERMINALS, ' pngcairo ') > 0) {\n"
          "  set terminal pngcairo size 1200,750 noenhanced font 'Sans,13' background rgb 'white'\n"
          "} else {\n"
          "  set terminal png size 1200,750 noenhanced background rgb 'white'\n"
          "}\n";
  }
  gp << "set output " << gp_string(run.file(image_name).string()) << "\n"
     << "set encoding utf8\n"
     << "set title " << gp_string("k-sweep of " + st.data_path + "\n" + validation_text(res, st)) << "\n";
  gp << "set xlabel 'k (number of neighbours)'\n"
     << "set ylabel " << gp_string(score + (!eo.folds.pooled() ? " (mean over folds)" : "")) << "\n"
     << "set grid back lc rgb '#dddddd'\n"
     << "set border 3 back\nset tics nomirror\n"
     << "set key at screen 0.5, screen 0.015 center bottom horizontal samplen 2 width 2 maxrows " << (combos > 2 ? 2 : 1) << "\n"
     << "set bmargin " << (combos > 2 ? 7 : 5.5) << "\n"
     << "set autoscale xfix\n"
     << "set style textbox opaque noborder margins 2,2\n"
     // Several bands overlap, so they are see-through; a single one is drawn in a solid light tint,
     // which every SVG viewer shows the same.
     << "set style fill " << (combos > 1 ? "transparent solid 0.08" : "solid 1.0") << " noborder\n"
     << "set offsets graph 0.02, graph 0.02, graph " << (cls ? "0.14" : "0.05") << ", graph " << (cls ? "0.05" : "0.14")
     << "\n";
  if (eo.ks.size() == 1) gp << "set xrange [" << eo.ks.front() - 1 << ':' << eo.ks.front() + 1 << "]\n";
  std::string best_text = "best k = " + std::to_string(best.k) + ": " + score + " " + short_number(best.scores[0].mean);
  if (combos > 1) best_text += " (" + best.weights.to_string() + ", " + to_string(best.metric) + ")";
  gp << "set label 1 " << gp_string(best_text)
     << " at " << best.k << ", " << app::format_double(best.scores[0].mean) << " center offset 0," << (cls ? "1.6" : "-1.6")
     << " front boxed textcolor rgb '#000000'\n";
  gp << "plot ";
  for (std::size_t c = 0; c < combos; ++c) {
    const SweepRow& first = res.rows[c * per_combo];
    const std::string color = colors[c % (sizeof colors / sizeof colors[0])];
    const std::string name = first.weights.to_string() + ", " + to_string(first.metric);
    gp << (c ? ", \\\n     " : "") << gp_string(run.file("sweep.dat").string()) << " index " << c
       << " using 1:($2-$3):($2+$3) with filledcurves lc rgb '" << (combos > 1 ? color : tint(color, 0.18)) << "' "
       << (combos == 1 && !eo.folds.pooled() ? "title '+/- 1 standard deviation'" : "notitle")
       << ", \\\n     '' index " << c << " using 1:2 with linespoints lw 2 pt 7 ps 0.6 lc rgb '" << color << "' title "
       << gp_string(combos == 1 ? "mean " + score + " (" + name + ")" : name);
  }
  gp << ", \\\n     " << gp_string(run.file("best.dat").string())
     << " using 1:2 with points pt 7 ps 2.2 lc rgb '#000000' title 'best k'\n"
     << "set output\n";
  run.write("sweep.gp", gp.str());
  return run.image(st.gnuplot, "sweep.gp", image_name);
}

}  // namespace knn::sweep
