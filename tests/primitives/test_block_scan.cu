// Warp and block collectives (reduce, inclusive and exclusive scan) against the sequential
// reference, one independent problem per block.
#include <knn/prim/block/block_reduce.cuh>
#include <knn/prim/block/block_scan.cuh>
#include <knn/prim/operators.hpp>
#include <knn/prim/reference/reduce.hpp>
#include <knn/prim/reference/scan.hpp>

#include "test_util.cuh"

namespace {
using namespace knn::prim;
using knn::prim::test::DeviceBuffer;

// x -> a*x + b composed left to right: associative but not commutative, so any reordering of
// operands inside a collective changes the result.
struct Affine {
  unsigned a, b;
};
struct Compose {
  KNN_PRIM_HD Affine operator()(const Affine& f, const Affine& g) const {
    return {f.a * g.a, f.b * g.a + g.b};
  }
};
KNN_PRIM_HD bool operator==(const Affine& x, const Affine& y) { return x.a == y.a && x.b == y.b; }

template <typename T, typename Op>
__global__ void warp_kernel(const T* in, T* reduce_out, T* incl_out, T* excl_out, T init, Op op) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const T v = in[i];
  T total;
  incl_out[i] = warp_inclusive_scan(v, op, total);
  excl_out[i] = warp_exclusive_scan(v, init, op);
  const T r = warp_reduce(v, op);
  reduce_out[i] = (r == total) ? r : T{};  // the two totals must agree bit for bit
}

template <typename T, int BT, int IPT, typename Op>
__global__ void block_kernel(const T* in, T* incl_out, T* excl_out, T* agg_out, T init, Op op) {
  using Scan = BlockScan<T, BT, IPT>;
  __shared__ typename Scan::TempStorage temp;
  const long long base = static_cast<long long>(blockIdx.x) * BT * IPT + threadIdx.x * IPT;
  T items[IPT], out[IPT];
  for (int j = 0; j < IPT; ++j) items[j] = in[base + j];
  T aggregate;
  Scan(temp).inclusive_scan(items, out, op, aggregate);
  for (int j = 0; j < IPT; ++j) incl_out[base + j] = out[j];
  if (threadIdx.x == BT - 1) agg_out[blockIdx.x] = aggregate;
  __syncthreads();
  Scan(temp).exclusive_scan(items, items, init, op);  // in place
  for (int j = 0; j < IPT; ++j) excl_out[base + j] = items[j];
}

// A prefix callback that puts `prefix` in front of the block, as a device scan's tile does.
template <typename T>
struct FixedPrefix {
  T prefix;
  T* seen_aggregate;
  __device__ T operator()(const T& aggregate) {
    if (threadIdx.x == 0) *seen_aggregate = aggregate;
    return prefix;
  }
};

template <typename T, int BT, int IPT, typename Op>
__global__ void block_prefix_kernel(const T* in, T* incl_out, T* excl_out, T* agg_out, T prefix,
                                    Op op) {
  using Scan = BlockScan<T, BT, IPT>;
  __shared__ typename Scan::TempStorage temp;
  const long long base = static_cast<long long>(blockIdx.x) * BT * IPT + threadIdx.x * IPT;
  T items[IPT], out[IPT];
  for (int j = 0; j < IPT; ++j) items[j] = in[base + j];
  FixedPrefix<T> callback{prefix, agg_out + blockIdx.x};
  Scan(temp).inclusive_scan_with_prefix(items, out, op, callback);
  for (int j = 0; j < IPT; ++j) incl_out[base + j] = out[j];
  __syncthreads();
  Scan(temp).exclusive_scan_with_prefix(items, out, op, callback);
  for (int j = 0; j < IPT; ++j) excl_out[base + j] = out[j];
}

template <typename T, int BT, int IPT, typename Op>
__global__ void block_reduce_kernel(const T* in, T* out, const int* num_valid, Op op) {
  using Reduce = BlockReduce<T, BT, IPT>;
  __shared__ typename Reduce::TempStorage temp;
  const long long base = static_cast<long long>(blockIdx.x) * BT * IPT + threadIdx.x * IPT;
  T items[IPT];
  for (int j = 0; j < IPT; ++j) items[j] = in[base + j];
  const int valid = num_valid[blockIdx.x];
  const T r = Reduce(temp).reduce(items, op, valid);
  // Every thread must have the result.
  if (threadIdx.x == (blockIdx.x * 7) % BT) out[blockIdx.x] = r;
}

std::vector<Affine> random_affine(std::size_t n, std::mt19937& rng) {
  std::vector<Affine> v(n);
  for (auto& f : v) f = {static_cast<unsigned>(rng()) | 1u, static_cast<unsigned>(rng())};
  return v;
}

TEST(WarpCollectives, ScanAndReduceKeepLaneOrder) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  const int warps = 5;
  const auto host = random_affine(32 * warps, rng);
  DeviceBuffer<Affine> in(host), red(host.size()), incl(host.size()), excl(host.size());
  const Affine init{3u, 5u};
  warp_kernel<<<1, 32 * warps>>>(in.get(), red.get(), incl.get(), excl.get(), init, Compose{});
  CUDA_ASSERT(cudaGetLastError());
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto r = red.download(), i = incl.download(), e = excl.download();
  for (int w = 0; w < warps; ++w) {
    std::vector<Affine> ref_incl(32), ref_excl(32);
    reference::inclusive_scan(host.data() + 32 * w, ref_incl.data(), 32, Compose{});
    reference::exclusive_scan(host.data() + 32 * w, ref_excl.data(), 32, init, Compose{});
    for (int l = 0; l < 32; ++l) {
      const int k = 32 * w + l;
      ASSERT_EQ(i[k], ref_incl[l]) << "inclusive, warp " << w << " lane " << l;
      ASSERT_EQ(e[k], ref_excl[l]) << "exclusive, warp " << w << " lane " << l;
      ASSERT_EQ(r[k], ref_incl[31]) << "reduce, warp " << w << " lane " << l;
    }
  }
}

template <typename T, int BT, int IPT, typename Op>
void check_block_scan(const std::vector<T>& host, T init, Op op) {
  constexpr int tile = BT * IPT;
  const int blocks = static_cast<int>(host.size() / tile);
  DeviceBuffer<T> in(host), incl(host.size()), excl(host.size()), agg(blocks);
  block_kernel<T, BT, IPT><<<blocks, BT>>>(in.get(), incl.get(), excl.get(), agg.get(), init, op);
  CUDA_ASSERT(cudaGetLastError());
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto i = incl.download(), e = excl.download(), a = agg.download();
  std::vector<T> ri(tile), re(tile);
  for (int b = 0; b < blocks; ++b) {
    reference::inclusive_scan(host.data() + b * tile, ri.data(), tile, op);
    reference::exclusive_scan(host.data() + b * tile, re.data(), tile, init, op);
    ASSERT_EQ(a[b], ri[tile - 1]) << "aggregate, block " << b;
    for (int k = 0; k < tile; ++k) {
      ASSERT_EQ(i[b * tile + k], ri[k]) << "inclusive, block " << b << " item " << k;
      ASSERT_EQ(e[b * tile + k], re[k]) << "exclusive, block " << b << " item " << k;
    }
  }

  // With a prefix callback: the prefix goes in front of every item.
  const T prefix = init;
  DeviceBuffer<T> pincl(host.size()), pexcl(host.size()), pagg(blocks);
  block_prefix_kernel<T, BT, IPT><<<blocks, BT>>>(in.get(), pincl.get(), pexcl.get(), pagg.get(),
                                                  prefix, op);
  CUDA_ASSERT(cudaGetLastError());
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto pi = pincl.download(), pe = pexcl.download(), pa = pagg.download();
  for (int b = 0; b < blocks; ++b) {
    reference::exclusive_scan(host.data() + b * tile, re.data(), tile, prefix, op);
    ASSERT_EQ(pa[b], a[b]) << "callback aggregate, block " << b;
    for (int k = 0; k < tile; ++k) {
      ASSERT_EQ(pe[b * tile + k], re[k]) << "exclusive with prefix, block " << b << " item " << k;
      const T expect_incl = op(re[k], host[b * tile + k]);
      ASSERT_EQ(pi[b * tile + k], expect_incl) << "inclusive with prefix, block " << b << " item " << k;
    }
  }
}

TEST(BlockScan, SumUnsignedOneItemPerThread) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  std::vector<unsigned> host(128 * 9);
  for (auto& x : host) x = rng();
  check_block_scan<unsigned, 128, 1>(host, 7u, Sum{});
}

TEST(BlockScan, MaxIntSevenItemsPerThread) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  std::vector<int> host(256 * 7 * 5);
  for (auto& x : host) x = static_cast<int>(rng() % 2001) - 1000;
  check_block_scan<int, 256, 7>(host, -5000, Max{});
}

TEST(BlockScan, NonCommutativeOperatorKeepsOrder) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  const auto host = random_affine(96 * 3 * 4, rng);
  check_block_scan<Affine, 96, 3>(host, Affine{1u, 0u}, Compose{});
}

TEST(BlockReduce, PartialTilesAndArgMin) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937 rng(seed);
  constexpr int BT = 64, IPT = 3, tile = BT * IPT;
  // One block per valid count, covering the edges of warps, threads and the whole tile.
  const std::vector<int> valid = {1, 2, 3, 4, 31, 32, 33, 95, 96, 97, 100, 191, 192};
  const int blocks = static_cast<int>(valid.size());
  using KV = KeyValuePair<int, float>;
  std::vector<KV> host(blocks * tile);
  for (int k = 0; k < blocks * tile; ++k)
    host[k] = {k % tile, static_cast<float>(rng() % 50)};  // few distinct values: many ties
  host[5].value = std::numeric_limits<float>::quiet_NaN();
  DeviceBuffer<KV> in(host), out(blocks);
  DeviceBuffer<int> dvalid(valid);
  block_reduce_kernel<KV, BT, IPT><<<blocks, BT>>>(in.get(), out.get(), dvalid.get(), ArgMin{});
  CUDA_ASSERT(cudaGetLastError());
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto got = out.download();
  for (int b = 0; b < blocks; ++b) {
    KV best = host[b * tile];
    for (int k = 1; k < valid[b]; ++k) best = ArgMin{}(best, host[b * tile + k]);
    EXPECT_EQ(got[b].key, best.key) << "valid " << valid[b];
    EXPECT_TRUE(test::same_bits(got[b].value, best.value)) << "valid " << valid[b];
  }

  std::vector<float> fhost(blocks * tile);
  for (auto& x : fhost) x = static_cast<float>(static_cast<int>(rng() % 20001) - 10000) / 7.f;
  DeviceBuffer<float> fin(fhost), fout(blocks);
  block_reduce_kernel<float, BT, IPT><<<blocks, BT>>>(fin.get(), fout.get(), dvalid.get(), Max{});
  CUDA_ASSERT(cudaGetLastError());
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto fgot = fout.download();
  for (int b = 0; b < blocks; ++b) {
    const float expect = reference::reduce(fhost.data() + b * tile + 1, valid[b] - 1, Max{},
                                           fhost[b * tile]);
    EXPECT_EQ(fgot[b], expect) << "valid " << valid[b];
  }
}

}  // namespace
