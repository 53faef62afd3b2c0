#pragma once
// The MPI communicator (built with KNN_ENABLE_MPI): one rank per process, one GPU per rank.
#include <memory>

#include "knn/communicator.hpp"

namespace knn::mpi {

/// True when this process was started by an MPI launcher (mpirun, srun).
bool launched();

/// Initialises MPI once (finalised at exit) and returns MPI_COMM_WORLD, or nullptr when the
/// process was not started by an MPI launcher, so a plain run needs no MPI at all.
std::shared_ptr<const Communicator> world();

}  // namespace knn::mpi
