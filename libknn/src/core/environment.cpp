#include "core/environment.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace knn::detail {

namespace {
bool equals(const char* value, const char* text) { return value && std::strcmp(value, text) == 0; }
}  // namespace

GpuTuning gpu_tuning() {
  GpuTuning t;
  t.timing = std::getenv("KNN_GPU_TIMING") != nullptr;
  t.sgemm = equals(std::getenv("KNN_GPU_SGEMM"), "1");
  if (const char* v = std::getenv("KNN_GPU_BLAS"); v && *v) t.blas = equals(v, "1") ? 1 : 0;
  if (const char* v = std::getenv("KNN_GPU_FUSED"); v && *v) t.fused = equals(v, "1") ? 1 : 0;
  t.fp16 = !equals(std::getenv("KNN_GPU_FP16"), "0");
  if (const char* v = std::getenv("KNN_GPU_CHUNKS")) t.chunks = std::max<long long>(std::atoll(v), 1);
  if (const char* v = std::getenv("KNN_GPU_FUSED_STRIDE"); v && *v) t.fused_stride = static_cast<int>(std::clamp<long long>(std::atoll(v), 1, 1024));
  t.vote = !equals(std::getenv("KNN_GPU_VOTE"), "0");
  t.wgmma = !equals(std::getenv("KNN_GPU_WGMMA"), "0");
  t.prune = !equals(std::getenv("KNN_GPU_PRUNE"), "0");
  return t;
}

bool mpi_launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

std::optional<int> local_rank() {
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char* v = std::getenv(var)) return std::atoi(v);
  return std::nullopt;
}

std::string cuda_plugin_override() {
  const char* v = std::getenv("KNN_CUDA_PLUGIN");
  return v ? std::string(v) : std::string();
}

bool stage_times_requested() { return std::getenv("KNN_STAGE_TIMES") != nullptr; }

}  // namespace knn::detail
