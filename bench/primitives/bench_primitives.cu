// Times libknn's primitives and CUB's on the same buffers in the same run (CUDA events, warm-up,
// median of repetitions) and prints one table: time, throughput, and the ratio ours / CUB.
// CUB appears here only, as the baseline.
//
//   bench_primitives [--n N] [--sweep] [--select-rows R] [--select-cols C] [--select-k K]
//                    [--select-only] [--tune-select] [--kth-only] [--reps N] [--quick]
//
// --tune-select: after each radix select row, "tune: select k=K uU bB" rows time the
// threshold pass with U float4 loads per thread in flight and B resident blocks per SM.
// --select-only: only the radix select (and the memcpy figure); --select-k: one k instead of
// 10, 100 and 1,000 (with --select-only and --reps 1, a short run for a profiler).
// --kth-only: only the k-th value rows (radix_select_kth against CUB's segmented sort).
// --n: elements for scan, select, sorts (default 2^28). --sweep: also n = 2^16, 2^18, ... < N.
// --quick: fewer repetitions and a smaller radix-select matrix (for a smoke run).
//
// At the full size, rows named "tune: ..." time our exclusive scan and select_if at other tile
// policies against the same CUB figure, so that one run shows which shape to make the default:
// "128x24 p1200/600" is block threads x items per thread, then the look-back's pauses in ns
// (first/retry; "no pause": none), "bidx" numbers tiles by block index instead of a counter,
// "*" marks the current default. "tune: sort keys 384x20 b1 p100" is the onesweep pass of the
// u32 key sort ("sort pairs": f32 -> u32 pairs): threads x keys per thread, resident blocks per
// SM asked of the compiler, the look-back's pause in ns.
#include <cub/cub.cuh>

#include <knn/prim/device/device_radix_select.cuh>
#include <knn/prim/device/device_radix_sort.cuh>
#include <knn/prim/device/device_scan.cuh>
#include <knn/prim/device/device_segmented_sort.cuh>
#include <knn/prim/device/device_select.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)
#define OK(x)                                                                              \
  do {                                                                                     \
    knn::prim::Status s_ = (x);                                                            \
    if (!s_.ok()) {                                                                        \
      std::fprintf(stderr, "primitive failed: %s (%s) at %s:%d\n", s_.message, s_.where, __FILE__, __LINE__); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

namespace {

int g_reps = 15;

float median_ms(const std::function<void()>& f, int reps) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < reps; ++i) {
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

__global__ void fill_u32(unsigned* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    p[i] = x;
  }
}
// Uniform floats in [0, 1) from the same hash (distances are non-negative).
__global__ void fill_f32(float* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)(i * 2654435761ull) ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    x ^= (unsigned)(i >> 32) * 0x27d4eb2du;
    p[i] = (x >> 8) * (1.0f / 16777216.0f);
  }
}
__global__ void count_diff(const unsigned* a, const unsigned* b, size_t n, unsigned long long* d) {
  unsigned long long c = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) c += a[i] != b[i];
  if (c) atomicAdd(d, c);
}
struct IsOdd {
  __host__ __device__ bool operator()(unsigned x) const { return x & 1u; }
};
__global__ void odd_flags(const unsigned* in, unsigned char* flags, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) flags[i] = in[i] & 1u;
}

struct Temp {
  void* p = nullptr;
  size_t bytes = 0;
  void* get(size_t need) {
    if (need > bytes) {
      if (p) CK(cudaFree(p));
      CK(cudaMalloc(&p, need));
      bytes = need;
    }
    return p;
  }
  ~Temp() { if (p) cudaFree(p); }
};

unsigned long long* g_diff = nullptr;
// Number of 32-bit words that differ between ours and CUB's output (should be 0).
unsigned long long differ(const void* a, const void* b, size_t words) {
  CK(cudaMemset(g_diff, 0, 8));
  count_diff<<<1024, 256>>>((const unsigned*)a, (const unsigned*)b, words, g_diff);
  unsigned long long d = 0;
  CK(cudaMemcpy(&d, g_diff, 8, cudaMemcpyDeviceToHost));
  return d;
}

void header() {
  std::printf("%-34s %12s %10s %10s %8s %10s %10s  %s\n", "operation", "n", "ours ms", "CUB ms",
              "ours/CUB", "ours GB/s", "ours G/s", "check");
}
void row(const std::string& op, size_t n, float ours, float cub, double bytes, const char* check) {
  char cub_s[32] = "-", ratio_s[32] = "-";
  if (cub > 0) {
    std::snprintf(cub_s, sizeof cub_s, "%.3f", cub);
    std::snprintf(ratio_s, sizeof ratio_s, "%.2f", ours / cub);
  }
  std::printf("%-34s %12zu %10.3f %10s %8s %10.1f %10.2f  %s\n", op.c_str(), n, ours, cub_s, ratio_s,
              bytes / (ours * 1e-3) / 1e9, n / (ours * 1e-3) / 1e9, check);
  std::fflush(stdout);
}

// The policy's part of a "tune: ..." row name (see the top of this file).
template <typename Policy>
std::string policy_name() {
  std::string s = std::to_string(Policy::block_threads) + "x" + std::to_string(Policy::items_per_thread);
  if (Policy::lookback_first_pause_ns || Policy::lookback_retry_pause_ns)
    s += " p" + std::to_string(Policy::lookback_first_pause_ns) + "/" + std::to_string(Policy::lookback_retry_pause_ns);
  else s += " no pause";
  if (Policy::tiles_by_block_index) s += " bidx";
  return s;
}

// Our exclusive (or inclusive) sum at a given tile policy, against CUB's time (cub_ms) and
// output (cub_out).
template <typename Policy, bool Exclusive>
void tune_scan(const char* what, const unsigned* in, unsigned* out, const unsigned* cub_out, size_t n, float cub_ms,
               Temp& temp, bool is_default = false) {
  using namespace knn::prim;
  const detail::PointerLoad<unsigned, const unsigned*> load{in};
  const detail::PointerStore<unsigned*> store{out};
  size_t need = 0;
  OK((detail::scan_dispatch<unsigned, Exclusive, Policy>(nullptr, need, load, store, Sum{}, 0u, (std::int64_t)n, 0)));
  void* tp = temp.get(need);
  size_t bytes = need;
  const float ms = median_ms([&] {
    OK((detail::scan_dispatch<unsigned, Exclusive, Policy>(tp, bytes, load, store, Sum{}, 0u, (std::int64_t)n, 0)));
  }, g_reps);
  char check[64];
  std::snprintf(check, sizeof check, "%llu differ", differ(out, cub_out, n));
  row(std::string("tune: ") + what + " " + policy_name<Policy>() + (is_default ? " *" : ""), n, ms, cub_ms,
      2.0 * n * 4, check);
}

// Our u32 key sort (or f32 -> u32 pair sort, with values) at a given onesweep tuning, against
// CUB's time (cub_ms) and output (cub_out, cub_values).
template <typename Tuning, bool Pairs = false>
void tune_sort(const unsigned* in, unsigned* out, const unsigned* cub_out, size_t n, float cub_ms, Temp& temp,
               int reps, bool is_default = false, const unsigned* vin = nullptr, unsigned* vout = nullptr,
               const unsigned* cub_values = nullptr) {
  using namespace knn::prim;
  size_t need = 0;
  auto run = [&](void* tp, size_t& bytes) {
    if constexpr (Pairs)
      OK((detail::radix_sort_dispatch<float, unsigned, true, Tuning>(
          tp, bytes, reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out), vin, vout, (std::int64_t)n,
          false, 0, 32, 0)));
    else
      OK((detail::radix_sort_dispatch<unsigned, detail::NoValue, false, Tuning>(
          tp, bytes, in, out, nullptr, nullptr, (std::int64_t)n, false, 0, 32, 0)));
  };
  run(nullptr, need);
  void* tp = temp.get(need);
  size_t bytes = need;
  const float ms = median_ms([&] { run(tp, bytes); }, reps);
  char name[96], check[64];
  std::snprintf(name, sizeof name, "tune: sort %s %dx%d b%d p%d%s", Pairs ? "pairs" : "keys", Tuning::block_threads,
                Tuning::items_per_thread, Tuning::min_blocks, Tuning::pause_ns, is_default ? " *" : "");
  if (Pairs)
    std::snprintf(check, sizeof check, "%llu keys, %llu values differ", differ(out, cub_out, n),
                  differ(vout, cub_values, n));
  else
    std::snprintf(check, sizeof check, "%llu differ", differ(out, cub_out, n));
  row(name, n, ms, cub_ms, (Pairs ? 4.0 : 2.0) * n * 4, check);
}

// The sort's first kernel alone: the digit histograms of all four passes in one read.
void time_sort_histogram(const unsigned* in, size_t n, unsigned long long* counts) {
  using namespace knn::prim::detail;
  const long long blocks = std::min<long long>(ceil_div<long long>((long long)n, radix_bins * 16),
                                               OnesweepTuning<384, 20>::histogram_blocks);
  const float ms = median_ms([&] {
    radix_histogram_kernel<unsigned><<<(unsigned)blocks, radix_bins>>>(in, (long long)n, 0, 32, 4, 0u, counts);
  }, g_reps);
  CK(cudaGetLastError());
  row("sort histogram pass (4 digits)", n, ms, 0, 1.0 * n * 4, "");
}

// Our select_if (keep odd) at a given tile policy, against CUB's time and output.
template <typename Policy>
void tune_select(const unsigned* in, unsigned* out, const unsigned* cub_out, int cub_count, long long* d_num, size_t n,
                 float cub_ms, Temp& temp, bool is_default = false) {
  using namespace knn::prim;
  const detail::PredicateSelector<IsOdd> select{IsOdd{}};
  size_t need = 0;
  OK((detail::select_dispatch<false, Policy>(nullptr, need, in, out, (std::int64_t*)d_num, (std::int64_t)n, select, 0)));
  void* tp = temp.get(need);
  size_t bytes = need;
  const float ms = median_ms([&] {
    OK((detail::select_dispatch<false, Policy>(tp, bytes, in, out, (std::int64_t*)d_num, (std::int64_t)n, select, 0)));
  }, g_reps);
  long long count = 0;
  CK(cudaMemcpy(&count, d_num, 8, cudaMemcpyDeviceToHost));
  char check[64];
  std::snprintf(check, sizeof check, "count %s, %llu differ", count == cub_count ? "same" : "DIFFERENT",
                differ(out, cub_out, (size_t)cub_count));
  row("tune: select " + policy_name<Policy>() + (is_default ? " *" : ""), n, ms, cub_ms, 1.5 * n * 4, check);
}

void bench_size(size_t n, bool full) {
  using namespace knn::prim;
  unsigned *in, *out, *out2, *vin, *vout, *vout2;
  long long* d_num;
  int* d_num_cub;
  CK(cudaMalloc(&in, n * 4));
  CK(cudaMalloc(&out, n * 4));
  CK(cudaMalloc(&out2, n * 4));
  CK(cudaMalloc(&vin, n * 4));
  CK(cudaMalloc(&vout, n * 4));
  CK(cudaMalloc(&vout2, n * 4));
  CK(cudaMalloc(&d_num, 8));
  CK(cudaMalloc(&d_num_cub, 8));
  fill_u32<<<1024, 256>>>(in, n, 17);
  fill_u32<<<1024, 256>>>(vin, n, 99);
  CK(cudaDeviceSynchronize());
  Temp t_ours, t_cub;
  size_t need = 0;
  const int sort_reps = std::max(3, g_reps / 2);
  char check[64];

  const float memcpy_ms = median_ms([&] { CK(cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice)); }, g_reps);
  row("memcpy d2d (read+write)", n, memcpy_ms, 0, 2.0 * n * 4, "");

  // Exclusive scan u32.
  OK(exclusive_sum(nullptr, need, in, out, (std::int64_t)n));
  void* to = t_ours.get(need);
  size_t ob = need;
  const float scan_ours = median_ms([&] { OK(exclusive_sum(to, ob, in, out, (std::int64_t)n)); }, g_reps);
  CK(cub::DeviceScan::ExclusiveSum(nullptr, need, in, out2, (int)n));
  void* tc = t_cub.get(need);
  size_t cb = need;
  const float scan_cub = median_ms([&] { CK(cub::DeviceScan::ExclusiveSum(tc, cb, in, out2, (int)n)); }, g_reps);
  std::snprintf(check, sizeof check, "%llu differ", differ(out, out2, n));
  row("exclusive scan u32", n, scan_ours, scan_cub, 2.0 * n * 4, check);

  // Select-if, keep 50%.
  OK(select_if(nullptr, need, in, out, (std::int64_t*)d_num, (std::int64_t)n, IsOdd{}));
  to = t_ours.get(need);
  ob = need;
  const float sel_ours = median_ms([&] { OK(select_if(to, ob, in, out, (std::int64_t*)d_num, (std::int64_t)n, IsOdd{})); }, g_reps);
  CK(cub::DeviceSelect::If(nullptr, need, in, out2, d_num_cub, (int)n, IsOdd{}));
  tc = t_cub.get(need);
  cb = need;
  const float sel_cub = median_ms([&] { CK(cub::DeviceSelect::If(tc, cb, in, out2, d_num_cub, (int)n, IsOdd{})); }, g_reps);
  {
    long long a = 0;
    int b = 0;
    CK(cudaMemcpy(&a, d_num, 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&b, d_num_cub, 4, cudaMemcpyDeviceToHost));
    std::snprintf(check, sizeof check, "count %s, %llu differ", a == b ? "same" : "DIFFERENT", differ(out, out2, (size_t)b));
  }
  row("select_if 50%", n, sel_ours, sel_cub, 1.5 * n * 4, check);

  if (full) {
    // Inclusive scan and select_flagged, default policies.
    OK(inclusive_sum(nullptr, need, in, out, (std::int64_t)n));
    to = t_ours.get(need);
    ob = need;
    const float incl_ours = median_ms([&] { OK(inclusive_sum(to, ob, in, out, (std::int64_t)n)); }, g_reps);
    CK(cub::DeviceScan::InclusiveSum(nullptr, need, in, out2, (int)n));
    tc = t_cub.get(need);
    cb = need;
    const float incl_cub = median_ms([&] { CK(cub::DeviceScan::InclusiveSum(tc, cb, in, out2, (int)n)); }, g_reps);
    std::snprintf(check, sizeof check, "%llu differ", differ(out, out2, n));
    row("inclusive scan u32", n, incl_ours, incl_cub, 2.0 * n * 4, check);

    unsigned char* flags = nullptr;
    CK(cudaMalloc(&flags, n));
    odd_flags<<<1024, 256>>>(in, flags, n);
    CK(cudaGetLastError());
    OK(select_flagged(nullptr, need, in, flags, out, (std::int64_t*)d_num, (std::int64_t)n));
    to = t_ours.get(need);
    ob = need;
    const float fl_ours = median_ms([&] { OK(select_flagged(to, ob, in, flags, out, (std::int64_t*)d_num, (std::int64_t)n)); }, g_reps);
    CK(cub::DeviceSelect::Flagged(nullptr, need, in, flags, out2, d_num_cub, (int)n));
    tc = t_cub.get(need);
    cb = need;
    const float fl_cub = median_ms([&] { CK(cub::DeviceSelect::Flagged(tc, cb, in, flags, out2, d_num_cub, (int)n)); }, g_reps);
    {
      long long a = 0;
      int b = 0;
      CK(cudaMemcpy(&a, d_num, 8, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(&b, d_num_cub, 4, cudaMemcpyDeviceToHost));
      std::snprintf(check, sizeof check, "count %s, %llu differ", a == b ? "same" : "DIFFERENT", differ(out, out2, (size_t)b));
    }
    row("select_flagged 50% (u8 flags)", n, fl_ours, fl_cub, (1.5 * 4 + 1) * n, check);
    CK(cudaFree(flags));

    // Tile policies; "*" marks the default. The CUB outputs to check against: its exclusive
    // scan (recomputed into out2) and its select_if (into vout2).
    using detail::TilePolicy;
    CK(cub::DeviceScan::ExclusiveSum(nullptr, need, in, out2, (int)n));
    tc = t_cub.get(need);
    cb = need;
    CK(cub::DeviceScan::ExclusiveSum(tc, cb, in, out2, (int)n));
    tune_scan<detail::ScanPolicy<unsigned>, true>("excl", in, out, out2, n, scan_cub, t_ours, true);
    tune_scan<TilePolicy<128, 24>, true>("excl", in, out, out2, n, scan_cub, t_ours);
    tune_scan<TilePolicy<128, 24, 500, 250>, true>("excl", in, out, out2, n, scan_cub, t_ours);
    tune_scan<TilePolicy<128, 24, 1200, 600, true>, true>("excl", in, out, out2, n, scan_cub, t_ours);
    tune_scan<TilePolicy<128, 20, 1200, 600>, true>("excl", in, out, out2, n, scan_cub, t_ours);
    tune_scan<TilePolicy<256, 16, 1200, 600>, true>("excl", in, out, out2, n, scan_cub, t_ours);
    tune_scan<TilePolicy<256, 12, 1200, 600>, true>("excl", in, out, out2, n, scan_cub, t_ours);
    tune_scan<TilePolicy<256, 15>, true>("excl", in, out, out2, n, scan_cub, t_ours);

    int cub_count = 0;
    CK(cub::DeviceSelect::If(nullptr, need, in, vout2, d_num_cub, (int)n, IsOdd{}));
    tc = t_cub.get(need);
    cb = need;
    CK(cub::DeviceSelect::If(tc, cb, in, vout2, d_num_cub, (int)n, IsOdd{}));
    CK(cudaMemcpy(&cub_count, d_num_cub, 4, cudaMemcpyDeviceToHost));
    tune_select<detail::SelectPolicy<unsigned>>(in, out, vout2, cub_count, d_num, n, sel_cub, t_ours, true);
    tune_select<TilePolicy<384, 16>>(in, out, vout2, cub_count, d_num, n, sel_cub, t_ours);
    tune_select<TilePolicy<384, 16, 1100, 100, true>>(in, out, vout2, cub_count, d_num, n, sel_cub, t_ours);
    tune_select<TilePolicy<384, 8, 1100, 100>>(in, out, vout2, cub_count, d_num, n, sel_cub, t_ours);
    tune_select<TilePolicy<256, 16, 1100, 100>>(in, out, vout2, cub_count, d_num, n, sel_cub, t_ours);
    tune_select<TilePolicy<128, 24, 1100, 100>>(in, out, vout2, cub_count, d_num, n, sel_cub, t_ours);
  }

  // Radix sort keys u32.
  OK(radix_sort_keys(nullptr, need, in, out, (std::int64_t)n));
  to = t_ours.get(need);
  ob = need;
  const float sk_ours = median_ms([&] { OK(radix_sort_keys(to, ob, (const unsigned*)in, out, (std::int64_t)n)); }, sort_reps);
  CK(cub::DeviceRadixSort::SortKeys(nullptr, need, in, out2, (int)n));
  tc = t_cub.get(need);
  cb = need;
  const float sk_cub = median_ms([&] { CK(cub::DeviceRadixSort::SortKeys(tc, cb, in, out2, (int)n)); }, sort_reps);
  std::snprintf(check, sizeof check, "%llu differ", differ(out, out2, n));
  row("radix sort keys u32", n, sk_ours, sk_cub, 2.0 * n * 4, check);
  if (full) {
    using namespace knn::prim::detail;
    tune_sort<RadixSortPolicy<unsigned>>(in, out, out2, n, sk_cub, t_ours, sort_reps, true);
    tune_sort<OnesweepTuning<384, 16, 2, 0>>(in, out, out2, n, sk_cub, t_ours, sort_reps);
    tune_sort<OnesweepTuning<384, 22, 2, 0>>(in, out, out2, n, sk_cub, t_ours, sort_reps);
    tune_sort<OnesweepTuning<256, 24, 2, 0>>(in, out, out2, n, sk_cub, t_ours, sort_reps);
    tune_sort<OnesweepTuning<384, 20, 2, 100>>(in, out, out2, n, sk_cub, t_ours, sort_reps);
    unsigned long long* counts = nullptr;
    CK(cudaMalloc(&counts, 4 * 256 * sizeof(unsigned long long)));
    time_sort_histogram(in, n, counts);
    CK(cudaFree(counts));
  }

  // Radix sort pairs f32 -> u32 (floats in [0, 1)).
  float* fkeys = nullptr;
  float* fout = nullptr;
  CK(cudaMalloc(&fkeys, n * 4));
  CK(cudaMalloc(&fout, n * 4));
  fill_f32<<<1024, 256>>>(fkeys, n, 5);
  OK(radix_sort_pairs(nullptr, need, (const float*)fkeys, reinterpret_cast<float*>(out), (const unsigned*)vin, vout, (std::int64_t)n));
  to = t_ours.get(need);
  ob = need;
  const float sp_ours = median_ms([&] {
    OK(radix_sort_pairs(to, ob, (const float*)fkeys, reinterpret_cast<float*>(out), (const unsigned*)vin, vout, (std::int64_t)n));
  }, sort_reps);
  CK(cub::DeviceRadixSort::SortPairs(nullptr, need, fkeys, fout, vin, vout2, (int)n));
  tc = t_cub.get(need);
  cb = need;
  const float sp_cub = median_ms([&] { CK(cub::DeviceRadixSort::SortPairs(tc, cb, fkeys, fout, vin, vout2, (int)n)); }, sort_reps);
  std::snprintf(check, sizeof check, "%llu keys, %llu values differ", differ(out, fout, n), differ(vout, vout2, n));
  row("radix sort pairs f32->u32", n, sp_ours, sp_cub, 4.0 * n * 4, check);
  if (full) {
    using namespace knn::prim::detail;
    const auto* fk = reinterpret_cast<const unsigned*>(fkeys);
    const auto* fo = reinterpret_cast<const unsigned*>(fout);
    tune_sort<RadixSortPolicy<float, unsigned, true>, true>(fk, out, fo, n, sp_cub, t_ours, sort_reps, true, vin, vout, vout2);
    tune_sort<OnesweepTuning<384, 22, 2, 0>, true>(fk, out, fo, n, sp_cub, t_ours, sort_reps, false, vin, vout, vout2);
  }

  if (full && n >= 10000ull * 1024) {
    // Segmented sort pairs, 10,000 segments of 1,024.
    const int segs = 10000, len = 1024;
    const size_t m = (size_t)segs * len;
    std::vector<int> offs(segs + 1);
    for (int i = 0; i <= segs; ++i) offs[i] = i * len;
    int* d_offs;
    CK(cudaMalloc(&d_offs, (segs + 1) * 4));
    CK(cudaMemcpy(d_offs, offs.data(), (segs + 1) * 4, cudaMemcpyHostToDevice));
    OK(segmented_sort_pairs(nullptr, need, (const float*)fkeys, reinterpret_cast<float*>(out), (const unsigned*)vin, vout,
                            (std::int64_t)m, segs, d_offs, d_offs + 1));
    to = t_ours.get(need);
    ob = need;
    const float ss_ours = median_ms([&] {
      OK(segmented_sort_pairs(to, ob, (const float*)fkeys, reinterpret_cast<float*>(out), (const unsigned*)vin, vout,
                              (std::int64_t)m, segs, d_offs, d_offs + 1));
    }, sort_reps);
    CK(cub::DeviceSegmentedSort::SortPairs(nullptr, need, fkeys, fout, vin, vout2, (int)m, segs, d_offs, d_offs + 1));
    tc = t_cub.get(need);
    cb = need;
    const float ss_cub = median_ms([&] {
      CK(cub::DeviceSegmentedSort::SortPairs(tc, cb, fkeys, fout, vin, vout2, (int)m, segs, d_offs, d_offs + 1));
    }, sort_reps);
    std::snprintf(check, sizeof check, "%llu keys differ", differ(out, fout, m));
    row("segmented sort pairs 10000x1024", m, ss_ours, ss_cub, 4.0 * m * 4, check);
    CK(cudaFree(d_offs));
  }
  CK(cudaFree(fkeys));
  CK(cudaFree(fout));
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(out2));
  CK(cudaFree(vin));
  CK(cudaFree(vout));
  CK(cudaFree(vout2));
  CK(cudaFree(d_num));
  CK(cudaFree(d_num_cub));
}

// Our radix select with another threshold-pass tuning; its output must equal the default's
// (ref_vals, ref_idx).
template <typename Tuning>
void tune_radix_select(const float* in, long long rows, long long cols, long long k, const float* ref_vals,
                       const int* ref_idx, Temp& t, float memcpy_gbps, bool is_default = false) {
  using namespace knn::prim;
  float* vals;
  int* idx;
  CK(cudaMalloc(&vals, rows * k * 4));
  CK(cudaMalloc(&idx, rows * k * 4));
  size_t need = 0;
  OK(detail::radix_select_dispatch<Tuning>(nullptr, need, in, rows, cols, k, vals, idx, false, 0));
  void* tp = t.get(need);
  size_t b = need;
  const float ms = median_ms([&] { OK(detail::radix_select_dispatch<Tuning>(tp, b, in, rows, cols, k, vals, idx, false, 0)); },
                            std::max(3, g_reps / 3));
  const size_t n = (size_t)rows * cols;
  char op[80], check[96];
  std::snprintf(op, sizeof op, "tune: select k=%lld u%d b%d%s", k, Tuning::unroll, Tuning::min_blocks,
                is_default ? " *" : "");
  std::snprintf(check, sizeof check, "%.0f%% of memcpy, %llu differ", 100.0 * (n * 4.0 / (ms * 1e-3) / 1e9) / memcpy_gbps,
                differ(vals, ref_vals, rows * k) + differ(idx, ref_idx, rows * k));
  row(op, n, ms, 0, n * 4.0, check);
  CK(cudaFree(vals));
  CK(cudaFree(idx));
}

void bench_select(long long rows, long long cols, float memcpy_gbps, long long only_k, bool tune) {
  using namespace knn::prim;
  const size_t n = (size_t)rows * cols;
  float* in;
  CK(cudaMalloc(&in, n * 4));
  fill_f32<<<4096, 256>>>(in, n, 11);
  Temp t;
  const std::vector<long long> ks = only_k > 0 ? std::vector<long long>{only_k} : std::vector<long long>{10, 100, 1000};
  for (long long k : ks) {
    if (k > cols) continue;
    float* vals;
    int* idx;
    CK(cudaMalloc(&vals, rows * k * 4));
    CK(cudaMalloc(&idx, rows * k * 4));
    size_t need = 0;
    OK(radix_select_k(nullptr, need, in, rows, cols, k, vals, idx));
    void* tp = t.get(need);
    size_t b = need;
    const float ms = median_ms([&] { OK(radix_select_k(tp, b, in, rows, cols, k, vals, idx)); }, std::max(3, g_reps / 3));
    // Spot check: the first row's k values are non-decreasing.
    std::vector<float> h(k);
    CK(cudaMemcpy(h.data(), vals, k * 4, cudaMemcpyDeviceToHost));
    const bool sorted = std::is_sorted(h.begin(), h.end());
    char op[64], check[96];
    std::snprintf(op, sizeof op, "radix select %lldx%lld k=%lld", rows, cols, k);
    const double gbps = n * 4.0 / (ms * 1e-3) / 1e9;
    std::snprintf(check, sizeof check, "%.0f%% of memcpy, row 0 %s", 100.0 * gbps / memcpy_gbps,
                  sorted ? "sorted" : "NOT SORTED");
    row(op, n, ms, 0, n * 4.0, check);
    if (tune) {
      using detail::ThresholdTuning;
      tune_radix_select<ThresholdTuning<>>(in, rows, cols, k, vals, idx, t, memcpy_gbps, true);
      tune_radix_select<ThresholdTuning<8, 4>>(in, rows, cols, k, vals, idx, t, memcpy_gbps);
      tune_radix_select<ThresholdTuning<4, 6>>(in, rows, cols, k, vals, idx, t, memcpy_gbps);
      tune_radix_select<ThresholdTuning<2, 8>>(in, rows, cols, k, vals, idx, t, memcpy_gbps);
    }
    CK(cudaFree(vals));
    CK(cudaFree(idx));
  }
  CK(cudaFree(in));
}

// Row r's element k-1 of a row-sorted matrix.
__global__ void take_column(const float* sorted, long long rows, long long cols, long long k, float* out) {
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r < rows) out[r] = sorted[r * cols + k - 1];
}

// Our k-th value per row (radix_select_kth) against what CUB offers for it: a segmented radix
// sort of the rows, then element k-1 of each. Both must give the same values. 1,024 rows take a
// block a row; 16 rows are split into chunks.
void bench_kth(float memcpy_gbps) {
  using namespace knn::prim;
  const long long shapes[][2] = {{1024, 1 << 16}, {16, 1 << 22}};
  for (const auto& sh : shapes) {
    const long long rows = sh[0], cols = sh[1];
    const size_t n = (size_t)rows * cols;
    float *in, *sorted, *ours, *theirs;
    int* offsets;
    CK(cudaMalloc(&in, n * 4));
    CK(cudaMalloc(&sorted, n * 4));
    CK(cudaMalloc(&ours, rows * 4));
    CK(cudaMalloc(&theirs, rows * 4));
    CK(cudaMalloc(&offsets, (rows + 1) * 4));
    fill_f32<<<4096, 256>>>(in, n, 17);
    std::vector<int> h_off(rows + 1);
    for (long long r = 0; r <= rows; ++r) h_off[r] = (int)(r * cols);
    CK(cudaMemcpy(offsets, h_off.data(), (rows + 1) * 4, cudaMemcpyHostToDevice));
    Temp t, tc;
    size_t cub_bytes = 0;
    CK(cub::DeviceSegmentedRadixSort::SortKeys(nullptr, cub_bytes, in, sorted, (int)n, (int)rows, offsets, offsets + 1));
    void* cub_temp = tc.get(cub_bytes);
    const float cub_ms = median_ms([&] {
      CK(cub::DeviceSegmentedRadixSort::SortKeys(cub_temp, cub_bytes, in, sorted, (int)n, (int)rows, offsets, offsets + 1));
    }, std::max(3, g_reps / 3));
    for (long long k : {10ll, 1000ll, cols / 2}) {
      take_column<<<(unsigned)((rows + 255) / 256), 256>>>(sorted, rows, cols, k, theirs);
      CK(cudaGetLastError());
      size_t need = 0;
      OK(radix_select_kth(nullptr, need, in, rows, cols, k, ours));
      void* tp = t.get(need);
      size_t b = need;
      CK(cudaMemset(ours, 0xAB, rows * 4));
      const float ms = median_ms([&] { OK(radix_select_kth(tp, b, in, rows, cols, k, ours)); }, std::max(3, g_reps / 3));
      char op[64], check[96];
      std::snprintf(op, sizeof op, "radix kth %lldx%lld k=%lld", rows, cols, k);
      std::snprintf(check, sizeof check, "vs CUB segmented sort; %.0f%% of memcpy, %llu differ",
                    100.0 * (n * 4.0 / (ms * 1e-3) / 1e9) / memcpy_gbps, differ(ours, theirs, rows));
      row(op, n, ms, cub_ms, n * 4.0, check);
    }
    CK(cudaFree(in));
    CK(cudaFree(sorted));
    CK(cudaFree(ours));
    CK(cudaFree(theirs));
    CK(cudaFree(offsets));
  }
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = size_t(1) << 28;
  bool sweep = false;
  long long rows = 1024, cols = 1 << 20, select_k = 0;
  bool select_only = false, tune_select = false, kth_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--n" && i + 1 < argc) n = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--sweep") sweep = true;
    else if (a == "--select-rows" && i + 1 < argc) rows = std::strtoll(argv[++i], nullptr, 10);
    else if (a == "--select-cols" && i + 1 < argc) cols = std::strtoll(argv[++i], nullptr, 10);
    else if (a == "--quick") { g_reps = 5; rows = 64; }
    else if (a == "--select-only") select_only = true;
    else if (a == "--kth-only") kth_only = true;
    else if (a == "--tune-select") tune_select = true;
    else if (a == "--select-k" && i + 1 < argc) select_k = std::strtoll(argv[++i], nullptr, 10);
    else if (a == "--reps" && i + 1 < argc) g_reps = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--n N] [--sweep] [--select-rows R] [--select-cols C] [--select-k K] [--select-only]"
                   " [--tune-select] [--kth-only] [--reps N] [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (n == 0 || n > (size_t(1) << 31) - 1) {
    std::fprintf(stderr, "--n must be in [1, 2^31 - 1] (CUB's int counts)\n");
    return 2;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, SMs %d, L2 %d MB; median of %d runs (sorts %d) after 3 warm-ups\n", prop.name,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, g_reps, std::max(3, g_reps / 2));
  CK(cudaMalloc(&g_diff, 8));
  header();
  if (!select_only && !kth_only) bench_size(n, true);
  // memcpy bandwidth for the select percentage, at the select matrix's size class.
  float memcpy_gbps;
  {
    unsigned *a, *b;
    CK(cudaMalloc(&a, n * 4));
    CK(cudaMalloc(&b, n * 4));
    const float ms = median_ms([&] { CK(cudaMemcpyAsync(b, a, n * 4, cudaMemcpyDeviceToDevice)); }, g_reps);
    memcpy_gbps = 2.0f * n * 4 / (ms * 1e-3f) / 1e9f;
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  if (!kth_only) bench_select(rows, cols, memcpy_gbps, select_k, tune_select);
  if (!select_only) bench_kth(memcpy_gbps);
  if (sweep) {
    std::printf("\nsweep\n");
    header();
    for (size_t m = size_t(1) << 16; m < n; m <<= 2) bench_size(m, false);
  }
  CK(cudaFree(g_diff));
  std::printf("done\n");
  return 0;
}
