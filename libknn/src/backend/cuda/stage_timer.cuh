#pragma once
// Stage timing of a search (GpuConfig::timing): the stages run one after another and each one's
// device time is printed to stderr, a line per tile: where the time goes, without a profiler.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/device_memory.cuh"

namespace knn::cuda {

class StageTimer {
 public:
  explicit StageTimer(bool on) : on_(on) {}
  bool on() const { return on_; }
  void mark(cudaStream_t st, const char* stage) {
    if (!on_) return;
    marks_.push_back(std::make_unique<Event>(cudaEventDefault));
    names_.push_back(stage);
    KNN_CUDA(cudaEventRecord(marks_.back()->e, st));
  }
  void report(std::int64_t queries, std::int64_t n) {
    if (!on_ || marks_.empty()) return;
    KNN_CUDA(cudaEventSynchronize(marks_.back()->e));
    std::string line = "gpu stages (" + std::to_string(queries) + " queries x " + std::to_string(n) + " rows, ms):";
    float total = 0.0f;
    for (std::size_t i = 1; i < marks_.size(); ++i) {
      float ms = 0.0f;
      KNN_CUDA(cudaEventElapsedTime(&ms, marks_[i - 1]->e, marks_[i]->e));
      total += ms;
      char part[64];
      std::snprintf(part, sizeof part, " %s %.3f", names_[i], ms);
      line += part;
    }
    char end[32];
    std::snprintf(end, sizeof end, "; total %.3f", total);
    std::fprintf(stderr, "%s%s\n", line.c_str(), end);
    marks_.clear();
    names_.clear();
  }

 private:
  bool on_;
  std::vector<std::unique_ptr<Event>> marks_;
  std::vector<const char*> names_;
};


}  // namespace knn::cuda
