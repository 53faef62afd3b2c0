// The collective steps of knn/communicator.hpp, and the exchange of label texts between ranks.
#include <cstdint>
#include <cstring>
#include <set>
#include <string>

#include "distributed/gather.hpp"
#include "knn/error.hpp"

namespace knn {

void collective(const Communicator* comm, const std::function<void()>& step) {
  if (!distributed(comm)) {
    step();
    return;
  }
  // "" on success, else "!", the parameter's name, a NUL and the detail (both may be empty: another
  // rank names the cause).
  std::string state;
  try {
    step();
  } catch (const Error& e) {
    state = "!" + e.parameter_name() + '\0' + e.detail();
  }
  bool failed = false;
  for (const auto& s : comm->allgather(state)) {
    if (s.size() > 2) {
      const std::size_t nul = s.find('\0');
      const std::string name = s.substr(1, nul - 1), detail = s.substr(nul + 1);
      throw name.empty() ? Error(detail) : Error::parameter(name, detail);
    }
    failed = failed || !s.empty();
  }
  if (failed) throw Error("a rank failed without a message");
}

ShardRange shard_range(const Communicator& comm, std::size_t local_rows) {
  std::string mine(sizeof(std::uint64_t), '\0');
  const std::uint64_t n = local_rows;
  std::memcpy(mine.data(), &n, sizeof n);
  ShardRange r;
  const auto all = comm.allgather(mine);
  for (int i = 0; i < comm.size(); ++i) {
    std::uint64_t v = 0;
    std::memcpy(&v, all[static_cast<std::size_t>(i)].data(), sizeof v);
    if (i < comm.rank()) r.offset += v;
    r.total += v;
  }
  return r;
}

namespace {
// Texts as one byte string, each with its length in front, so any bytes may appear in them.
template <class Range>
std::string pack(const Range& texts) {
  std::string packed;
  for (const auto& t : texts) {
    const std::uint64_t n = t.size();
    packed.append(reinterpret_cast<const char*>(&n), sizeof n);
    packed += t;
  }
  return packed;
}

// Every rank's packed texts, unpacked in rank order.
std::vector<std::string> unpack_all(const Communicator& comm, const std::string& packed) {
  std::vector<std::string> all;
  for (const auto& p : comm.allgather(packed))
    for (std::size_t at = 0; at < p.size();) {
      std::uint64_t n = 0;
      std::memcpy(&n, p.data() + at, sizeof n);
      at += sizeof n;
      all.push_back(p.substr(at, n));
      at += n;
    }
  return all;
}
}  // namespace

std::vector<std::string> gather_labels(const Communicator& comm, const std::vector<std::string>& labels) {
  return unpack_all(comm, pack(labels));
}

std::vector<std::string> detail::all_labels(const Communicator& comm, const std::vector<std::string>& labels) {
  const std::set<std::string> mine(labels.begin(), labels.end());
  const auto every = unpack_all(comm, pack(mine));
  const std::set<std::string> all(every.begin(), every.end());
  return {all.begin(), all.end()};
}

}  // namespace knn
