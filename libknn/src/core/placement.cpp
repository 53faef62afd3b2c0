#include "core/placement.hpp"

namespace knn::detail {

std::shared_ptr<const Placement> placement(const std::shared_ptr<const Communicator>& comm) {
  return distributed(comm.get()) ? sharded_placement(comm) : local_placement();
}

}  // namespace knn::detail
