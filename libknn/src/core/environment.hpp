#pragma once
// Every environment variable libknn reads is read in environment.cpp, and nowhere else; the rest
// of the library takes the values from here (docs/architecture.md#environment-variables).
#include <cstdint>
#include <optional>
#include <string>

namespace knn::detail {

/// The GPU backend's tuning switches, for measurements and comparisons: each choice they force is
/// exact too, and the defaults pick the fastest path for the shape. Read when a backend is made.
struct GpuTuning {
  bool timing = false;      // KNN_GPU_TIMING set: stages run one after another, each timed on stderr
  bool sgemm = false;       // KNN_GPU_SGEMM=1: float32 products instead of split TF32 operands
  int blas = -1;            // KNN_GPU_BLAS: 1 cuBLAS's products from the first, 0 never, -1 once they pay (product_choice.cuh)
  int fused = -1;           // KNN_GPU_FUSED: 1 the fused pass wherever it applies, 0 never, -1 by shape
  bool fp16 = true;         // KNN_GPU_FP16=0: the TF32 pass's l2 products keep TF32 operands
  std::int64_t chunks = 0;  // KNN_GPU_CHUNKS: query chunks a tile (at least 1), 0 by shape
  int fused_stride = 0;     // KNN_GPU_FUSED_STRIDE: the fused pass's sample takes one row in this many (1 to 1,024); 0 (unset or empty): by k
  bool vote = true;         // KNN_GPU_VOTE=0: votes and means on the host
  bool wgmma = true;        // KNN_GPU_WGMMA=0: FP16 products and the fused pass keep mma.sync on Hopper
  bool prune = true;        // KNN_GPU_PRUNE=0: the wide warpgroup kernel's lists are ranked whole (prune_lists)
};
GpuTuning gpu_tuning();

/// Whether an MPI launcher started this process (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK or
/// MPI_LOCALNRANKS set).
bool mpi_launched();

/// The process's rank on its machine as the launcher gives it (OMPI_COMM_WORLD_LOCAL_RANK,
/// MPI_LOCALRANKID or SLURM_LOCALID, the first set), which picks its GPU.
std::optional<int> local_rank();

/// KNN_CUDA_PLUGIN: the GPU plugin's file where the user names one; empty: none named.
std::string cuda_plugin_override();

/// KNN_STAGE_TIMES set: keep the stage marks of knn/stage_times.hpp.
bool stage_times_requested();

}  // namespace knn::detail
