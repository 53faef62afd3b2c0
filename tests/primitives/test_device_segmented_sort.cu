// Segmented radix sort against per-segment std::stable_sort: segment lengths around the warp,
// the block and the shared-memory limit (4096), long segments, empty segments and gaps.
#include <knn/prim/device/device_segmented_sort.cuh>

#include "radix_sort_cases.cuh"

namespace {
using namespace knn::prim;
using knn::prim::test::DeviceBuffer;
using knn::prim::test::Shape;
using knn::prim::test::TempStorage;

struct Layout {
  std::vector<std::int64_t> begins, ends;
  std::int64_t num_items;
};

// Segments of the given lengths, with a gap of uncovered items between some of them.
Layout make_layout(const std::vector<std::int64_t>& lengths, std::mt19937_64& rng) {
  Layout l;
  std::int64_t at = 0;
  for (auto len : lengths) {
    if (rng() % 4 == 0) at += static_cast<std::int64_t>(rng() % 7);  // gap
    l.begins.push_back(at);
    l.ends.push_back(at + len);
    at += len;
  }
  l.num_items = at + 3;
  return l;
}

std::vector<std::int64_t> edge_lengths() {
  constexpr std::int64_t tile = detail::SegmentedSortPolicy::tile_items;
  return {0, 1, 2, 31, 32, 33, 255, 256, 257, 1000, 1023, 1024, 1025, tile - 1, tile, tile + 1,
          2 * tile + 123, 5 * tile, 0, 7};
}

template <typename K, typename V>
void check(const Layout& l, const std::vector<K>& keys, bool descending, bool with_values,
           int begin_bit = 0, int end_bit = 8 * sizeof(K)) {
  const std::int64_t n = l.num_items;
  const std::int64_t segs = static_cast<std::int64_t>(l.begins.size());
  std::vector<V> values(n);
  for (std::int64_t i = 0; i < n; ++i) values[i] = static_cast<V>(i);
  DeviceBuffer<K> kin(keys), kout(n);
  DeviceBuffer<V> vin(values), vout(n);
  DeviceBuffer<std::int64_t> db(l.begins), de(l.ends);
  auto run = [&](void* t, std::size_t& b) {
    if (with_values)
      return descending ? segmented_sort_pairs_descending(t, b, kin.get(), kout.get(), vin.get(), vout.get(), n, segs, db.get(), de.get(), begin_bit, end_bit)
                        : segmented_sort_pairs(t, b, kin.get(), kout.get(), vin.get(), vout.get(), n, segs, db.get(), de.get(), begin_bit, end_bit);
    return descending ? segmented_sort_keys_descending(t, b, kin.get(), kout.get(), n, segs, db.get(), de.get(), begin_bit, end_bit)
                      : segmented_sort_keys(t, b, kin.get(), kout.get(), n, segs, db.get(), de.get(), begin_bit, end_bit);
  };
  std::size_t bytes = 0;
  PRIM_ASSERT(run(nullptr, bytes));
  TempStorage temp(bytes);
  PRIM_ASSERT(run(temp.get(), temp.bytes()));
  CUDA_ASSERT(cudaDeviceSynchronize());
  const auto gk = kout.download();
  const auto gv = vout.download();
  std::vector<bool> covered(n, false);
  for (std::int64_t s = 0; s < segs; ++s) {
    const std::vector<K> seg(keys.begin() + l.begins[s], keys.begin() + l.ends[s]);
    const auto order = reference::sort_order(seg, descending, begin_bit, end_bit);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const std::int64_t at = l.begins[s] + static_cast<std::int64_t>(i);
      covered[at] = true;
      ASSERT_TRUE(test::same_bits(gk[at], seg[order[i]])) << "segment " << s << " key " << i;
      if (with_values) ASSERT_EQ(gv[at], static_cast<V>(l.begins[s] + order[i])) << "segment " << s << " value " << i;
    }
  }
  for (std::int64_t i = 0; i < n; ++i)
    if (!covered[i]) ASSERT_EQ(reinterpret_cast<const unsigned char*>(&gk[i])[0], test::poison_byte) << "uncovered " << i;
}

TEST(DeviceSegmentedSort, PairsF32ToU32EdgeLengths) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  const Layout l = make_layout(edge_lengths(), rng);
  for (Shape shape : test::all_shapes()) {
    SCOPED_TRACE(test::shape_name(shape));
    const auto keys = test::make_keys<float>(l.num_items, shape, rng);
    check<float, std::uint32_t>(l, keys, false, true);
    check<float, std::uint32_t>(l, keys, true, true);
  }
}

TEST(DeviceSegmentedSort, ManySmallSegments) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> lengths(test::quick_run() ? 300 : 3000);
  for (auto& len : lengths) len = static_cast<std::int64_t>(rng() % 300);
  const Layout l = make_layout(lengths, rng);
  const auto keys = test::make_keys<float>(l.num_items, Shape::few_distinct, rng);
  check<float, std::uint32_t>(l, keys, false, true);
  const auto ukeys = test::make_keys<std::uint32_t>(l.num_items, Shape::random, rng);
  check<std::uint32_t, std::uint32_t>(l, ukeys, false, false);
  check<std::uint32_t, std::uint32_t>(l, ukeys, true, false, 5, 27);
}

TEST(DeviceSegmentedSort, KeysI64AndF64EdgeLengths) {
  KNN_PRIM_REQUIRE_GPU();
  KNN_PRIM_SEED(seed);
  std::mt19937_64 rng(seed);
  const Layout l = make_layout(edge_lengths(), rng);
  for (Shape shape : {Shape::random, Shape::all_equal, Shape::reversed, Shape::special}) {
    SCOPED_TRACE(test::shape_name(shape));
    const auto ikeys = test::make_keys<std::int64_t>(l.num_items, shape, rng);
    check<std::int64_t, std::uint32_t>(l, ikeys, false, false);
    check<std::int64_t, std::uint32_t>(l, ikeys, true, false);
    const auto dkeys = test::make_keys<double>(l.num_items, shape, rng);
    check<double, std::uint32_t>(l, dkeys, false, false);
    check<double, std::uint32_t>(l, dkeys, true, false, 0, 0);  // empty bit range: a copy
  }
}

}  // namespace
