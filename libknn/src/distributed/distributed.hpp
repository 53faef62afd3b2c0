#pragma once
// The library-internal side of sharded training sets and of sets searched in parts (see
// knn/communicator.hpp): the candidate merge, the search in parts, the sharded search, and the
// exchange of values between ranks.
#include "distributed/candidate_merge.hpp"
#include "distributed/gather.hpp"
#include "distributed/search_in_parts.hpp"
#include "distributed/sharded_search.hpp"
