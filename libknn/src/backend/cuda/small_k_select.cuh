#pragma once
// Selection for k <= kFastK (docs/architecture.md#the-path-of-one-query): tau from a sample of each
// query's upper bounds, one pass that appends candidates to lists of fixed size, each list ranked
// by the defined distance in shared memory; lists that overflow are collected again at their
// exact size in a second round.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "backend/cuda/bounds.cuh"
#include "backend/cuda/candidate_slots.cuh"
#include "backend/cuda/device_memory.cuh"
#include "backend/cuda/stage_timer.cuh"
#include "knn/metric.hpp"

namespace knn::cuda {

struct GpuContext;
struct FusedPlan;
struct TileResults;

/// The device buffers of this path, kept between searches, and the first round's results in
/// page-locked memory: two sets taken in turn, so that the host copies one tile's into the
/// caller's lists while the device works on the next.
struct SmallKWorkspace {
  struct HostResults {
    PinnedArray<double> dist;
    PinnedArray<std::int64_t> index;
    PinnedArray<int> left;
    PinnedArray<unsigned long long> found;
  };
  HostResults host[2];
  DeviceArray<unsigned> tau, tau_valid;  // tau_valid: the sample's k-th upper bound, where tau is a guess
  DeviceArray<std::int64_t> cand, out_index, slot_base, slot_limit, row_ordered;
  DeviceArray<int> left, slot_row;
  DeviceArray<unsigned long long> found;
  DeviceArray<double> dist, out_dist;
  DeviceArray<float2> cand_bounds;  // the first round's candidates' bounds, where its lists are pruned
  template <class F>
  void for_each_buffer(F&& f) {
    f(tau), f(tau_valid), f(cand), f(out_index), f(slot_base), f(slot_limit), f(row_ordered), f(left), f(slot_row), f(found), f(dist), f(out_dist),
        f(cand_bounds);
  }
};

// What a tile of queries needs on the device: the product's bounds, and the data to rank with.
struct Tile {
  Bounds bounds;
  const float* q;      // qt x d queries
  const float* train;  // n x d training rows
  std::int64_t q0, qt, n, k;
  int d;
  Metric metric;
  int results;  // the set of the workspace's host results its first-round results go to
  const struct FusedPlan* fused = nullptr;  // set: candidates by fused_collect, tau from its sample
  const struct DeviceLists* lists = nullptr;  // set: the lists go there (rows q0..), not to the host
  bool prune = false;  // the first round's lists are pruned before they are ranked (SearchPlan::prune)
  bool guessed() const;  // tau is a guess that the ranking checks (FusedPlan::tau_rank below k)
};

/// First-round places per query: room for the k nearest and what ties with them within the
/// margin; most queries need far fewer. A guessed tau (FusedPlan::tau_rank) admits more,
/// k + 4 sqrt(8 k) rows and those within the margin of them: it takes all that the ranking holds in shared
/// memory, since a list that overflows is collected again under a valid tau, which admits many
/// more.
inline std::int64_t first_round_places(std::int64_t k, bool guessed = false) {
  return guessed ? kRankCapacity : std::min<std::int64_t>(2 * k + 256, kRankCapacity);
}

/// Lets rank_candidates take its shared memory (once per context).
void small_k_init();
/// Buffers of this path for a tile of qt queries; with host_lists, the page-locked lists too (a
/// search of device memory has none); with `prune`, the first round's bounds (Tile::prune).
void fast_select_reserve(GpuContext& ctx, std::int64_t qt, std::int64_t k, bool host_lists, bool guessed = false, bool prune = false);
/// tau, candidates and their ranking for one chunk of a tile (`t` describes the chunk, whose first
/// query is row c0 of the tile), queued on `st`: results go to page-locked host memory, or to
/// t.lists.
void fast_select_chunk(GpuContext& ctx, const Tile& t, std::int64_t c0, cudaStream_t st, StageTimer& timer);
/// After every chunk of the tile `t` was queued: waits for them, and runs a second round for the
/// queries whose list overflowed. What the tile found is left in `r` for deliver(), which can run
/// while the device works on the next tile; with t.lists, the second round's lists are written
/// there too, on the device, and `r` holds none.
void fast_select_finish(GpuContext& ctx, const Tile& t, TileResults& res, bool timing);

}  // namespace knn::cuda
