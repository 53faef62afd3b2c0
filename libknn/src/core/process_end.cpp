// Ending a process that used the GPU without its CUDA teardown (knn/search.hpp).
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "core/backend_factory.hpp"
#include "core/environment.hpp"
#include "knn/search.hpp"

namespace knn {

void end_process_after_gpu(int status) {
  // Under MPI the launcher waits for MPI_Finalize, which runs at exit.
  if (!detail::gpu_backend_made() || detail::mpi_launched()) return;
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(status);
}

}  // namespace knn
