#include "collectives/collectives.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <thread>

#include "collectives/placement.hpp"
#include "engine/copy.hpp"
#include "engine/errors.hpp"
#include "tuning/crossover.hpp"

namespace fabcoll {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

/// The FABCOLL_<COLLECTIVE>_ALGORITHM / _PACKET overrides as read by refresh_overrides(): an
/// immutable snapshot, so that a call costs no getenv (measured: getenv and its string
/// compares were 8% of an 8-byte all-reduce at p = 2). Snapshots are kept for the life of the
/// process (one per distinct setting seen), so a plan may name its snapshot by address.
struct Overrides {
  std::array<std::array<std::string, 2>, static_cast<std::size_t>(Collective::count_)> value;
  bool operator==(const Overrides&) const = default;
};

std::mutex g_overrides_mutex;
std::vector<std::unique_ptr<const Overrides>> g_overrides_seen;
std::atomic<const Overrides*> g_overrides{nullptr};

const Overrides& overrides() {
  const Overrides* o = g_overrides.load(std::memory_order_acquire);
  if (o == nullptr) {
    refresh_overrides();
    o = g_overrides.load(std::memory_order_acquire);
  }
  return *o;
}

/// FABCOLL_<COLLECTIVE>_<what> from the current snapshot; nullptr when unset or empty.
const char* env_for(Collective c, const char* what) {
  const auto& pair = overrides().value[static_cast<std::size_t>(c)];
  const std::string& v = std::strcmp(what, "PACKET") == 0 ? pair[1] : pair[0];
  return v.empty() ? nullptr : v.c_str();
}

bool is_pow2(int p) { return p > 0 && (p & (p - 1)) == 0; }

/// Why alg cannot serve args on comm, or nullptr if it can.
const char* excluded(const Comm& comm, const Algorithm& alg, const CollArgs& args) {
  const bool reduction = args.coll == Collective::reduce || args.coll == Collective::allreduce ||
                         args.coll == Collective::scan || args.coll == Collective::exscan ||
                         args.coll == Collective::reduce_scatter_block;
  if (reduction && alg.needs_commutative && !args.op.commutative())
    return "needs a commutative operator";
  if (alg.needs_power_of_two && !is_pow2(comm.size())) return "needs p to be a power of two";
  return nullptr;
}

CostQuery query_for(const Comm& comm, const CollArgs& args) {
  CostQuery q;
  // Every rank must pick the same algorithm, so n must be a size all ranks agree on: for
  // all-gatherv the mean block (every rank knows all counts); for all-to-allv no such size is
  // known locally, so the choice depends on p alone.
  q.n = static_cast<double>(args.bytes());
  if (args.coll == Collective::allgatherv && args.counts != nullptr) {
    double total = 0;
    for (int i = 0; i < comm.size(); ++i) total += static_cast<double>(args.counts[i]);
    q.n = total * static_cast<double>(args.elem_size) / comm.size();
  } else if (args.coll == Collective::alltoallv) {
    q.n = 0;
  }
  q.p = comm.size();
  q.m = comm.model();
  return q;
}

}  // namespace

void refresh_overrides() {
  auto fresh = std::make_unique<Overrides>();
  for (std::size_t i = 0; i < fresh->value.size(); ++i) {
    const std::string base = "FABCOLL_" + upper(collective_name(static_cast<Collective>(i)));
    for (std::size_t j = 0; j < 2; ++j) {
      const char* v = std::getenv((base + (j == 0 ? "_ALGORITHM" : "_PACKET")).c_str());
      if (v != nullptr) fresh->value[i][j] = v;
    }
  }
  const std::lock_guard lock(g_overrides_mutex);
  for (const auto& seen : g_overrides_seen) {
    if (*seen == *fresh) {
      g_overrides.store(seen.get(), std::memory_order_release);
      return;
    }
  }
  g_overrides_seen.push_back(std::move(fresh));
  g_overrides.store(g_overrides_seen.back().get(), std::memory_order_release);
}

SegmentChoice choose_segment(const Comm& comm, const Algorithm& alg, const CollArgs& args) {
  const LinkModel& link = comm.link();
  const CostQuery q = query_for(comm, args);
  const std::size_t max_k = std::max<std::size_t>(1, args.count);
  // Packets of whole elements, the largest ⌈count/k⌉ of them: the segment that holds that one
  // (the transport sends it by its size; segment_k keeps the model's below-the-break counts an
  // element clear of the break, tuning::kWidestElement).
  const auto forced = [&](std::size_t k) {
    const auto largest = static_cast<double>((args.count + k - 1) / k * args.elem_size);
    const bool up = link.has_break() &&
                    std::max(largest, std::ceil(q.n / static_cast<double>(k))) >= link.break_bytes;
    return SegmentChoice{k, up, up ? link.above : link.below};
  };
  if (alg.optimal_k != nullptr) {
    if (args.packets > 0) return forced(std::min(args.packets, max_k));
    if (const char* s = env_for(args.coll, "PACKET"); s != nullptr && *s != '\0') {
      const double packet_bytes = std::strtod(s, nullptr);
      if (packet_bytes > 0) {
        const auto k = static_cast<std::size_t>(std::ceil(q.n / packet_bytes));
        return forced(std::clamp<std::size_t>(k, 1, max_k));
      }
    }
  }
  // As the tables and the validation cost it, with or without a break: segment_k mixes in β
  // and γ beyond the cache and α of small messages (a link without a break had taken the model
  // as it was, and ran another choice than calibrate reported wherever one was set). Without a
  // break or any of those it is the link's model at selector_k's packet count.
  const tuning::PacketChoice pc =
      tuning::segment_k(alg, q.n, q.p, link.below, link.above, link.break_bytes);
  if (alg.optimal_k == nullptr) return {1, pc.above, pc.m, pc.alpha_share};
  const auto k = std::clamp<std::size_t>(static_cast<std::size_t>(std::llround(pc.k)), 1, max_k);
  // Elements wider than a byte may cap k below segment_k's (which counts bytes).
  return static_cast<double>(k) == pc.k ? SegmentChoice{k, pc.above, pc.m} : forced(k);
}

std::size_t packet_count(const Comm& comm, const Algorithm& alg, const CollArgs& args) {
  return choose_segment(comm, alg, args).packets;
}

double predicted_cost(const Comm& comm, const Algorithm& alg, const CollArgs& args) {
  const SegmentChoice sc = choose_segment(comm, alg, args);
  CostQuery q = query_for(comm, args);
  q.m = sc.m;
  q.k = static_cast<double>(sc.packets);
  return alg.predict(q);
}

const Algorithm& select_algorithm(const Comm& comm, const CollArgs& args) {
  if (const char* name = env_for(args.coll, "ALGORITHM"); name != nullptr && *name != '\0') {
    const Algorithm* alg = find_algorithm(args.coll, name);
    if (alg == nullptr) {
      std::string valid;
      for (const Algorithm* a : all_algorithms())
        if (a->coll == args.coll) valid += (valid.empty() ? "" : ", ") + std::string(a->name);
      raise(Errc::invalid_argument, "FABCOLL_" + upper(collective_name(args.coll)) +
                                        "_ALGORITHM=" + name + " is not an algorithm of " +
                                        collective_name(args.coll) + "; valid: " + valid);
    }
    if (const char* why = excluded(comm, *alg, args)) {
      raise(Errc::invalid_argument,
            std::string("algorithm ") + name + " cannot run this call: it " + why);
    }
    return *alg;
  }
  const Algorithm* best = nullptr;
  double best_cost = std::numeric_limits<double>::infinity();
  for (const Algorithm* a : all_algorithms()) {
    if (a->coll != args.coll || excluded(comm, *a, args) != nullptr) continue;
    const double c = predicted_cost(comm, *a, args);
    // Ties up to rounding go to the algorithm registered first, as in the tables
    // (tuning::fastest): the hybrid whose strategy is recursive doubling costs what recursive
    // doubling does, a rounding error apart, and runs more instructions.
    if (best == nullptr || c < best_cost * (1 - tuning::kTieTolerance)) {
      best = a;
      best_cost = c;
    }
  }
  if (best == nullptr) {
    raise(Errc::unsupported, std::string("no registered algorithm can run ") +
                                 collective_name(args.coll) +
                                 " here (p = " + std::to_string(comm.size()) + ")");
  }
  return *best;
}

namespace {

/// The plan of a call: the selected algorithm and its packet count, cached per communicator
/// by (collective, count, element size, commutativity, requested k, overrides), so repeated
/// calls cost a lookup instead of evaluating every cost formula (measured: 460 ns per selection
/// at p = 2 on this machine). The v-collectives' choice depends on their count arrays: not
/// cached.
/// Sets args.packets for alg (pipelined algorithms only) and args.strategy (LAWN 29's hybrids,
/// unless the caller forced one: the strategy it was costed with, Algorithm::strategy, which
/// Theorem 1 under the costed model need not give back where the shares' fixed point has not
/// settled); returns whether alg runs with the link's upper segment.
SegmentChoice apply_segment(const Comm& comm, const Algorithm& alg, CollArgs& args) {
  const SegmentChoice sc = choose_segment(comm, alg, args);
  if (alg.optimal_k != nullptr) args.packets = sc.packets;
  if (alg.strategy != nullptr && args.strategy < 0) {
    CostQuery q = query_for(comm, args);
    q.m = sc.m;
    q.k = static_cast<double>(args.packets);
    args.strategy = static_cast<long>(alg.strategy(q));
  }
  return sc;
}

/// The model alg runs with: its segment's (or the mixed one), costed (Algorithm::costed: β
/// raised by its written share) as the selector costed it.
CostModel run_model(const Comm& comm, const Algorithm& alg, const CollArgs& args,
                    const SegmentChoice& sc) {
  CostQuery q = query_for(comm, args);
  q.m = sc.m;
  q.k = static_cast<double>(args.packets);
  return alg.costed(q);
}

/// model: the model alg runs with. It points into comm's plan cache (valid until the next
/// call is planned on comm; a blocking call uses it in place) or, for the uncached
/// v-collectives, at `fresh`.
const Algorithm& planned(Comm& comm, CollArgs& args, bool& above, const CostModel*& model,
                         CostModel& fresh) {
  if (args.coll == Collective::allgatherv || args.coll == Collective::alltoallv) {
    const Algorithm& alg = select_algorithm(comm, args);
    const SegmentChoice sc = apply_segment(comm, alg, args);
    above = sc.above;
    fresh = run_model(comm, alg, args, sc);
    model = &fresh;
    return alg;
  }
  Comm::Plan key;
  key.coll = static_cast<int>(args.coll);
  key.count = args.count;
  key.elem_size = args.elem_size;
  key.commutative = args.op.commutative();
  key.requested_packets = args.packets;
  key.overrides = &overrides();
  if (const Comm::Plan* hit = comm.find_plan(key)) {
    args.packets = hit->packets;
    if (args.strategy < 0) args.strategy = hit->strategy;
    above = hit->above_break;
    model = &hit->model;
    return *static_cast<const Algorithm*>(hit->algorithm);
  }
  const Algorithm& alg = select_algorithm(comm, args);
  const SegmentChoice sc = apply_segment(comm, alg, args);
  above = sc.above;
  key.algorithm = &alg;
  key.packets = args.packets;
  key.strategy = args.strategy;
  key.above_break = above;
  key.model = run_model(comm, alg, args, sc);
  model = &comm.store_plan(std::move(key)).model;
  return alg;
}

/// An all-reduce's input goes into recvbuf (the contract of CollArgs) unless alg reads it
/// from sendbuf itself.
void with_input(const Algorithm& alg, CollArgs& args) {
  if (args.coll != Collective::allreduce || args.sendbuf == args.recvbuf || alg.separate_input)
    return;
  if (args.bytes() > 0) copy_bytes(args.recvbuf, args.sendbuf, args.bytes());
  args.sendbuf = args.recvbuf;
}

}  // namespace

Task<> run_collective(Comm& comm, CollArgs args, const Algorithm* alg) {
  if (comm.broken()) raise(Errc::broken, comm.broken_reason());
  bool above = false;
  // The algorithm runs with the model it was costed with (its own choices, e.g. LAWN 29's
  // strategy or the grid's dimensions, follow the same segment and the same written share).
  CostModel model;
  if (alg == nullptr) {
    const CostModel* plan_model = nullptr;
    alg = &planned(comm, args, above, plan_model, model);
    model = *plan_model;  // a copy: this task may outlive the plan cache's entry
  } else {
    const SegmentChoice sc = apply_segment(comm, *alg, args);
    above = sc.above;
    model = run_model(comm, *alg, args, sc);
  }
  with_input(*alg, args);
  Channel ch(comm, comm.next_sequence(), &model);
  Task<> body = alg->run(ch, args);
  co_await body;
}

namespace {

bool overlaps(const void* a, std::size_t na, const void* b, std::size_t nb) {
  if (a == nullptr || b == nullptr || na == 0 || nb == 0) return false;
  const auto pa = reinterpret_cast<std::uintptr_t>(a);
  const auto pb = reinterpret_cast<std::uintptr_t>(b);
  return pa < pb + nb && pb < pa + na;
}

void need_buffer(const void* p, std::size_t bytes, const char* what) {
  if (bytes > 0 && p == nullptr)
    raise(Errc::invalid_argument, std::string(what) + " is null but the count is not zero");
}

void need_root(const Comm& comm, int root) {
  if (root < 0 || root >= comm.size())
    raise(Errc::invalid_root,
          "root " + std::to_string(root) + " is outside 0.." + std::to_string(comm.size() - 1));
}

std::size_t checked_mul(std::size_t a, std::size_t b) {
  std::size_t product = 0;  // no division: this is on every call's path
  if (__builtin_mul_overflow(a, b, &product))
    raise(Errc::invalid_count, "count overflows the address space");
  return product;
}

const void* const kInPlace = reinterpret_cast<const void*>(1);

}  // namespace

void validate(const Comm& comm, CollArgs& a) {
  if (comm.broken()) raise(Errc::broken, comm.broken_reason());
  const int p = comm.size();
  const std::size_t n = checked_mul(a.count, a.elem_size);
  const bool in_place = a.sendbuf == kInPlace;
  switch (a.coll) {
    case Collective::barrier:
      return;
    case Collective::bcast:
      need_root(comm, a.root);
      need_buffer(a.recvbuf, n, "buffer");
      return;
    case Collective::reduce: {
      need_root(comm, a.root);
      const bool root = comm.rank() == a.root;
      if (in_place) {
        if (!root) raise(Errc::invalid_argument, "FC_IN_PLACE is only valid at the root of reduce");
        a.sendbuf = a.recvbuf;
      }
      need_buffer(a.sendbuf, n, "sendbuf");
      if (root) need_buffer(a.recvbuf, n, "recvbuf");
      if (root && !in_place && n > 0 &&
          (a.sendbuf == a.recvbuf || overlaps(a.sendbuf, n, a.recvbuf, n)))
        raise(Errc::invalid_argument, "sendbuf and recvbuf overlap (use FC_IN_PLACE)");
      return;
    }
    case Collective::allreduce:
      // The input stays in sendbuf: copied into recvbuf after selection unless the algorithm
      // reads it from sendbuf itself (Algorithm::separate_input, see with_input).
      need_buffer(a.recvbuf, n, "recvbuf");
      if (!in_place) {
        need_buffer(a.sendbuf, n, "sendbuf");
        if (n > 0 && (a.sendbuf == a.recvbuf || overlaps(a.sendbuf, n, a.recvbuf, n)))
          raise(Errc::invalid_argument, "sendbuf and recvbuf overlap (use FC_IN_PLACE)");
      } else {
        a.sendbuf = a.recvbuf;
      }
      return;
    case Collective::scan:
    case Collective::exscan:
      need_buffer(a.recvbuf, n, "recvbuf");
      if (!in_place) {
        need_buffer(a.sendbuf, n, "sendbuf");
        if (n > 0 && (a.sendbuf == a.recvbuf || overlaps(a.sendbuf, n, a.recvbuf, n)))
          raise(Errc::invalid_argument, "sendbuf and recvbuf overlap (use FC_IN_PLACE)");
        if (n > 0) copy_bytes(a.recvbuf, a.sendbuf, n);
      }
      a.sendbuf = a.recvbuf;
      return;
    case Collective::reduce_scatter_block: {
      const std::size_t total = checked_mul(n, static_cast<std::size_t>(p));
      need_buffer(a.recvbuf, n, "recvbuf");
      if (in_place) {
        a.sendbuf = a.recvbuf;  // recvbuf holds p blocks on entry, the result in block 0
        return;
      }
      need_buffer(a.sendbuf, total, "sendbuf");
      if (overlaps(a.sendbuf, total, a.recvbuf, n))
        raise(Errc::invalid_argument, "sendbuf and recvbuf overlap (use FC_IN_PLACE)");
      return;
    }
    case Collective::gather:
    case Collective::scatter: {
      need_root(comm, a.root);
      const bool root = comm.rank() == a.root;
      const std::size_t total = checked_mul(n, static_cast<std::size_t>(p));
      std::byte* own_block =
          root && a.coll == Collective::gather
              ? static_cast<std::byte*>(a.recvbuf) + n * static_cast<std::size_t>(comm.rank())
              : nullptr;
      if (a.coll == Collective::gather) {
        if (in_place) {
          if (!root) raise(Errc::invalid_argument, "FC_IN_PLACE is only valid at the root");
          need_buffer(a.recvbuf, total, "recvbuf");
          a.sendbuf = own_block;
          return;
        }
        need_buffer(a.sendbuf, n, "sendbuf");
        if (root) {
          need_buffer(a.recvbuf, total, "recvbuf");
          if (overlaps(a.sendbuf, n, a.recvbuf, total))
            raise(Errc::invalid_argument, "sendbuf and recvbuf overlap (use FC_IN_PLACE)");
        }
        return;
      }
      // scatter: FC_IN_PLACE as recvbuf at the root (MPI's form) keeps the root's block.
      if (a.recvbuf == const_cast<void*>(kInPlace)) {
        if (!root) raise(Errc::invalid_argument, "FC_IN_PLACE is only valid at the root");
        need_buffer(a.sendbuf, total, "sendbuf");
        a.recvbuf = const_cast<std::byte*>(static_cast<const std::byte*>(a.sendbuf)) +
                    n * static_cast<std::size_t>(comm.rank());
        return;
      }
      need_buffer(a.recvbuf, n, "recvbuf");
      if (root) {
        need_buffer(a.sendbuf, total, "sendbuf");
        if (overlaps(a.sendbuf, total, a.recvbuf, n))
          raise(Errc::invalid_argument, "sendbuf and recvbuf overlap (use FC_IN_PLACE)");
      }
      return;
    }
    case Collective::allgather: {
      const std::size_t total = checked_mul(n, static_cast<std::size_t>(p));
      need_buffer(a.recvbuf, total, "recvbuf");
      std::byte* own =
          static_cast<std::byte*>(a.recvbuf) + n * static_cast<std::size_t>(comm.rank());
      if (!in_place) {
        need_buffer(a.sendbuf, n, "sendbuf");
        if (overlaps(a.sendbuf, n, a.recvbuf, total))
          raise(Errc::invalid_argument, "sendbuf and recvbuf overlap (use FC_IN_PLACE)");
        if (n > 0) copy_bytes(own, a.sendbuf, n);
        return;  // sendbuf stays: algorithms may send the own block from it (see CollArgs)
      }
      a.sendbuf = own;
      return;
    }
    case Collective::allgatherv: {
      if (a.counts == nullptr || a.displs == nullptr)
        raise(Errc::invalid_argument, "recvcounts and displs must not be null");
      std::size_t extent = 0;
      for (int i = 0; i < p; ++i) {
        const std::size_t end = checked_mul(a.counts[i] + a.displs[i], a.elem_size);
        extent = std::max(extent, end);
      }
      const std::size_t mine = a.counts[comm.rank()] * a.elem_size;
      need_buffer(a.recvbuf, extent, "recvbuf");
      std::byte* own = static_cast<std::byte*>(a.recvbuf) + a.displs[comm.rank()] * a.elem_size;
      if (!in_place) {
        if (a.count != a.counts[comm.rank()])
          raise(Errc::invalid_count,
                "sendcount " + std::to_string(a.count) +
                    " differs from recvcounts[rank] = " + std::to_string(a.counts[comm.rank()]));
        need_buffer(a.sendbuf, mine, "sendbuf");
        if (overlaps(a.sendbuf, mine, a.recvbuf, extent))
          raise(Errc::invalid_argument, "sendbuf and recvbuf overlap (use FC_IN_PLACE)");
        if (mine > 0) std::memcpy(own, a.sendbuf, mine);
      } else {
        a.sendbuf = own;
      }
      // sendbuf stays apart when given: algorithms may send the own block from it (CollArgs).
      a.count = a.counts[comm.rank()];
      return;
    }
    case Collective::alltoall: {
      const std::size_t total = checked_mul(n, static_cast<std::size_t>(p));
      need_buffer(a.recvbuf, total, "recvbuf");
      if (in_place) raise(Errc::unsupported, "FC_IN_PLACE is not supported for alltoall");
      need_buffer(a.sendbuf, total, "sendbuf");
      if (overlaps(a.sendbuf, total, a.recvbuf, total))
        raise(Errc::invalid_argument, "sendbuf and recvbuf overlap");
      return;
    }
    case Collective::alltoallv: {
      if (a.scounts == nullptr || a.sdispls == nullptr || a.counts == nullptr ||
          a.displs == nullptr)
        raise(Errc::invalid_argument, "counts and displacements must not be null");
      if (in_place) raise(Errc::unsupported, "FC_IN_PLACE is not supported for alltoallv");
      std::size_t sext = 0;
      std::size_t rext = 0;
      for (int i = 0; i < p; ++i) {
        sext = std::max(sext, checked_mul(a.scounts[i] + a.sdispls[i], a.elem_size));
        rext = std::max(rext, checked_mul(a.counts[i] + a.displs[i], a.elem_size));
      }
      need_buffer(a.sendbuf, sext, "sendbuf");
      need_buffer(a.recvbuf, rext, "recvbuf");
      if (overlaps(a.sendbuf, sext, a.recvbuf, rext))
        raise(Errc::invalid_argument, "sendbuf and recvbuf overlap");
      return;
    }
    case Collective::count_:
      break;
  }
  raise(Errc::invalid_argument, "unknown collective");
}

Task<std::unique_ptr<Comm>> comm_split(Comm& comm, int color, int key) {
  const int p = comm.size();
  const auto np = static_cast<std::size_t>(p);
  // Every rank publishes (color, key) in its slot; a SUM all-reduce of the zeroed table
  // gives everyone the whole table. A MAX all-reduce agrees on a communicator id that is
  // free on every member (MPI's context-id agreement).
  std::vector<std::int64_t> table(2 * np, 0);
  table[2 * static_cast<std::size_t>(comm.rank())] = color;
  table[2 * static_cast<std::size_t>(comm.rank()) + 1] = key;
  CollArgs sum;
  sum.coll = Collective::allreduce;
  sum.recvbuf = table.data();
  sum.sendbuf = table.data();
  sum.count = table.size();
  sum.elem_size = sizeof(std::int64_t);
  sum.op = ReduceOp(FC_SUM, FC_INT64);
  Task<> exchange = run_collective(comm, sum);
  co_await exchange;

  std::uint32_t cid = comm.cids()->next;
  CollArgs max;
  max.coll = Collective::allreduce;
  max.recvbuf = &cid;
  max.sendbuf = &cid;
  max.count = 1;
  max.elem_size = sizeof cid;
  max.op = ReduceOp(FC_MAX, FC_UINT32);
  Task<> agree = run_collective(comm, max);
  co_await agree;
  comm.cids()->next = cid + 1;

  if (color == FC_UNDEFINED) co_return nullptr;
  struct Member {
    std::int64_t key;
    int rank;
  };
  std::vector<Member> members;
  for (int r = 0; r < p; ++r) {
    if (table[2 * static_cast<std::size_t>(r)] == color)
      members.push_back({table[2 * static_cast<std::size_t>(r) + 1], r});
  }
  std::stable_sort(members.begin(), members.end(),
                   [](const Member& a, const Member& b) { return a.key < b.key; });
  std::vector<int> world(members.size());
  int my_rank = -1;
  for (std::size_t i = 0; i < members.size(); ++i) {
    world[i] = comm.world_rank(members[i].rank);
    if (members[i].rank == comm.rank()) my_rank = static_cast<int>(i);
  }
  auto child = std::make_unique<Comm>(comm.transport(), comm.executor(), my_rank,
                                      static_cast<int>(members.size()), std::move(world), cid,
                                      comm.model(), comm.cids());
  // Both segments, as the parent selects with; its ranks' CPUs, where the parent's share some.
  LinkModel link = comm.link();
  if (const Placement* parent = link.below.placement; parent != nullptr && parent->size() == p) {
    std::vector<int> cpus;
    for (const Member& m : members)
      cpus.push_back(parent->cpus()[static_cast<std::size_t>(m.rank)]);
    link.below.placement = link.above.placement = placement_of(cpus);
  }
  child->set_link(link);
  co_return child;
}

CollRequest::CollRequest(Comm& comm, Progress& progress, Task<> task)
    : comm_(&comm), progress_(&progress), task_(std::move(task)) {
  try {
    task_.start();
  } catch (...) {
    // start() only runs until the first suspension; errors are captured in the task.
  }
}

void CollRequest::finish() {
  comm_->transport().flush();
  if (const std::exception_ptr e = task_.error()) {
    try {
      std::rethrow_exception(e);
    } catch (const EngineError& err) {
      if (err.errc() != Errc::invalid_argument && err.errc() != Errc::unsupported)
        comm_->mark_broken(err.what());
      throw;
    }
  }
}

bool CollRequest::test() {
  if (!task_.done()) progress_->poll();
  if (!task_.done()) return false;
  finish();
  return true;
}

void CollRequest::wait(double timeout_seconds) {
  using Clock = std::chrono::steady_clock;
  const std::chrono::nanoseconds spin = progress_->spin_before_yield();
  // The clock is read only after 64 idle passes in a row and then once every 64: a wait
  // that ends sooner (most small messages) never reads it (clock_gettime was 8% of an 8-byte
  // all-reduce when every wait read it once). The deadline and the spin count from there.
  // Passes that made progress read it once every 4096, so that a transport reporting progress
  // forever without finishing the collective still meets the deadline (no silent hang).
  Clock::time_point start{};       // the first clock read of this call
  Clock::time_point idle_since{};  // the first clock read of the current idle stretch
  unsigned idle = 0;
  unsigned busy = 0;
  bool yielding = false;
  auto check_deadline = [&](Clock::time_point now) {
    if (start == Clock::time_point{}) start = now;
    if (std::chrono::duration<double>(now - start).count() <= timeout_seconds) return;
    std::string peers;
    for (const int w : comm_->transport().pending_peers())
      peers += (peers.empty() ? "" : ", ") + std::to_string(w);
    const std::string msg = "collective did not finish within " + std::to_string(timeout_seconds) +
                            " s (FABCOLL_TIMEOUT); " +
                            (peers.empty() ? std::string("no receive was pending")
                                           : "waiting for world rank(s) " + peers);
    comm_->mark_broken(msg);
    task_ = Task<>();  // cancels its transfers
    raise(Errc::timeout, msg);
  };
  while (!task_.done()) {
    if (progress_->poll()) {
      idle = 0;
      yielding = false;
      if ((++busy & 4095u) == 0) check_deadline(Clock::now());
      continue;
    }
    // Spin with pause while the wait is short, then yield the core: ranks may outnumber
    // cores (p = 8 on 2 cores), and a waiting rank must let the rank it waits for run.
    // With no spin at all (oversubscribed), yield from the first idle pass: the 64 passes
    // before the first clock read would otherwise spin for microseconds on a core that the
    // awaited rank needs (measured p = 8 on 2 cores: barrier 42 us).
    if (spin.count() == 0) yielding = true;
    if ((++idle & 63u) == 0) {
      const Clock::time_point now = Clock::now();
      if (idle == 64) idle_since = now;
      yielding = now - idle_since >= spin;
      check_deadline(now);
    }
    if (yielding) {
      std::this_thread::yield();
    } else {
      cpu_relax();
    }
  }
  finish();
}

void run_collective_blocking(Comm& comm, Progress& progress, CollArgs& args) {
  // run_collective without its own coroutine frame: the plan and the channel live on this
  // stack for the whole call, the algorithm's task is driven directly. No other call is
  // planned on comm before this one returns, so the channel uses the plan's model in place.
  if (comm.broken()) raise(Errc::broken, comm.broken_reason());
  bool above = false;
  const CostModel* model = nullptr;
  CostModel fresh;
  const Algorithm& alg = planned(comm, args, above, model, fresh);
  with_input(alg, args);
  Channel ch(comm, comm.next_sequence(), model);
  CollRequest r(comm, progress, alg.run(ch, args));
  r.wait(progress.timeout_seconds());
}

void run_blocking(Comm& comm, Progress& progress, Task<> task) {
  CollRequest r(comm, progress, std::move(task));
  r.wait(progress.timeout_seconds());
}

}  // namespace fabcoll
