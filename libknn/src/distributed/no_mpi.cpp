// A build without MPI (KNN_ENABLE_MPI off): every process runs alone.
#include "knn/mpi.hpp"

namespace knn::mpi {

bool launched() { return false; }

std::shared_ptr<const Communicator> world() { return nullptr; }

}  // namespace knn::mpi
