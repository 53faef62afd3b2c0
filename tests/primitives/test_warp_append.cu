// Warp-aggregated append: many warps of many blocks append random counts (0 included, whole warps
// of 0, whole warps of 32) to one counter, in several rounds; every place must be written once,
// each lane's items must be contiguous and follow the lanes below it in its warp, and the counter
// must end at its start plus the total.
#include <knn/prim/warp/warp_append.cuh>

#include <cstdint>

#include "test_util.cuh"

namespace {
using namespace knn::prim;
using knn::prim::test::DeviceBuffer;

// Thread t of round r has count counts[r * threads + t]; it writes its id (r * threads + t) at
// each of its places, counts its hits on each place, and records its first place.
template <typename Counter>
__global__ void append_kernel(Counter* counter, const unsigned* counts, int rounds, long long capacity,
                              Counter start, int* owner, int* hits, long long* first) {
  const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int r = 0; r < rounds; ++r) {
    const long long id = r * threads + t;
    const unsigned count = counts[id];
    const Counter pos = warp_append(counter, count);
    first[id] = static_cast<long long>(pos);
    for (unsigned j = 0; j < count; ++j) {
      const long long at = static_cast<long long>(pos - start) + j;
      if (at >= 0 && at < capacity) {
        owner[at] = static_cast<int>(id);
        atomicAdd(hits + at, 1);
      }
    }
  }
}

// Warps whose counts are all 0 must not touch the counter: here it is a null pointer.
template <typename Counter>
__global__ void empty_kernel(Counter* counter, long long* first) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  first[t] = static_cast<long long>(warp_append(counter, 0u));
}

enum WarpKind { none, sparse, dense, full, kinds };

template <typename Counter>
void check_append(Counter start, int blocks, int block_threads, int rounds, std::mt19937& rng) {
  SCOPED_TRACE(std::to_string(blocks) + " blocks of " + std::to_string(block_threads) + ", start " +
               std::to_string(static_cast<long long>(start)));
  const long long threads = static_cast<long long>(blocks) * block_threads;
  // Each warp of each round: nothing, a few lanes with 1-3 items, every lane 0-32 (a lane's
  // matches of a 32-bit mask), or every lane 32.
  std::vector<unsigned> counts(rounds * threads);
  for (long long w = 0; w < rounds * threads / 32; ++w) {
    const int kind = static_cast<int>(rng() % kinds);
    for (int l = 0; l < 32; ++l) {
      unsigned c = 0;
      if (kind == sparse) c = rng() % 8 == 0 ? 1 + rng() % 3 : 0;
      if (kind == dense) c = rng() % 33;
      if (kind == full) c = 32;
      counts[w * 32 + l] = c;
    }
  }
  long long total = 0;
  for (unsigned c : counts) total += c;
  DeviceBuffer<Counter> counter(std::vector<Counter>{start});
  DeviceBuffer<unsigned> dcounts(counts);
  DeviceBuffer<int> owner(total), hits(std::vector<int>(total, 0));
  DeviceBuffer<long long> first(counts.size());
  append_kernel<<<blocks, block_threads>>>(counter.get(), dcounts.get(), rounds, total, start, owner.get(),
                                           hits.get(), first.get());
  CUDA_ASSERT(cudaGetLastError());
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto got_counter = counter.download();
  const auto got_owner = owner.download();
  const auto got_hits = hits.download();
  const auto got_first = first.download();
  ASSERT_EQ(static_cast<long long>(got_counter[0] - start), total) << "counter";
  for (long long p = 0; p < total; ++p) ASSERT_EQ(got_hits[p], 1) << "place " << p << " written that often";
  for (long long id = 0; id < static_cast<long long>(counts.size()); ++id) {
    const long long warp_first = id - id % 32;
    bool warp_empty = true;
    for (int l = 0; l < 32; ++l) warp_empty = warp_empty && counts[warp_first + l] == 0;
    if (warp_empty) {
      ASSERT_EQ(got_first[id], 0) << "thread " << id << " of a warp with nothing to append";
      continue;
    }
    const long long mine = got_first[id] - static_cast<long long>(start);
    ASSERT_GE(mine, 0) << "thread " << id;
    ASSERT_LE(mine + counts[id], total) << "thread " << id;
    for (unsigned j = 0; j < counts[id]; ++j) ASSERT_EQ(got_owner[mine + j], id) << "thread " << id << " item " << j;
    // The warp's places are contiguous, in lane order.
    if (id % 32 != 0)
      ASSERT_EQ(got_first[id], got_first[id - 1] + counts[id - 1]) << "thread " << id << " after its lane below";
  }
}

// 37 blocks: not a power of two; 128 and 96 threads: 4 and 3 warps a block.
TEST(WarpAppend, UnsignedLongLongCounter) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  check_append<unsigned long long>(0ull, 37, 128, 6, rng);
  // A counter past 2^32: positions are 64-bit.
  check_append<unsigned long long>((1ull << 32) + 5, 5, 96, 3, rng);
}

TEST(WarpAppend, UnsignedCounterWithStart) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  check_append<unsigned>(1000u, 37, 96, 4, rng);
}

TEST(WarpAppend, IntCounter) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  check_append<int>(7, 11, 64, 5, rng);
}

TEST(WarpAppend, EmptyWarpsLeaveTheCounterAlone) {
  KNN_PRIM_REQUIRE_GPU();
  DeviceBuffer<long long> first(3 * 64);
  empty_kernel<<<3, 64>>>(static_cast<unsigned long long*>(nullptr), first.get());
  CUDA_ASSERT(cudaGetLastError());
  CUDA_ASSERT(cudaDeviceSynchronize());
  for (long long f : first.download()) ASSERT_EQ(f, 0);
}

}  // namespace
