// fabcoll-calibrate: measure this machine's α, β (per link class) and γ (per reduction kernel),
// fit the LAWN 29 model, derive packet-count rules and crossover tables, then VALIDATE the model
// by running every candidate algorithm around each crossover and comparing predicted with
// measured times. Writes the tuning file that load_tuning() reads at run time.
//
//   fabcoll-run -n P -- fabcoll-calibrate [-o tuning.json] [--report DIR] [--quick]
//
// Phases (progress on stderr from rank 0):
//   1 ping-pong   ranks 0 and 1 on a 2-rank split communicator; one message = a p = 2
//                 binomial bcast (a single send), a round trip = bcast from 0 then from 1.
//                 Ranks not in the pair wait in a sleeping ibarrier. With more ranks than
//                 cores (the collectives then time-share the cores) every rank takes part
//                 instead: pairs (0,1), (2,3), … exchange at once (--all-pairs), and the fit is
//                 recorded as its own layout of the link class ("4 ranks on 2 cores").
//                 Quiet pair only: from the single-copy threshold (shm) or 16 KiB up to below
//                 a core's L2, a round trip bouncing the sender's own buffer (ω, written
//                 data), and after the round trips, chains of exchanges (χα, χβ: both ranks
//                 sending at once).
//   1b overhead   the sender's overhead o (LogP's o), in the ping-pong's layout: a burst of
//                 small sends to a peer that pre-posted its receives, per send; and its time
//                 per byte G (LogGP's G): a burst of 8 KiB sends against one of 8 bytes (see
//                 measure_send_costs); clamped to [0, α] and [0, β]. Before 3b, whose
//                 formulas use them.
//   2 fit         weighted (relative) least squares, two segments: on shm split at the
//                 single-copy threshold, elsewhere where a protocol break clearly helps.
//   3 gamma       ReduceOp::combine_left on buffers of 16 KiB … 4 MiB, rank 0 alone.
//   3b layout     only with more ranks than cores (--oversubscribed-fit collectives): α, β
//                 refitted to timed non-pipelined bcast / all-reduce / all-gather runs, with ω
//                 and one χ (profiles over their grids), timed as the validation times them.
//   4 tables      crossover tables and k rules for p ranks under the fitted model.
//   5 validate    each eligible algorithm forced with FABCOLL_<COLL>_ALGORITHM (and its packet
//                 count from the fitted model via FABCOLL_<COLL>_PACKET) at sizes around each
//                 crossover; time = median over samples of the slowest rank's time per call in
//                 a batch of calls with a moving root, back to back, or over the fabric each
//                 call between barriers of its own (time_candidates says why);
//                 then the ping-pong once more, its drift against the first reported.
#include <hwloc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "algorithms/registry.hpp"
#include "algorithms/sim_steps.hpp"
#include "bootstrap/node_map.hpp"
#include "collectives/collectives.hpp"
#include "collectives/context_info.hpp"
#include "collectives/placement.hpp"
#include "collectives/sim_cost.hpp"
#include "engine/communicator.hpp"
#include "engine/datatype.hpp"
#include "fabcoll/fabcoll.h"
#include "transports/ofi/ofi.hpp"
#include "transports/shm/shm.hpp"
#include "tuning/crossover.hpp"
#include "tuning/fit.hpp"
#include "tuning/tuning_file.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using fabcoll::Algorithm;
using fabcoll::Collective;
namespace tuning = fabcoll::tuning;

double now() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

/// The size of the first L2 cache hwloc reports (bytes), 0 when it reports none.
double l2_cache_bytes() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return 0;
  double bytes = 0;
  if (hwloc_topology_load(topo) == 0) {
    const hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_L2CACHE, 0);
    if (o != nullptr && o->attr != nullptr) bytes = static_cast<double>(o->attr->cache.size);
  }
  hwloc_topology_destroy(topo);
  return bytes;
}

[[noreturn]] void die(const std::string& what, int rc) {
  std::fprintf(stderr, "fabcoll-calibrate: %s: %s (%s)\n", what.c_str(), fc_strerror(rc),
               fc_last_error_message());
  std::exit(1);
}

void check(int rc, const char* what) {
  if (rc != FC_SUCCESS) die(what, rc);
}

/// The largest --gamma-large-from: measure_gamma times three buffers of up to three times it for
/// each rank of a core (1e12 threw std::bad_alloc out of main). A core's L2 over three buffers
/// is far below it on every machine we know.
constexpr double kGammaLargeFromMax = 16.0 * (1 << 20);

/// An error of calibrate's own (not the engine's): the message, exit status 1.
[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fabcoll-calibrate: error: %s\n", what.c_str());
  std::exit(1);
}

/// Progress on stderr: phase, percent of the planned work, an estimate of the time left.
class ProgressLine {
 public:
  ProgressLine(bool on, double total_units) : on_(on), total_(total_units), start_(now()) {}
  /// A new phase: its line at once (a phase can run for half a minute between two others'
  /// lines: the fit to timed collectives, p = 4 over sockets).
  void phase(const char* name) {
    phase_ = prefix_ + name;
    last_ = 0;
    advance(0);
  }
  /// A further attempt (--retries): the percentage and the time left start again.
  void new_attempt(int n) {
    prefix_ = "attempt " + std::to_string(n) + ", ";
    done_ = 0;
    attempt_start_ = now();
  }
  void advance(double units) {
    done_ += units;
    const double t = now();
    if (!on_ || t - last_ < 1.0) return;
    last_ = t;
    const double frac = std::min(1.0, done_ / total_);
    if (!(frac > 0)) {  // nothing done yet: no estimate
      std::fprintf(stderr, "fabcoll-calibrate: [%s]   0%%\n", phase_.c_str());
      return;
    }
    const double left = (t - attempt_start_) * (1 - frac) / frac;
    std::fprintf(stderr, "fabcoll-calibrate: [%s] %3.0f%%, about %.0f s left\n", phase_.c_str(),
                 100 * frac, left);
  }
  /// Seconds since the start (all attempts).
  [[nodiscard]] double elapsed() const { return now() - start_; }

 private:
  bool on_;
  double total_;
  double done_ = 0;
  double start_;
  double attempt_start_ = start_;
  double last_ = 0;
  std::string phase_;
  std::string prefix_;
};

/// Allocates on page boundaries, as the OSU benchmarks and fabcoll-bench allocate their
/// buffers. Every buffer the calibration times lies so, whatever the heap did before: copies run
/// up to 20 times slower where a destination lies 1-31 bytes past its source modulo 64 (REP
/// MOVSB on this machine, engine/copy.hpp), and with std::vector's own allocations the
/// all-gathers of the fit to timed collectives took 2-2.5 times their time in a fresh process
/// (p = 4 shm on 2 cores, 96 KiB, recursive doubling: 186-247 against 105-133 us): once the
/// ping-pong had freed its 4 MiB buffers, glibc took the next ones from the heap, at offsets of
/// their own.
template <class T>
struct PageAllocator {
  using value_type = T;
  PageAllocator() = default;
  template <class U>
  explicit PageAllocator(const PageAllocator<U>& /*other*/) {}
  T* allocate(std::size_t n) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, std::max<std::size_t>(n * sizeof(T), 1)) != 0)
      throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t /*n*/) { std::free(p); }
  friend bool operator==(const PageAllocator& /*a*/, const PageAllocator& /*b*/) { return true; }
};
template <class T>
using PageVector = std::vector<T, PageAllocator<T>>;

/// Waits in a barrier while sleeping between polls (idle ranks must not spin).
void idle_barrier(fc_comm_t comm) {
  fc_request_t req;
  check(fc_ibarrier(comm, &req), "ibarrier");
  int done = 0;
  while (!done) {
    check(fc_test(&req, &done), "test");
    if (!done) usleep(500);
  }
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

/// Sets FABCOLL_<COLL>_ALGORITHM (and _PACKET) for one scope; every rank does the same.
class Force {
 public:
  Force(Collective c, std::string_view alg, double packet_bytes)
      : alg_("FABCOLL_" + upper(fabcoll::collective_name(c)) + "_ALGORITHM"),
        packet_("FABCOLL_" + upper(fabcoll::collective_name(c)) + "_PACKET") {
    setenv(alg_.c_str(), std::string(alg).c_str(), 1);
    if (packet_bytes > 0) setenv(packet_.c_str(), std::to_string(packet_bytes).c_str(), 1);
    fabcoll::refresh_overrides();  // the engine reads the variables on refresh, not per call
  }
  ~Force() {
    unsetenv(alg_.c_str());
    unsetenv(packet_.c_str());
    fabcoll::refresh_overrides();
  }
  Force(const Force&) = delete;
  Force& operator=(const Force&) = delete;

 private:
  std::string alg_, packet_;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::string link_class() {
  const char* t = std::getenv("FABCOLL_TRANSPORT");
  if (t != nullptr && std::string(t) == "ofi") {
    const char* prov = std::getenv("FABCOLL_PROVIDER");
    return std::string("ofi/") + (prov != nullptr && *prov ? prov : "default");
  }
  if (t != nullptr && *t != '\0' && std::string(t) != "auto") return t;
  return "shm";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

struct PingPong {
  std::vector<tuning::Point> medians;  // per size
  std::vector<tuning::Point> all;      // every repetition
  // The same ping-pong bouncing one buffer (measure_pingpong's bounce_from; rank 0 only).
  std::vector<tuning::Point> written_medians;
  std::vector<tuning::Point> written_all;
  // Per repetition, the time per exchange of a chain of them, both ranks sending n bytes to
  // each other at once (quiet pair only; rank 0's times): what χα, χβ are measured from.
  std::vector<tuning::Point> exchange_medians;
  std::vector<tuning::Point> exchange_all;
};

int pingpong_reps(double n, bool quick) {
  const int r = static_cast<int>(3e7 / (n + 8192));
  return std::clamp(r, quick ? 11 : 21, quick ? 101 : 301);
}

std::vector<double> pingpong_sizes(bool quick) {
  std::vector<double> s;
  const double top = quick ? double(4 << 20) : double(16 << 20);
  for (double n = 8; n <= top; n *= quick ? 2.0 : std::sqrt(2.0)) s.push_back(std::round(n));
  return s;
}

/// The ping-pong after the validation against the one before (median ratio over the sizes
/// below kDriftLargeFrom, and over those from it; the drift is whichever moved more): outside
/// [1/kDriftHigh, kDriftHigh] the machine changed speed during the run.
constexpr double kDriftHigh = 1.25;
/// Where the drift's second median starts. One median over all sizes (8 B … 4 MiB with --quick:
/// 13 of 20 below 64 KiB) did not see large messages slow down alone: a p = 2 sockets launch
/// measured x1.16 and validated every all-reduce from 16 KiB at about twice its time predicted
/// (1 MiB: 936 against 439 µs), and 1 MiB all-reduces, all-gathers and broadcasts took 2.3 to
/// 2.9 times as long in some launches as in others (a 1 MiB broadcast 663–686 against 233 µs).
constexpr double kDriftLargeFrom = 65536;
/// The written-data probe (written_probe) after the validation against the one before: outside
/// [1/kProbeHigh, kProbeHigh] the cost of written data changed during the run.
constexpr double kProbeHigh = 1.25;
/// --quick finishes within this many seconds: no retry that would take it past them.
constexpr double kQuickSeconds = 110;

/// The smallest size at which ω is measured: below it a message's time is mostly α.
constexpr double kWrittenFrom = 16384;
/// χα is measured up to this size, χβ from the other (exchange_factors).
constexpr double kExchangeAlphaTo = 512;
constexpr double kExchangeBetaFrom = 65536;

/// The sizes ω is fitted over end below the L2 cache of a core (sysconf; 1 MiB if unknown):
/// written data larger than that has left the writer's cache for the shared one before it is
/// read, and then costs what untouched data costs (measured at p = 2: bounced over untouched
/// 1.25–1.53 at 32–256 KiB, 0.82–1.05 at 1–4 MiB, in one launch).
double written_sizes_end() {
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? static_cast<double>(l2) : double(1 << 20);
}

/// Ping-pong times per size. quiet: ranks 0 and 1 alone, the others asleep in a barrier (each
/// rank of the pair has a core of its own when the node has two). all_pairs: every rank at once,
/// pairs (0,1), (2,3), … concurrently (as osu_mbw_mr does), an odd last rank asleep; with
/// exchange_mode both ranks of a pair send n bytes to each other at once (every rank busy, as in
/// the rounds of recursive doubling, ring or Rabenseifner), else they ping-pong. The time per
/// size is the mean over the pairs of each pair's median. That is the layout the collectives run
/// in when the node has fewer cores than ranks: every message waits for its receiver to be
/// scheduled, and the pairs share the cores and the memory bandwidth.
PingPong measure_pingpong(fc_comm_t world, int rank, int p, bool all_pairs, bool exchange_mode,
                          bool quick, ProgressLine& prog, double bounce_from = 0,
                          bool time_exchanges = true) {
  PingPong out;
  const int pairs = all_pairs ? p / 2 : 1;
  const bool in_pair = rank < 2 * pairs;
  fc_comm_t pair = FC_COMM_NULL;
  check(fc_comm_split(world, in_pair ? rank / 2 : FC_UNDEFINED, rank, &pair), "split");
  const auto sizes = pingpong_sizes(quick);
  std::vector<double> medians(sizes.size(), 0.0);
  if (pair != FC_COMM_NULL) {
    Force force(Collective::bcast, "binomial", 0);  // at p = 2: exactly one send
    // Each message goes out of a buffer its sender never writes, as a collective sends its
    // untouched input: the ping-pong's way back uses the second buffer. Bouncing one buffer
    // sends data the sender has just received (written by its own core), which crosses cores
    // slower: from bounce_from bytes up to below written_sizes_end() (quiet pair only) every
    // repetition also times such a round trip, right after the untouched one, so that both meet
    // the same state of the machine (timed in a phase of its own, a slow spell made ω 5.2 and
    // 5.8 in two of five launches, median error 61% and 129%), and ω (CostModel::written) is
    // fitted from the pairs of medians. Not from a core's L2 up, where ω is not fitted: there a
    // bounced round trip slowed the untouched one after it (p = 2 shm, 1 MiB: 99-102 µs one way
    // against 75-80 µs without them, in three runs of a test program; at 256 KiB and 2 MiB the
    // two ways were alike), and from there up β beyond the cache (CostModel::beta_large) is
    // fitted to round trips timed alone. Rank 0's L2 for both: the pair must make the same
    // calls.
    double written_end = written_sizes_end();
    check(fc_bcast(&written_end, 1, FC_DOUBLE, 0, pair), "bcast");
    PageVector<char> buf(static_cast<std::size_t>(sizes.back()), 1);
    PageVector<char> buf2(buf.size(), 2);
    // The bounced round trips' own buffer: through buf they would leave buf written for the
    // next untouched round trip (interleaved, that made both alike: ω 1.0 in five launches).
    PageVector<char> buf3(bounce_from > 0 && !all_pairs ? buf.size() : 0, 3);
    // One exchange: both ranks of the pair send n bytes to each other at once (two concurrent
    // p = 2 bcasts, one from each end).
    const auto exchange = [&](std::size_t bytes) {
      fc_request_t r0, r1;
      check(fc_ibcast(buf.data(), bytes, FC_BYTE, 0, pair, &r0), "ibcast");
      check(fc_ibcast(buf2.data(), bytes, FC_BYTE, 1, pair, &r1), "ibcast");
      check(fc_wait(&r0), "wait");
      check(fc_wait(&r1), "wait");
    };
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      const double n = sizes[s];
      const auto bytes = static_cast<std::size_t>(n);
      const int reps = pingpong_reps(n, quick);
      // All pairs start each size together (they run concurrently, not one after another).
      if (all_pairs) check(fc_barrier(world), "barrier");
      const auto round_trip = [&](bool bounce) {
        if (all_pairs && exchange_mode) {
          exchange(bytes);
          exchange(bytes);
        } else {
          check(fc_bcast(bounce ? buf3.data() : buf.data(), bytes, FC_BYTE, 0, pair), "bcast");
          check(fc_bcast(bounce ? buf3.data() : buf2.data(), bytes, FC_BYTE, 1, pair), "bcast");
        }
      };
      const bool both = !all_pairs && bounce_from > 0 && n >= bounce_from && n < written_end;
      // χ: chains of exchanges (quiet pair only), in a pass of their own after the round trips.
      // Interleaved with them (a chain after every round trip, as until the forty-eighth
      // session), the round trips that followed a chain ran slower below shm's single-copy
      // threshold, and stayed slower for the next round trip too: p = 2 shm, five runs, 16 KiB
      // one way 4.5-6.8 µs (5.1 or more in four) against 4.3-5.4 µs without the chains, 4 KiB
      // 1.65-2.24 against 1.63-1.86 µs (a test program timing both ways; 256 B and 64 KiB up
      // alike). The validation's calls run back to back, one candidate at a time, at the
      // faster times: over 27 p = 2 shm launches the naive broadcast at 16 KiB took a median
      // 0.84 of the ping-pong's one-way time there (0.74-1.00), and the all-reduces at 12-16 KiB
      // came out a median 33% under their predictions (9-67%).
      const bool exch = !all_pairs && time_exchanges;
      const auto round_trip_bytes = [&](std::size_t b) {
        check(fc_bcast(buf.data(), b, FC_BYTE, 0, pair), "bcast");
        check(fc_bcast(buf2.data(), b, FC_BYTE, 1, pair), "bcast");
      };
      for (int w = 0; w < 2; ++w) {
        round_trip(false);
        if (both) round_trip(true);
      }
      const auto timed = [&](bool bounce) {
        const double t0 = now();
        round_trip(bounce);
        return (now() - t0) / 2;
      };
      std::vector<double> ts, ws, xs;
      for (int r = 0; r < reps; ++r) {
        const double t = timed(false);
        ts.push_back(t);
        if (rank == 0) out.all.push_back({n, t});
        if (!both) continue;
        const double w = timed(true);
        ws.push_back(w);
        if (rank == 0) out.written_all.push_back({n, w});
      }
      if (exch) {
        round_trip_bytes(8);
        for (int w = 0; w < 2; ++w) {
          exchange(bytes);
          round_trip_bytes(8);
        }
        for (int r = 0; r < reps; ++r) {
          // Back to back, as the steps of recursive doubling: each rank starts its next
          // exchange as its last one ends, and the two fall into step. One exchange alone
          // is timed short: the rank that left the round trip first has sent before the other
          // starts its clock (8 B: 12 µs against 20 µs one way on sockets).
          const int chain = n < kExchangeBetaFrom ? 8 : 4;
          const double t0 = now();
          for (int c = 0; c < chain; ++c) exchange(bytes);
          const double x = (now() - t0) / chain;
          xs.push_back(x);
          if (rank == 0) out.exchange_all.push_back({n, x});
          // Either rank may leave its exchange while the other still receives: an 8-byte round
          // trip ends both before the next chain is timed (without it, on sockets, the
          // untouched round trips that followed took up to 2.5 times as long at 1 MiB).
          round_trip_bytes(8);
        }
      }
      if (rank % 2 == 0) medians[s] = median(ts) / pairs;
      if (rank == 0 && both) out.written_medians.push_back({n, median(ws)});
      if (rank == 0 && exch) out.exchange_medians.push_back({n, median(xs)});
      prog.advance(1);
    }
    check(fc_comm_free(&pair), "comm_free");
  } else if (all_pairs) {
    for (std::size_t s = 0; s < sizes.size(); ++s) idle_barrier(world);
  }
  if (all_pairs || pair != FC_COMM_NULL)
    check(fc_barrier(world), "barrier");
  else
    idle_barrier(world);
  // Mean over the pairs (each pair's first rank contributed median / pairs).
  std::vector<double> sum(sizes.size(), 0.0);
  check(fc_allreduce(medians.data(), sum.data(), sizes.size(), FC_DOUBLE, FC_SUM, world),
        "allreduce");
  for (std::size_t s = 0; s < sizes.size(); ++s) out.medians.push_back({sizes[s], sum[s]});
  return out;
}

/// ω (CostModel::written) from the ping-pong of untouched buffers (`cold`, the fit's points)
/// and the same ping-pong bouncing one buffer (`bounced`, every message just received by its
/// sender), over the sizes below written_sizes_end(): per size, the bounced β time over the
/// untouched one, (t_bounced − α)/(t_cold − α) with α of the fitted segment at that size; their
/// median, never below 1 (written data is never cheaper to send; a ratio under 1 is noise) nor
/// above 10.
double written_factor(const tuning::PiecewiseFit& pf, const std::vector<tuning::Point>& cold,
                      const std::vector<tuning::Point>& bounced) {
  std::vector<double> ratios;
  for (const auto& b : bounced) {
    if (b.n >= written_sizes_end()) continue;
    for (const auto& c : cold) {
      if (c.n != b.n) continue;
      const double a = pf.segment(c.n).alpha;
      if (c.t - a > 0 && b.t - a > 0) ratios.push_back((b.t - a) / (c.t - a));
    }
  }
  return ratios.empty() ? 1.0 : std::clamp(median(ratios), 1.0, 10.0);
}

/// χα, χβ (CostModel::exchange_alpha, exchange_beta) from the one-way ping-pong (`oneway`, the
/// fit's points) and the exchanges timed after it (`exch`, both ranks sending n bytes at once):
/// χα the median of t_exchange / t_one-way over the sizes up to kExchangeAlphaTo (where α is
/// most of a message), χβ the median of (t_exchange − χα α)/(t_one-way − α) from
/// kExchangeBetaFrom up (α of the fitted segment at each size); both within
/// [tuning::kExchangeMin, kExchangeMax]. {1, 1} without exchanges.
std::pair<double, double> exchange_factors(const tuning::PiecewiseFit& pf,
                                           const std::vector<tuning::Point>& oneway,
                                           const std::vector<tuning::Point>& exch) {
  std::vector<double> ra, rb;
  for (const auto& x : exch)
    for (const auto& c : oneway)
      if (c.n == x.n && x.n <= kExchangeAlphaTo && c.t > 0) ra.push_back(x.t / c.t);
  const auto clamp = [](double v) {
    return std::clamp(v, tuning::kExchangeMin, tuning::kExchangeMax);
  };
  const double xa = ra.empty() ? 1.0 : clamp(median(ra));
  for (const auto& x : exch) {
    if (x.n < kExchangeBetaFrom) continue;
    for (const auto& c : oneway) {
      if (c.n != x.n) continue;
      const double a = pf.segment(c.n).alpha;
      if (c.t - a > 0 && x.t - xa * a > 0) rb.push_back((x.t - xa * a) / (c.t - a));
    }
  }
  return {xa, rb.empty() ? 1.0 : clamp(median(rb))};
}

/// The sender's overhead o (LogP's o; CostModel::overhead): the sender's own time per message,
/// apart from the latency α that the receiver sees. Measured in the ping-pong's layout (quiet:
/// ranks 0 and 1 alone; all_pairs: every pair at once): the receiver pre-posts a burst of
/// `burst` receives of 8 bytes (p = 2 binomial bcasts, one send each, as in the ping-pong),
/// then releases the sender through a barrier on a second communicator of the pair (the pair's
/// own must see the same collectives in the same order on both ranks); the sender posts the
/// burst of sends and waits for all of them. Its time from the first post to the last
/// completion, divided by the burst, per repetition; the median over the repetitions, the mean
/// over the pairs. Every rank returns the same value (seconds).
///
/// One call per message, so a call's own fixed cost (request, coroutine) counts in o: an upper
/// bound of what one more send of a loop (the naive broadcast's) costs its sender.
///
/// G (LogGP's G; CostModel::gap), the sender's time per byte of a message it writes, in the
/// same rounds: a short burst (kGapBurst) of `gap_bytes` messages against one of 8-byte
/// messages, (t(gap_bytes) - t(8)) / (gap_bytes - 8) per repetition, the median. The burst fits
/// in an shm ring (kGapBurst × 8 KiB of 128 KiB) and gap_bytes sits below shm's single-copy
/// threshold and the fabric's rendezvous, so the sender writes every message and never waits
/// for its receiver to drain. Not clamped here (the caller clamps to [0, β]).
struct SendCosts {
  double o = 0;    // s per message
  double gap = 0;  // s per byte
};
SendCosts measure_send_costs(fc_comm_t world, int rank, int p, bool all_pairs, bool quick,
                             std::size_t gap_bytes) {
  constexpr int kBurst = 48;
  constexpr int kGapBurst = 8;
  const int pairs = all_pairs ? p / 2 : 1;
  const bool in_pair = rank < 2 * pairs;
  fc_comm_t pair = FC_COMM_NULL, sync = FC_COMM_NULL;
  check(fc_comm_split(world, in_pair ? rank / 2 : FC_UNDEFINED, rank, &pair), "split");
  check(fc_comm_split(world, in_pair ? rank / 2 : FC_UNDEFINED, rank, &sync), "split");
  double mine[2] = {};  // a pair's sender: its medians (o, G) / pairs
  if (pair != FC_COMM_NULL) {
    const Force force(Collective::bcast, "binomial", 0);  // at p = 2: exactly one send
    const bool sender = rank % 2 == 0;
    PageVector<std::byte> bufs(
        static_cast<std::size_t>(kBurst) * std::max<std::size_t>(gap_bytes, 8), std::byte{1});
    std::vector<fc_request_t> reqs(kBurst);  // message i: reqs[i], bufs from i * bytes
    // The sender's time per message of a burst of `count` messages of `bytes`.
    const auto burst = [&](int count, std::size_t bytes) {
      const auto post = [&] {
        for (int i = 0; i < count; ++i)
          check(fc_ibcast(bufs.data() + static_cast<std::size_t>(i) * bytes, bytes, FC_BYTE, 0,
                          pair, &reqs[static_cast<std::size_t>(i)]),
                "ibcast");
      };
      const auto wait = [&] {
        for (int i = 0; i < count; ++i) check(fc_wait(&reqs[static_cast<std::size_t>(i)]), "wait");
      };
      double t = 0;
      if (sender) {
        check(fc_barrier(sync), "barrier");  // the receiver has posted its receives
        const double t0 = now();
        post();
        wait();
        t = (now() - t0) / count;
      } else {
        post();
        check(fc_barrier(sync), "barrier");
        wait();
      }
      // The next burst starts when both have finished this one.
      check(fc_barrier(sync), "barrier");
      return t;
    };
    const int reps = quick ? 15 : 41;
    std::vector<double> os, gs;
    for (int r = 0; r < reps + 2; ++r) {  // the first two: warm-up
      const double o = burst(kBurst, 8);
      const double small = burst(kGapBurst, 8);
      const double large = burst(kGapBurst, gap_bytes);
      if (r >= 2 && sender) {
        os.push_back(o);
        gs.push_back((large - small) / (static_cast<double>(gap_bytes) - 8));
      }
    }
    if (sender) {
      mine[0] = median(os) / pairs;
      mine[1] = median(gs) / pairs;
    }
    check(fc_comm_free(&pair), "comm_free");
    check(fc_comm_free(&sync), "comm_free");
  }
  if (all_pairs || in_pair)
    check(fc_barrier(world), "barrier");
  else
    idle_barrier(world);
  double sum[2] = {};
  check(fc_allreduce(mine, sum, 2, FC_DOUBLE, FC_SUM, world), "allreduce");
  return {sum[0], sum[1]};
}

/// Written data across CPUs: the time of a round trip of 128 KiB messages whose senders have
/// just written them, over one whose senders wrote another buffer of the same size (the same
/// work, the message itself untouched), between rank 0 and the first rank on another CPU (rank
/// 1 when no CPU is shared); the other ranks wait in a barrier. This is what the VM's slow mode
/// slows (README, "Which ranks share a core"): a model fitted in one mode predicts the other
/// badly, and the ping-pong of untouched data does not see the change. p = 2 binomial bcasts
/// on a pair communicator, as the ping-pong; 8 round trips a batch, the variants alternating,
/// the median ratio over the batches. Every rank returns the same value (1 at p = 1).
double written_probe(fc_comm_t world, int rank, int p, const fabcoll::Placement* placed,
                     bool quick) {
  if (p < 2) return 1;
  int partner = 1;
  if (placed != nullptr && placed->size() == p)
    for (int r = 1; r < p; ++r)
      if (placed->apart(0, r)) {
        partner = r;
        break;
      }
  const bool in_pair = rank == 0 || rank == partner;
  fc_comm_t pair = FC_COMM_NULL;
  check(fc_comm_split(world, in_pair ? 0 : FC_UNDEFINED, rank, &pair), "split");
  double ratio = 0;
  if (pair != FC_COMM_NULL) {
    constexpr std::size_t kBytes = 131072;
    const Force force(Collective::bcast, "binomial", 0);  // at p = 2: exactly one send
    PageVector<std::byte> out(kBytes, std::byte{1}), other(kBytes, std::byte{1}),
        in(kBytes, std::byte{0});
    const int me = rank == 0 ? 0 : 1;
    unsigned char stamp = 2;
    // One batch: 8 round trips; each sender writes `out` (written) or `other` (untouched)
    // right before it sends `out`.
    const auto batch = [&](bool written) {
      check(fc_barrier(pair), "barrier");
      const double t0 = now();
      for (int i = 0; i < 8; ++i) {
        for (int root = 0; root < 2; ++root) {
          if (me == root) std::memset(written ? out.data() : other.data(), stamp++, kBytes);
          check(fc_bcast(me == root ? out.data() : in.data(), kBytes, FC_BYTE, root, pair),
                "bcast");
        }
      }
      return now() - t0;
    };
    std::vector<double> ratios;
    for (int b = 0; b < (quick ? 9 : 21); ++b) {
      const double w = batch(true);
      const double u = batch(false);
      if (b > 0 && u > 0) ratios.push_back(w / u);  // the first: warm-up
    }
    ratio = median(ratios);
    check(fc_comm_free(&pair), "comm_free");
  }
  if (in_pair)
    check(fc_barrier(world), "barrier");
  else
    idle_barrier(world);
  check(fc_bcast(&ratio, 1, FC_DOUBLE, 0, world), "bcast");
  return ratio;
}

struct GammaPoint {
  std::string op, dt;
  fc_op_t op_id;
  fc_datatype_t dt_id;
};

/// γ per (op, datatype) from the two-buffer kernels (ReduceOp::combine_left) over the sizes,
/// and δ (memcpy) last. With large_from > 0 also γ beyond the cache (CostModel::gamma_large),
/// into gamma_large: the median time per byte of (sum, float64) into a third buffer
/// (ReduceOp::combine_to, as the engine combines a received message with its own data) at
/// large_from times 1, 1.5, 2 and 3; 0 where large_from is 0. The ranks of a core (turns) take
/// turns on it, each with buffers of its own that evict the others' from its L2: the sum is
/// timed on `turns` sets of three buffers in turn.
std::vector<tuning::GammaEntry> measure_gamma(
    bool quick, ProgressLine& prog, std::vector<std::pair<std::string, tuning::Point>>& pts,
    double large_from, int turns, double& gamma_large) {
  const std::vector<GammaPoint> kernels = {{"sum", "float64", FC_SUM, FC_DOUBLE},
                                           {"sum", "float32", FC_SUM, FC_FLOAT},
                                           {"sum", "int32", FC_SUM, FC_INT32},
                                           {"max", "float64", FC_MAX, FC_DOUBLE}};
  const std::vector<double> sizes =
      quick ? std::vector<double>{16384, 262144, 1 << 20, 4 << 20}
            : std::vector<double>{16384, 65536, 262144, 1 << 20, 4 << 20, 16 << 20};
  std::vector<tuning::GammaEntry> out;
  PageVector<char> a(static_cast<std::size_t>(sizes.back())), b(a.size());
  for (const GammaPoint& k : kernels) {
    const fabcoll::ReduceOp op(k.op_id, k.dt_id);
    std::vector<tuning::Point> fit_pts;
    for (double n : sizes) {
      const std::size_t count = static_cast<std::size_t>(n) / op.elem_size();
      std::fill(a.begin(), a.end(), 0);
      std::fill(b.begin(), b.end(), 0);
      std::vector<double> ts;
      for (int r = 0; r < (quick ? 5 : 11); ++r) {
        const double t0 = now();
        op.combine_left(a.data(), b.data(), count);
        ts.push_back(now() - t0);
      }
      fit_pts.push_back({n, median(ts)});
      pts.emplace_back(k.op + "/" + k.dt, fit_pts.back());
    }
    const tuning::LinearFit f = tuning::fit_linear(fit_pts, tuning::Weighting::relative);
    out.push_back({k.op, k.dt, std::max(0.0, f.beta)});
    prog.advance(1);
  }
  // δ, the model's local copy (CostModel::copy): memcpy over the same sizes, last in the list.
  std::vector<tuning::Point> fit_pts;
  for (double n : sizes) {
    const auto bytes = static_cast<std::size_t>(n);
    std::fill(a.begin(), a.end(), 1);
    std::vector<double> ts;
    for (int r = 0; r < (quick ? 5 : 11); ++r) {
      const double t0 = now();
      std::memcpy(b.data(), a.data(), bytes);
      asm volatile("" ::"r"(b.data()) : "memory");  // the copy is used
      ts.push_back(now() - t0);
    }
    fit_pts.push_back({n, median(ts)});
    pts.emplace_back("copy/byte", fit_pts.back());
  }
  const tuning::LinearFit f = tuning::fit_linear(fit_pts, tuning::Weighting::relative);
  out.push_back({"copy", "byte", std::max(0.0, f.beta)});
  gamma_large = 0;
  if (large_from > 0) {
    const fabcoll::ReduceOp op(FC_SUM, FC_DOUBLE);
    const auto most = static_cast<std::size_t>(3 * large_from) + op.elem_size();
    struct Buffers {
      PageVector<char> left, right, into;
    };
    std::vector<Buffers> sets(static_cast<std::size_t>(std::max(1, turns)));
    for (Buffers& b : sets) {
      b.left.assign(most, 0);
      b.right.assign(most, 0);
      b.into.assign(most, 0);
    }
    std::vector<double> per_byte;
    for (const double times : {1.0, 1.5, 2.0, 3.0}) {
      const std::size_t count =
          std::max<std::size_t>(1, static_cast<std::size_t>(times * large_from) / op.elem_size());
      const double n = static_cast<double>(count * op.elem_size());
      std::vector<double> ts;
      for (int r = 0; r < (quick ? 5 : 11); ++r)
        for (Buffers& b : sets) {
          const double t0 = now();
          op.combine_to(b.left.data(), b.right.data(), b.into.data(), count);
          ts.push_back(now() - t0);
        }
      pts.emplace_back("sum/float64/combine_to", tuning::Point{n, median(ts)});
      per_byte.push_back(median(ts) / n);
    }
    gamma_large = median(per_byte);
  }
  return out;
}

/// The fitted link of p ranks (both segments and the break).
/// placed: which ranks share a CPU (nullptr: none), as the context sets it from the node map.
tuning::LinkModel link_model(const tuning::TuningFile& f, const std::string& link, int p,
                             const fabcoll::Placement* placed) {
  tuning::LinkModel m =
      tuning::link_model_for(f, link, p).value_or(tuning::LinkModel::uniform(fabcoll::CostModel{}));
  // As a context sets it: inside a node, single-copy messages are read by their receiver, and
  // ω is charged from there (CostModel::written_from).
  if (link == "shm") m.set_single_copy(fabcoll::shm::pull_bytes_from_environment());
  m.below.placement = m.above.placement = placed;
  return m;
}

/// The table for p ranks under the fitted link. One scan over the whole range with every
/// algorithm costed as the validation predicts it (tuning::algorithm_cost with the LinkModel):
/// above a protocol break a pipelined algorithm's packets may fall below it and cost α, β of
/// the lower segment. (Two tables, each with one segment's whole-message model, chose
/// algorithms above the break by costs that neither the packet choice nor the validation used.)
std::vector<tuning::CrossoverSegment> table_for(Collective c, int p, const tuning::TuningFile& f,
                                                const std::string& link, double n_max,
                                                const fabcoll::Placement* placed) {
  return tuning::crossover_table(c, p, link_model(f, link, p, placed),
                                 {.n_min = 1, .n_max = n_max});
}

/// The packet count for alg at n bytes under the fitted link. Packets are messages of their own,
/// costed with the model of the segment that holds their size (tuning::segment_k): costed with
/// the model of n's segment, a fit whose α above the break came out at its 1e-9 floor asked
/// for about 2000 packets of 545 B at 1 MiB, 12 s per call on a loaded machine (issue 6).
tuning::PacketChoice packet_choice(const Algorithm& alg, double n, int p,
                                   const tuning::TuningFile& f, const std::string& link,
                                   const fabcoll::Placement* placed) {
  const tuning::LinkModel lm = link_model(f, link, p, placed);
  return tuning::segment_k(alg, n, p, lm.below, lm.above, lm.break_bytes);
}

/// A tuple of references as a tuple of values (a copy of what they refer to).
template <class... T>
std::tuple<T...> values_of(const std::tuple<T&...>& refs) {
  return refs;
}

/// One size of the pull fan-out measurement: the naive broadcast's time against its cost with
/// φ = 0.
struct FanoutRun {
  double n = 0, measured = 0, flat = 0;
};

/// One pipelined broadcast timed for κ (CostModel::streamed): its prediction with κ = 1.
struct StreamedRun {
  std::string algorithm;
  double n = 0, k = 0, predicted = 0, measured = 0;
  double fill = 0;  // the prediction's first packet (κ = 0)
};

struct Measured {
  std::string coll, alg;
  double n = 0, predicted = 0, measured = 0;
  double probe = 0;  // the written-data probe right after its size was validated
  bool chosen = false, fastest = false;
  /// The candidate whose run sends the same messages at this size (fabcoll::same_messages),
  /// timed once for both; empty: timed itself.
  std::string same_messages_as;
  /// The slowest rank's time per call in each round (time_candidates; measured is their
  /// median): the regret's interval resamples them.
  std::vector<double> samples;
  /// How many of them each validation pass timed (kValidationPasses).
  std::vector<std::size_t> pass_rounds;
};

/// Runs one collective of n bytes per rank (float64 elements; sum for reductions).
/// A bcast from `root` uses the root's own region of a (a holds p regions of n bytes): the
/// root sends a region only it ever sends from and never receives into, untouched input as in
/// every other collective here (and as the OSU benchmark's fixed root sends), while the roots
/// move from call to call. (One buffer for all roots made each root send what it had just
/// received, data its own core wrote: ω, not β.)
void run_once(Collective c, fc_comm_t comm, int root, std::size_t n, PageVector<double>& a,
              PageVector<double>& b) {
  const std::size_t count = n / sizeof(double);
  switch (c) {
    case Collective::bcast:
      check(
          fc_bcast(a.data() + static_cast<std::size_t>(root) * count, count, FC_DOUBLE, root, comm),
          "bcast");
      break;
    case Collective::reduce:
      check(fc_reduce(a.data(), b.data(), count, FC_DOUBLE, FC_SUM, root, comm), "reduce");
      break;
    case Collective::allreduce:
      check(fc_allreduce(a.data(), b.data(), count, FC_DOUBLE, FC_SUM, comm), "allreduce");
      break;
    case Collective::allgather:
      check(fc_allgather(a.data(), count, FC_DOUBLE, b.data(), count, FC_DOUBLE, comm),
            "allgather");
      break;
    case Collective::alltoall:
      check(fc_alltoall(a.data(), count, FC_DOUBLE, b.data(), count, FC_DOUBLE, comm), "alltoall");
      break;
    case Collective::reduce_scatter_block:
      check(fc_reduce_scatter_block(a.data(), b.data(), count, FC_DOUBLE, FC_SUM, comm),
            "reduce_scatter_block");
      break;
    default:
      break;
  }
}

/// The fewest rounds a time budget leaves a validated size (time_candidates): a median's
/// sampling error grows as 1/√rounds, so the regret's interval over 31 rounds should be about
/// √(101/31) = 1.8 times as wide as over 101.
constexpr int kMinRounds = 31;
/// --quick's validation: seconds for all its sizes together (what is left shared evenly over
/// the sizes left). On this VM a p = 4 sockets launch with 101 rounds at every size took 126 s,
/// past the 2 minutes --quick promises; with a budget of 45 s, 64 s in all (45 s validating,
/// 31-93 rounds a size). 60 s leaves such a launch about 80 s.
constexpr double kQuickValidationSeconds = 60;
/// Of which, where the training is interleaved with the validation, the sizes timed once more
/// after the fit done again share what the passes leave and this (about two sizes at p = 4
/// over sockets, where 0-7 sizes a launch were timed again, a median of 1 in 26, about 2 s each).
constexpr double kRetimeSeconds = 4;
/// The validation times its sizes in this many passes, each size's rounds split evenly among
/// them (101 in all, as before), and takes each candidate's median over all its rounds.
/// Timed in one stretch, a size's candidates saw the machine of one second or two: at p = 4
/// over sockets on 2 cores the ratio of two candidates' times moved from stretch to stretch
/// by more than the regret target (reduce + bcast against recursive doubling at 512 B:
/// 0.96-1.09 in the fit's timed collectives and 0.99-1.10 in the validation of one launch or
/// another, 1.01-1.31 in eight alternating fabcoll-bench runs), while within one stretch the
/// regret's interval over its rounds was a few percent wide.
constexpr int kValidationPasses = 3;
/// The fit's timed collectives (the training) in as many passes over their sizes, for the same
/// reason: timed size by size in one stretch, the ratio of two candidates at one size was the
/// machine's of one second or two, and the fit took each size's pace for the model's. p = 4
/// sockets on 2 cores, nine --quick launches each way, alternating: the model's ratio of the
/// chosen algorithm to a candidate predicted within a factor 0.8 of it came within a median
/// |ln| of 0.055 of the measured ratio against 0.069 (closer in eight of the nine pairs), the
/// fit's R² 0.963 against 0.946 (medians).
constexpr int kTrainingPasses = 3;
// Interleaved, a training pass runs after each validation pass but the last.
static_assert(kTrainingPasses == kValidationPasses,
              "the training's passes after the first run between the validation's");

/// Calls per timed batch of the training and the validation: about 8 MB per rank and batch
/// (1 MiB: 8 calls), 4 to 64 calls, so that a sample spans far more than the barrier's jitter.
/// (With at most 2 calls of 1 MiB, or 8 small ones, the same algorithm measured 148 and 244 µs
/// in two candidates' turns of one --quick run.)
int batch_calls(double bytes) { return std::clamp(static_cast<int>(8e6 / (bytes + 16384)), 4, 64); }

/// Whether time_candidates times each call on its own between barriers (else back to back):
/// over the fabric, at every size (time_candidates says why).
bool timed_apart() { return link_class().starts_with("ofi"); }

/// The barrier's time taken off each batch of calls timed back to back (time_candidates).
/// `before` is measured alone, once per attempt after the ping-pong; each time_candidates call
/// with batches back to back also times one barrier per round, beside its batches, and takes off
/// the lower of the two medians. Measured alone only, a barrier timed while other processes
/// held the cores came out at 3961 µs (p = 4 shm on 2 busy cores, 1 of 3 launches; 4-9 µs
/// without the load), more than whole batches took once the load had gone: every training time
/// fell to the 1 ns floor and the fit written had R² −5.9e8 (in another launch α 530 µs, β at
/// its floor, from a barrier of 3981 µs). The one timed beside a batch is timed under the same
/// load as the batch. Where even the lower median leaves a candidate's batches no time (the median
/// batch no longer than the barrier), the times say nothing and calibrate stops with an error
/// rather than fit or validate them.
struct BarrierTime {
  double before = 0;       ///< s, measured alone (the median of the slowest rank's)
  double during_low = 0;   ///< s, the lowest median timed beside the batches (0: none yet)
  double during_high = 0;  ///< s, the highest
  int calls = 0;           ///< time_candidates calls that timed batches back to back
  int lowered = 0;         ///< of them, those whose own median was the lower and taken off
};

/// FABCOLL_CALIBRATE_TEST_BARRIER_US=B[,D] (tests): B µs added to the barrier measured alone,
/// D µs to those timed beside the batches, as a busy machine can make them.
std::pair<double, double> test_barrier_extra() {
  const char* e = std::getenv("FABCOLL_CALIBRATE_TEST_BARRIER_US");
  if (e == nullptr) return {0.0, 0.0};
  double before = 0, during = 0;
  if (std::sscanf(e, "%lf,%lf", &before, &during) < 1) return {0.0, 0.0};
  return {before * 1e-6, during * 1e-6};
}

/// Per candidate, the median over reps of the slowest rank's time per call at `bytes`, as the
/// validation and the oversubscribed fit time them. A rank's own time of one call says little
/// (a bcast root returns once its sends are posted), and "barrier; call; barrier" minus a
/// barrier hides the call's latency behind the barrier's. So each sample is a batch of
/// batch_calls() calls back to back, between two barriers, divided by the batch, with the root
/// moving on every call: the next root must have received the previous call's data before it
/// can send, so calls cannot overlap the way back-to-back calls from one root would. A bcast's
/// next root is the rank that the candidate's model has receive last (last_receivers), so
/// that a call starts when the one before it has reached every rank, and a batch times what
/// the model predicts, a call's latency. With the next rank in order as the next root, the
/// calls overlapped: on 16 cores at p = 4 and 8 the naive broadcast of 256 B took 0.6–1.0 µs
/// a call, less than one message's one-way time (0.67 µs at p = 4), and 83–179% less than its
/// prediction (2o + α: the last of the root's sends), where the next root was its first
/// receiver. Other collectives take the ranks in order (a reduce's ranks all join each call).
/// The oversubscribed fit (models == nullptr) orders its broadcasts the same way, by the last
/// receivers under `order` (the model it starts from), so that it fits what the validation
/// times. With the ranks in order there, its naive broadcast's calls overlapped (p = 4 sockets
/// on 2 cores: 22.8 µs a call at 64 B in the fit, 47 µs at 256 B in the validation), the fit
/// took a hop for less than half its validated time, and reduce + bcast was chosen up to 1 MiB
/// (median errors 39 and 49% in two launches; 19.3, 19.1, 41.0 and 39.1% in the next four with
/// the validation's order: the rest is the 256 B step below and the VM's drift). An earlier code
/// chose the ranks in order for the fit after five p = 4 shm launches with the last receivers had
/// all chosen the hybrid or Rabenseifner at 130–900 KiB (regret 49–82%); at this code two shm
/// launches each way gave 12.8/20.8 and 13.9/4.9% with the last receivers, 14.8/11.0 and 27.9/52.2%
/// without. The barrier's own time is taken off once per batch (BarrierTime). The candidates
/// take turns, one batch each per round, so that load from other processes that comes and goes hits
/// all of them alike (the regret compares them). The turns rotate: round r starts with candidate r
/// mod #candidates, so that what one turn leaves behind (cache lines the peer just wrote, a
/// descheduled rank) falls on every candidate alike rather than always on the first. Each candidate
/// runs under models[j] when given (the model its prediction used: hybrid's strategy follows it),
/// and packets[j] (a pipelined algorithm's packet, in bytes; 0 otherwise). Without models a
/// broadcast's next roots come from `order` (required then for a broadcast). With `samples`,
/// (*samples)[j] gets candidate j's time per round (the slowest rank's), of which the result
/// is the median. With budget_s > 0 the rounds stop at what fits that many seconds, as the
/// first round took on the slowest rank (every rank takes the same count), but never below
/// min_reps (kMinRounds unless the caller splits its rounds into passes).
///
/// Over the fabric the calls of a batch are timed apart, at every size, as the OSU benchmarks
/// and fabcoll-bench time them: a barrier before each call, each rank's time
/// from leaving it to the call's return, the slowest rank's time per call, and a round's sample
/// the mean over its batch. Back to back, a provider that buffers sends (sockets: a send is
/// done once the kernel has the bytes) lets one call's transfers run into the next call's, by
/// an amount that differs between algorithms, while the model costs one call: at p = 4 sockets,
/// 384 KiB, the binomial reduce took 1.12–1.29 times the naive one back to back and 0.73–0.97
/// times between barriers (380–423 against 436–520 µs), as the model ranks them. Timed back to
/// back, six p = 4 sockets launches met the regret target in 3 (misses: reduce + bcast or the
/// binomial broadcast at 443–680 KiB, 7–15%); timed apart from 64 KiB, in 9 of 10, with no
/// regret above 8.7% from 64 KiB (the miss: the two-tree all-reduce at 1 KiB). Inside a node
/// the calls stay back to back: shm's large messages are pulled by the receiver and the sender
/// waits for the pull, so calls run into each other less; timed apart from 64 KiB there, four
/// p = 4 shm launches met the regret target in 1 (the ring all-reduce chosen at 64 KiB,
/// 11.6–14.4%; the naive broadcast at 235 KiB, 12.8%), back to back 4 of 4 the same day.
/// Below 64 KiB a call is short against the barrier (sockets, p = 4 on 2 cores: 120–160 µs),
/// whose jitter the batches were made to outlast (the first paragraph), and until the
/// forty-sixth session calls were timed back to back there (one launch timed apart at every
/// size had given 16.4/11.3% at p = 4 sockets). But back to back a tree's calls ran into each
/// other there too: at p = 4 sockets recursive doubling took up to 22% longer than
/// reduce + bcast at 256 B back to back, where `fabcoll-bench` (a barrier after each call) had it
/// 6–24% slower; costed as the two calls it makes, p = 4 sockets met both targets against the
/// back-to-back times in 6 of 11 launches. Timed apart at every size with that costing, p = 4
/// sockets met both targets in 7 of 7 launches (docs/calibration.md, "Forty-sixth session").
std::vector<double> time_candidates(Collective c, fc_comm_t world, fabcoll::Comm& comm, int p,
                                    const std::vector<const Algorithm*>& cands,
                                    const std::vector<double>& packets,
                                    const std::vector<fabcoll::CostModel>* models,
                                    std::size_t bytes, int reps, BarrierTime& barrier,
                                    PageVector<double>& a, PageVector<double>& b,
                                    ProgressLine* prog, const fabcoll::CostModel* order = nullptr,
                                    std::vector<std::vector<double>>* samples = nullptr,
                                    double budget_s = 0, int min_reps = kMinRounds) {
  const int batch = batch_calls(static_cast<double>(bytes));
  std::vector<std::vector<int>> next(cands.size());
  for (std::size_t j = 0; j < cands.size(); ++j) {
    if (c == Collective::bcast && p > 1 && (models != nullptr || order != nullptr)) {
      // packets[j] is a packet's bytes (as FABCOLL_<COLL>_PACKET); the sim takes their count,
      // as the engine cuts them.
      const auto k = static_cast<std::size_t>(
          packets[j] > 0 ? std::ceil(static_cast<double>(bytes) / packets[j]) : 0.0);
      next[j] = fabcoll::last_receivers(*cands[j], p, bytes,
                                        models != nullptr ? (*models)[j] : *order, k);
    } else {
      next[j].resize(static_cast<std::size_t>(p));
      for (int r = 0; r < p; ++r) next[j][static_cast<std::size_t>(r)] = (r + 1) % p;
    }
  }
  const auto use = [&](std::size_t j) {
    if (models != nullptr) comm.set_model((*models)[j]);
  };
  for (std::size_t j = 0; j < cands.size(); ++j) {  // warm-up
    use(j);
    const Force force(c, cands[j]->name, packets[j]);
    run_once(c, world, 0, bytes, a, b);
  }
  std::vector<std::vector<double>> ts(cands.size(),
                                      std::vector<double>(static_cast<std::size_t>(reps)));
  const bool apart = timed_apart();
  std::vector<std::vector<double>> per_call(
      cands.size(), std::vector<double>(apart ? static_cast<std::size_t>(reps * batch) : 0));
  const int asked = reps;
  // One barrier per round timed beside the batches (BarrierTime), where they run back to back.
  std::vector<double> round_barrier(apart ? 0 : static_cast<std::size_t>(reps));
  for (int r = 0; r < reps; ++r) {
    const double round_start = now();
    if (!apart) {
      check(fc_barrier(world), "barrier");
      const double t0 = now();
      check(fc_barrier(world), "barrier");
      round_barrier[static_cast<std::size_t>(r)] = now() - t0;
    }
    for (std::size_t turn = 0; turn < cands.size(); ++turn) {
      const std::size_t j = (turn + static_cast<std::size_t>(r)) % cands.size();
      use(j);
      const Force force(c, cands[j]->name, packets[j]);
      if (apart) {
        // Each call on its own: this rank's time from leaving a barrier to the call's return;
        // the slowest rank per call is taken below.
        int root = 0;
        for (int i = 0; i < batch; ++i) {
          check(fc_barrier(world), "barrier");
          const double t0 = now();
          run_once(c, world, root, bytes, a, b);
          per_call[j][static_cast<std::size_t>(r * batch + i)] = now() - t0;
          root = next[j][static_cast<std::size_t>(root)];
        }
        continue;
      }
      check(fc_barrier(world), "barrier");
      const double t0 = now();
      int root = 0;
      for (int i = 0; i < batch; ++i) {
        run_once(c, world, root, bytes, a, b);
        root = next[j][static_cast<std::size_t>(root)];
      }
      check(fc_barrier(world), "barrier");
      ts[j][static_cast<std::size_t>(r)] = now() - t0;  // the barrier is taken off below
    }
    if (prog != nullptr) prog->advance(static_cast<double>(cands.size()) / asked);
    if (r == 0 && budget_s > 0 && reps > min_reps) {
      double took = now() - round_start;
      double slowest = 0;
      check(fc_allreduce(&took, &slowest, 1, FC_DOUBLE, FC_MAX, world), "allreduce");
      reps = std::clamp(static_cast<int>(budget_s / std::max(slowest, 1e-9)), min_reps, reps);
      for (auto& t : ts) t.resize(static_cast<std::size_t>(reps));
      for (auto& t : per_call) t.resize(apart ? static_cast<std::size_t>(reps * batch) : 0);
      if (!apart) round_barrier.resize(static_cast<std::size_t>(reps));
    }
  }
  double during = 0;
  if (!apart) {
    // The slowest rank's per round (as `before`), their median; the lower of it and `before`
    // is taken off each batch.
    std::vector<double> slowest(round_barrier.size());
    check(fc_allreduce(round_barrier.data(), slowest.data(), slowest.size(), FC_DOUBLE, FC_MAX,
                       world),
          "allreduce");
    during = median(slowest) + test_barrier_extra().second;
    barrier.during_low = barrier.calls == 0 ? during : std::min(barrier.during_low, during);
    barrier.during_high = std::max(barrier.during_high, during);
    ++barrier.calls;
    if (during < barrier.before) ++barrier.lowered;
    const double off = std::min(barrier.before, during);
    for (auto& t : ts)
      for (auto& x : t) x = (x - off) / batch;
  }
  if (apart) {
    // Per round, the mean over its calls of the slowest rank's time of each call.
    for (std::size_t j = 0; j < cands.size(); ++j) {
      std::vector<double> slowest(per_call[j].size());
      check(fc_allreduce(per_call[j].data(), slowest.data(), slowest.size(), FC_DOUBLE, FC_MAX,
                         world),
            "allreduce");
      for (int r = 0; r < reps; ++r) {
        double sum = 0;
        for (int i = 0; i < batch; ++i) sum += slowest[static_cast<std::size_t>(r * batch + i)];
        ts[j][static_cast<std::size_t>(r)] = sum / batch;
      }
    }
  }
  if (prog != nullptr) prog->advance(static_cast<double>(cands.size()) * (asked - reps) / asked);
  std::vector<double> out;
  if (samples != nullptr) samples->assign(cands.size(), {});
  for (std::size_t j = 0; j < cands.size(); ++j) {
    // Slowest rank per repetition (no algorithm is forced any more here).
    std::vector<double> slowest(ts[j].size());
    check(fc_allreduce(ts[j].data(), slowest.data(), ts[j].size(), FC_DOUBLE, FC_MAX, world),
          "allreduce");
    const double med = median(slowest);
    if (!apart && med <= 0)  // every rank sees the same (the slowest): all stop alike
      fail(std::string(fabcoll::collective_name(c)) + " " + std::string(cands[j]->name) + " at " +
           std::to_string(bytes) +
           " B: its batches of calls took no longer than the barrier around them (" +
           std::to_string(std::lround(barrier.before * 1e6)) + " us measured alone, " +
           std::to_string(std::lround(during * 1e6)) +
           " us beside them): the machine is too busy to time the collectives; nothing "
           "written. Run again when the cores are free.");
    out.push_back(std::max(1e-9, med));
    if (samples != nullptr) (*samples)[j] = std::move(slowest);
  }
  return out;
}

/// One timed run of the fit to timed collectives: which algorithm, at how many bytes.
struct TrainRun {
  const Algorithm* alg = nullptr;
  double n = 0;
  double t = 0;  // measured (the small-message runs of call_wake_small; the fit's in its points)
};

/// What the model in `f` predicts for a training run, costed as the validation costs its runs
/// (k = 1: the training times no pipelines).
double training_prediction(const TrainRun& r, int p, const tuning::TuningFile& f,
                           const std::string& link, const fabcoll::Placement* placed) {
  fabcoll::CostQuery q;
  q.n = r.n;
  q.p = p;
  q.m = packet_choice(*r.alg, r.n, p, f, link, placed).m;
  q.k = 1;
  return r.alg->predict(q);
}

std::vector<double> validation_sizes(const std::vector<tuning::CrossoverSegment>& t, bool quick) {
  const double vmax = quick ? double(1 << 20) : double(4 << 20);
  std::set<double> s;
  for (std::size_t i = 1; i < t.size(); ++i) {
    const double b = t[i].lo;
    if (b < 64 || b > vmax) continue;
    for (double x : {b / 2, b * 2}) s.insert(std::clamp(std::round(x / 8) * 8, 8.0, vmax));
    if (s.size() >= (quick ? 4u : 8u)) break;
  }
  for (double x : {256.0, 16384.0, 262144.0, 1048576.0}) {
    if (s.size() >= (quick ? 5u : 10u)) break;
    if (x <= vmax) s.insert(x);
  }
  // Drop sizes within a factor 1.5 of a smaller kept one.
  std::vector<double> out;
  for (double x : s)
    if (out.empty() || x > out.back() * 1.5) out.push_back(x);
  return out;
}

std::string fmt(const char* f, double v) {
  // Sized to the text: a fixed buffer cut longer notes short (the rings' check's ended
  // "below the threshol").
  const int len = std::snprintf(nullptr, 0, f, v);
  if (len <= 0) return {};
  std::string out(static_cast<std::size_t>(len) + 1, '\0');
  std::snprintf(out.data(), out.size(), f, v);
  out.resize(static_cast<std::size_t>(len));
  return out;
}

/// " (x1.98–x5.10 after each validated size)" for the written-data probes during the
/// validation; "" for none.
std::string during_range(const std::vector<double>& probes) {
  if (probes.empty()) return "";
  const auto [lo, hi] = std::minmax_element(probes.begin(), probes.end());
  return " (x" + fmt("%.2f", *lo) + "–x" + fmt("%.2f", *hi) + " after each validated size)";
}

}  // namespace

int calibrate(int argc, char** argv) {
  CLI::App app{
      "fabcoll-calibrate: measure alpha, beta (per link class) and gamma (per reduction kernel),\n"
      "fit the cost model, compute packet-count rules and crossover tables, validate them by\n"
      "running every candidate algorithm around each crossover, and write the tuning file.\n"
      "Run it under the launcher: fabcoll-run -n P -- fabcoll-calibrate [options]\n"
      "(or mpirun). Needs P >= 2. Use the file with FABCOLL_TUNING=FILE."};
  std::string out_path;
  std::string report_dir;
  bool quick = false;
  app.add_option("-o,--output", out_path,
                 "tuning file to write (default: $XDG_CONFIG_HOME/fabcoll/tuning.json or "
                 "~/.config/fabcoll/tuning.json)");
  app.add_option("--report", report_dir,
                 "write a Markdown summary, CSV data and PNG plots (python3 + matplotlib) here");
  app.add_flag("--quick", quick, "fewer sizes and repetitions (under 2 minutes at p = 4)");
  bool replace = false;
  app.add_flag("--replace", replace,
               "overwrite the output file (default: keep its entries for other link classes "
               "and layouts, e.g. a p = 2 run's next to a p = 4 run's on a 2-core node)");
  std::string all_pairs = "exchange";
  app.add_option("--all-pairs", all_pairs,
                 "with more ranks than cores, how the concurrent pairs measure alpha, beta: "
                 "'exchange' (both ranks of a pair send at once, every rank busy as in most "
                 "collectives) or 'pingpong' (one direction at a time)")
      ->check(CLI::IsMember({"exchange", "pingpong"}));
  std::string oversub_fit = "collectives";
  app.add_option("--oversubscribed-fit", oversub_fit,
                 "with more ranks than cores, where alpha, beta come from: 'collectives' (fitted "
                 "to timed non-pipelined bcast, all-reduce, all-gather runs; default) or 'pairs' "
                 "(the concurrent pairs of --all-pairs)")
      ->check(CLI::IsMember({"collectives", "pairs"}));
  std::string quiet_fit = "pingpong";
  app.add_option("--quiet-fit", quiet_fit,
                 "with every rank on a core of its own, where alpha, beta come from: "
                 "'pingpong' (fitted to the ping-pong of two ranks; default) or 'collectives' "
                 "(fitted, with omega, chi, o, W and K, to timed collectives as with more ranks "
                 "than cores: a phase more, tens of seconds); ignored with more ranks than cores "
                 "(--oversubscribed-fit)")
      ->check(CLI::IsMember({"pingpong", "collectives"}));
  double large_from = -1;
  app.add_option("--large-from", large_from,
                 "on shm, whole messages from this many bytes (and a broadcast pipeline's "
                 "pulled packets at such sizes) get a beta of their own (beta beyond the "
                 "cache): with more ranks than cores fitted beside the other to the timed "
                 "collectives, and a broadcast costs at least its busiest core's copies at it; "
                 "with a core per rank fitted to the ping-pong above the single-copy threshold; "
                 "default: the L2 cache size (hwloc) over the ranks per core (over 2 with a core "
                 "per rank: a copy's source and destination); 0: none")
      ->check(CLI::NonNegativeNumber);
  double gamma_large_from = -1;
  app.add_option("--gamma-large-from", gamma_large_from,
                 "over the fabric, combines of messages from this many bytes get a gamma of their "
                 "own, measured on the three-buffer kernel the engine combines received data "
                 "with (gamma beyond the cache); default: the L2 cache size (hwloc) over three "
                 "buffers and the ranks per core; at most 16 MiB (rank 0 times three buffers of "
                 "up to three times it for each rank of a core); 0: none")
      ->check(CLI::Range(0.0, kGammaLargeFromMax));
  double small_below = -1;
  app.add_option("--small-below", small_below,
                 "over the fabric, where alpha, beta are fitted to timed collectives, messages "
                 "of fewer bytes get an alpha of their own, fitted beside the other and kept "
                 "where below it (alpha of small messages); default: what the engine injects "
                 "(the provider's inject size, 256 B on sockets); 0: none")
      ->check(CLI::NonNegativeNumber);
  bool no_validate = false;
  app.add_flag("--no-validate", no_validate,
               "skip the validation phase (measure and fit only: slow links, scripted runs)");
  bool fit_first = false;
  app.add_flag("--fit-first", fit_first,
               "time all of the fit's training collectives before the validation (default where "
               "they are fitted to (ranks sharing cores, --quiet-fit collectives): its first pass "
               "before, the others between the validation's passes, and the fit done again with "
               "all of them)");
  int retries = -1;
  app.add_option("--retries", retries,
                 "when the machine changed speed during a calibration (the ping-pong after the "
                 "validation, or the written-data probe after any validated size, moved by more "
                 "than 1.25 times, or the omega fitted where ranks share cores came out "
                 "beyond 1.5 times either way of what the probe before it (x1.5 or more) "
                 "implies, or shm's "
                 "rings came out in that fit at more than 1/1.5 of the pairs' ping-pong's "
                 "beta), measure, fit and validate again, at most this many times (default 2; "
                 "with --quick 4, as many as end within its 110 s); the last attempt is kept, "
                 "or where every one was disturbed, the least disturbed: the one whose "
                 "largest check, as a multiple of its bound, is smallest")
      ->check(CLI::Range(0, 10));
  CLI11_PARSE(app, argc, argv);
  // --quick's attempts are bounded by its time (kQuickSeconds), not by their count: on this VM,
  // whose slow mode comes and goes within seconds, a p = 4 attempt takes 15-40 s.
  if (retries < 0) retries = quick ? 4 : 2;

  fc_context_t ctx;
  check(fc_init(&ctx), "init");
  fc_comm_t world;
  check(fc_comm_world(ctx, &world), "comm_world");
  int rank = 0, p = 1;
  fc_comm_rank(world, &rank);
  fc_comm_size(world, &p);
  if (p < 2) {
    if (rank == 0)
      std::fprintf(stderr,
                   "fabcoll-calibrate: needs at least 2 ranks (run it under fabcoll-run "
                   "-n P or mpirun)\n");
    fc_finalize(ctx);
    return 2;
  }
  if (out_path.empty()) {
    const char* saved = std::getenv("FABCOLL_TUNING");
    unsetenv("FABCOLL_TUNING");
    out_path = tuning::tuning_path();
    if (saved != nullptr) setenv("FABCOLL_TUNING", saved, 1);
  }
  const std::string link = link_class();
  // The layout: fabcoll-calibrate runs its p ranks on one node. With more ranks than cores the
  // collectives time-share the cores, so α, β are measured with every rank active and recorded
  // as their own layout of the link class (model_for picks it when the layout matches).
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  const int layout = tuning::layout_key(p, cores);
  // α, β fitted to timed collectives (3b): with more ranks than cores unless
  // --oversubscribed-fit pairs, with a core for each rank where --quiet-fit collectives.
  const bool fit_collectives =
      layout > 0 ? oversub_fit == "collectives" : quiet_fit == "collectives";
  // Whether the fit's ω and rings' β are checked against the probes (a reason to measure
  // again): with ranks sharing cores, where they tell the VM's slow modes apart. With a core
  // for each rank the collectives' ω and β differ from a quiet pair's anyway (16 cores,
  // --quiet-fit collectives: p = 4 shm, ω 1.90-1.95 against probes implying 1.11-1.24, the
  // ping-pong after the validation within x0.92-1.08 the one before, measured again in each of
  // four attempts until stopped; p = 8 shm, ω 10.0, the grid's end, against 1.02, once). An ω
  // at the grid's end there goes unflagged now.
  const bool fit_checks = layout > 0;
  // Which ranks share a CPU (fabcoll-run --map-by): it decides which algorithm is fastest
  // there, so an oversubscribed entry records it (tuning::LinkParams::mapping).
  // The model then charges ω only on written data that crosses CPUs (Placement), as the
  // engine does with the same CPUs.
  std::string mapping;
  const fabcoll::Placement* placed = nullptr;
  {
    const std::int32_t mine = fabcoll::pinned_cpu();
    std::vector<std::int32_t> cpus(static_cast<std::size_t>(p));
    check(fc_allgather(&mine, 1, FC_INT32, cpus.data(), 1, FC_INT32, world), "allgather");
    // fabcoll-calibrate takes its p ranks as one node (see the layout above). The placement
    // as the engine sets it: wherever two ranks share a CPU (taskset can make that happen
    // without more ranks than cores).
    const std::vector<int> local(cpus.begin(), cpus.end());
    if (layout > 0) mapping = fabcoll::cpu_mapping(local, cores);
    placed = fabcoll::placement_of(local);
  }
  if (rank == 0 && layout > 0) {
    std::fprintf(stderr,
                 "fabcoll-calibrate: %d ranks on %d cores: measuring all pairs at once, "
                 "recorded as link %s, layout \"%s\"\n",
                 p, cores, link.c_str(), tuning::layout_name(p, cores, mapping).c_str());
  }
  const std::vector<Collective> colls =
      quick ? std::vector<Collective>{Collective::bcast, Collective::allreduce}
            : std::vector<Collective>{Collective::bcast,
                                      Collective::reduce,
                                      Collective::allreduce,
                                      Collective::allgather,
                                      Collective::reduce_scatter_block,
                                      Collective::alltoall};
  // Work units: one per ping-pong size (three ping-pongs where it validates: before the fit,
  // before the validation and after it), one per γ kernel, one per validation run (estimated),
  // and where it runs as many for the fit to timed collectives (3b), advanced plan by plan:
  // at p = 4 on 2 cores it took 30-35 s over sockets, the validation 22-60 s.
  const double validation_units = static_cast<double>(colls.size()) * 5 * 4;
  const double train_units = fit_collectives ? validation_units : 0;
  const double units = static_cast<double>(pingpong_sizes(quick).size()) * (no_validate ? 1 : 3) +
                       4 + validation_units + train_units;
  ProgressLine prog(rank == 0, units);

  // ω's bounced ping-pong rides along from kWrittenFrom up (quiet layout only), on shm from
  // the single-copy threshold: below it messages go through rings whose cells the sender
  // writes anyway, and the model charges ω only from there (Algorithm::costed).
  const double written_from =
      std::max(kWrittenFrom, link == "shm" ? fabcoll::shm::pull_bytes_from_environment() : 0.0);
  const double pull = link == "shm" ? fabcoll::shm::pull_bytes_from_environment() : 0.0;
  // What an attempt measures, fits and validates; the summary and the report show the one
  // kept (the last, unless every attempt was disturbed: see below).
  PingPong pp;
  tuning::TuningFile file;
  std::vector<std::pair<std::string, tuning::Point>> gamma_pts;
  tuning::LinkParams lp;
  tuning::LinkParams pairs_lp;
  BarrierTime barrier;
  std::vector<tuning::CostPoint> train;
  double fit_break_gain = 1;     // the fit to timed collectives: error without a break / with it
  double fit_small_gain = 1;     // likewise without α of small messages / with it
  bool small_held = false;       // the fit held α of small messages at α (fit_cost_points)
  bool small_paid = false;       // its one more parameter paid by the information criterion
  tuning::PingPongStep pp_step;  // over the fabric: where the ping-pong steps up (n 0: nowhere)
  std::vector<TrainRun> train_runs;  // the run of train[i]
  // Over the fabric the runs at half small_below (injected messages): not in the fit, K of
  // small messages refitted to them (CostModel::call_wake_small), and its error gain.
  std::vector<TrainRun> small_runs;
  double small_k_gain = 1;
  int small_k_runs = 0;  // the runs K of small messages was refitted to (those charged it)
  std::map<Collective, std::vector<tuning::CrossoverSegment>> tables;
  std::vector<Measured> results;
  double drift = 1, drift_small = 1, drift_large = 1;
  // The ping-pong timed once more just before the validation, against the first (the pace
  // across the fit's timed collectives), and the validation's last pass against its first (the
  // median over the runs timed of their medians' ratio): where the pace changed.
  double drift_fit = 1, drift_passes = 1;
  bool drifted = false;
  double probe_before = 1, probe_after = 1, probe_change = 1;
  std::vector<double> probes_during;  // after each validated size
  double validation_seconds = 0;      // the validation's own time (rank 0's clock)
  // Where the fit's later training passes ran between the validation's (interleaved): their
  // time (within validation_seconds), and the validated sizes timed once more after the fit
  // done again, where it runs a candidate otherwise (packet count, strategy or messages).
  bool interleaved = false;
  double training_between = 0;
  // The validation's time outside --quick's budget: training_between and the fit done again.
  double outside_budget = 0;
  int refit_changed = 0;
  bool probe_moved = false;
  // ω as fitted to the timed collectives where ranks share cores inside a node (0: not fitted
  // there), and whether it disagrees with the probe before the fit (written_fit_disagrees).
  double omega_fitted = 0;
  // The burst's o (measure_send_costs) where the fit to the timed collectives replaced it; -1
  // where it stands.
  double o_burst = -1;
  bool omega_disagrees = false;
  // The pairs' ping-pong β below shm's single-copy threshold over the β below it fitted to the
  // timed collectives (0: not fitted apart), and whether it is too low (ring_fit_disagrees).
  double ring_ratio = 0;
  bool rings_disagree = false;
  std::vector<FanoutRun> fanout_runs;
  std::vector<StreamedRun> streamed_runs;
  const char* fanout_env = std::getenv("FABCOLL_CALIBRATE_TEST_FANOUT");
  const bool test_fanout = fanout_env != nullptr && std::string(fanout_env) == "1";
  // β beyond the cache (CostModel::large_from), with more ranks than cores inside a node
  // (shm): from the L2 size over the ranks that share it (--large-from sets it; rank 0's, so
  // that all fit alike). Not over the fabric: p = 4 sockets on 2 cores fitted it at 1.5-2.1
  // times β, which moved the broadcast's crossovers from the binomial tree to the pipelines
  // at 512-740 KiB, where the model overstates the pipelines' time (+36 to +123%); three
  // launches then had regrets of 14-49% at 262 KiB - 1 MiB, against 0-7% there without it.
  // Inside a node with a core per rank (quiet), from half the L2: a single copy reads its
  // source into its destination, two buffers of n (fitted to the ping-pong above the
  // single-copy threshold, step 2). p = 2 shm, eleven --quick launches of the forty-fifth to
  // forty-seventh sessions: the ping-pong's one-way time per byte was 5.0-6.6e-11 s at 64-256
  // KiB and 1.2-1.4e-10 at 1-4 MiB (medians 4.3-6.1 µs at 64 KiB, 91-159 at 1 MiB), and the
  // one line from the threshold put a 256 KiB broadcast 25-43% over its time and a 1 MiB one
  // up to 25% under it.
  double large_bytes = 0;
  if (link == "shm" && (layout > 0 || pull > 0)) {
    const double sharing = layout > 0 ? std::ceil(static_cast<double>(p) / cores) : 2.0;
    large_bytes = large_from >= 0 ? large_from : l2_cache_bytes() / sharing;
    check(fc_bcast(&large_bytes, 1, FC_DOUBLE, 0, world), "bcast");
  }
  // γ beyond the cache (CostModel::gamma_large_from), over the fabric: a received message lands
  // whole and is combined with the rank's own data into its result, three buffers of n, which
  // the ranks of a core share its L2 for (--gamma-large-from sets it; rank 0's, so that all
  // cost alike). Inside a node too where every rank has a core (layout 0): from shm's
  // single-copy threshold a message is read into the result in pieces of up to 1 MiB
  // (kFoldChunk) and folded there with the rank's own data, three streams of n as well (p = 2
  // shm, eight launches of the forty-fourth and forty-fifth sessions: recursive doubling's
  // all-reduce at 1 MiB took 1.23–1.69 times its prediction, Rabenseifner's 0.91–1.26, and
  // Rabenseifner was the faster in all eight). Not where ranks share cores inside a node: there
  // β beyond the cache is fitted to the timed collectives (large_bytes above), combines and all.
  double gamma_large_bytes = 0;
  if (link.starts_with("ofi") || (link == "shm" && layout == 0)) {
    gamma_large_bytes =
        gamma_large_from >= 0
            ? gamma_large_from
            : std::floor(l2_cache_bytes() / (3 * std::ceil(static_cast<double>(p) / cores)) / 64) *
                  64;
    check(fc_bcast(&gamma_large_bytes, 1, FC_DOUBLE, 0, world), "bcast");
  }
  // α of small messages (CostModel::small_below), over the fabric where the fit is to timed
  // collectives (with more ranks than cores, or --quiet-fit collectives):
  // those the engine hands the provider by fi_tinject (ofi::Endpoint::inject_below; 256 B on
  // sockets). The fit at 256 B, the smallest size timed, has algorithms whose messages lie on
  // both sides (recursive doubling's 256 B, Rabenseifner's and the ring's 64-128 B at p = 4).
  double small_bytes = 0;
  if (fit_collectives && link.starts_with("ofi")) {
    if (small_below >= 0)
      small_bytes = small_below;
    else if (const fabcoll::ofi::Endpoint* ep = fabcoll::context_ofi(ctx))
      small_bytes = static_cast<double>(ep->inject_below());
  }
  check(fc_bcast(&small_bytes, 1, FC_DOUBLE, 0, world), "bcast");
  // A machine that changes speed within a run (this VM: README, "Which ranks share a core")
  // leaves a model fitted in one mode and validated in another. Each attempt ends with the
  // ping-pong and the written-data probe timed again; where either moved, the whole of it
  // runs again (every rank sees the same drift and probe: both are reduced over the ranks).
  const char* disturb_env = std::getenv("FABCOLL_CALIBRATE_TEST_DISTURB");
  const int test_disturbed = disturb_env != nullptr ? std::atoi(disturb_env) : 0;
  // Where every attempt was disturbed, the least disturbed is kept (tuning::attempt_changed_less:
  // the smallest largest check, each as a multiple of its bound); the same on every rank.
  // An attempt's state as references (assignable from a snapshot of values).
  const auto state = [&] {
    return std::tie(pp, file, gamma_pts, lp, pairs_lp, barrier, train, train_runs, small_runs,
                    small_k_gain, small_k_runs, o_burst, tables, results, drift, drift_small,
                    drift_large, drift_fit, drift_passes, drifted, probe_before, fit_break_gain,
                    fit_small_gain, small_held, small_paid, pp_step, probe_after, probes_during,
                    probe_change, probe_moved, omega_fitted, omega_disagrees, ring_ratio,
                    rings_disagree, fanout_runs, streamed_runs, validation_seconds, interleaved,
                    training_between, outside_budget, refit_changed);
  };
  using Snapshot = decltype(values_of(state()));
  std::optional<Snapshot> least_changed;
  tuning::AttemptChange least_change;
  int kept = 1;  // the attempt reported
  int attempt = 1;
  // Whether the attempt just run counts as disturbed: the machine changed speed during it, or
  // its fit disagrees with the probe or the ping-pong before it (or the tests force it).
  const auto attempt_disturbed = [&] {
    return !no_validate && (drifted || probe_moved || omega_disagrees || rings_disagree ||
                            attempt <= test_disturbed);
  };
  for (;; ++attempt) {
    const double attempt_start = prog.elapsed();
    if (attempt > 1) {
      prog.new_attempt(attempt);
      pp = PingPong{};
      gamma_pts.clear();
      train.clear();
      train_runs.clear();
      small_runs.clear();
      tables.clear();
      results.clear();
    }
    // 1-2: ping-pong and fit.
    prog.phase("1/5 ping-pong");
    pp = measure_pingpong(world, rank, p, layout > 0, all_pairs == "exchange", quick, prog,
                          written_from);
    // 1b: the sender's overhead o and time per byte G, in the same layout; before any refit of
    // α, β to cost formulas (3b), which must see them. G's messages: 8 KiB, below the fabric's
    // rendezvous and shm's single-copy threshold (half of it where that is set lower).
    const std::size_t gap_bytes =
        pull > 0 ? std::clamp<std::size_t>(static_cast<std::size_t>(pull / 2) / 8 * 8, 64, 8192)
                 : 8192;
    // A threshold at or below 64 B leaves no message size that the sender writes: G unmeasured.
    const bool gap_written = !(pull > 0 && static_cast<double>(gap_bytes) >= pull);
    const SendCosts sc = measure_send_costs(world, rank, p, layout > 0, quick, gap_bytes);
    const double o_measured = sc.o;
    // 1c: written data across CPUs, timed again after the validation (5b).
    probe_before = written_probe(world, rank, p, placed, quick);
    omega_fitted = 0;
    ring_ratio = 0;
    rings_disagree = false;
    file = tuning::TuningFile{};
    file.created = utc_now();
    const char* prov = std::getenv("FABCOLL_PROVIDER");
    file.machine = tuning::this_machine(prov != nullptr ? prov : "");
    // Every rank needs the fit (all must agree on tables and packet counts): rank 0 fits and
    // broadcasts the few numbers.
    double fitted[18] = {};
    fitted[10] = 1;               // ω: not measured (layout > 0)
    fitted[11] = fitted[12] = 1;  // χα, χβ: not measured (layout > 0: the pairs exchange already)
    if (rank == 0) {
      prog.phase("2/5 fit");
      // shm switches protocol at its single-copy threshold (rings below, one CMA copy from it):
      // split there. Elsewhere the break is searched for and kept where it clearly helps. (The
      // search left p = 2 shm without a break in some launches, where rings cost 1.3e-10 s/B
      // and single copies 7.5e-11: Rabenseifner's 16 KiB ring messages and recursive doubling's
      // one 32 KiB copy were then predicted within 1% of each other, and the copy was 17% faster.)
      tuning::PiecewiseFit pf =
          pull > 0 ? tuning::fit_piecewise_at(pp.medians, pull) : tuning::fit_piecewise(pp.medians);
      // α above the break below α under it: refit the upper β with α held (see the function).
      if (tuning::floor_upper_alpha(pf, pp.medians))
        std::fprintf(stderr,
                     "fabcoll-calibrate: fit above the break gave alpha below the lower segment's; "
                     "refitted beta with alpha = %.3g s\n",
                     pf.above.alpha);
      // Quiet shm: β beyond the cache (CostModel::large_from) from the ping-pong.
      const double beta_large = layout == 0 && large_bytes > 0
                                    ? tuning::fit_beyond_cache(pf, pp.medians, large_bytes)
                                    : 0.0;
      if (layout == 0 && link == "shm" && pull > 0 && !(large_bytes > 0) && large_from != 0)
        std::fprintf(stderr,
                     "fabcoll-calibrate: no beta beyond the cache: the L2 cache size is not "
                     "known (hwloc); --large-from sets where it starts\n");
      if (layout == 0 && large_bytes > 0 && !(beta_large > 0))
        std::fprintf(stderr,
                     "fabcoll-calibrate: no beta beyond the cache from %.0f B: the ping-pong "
                     "has no break below it, fewer than three sizes between the break and it "
                     "or two from it, or is no slower per byte there\n",
                     large_bytes);
      // The fitted time of one message at n (β beyond the cache from large_bytes where kept).
      const auto fitted_time = [&](double n) {
        return beta_large > 0 && n >= large_bytes ? pf.above.alpha + beta_large * n : pf.predict(n);
      };
      fitted[16] = beta_large > 0 ? large_bytes : 0;
      fitted[17] = beta_large;
      fitted[0] = std::max(1e-9, pf.below.alpha);
      fitted[1] = std::max(1e-13, pf.below.beta);
      fitted[2] = pf.has_break ? pf.break_n : 0;
      fitted[3] = std::max(1e-9, pf.above.alpha);
      fitted[4] = std::max(1e-13, pf.above.beta);
      // R² of the chosen model (one or two lines), relative residuals as in the fit.
      if (pf.has_break) {
        std::vector<double> ts;
        for (const auto& pt : pp.medians) ts.push_back(pt.t);
        const double mt = median(ts);
        double sse = 0, sst = 0;
        for (const auto& pt : pp.medians) {
          const double r = (pt.t - fitted_time(pt.n)) / pt.t, d = (pt.t - mt) / pt.t;
          sse += r * r;
          sst += d * d;
        }
        fitted[5] = sst > 0 ? 1 - sse / sst : 1;
      } else {
        fitted[5] = pf.single.r2;
      }
      fitted[6] = static_cast<double>(pp.medians.size());
      // ω from the bounced round trips (quiet layout; 1 otherwise, see above).
      if (!pp.written_medians.empty())
        fitted[10] = written_factor(pf, pp.medians, pp.written_medians);
      // χα, χβ from the exchanges (quiet layout; with ranks sharing cores the pairs' ping-pong
      // is itself an exchange when --all-pairs=exchange, and 1 otherwise).
      if (!pp.exchange_medians.empty())
        std::tie(fitted[11], fitted[12]) = exchange_factors(pf, pp.medians, pp.exchange_medians);
      // o in [0, α]: the model's o is the part of a message's α that occupies its sender, so
      // o > α (timer noise, or a call's fixed cost above the one-way latency) is meaningless.
      fitted[8] = std::clamp(o_measured, 0.0, fitted[0]);
      if (o_measured > fitted[0])
        std::fprintf(stderr,
                     "fabcoll-calibrate: measured sender overhead o = %.3g s above alpha = %.3g "
                     "s; clamped to alpha\n",
                     o_measured, fitted[0]);
      // G in [0, β] likewise (β: the whole one-way time per byte, which the sender's share
      // cannot exceed; a burst of 8 KiB faster than one of 8 bytes is noise: 0).
      fitted[13] = std::clamp(sc.gap, 0.0, fitted[1]);
      // G is for messages below the break: a burst at or above it measured the other segment
      // (sockets can break at 2 KiB), so G stays unmeasured (-1: β).
      if (!gap_written || !tuning::gap_kept(fitted[2], static_cast<double>(gap_bytes)))
        fitted[13] = -1;
    }
    // 3: γ on rank 0 alone; the others sleep.
    if (rank == 0) {
      prog.phase("3/5 gamma");
      file.gammas = measure_gamma(
          quick, prog, gamma_pts, gamma_large_bytes,
          cores > 0 ? static_cast<int>(std::ceil(static_cast<double>(p) / cores)) : 1, fitted[15]);
      fitted[7] = file.gammas.front().gamma;
      // Kept where it costs more than γ: a threshold whose buffers stay in cache measures γ
      // again, and a γ beyond the cache below it would cost large combines less than small.
      if (!(fitted[15] > fitted[7])) fitted[15] = 0;
      fitted[14] = fitted[15] > 0 ? gamma_large_bytes : 0;
      fitted[9] = file.gammas.back().gamma;  // δ: the local copy (measure_gamma's last entry)
      check(fc_barrier(world), "barrier");
    } else {
      idle_barrier(world);
    }
    check(fc_bcast(fitted, 18, FC_DOUBLE, 0, world), "bcast");
    lp = tuning::LinkParams{};
    lp.link_class = link;
    lp.model = {fitted[0], fitted[1], fitted[7], fitted[8]};
    lp.model.written = fitted[10];
    lp.model.exchange_alpha = fitted[11];
    lp.model.exchange_beta = fitted[12];
    lp.model.gap = fitted[13];
    lp.model.gamma_large_from = fitted[14];  // γ beyond the cache (0: none)
    lp.model.gamma_large = fitted[15];
    if (fitted[16] > 0) {  // quiet shm: β beyond the cache from the ping-pong
      lp.model.large_from = fitted[16];
      lp.model.beta_large = fitted[17];
    }
    lp.break_bytes = fitted[2];
    lp.alpha_above = fitted[3];
    lp.beta_above = fitted[4];
    lp.r2 = fitted[5];
    lp.points = static_cast<int>(fitted[6]);
    lp.local_ranks = layout;
    lp.mapping = mapping;
    if (rank != 0) file.gammas = {{"sum", "float64", fitted[7]}, {"copy", "byte", fitted[9]}};

    const int reps = quick ? 15 : 51;
    // The synchronisation overhead subtracted from every timed batch of calls (training and
    // validation) (see below).
    {
      std::vector<double> ts(static_cast<std::size_t>(4 * reps));
      for (auto& t : ts) {
        check(fc_barrier(world), "barrier");
        const double t0 = now();
        check(fc_barrier(world), "barrier");
        t = now() - t0;
      }
      std::vector<double> slowest(ts.size());
      check(fc_allreduce(ts.data(), slowest.data(), ts.size(), FC_DOUBLE, FC_MAX, world),
            "allreduce");
      barrier = BarrierTime{};
      barrier.before = median(slowest) + test_barrier_extra().first;
    }

    // 3b (more ranks than cores and --oversubscribed-fit collectives, the default; a core for
    // each rank and --quiet-fit collectives): α, β fitted to the
    // collectives themselves. Each non-pipelined algorithm of bcast, reduce, all-reduce and
    // all-gather is
    // timed at a few sizes (not the validation's) as the validation times them; its cost formula
    // is linear in α, β, γ (k = 1), so t ≈ a α + b β + c γ with a, b, c from the formula at unit
    // models, and α, β come from a relative least-squares fit over all of them. The pairs' fit
    // above stays in the report for comparison.
    pairs_lp = lp;
    // Where the fit's later training passes are timed between the validation's passes
    // (interleaved, below): a pass of them (train_pass) and the fit to all rounds timed so far
    // (refit_collectives; its argument: whether it prints its notes).
    interleaved = false;
    std::function<void()> train_pass;
    std::function<void(bool)> refit_collectives;
    if (fit_collectives) {
      prog.phase("3b/5 fit to collectives");
      const std::size_t top = 393216;
      // The broadcasts' next roots, as the validation finds them (its model pulls and is
      // placed alike).
      fabcoll::CostModel order = lp.model;
      order.pull_bytes = pull;
      order.placement = placed;
      // The smallest size timed: 256 B over the fabric, the validation's smallest size, as a
      // provider's inject limit parts the smallest messages from the rest (sockets: 255 B; its
      // ping-pong 8.4 µs one way at 32 B, 7.8 at 128 B, 13.8 at 256 B). Fitted from 64 B, a line
      // through the injected point and the others took α for half a 256 B hop: the validation
      // measured every algorithm at 1.5-2 times its prediction (p = 4 sockets: median errors 41.0
      // and 39.1% in two launches; from 256 B 28.3, 22.2, 43.2 and 24.4%, the 28.3 and 43.2 with
      // the ping-pong after the validation at x0.43 and x0.52 the first). Inside a node 64 B:
      // fitted from 256 B, a p = 4 shm launch chose reduce + bcast below 14 KiB (regret 74% at
      // 256 B), which four launches from 64 B did not.
      const bool fabric = link.starts_with("ofi");
      const double smallest = fabric ? 256.0 : 64.0;
      // Inside a node, a break at shm's single-copy threshold: a message from there goes as a
      // request-to-send, the receiver's CMA read and a completion back, each of which waits for
      // its rank to be scheduled behind the others of its core, so such a message's α is larger
      // (builtin_link: +3.4 µs per rank sharing a core, measured on pairwise all-to-all). One α
      // through both missed it: p = 4 on 2 cores, the hybrid's three exchange steps of n/2 at
      // 78–86 KB took about 35 µs each where the fit charged 21, and it was chosen there over
      // recursive doubling's two steps of n (90–110 against 68–79 µs measured, regret 40–47%
      // in three launches). The rounds whose messages reach the threshold (their share of the
      // critical path, as the selector mixes a whole-message algorithm's α:
      // tuning::mixed_segments) get α of the upper segment (and their bytes β of the upper
      // segment, the others β below the break: CostFitOptions::beta_below, below); 96 KiB adds
      // a size between 32 and 384 KiB to that segment. Over the fabric too: the validation's
      // reduce + bcast against recursive doubling lies there (p = 4 sockets on 2 cores), and
      // without it two launches of twelve of the thirty-sixth session chose reduce + bcast at
      // 31-95 KiB where recursive doubling was 16% faster (χβ fitted at 3.4-3.9, reduce +
      // bcast predicted 5-7% under recursive doubling). With it the predicted ratio of the two
      // came within a median 10% of the measured one (13% without, twelve launches), but two
      // of ten launches still missed on that pair (14 and 162 KiB), both with the pattern of a
      // change of the VM's pace between collectives (timed size by size since, below); about
      // 5 s a launch.
      // Over the fabric no break is known beforehand, and one α through all sizes fitted sockets
      // badly: its one-way time is a staircase (16-17 µs up to 128 B, 22-23 at 256-512 B, 28-31
      // from 1 to 32 KiB, p = 2), and at p = 4 on 2 cores the fit's R² came out 0.67-0.75 in
      // five launches. So a break at each training size between the smallest and the largest is
      // tried (the same timed points, each with its share above that break) and kept where its
      // extra α pays by the Bayesian information criterion (tuning::choose_break): at 2 KiB it
      // made the error 2.2-2.3 times smaller in two launches (R² 0.86-0.88; the launches
      // before it 0.67-0.75 without, 0.89-0.91 with a break forced at 2 KiB).
      const bool broken = pull > 0;
      // β_x (CostModel::ring_exchange_beta): inside a node where ranks share CPUs, the
      // exchanges' ring bytes across CPUs (Algorithm::ring_shares) at a β of their own, a column
      // of the fit (CostPoint::bx). They came out at 3.3-5.1 times the one-way ring bytes' β
      // (21 p = 4 launches, both of the VM's modes). With them in β's bytes under
      // χβ (one χ for α and β inside a node), recursive doubling's all-reduce at 16 KiB came out
      // 29-43% under its time in 17 x6 launches of the forty-first session; χβ fitted apart
      // from χα (a build for the test) came out 2.0 beside χα 1.5 and left it 38% under, since
      // the exchanges above the threshold (pulled) fitted at it. Fitted, β_x came out
      // 1.0-1.3e-9 s/B in the x6 mode and 2.9-3.4e-10 in the x2 mode, 0.93-1.12 times the
      // concurrent pairs' ping-pong β (each pair exchanging across CPUs at once) in 18 of the
      // 21 launches; recursive doubling at 8-31 KiB in the x6 mode then came out 3-19% under
      // (docs/calibration.md, "Forty-second session"). A point's c holds
      // none of them (the model's β_x is 0 there, measured: linear_cost_terms' ring_x_terms).
      // (Where the ranks' CPUs are known and more than one: on one CPU no byte crosses.)
      const bool fit_ring_x = broken && placed != nullptr && placed->size() == p &&
                              std::any_of(placed->cpus().begin(), placed->cpus().end(),
                                          [&](int c) { return c != placed->cpus().front(); });
      std::vector<double> sizes{smallest, 2048.0, 32768.0, static_cast<double>(top)};
      if (broken || fabric) sizes.insert(sizes.begin() + 3, 98304.0);
      // Over the fabric also twice the smallest (512 B): a second size below the break, for β
      // there (CostFitOptions::beta_below, below). With 256 B alone below it and one β, the
      // validation's reduce + bcast at 512 B came out 15-37% under its time in 10 of 12 p = 4
      // sockets launches and was chosen there, where recursive doubling was up to 9% faster in
      // 9 of the 10: from 256 to 512 B reduce + bcast took 12-32 µs longer and recursive
      // doubling 2-8, where β (4e-10 s/B) charged under 1 µs. β below the break came out
      // 1.2-2.1e-8 s/B in six launches.
      // And 384 and 768 B about it: four sizes below the break (1 KiB over sockets) where the
      // near-ties of reduce + bcast against recursive doubling lie. p = 4 sockets on 2 cores,
      // --quick, taking turns with the binary before (ten launches): both targets met in 5 of 5
      // launches against 1 of 5, the fit's R² 0.92-0.97 against 0.84-0.94 (docs/calibration.md,
      // "Thirty-third session"). About 10 s more a launch.
      if (fabric) sizes.insert(sizes.begin() + 1, {1.5 * smallest, 2 * smallest, 3 * smallest});
      // β beyond the cache (CostModel::large_from): one more size, twice the threshold, whose
      // whole messages lie beyond it (the threshold above the sizes before and that size at
      // most 4 MiB; else none).
      const bool large = large_bytes > top && 2 * large_bytes <= 4.0 * (1 << 20);
      if (large) sizes.push_back(2 * large_bytes);
      // With β_x, one more size: half the single-copy threshold (16 KiB), whose messages go
      // through the rings. Its one-way messages (the broadcasts' and reduces') hold β below the
      // break, which the exchanges' bytes no longer do: without it that β came out at a third
      // of its value (1.1-1.6e-10 s/B against 3.4-4.3e-10, four x6 launches with β_x from the
      // pairs' ping-pong) and the binomial broadcast at 16 KiB 50-59% under its time.
      if (fit_ring_x && pull / 2 > 2048 &&
          std::find(sizes.begin(), sizes.end(), pull / 2) == sizes.end()) {
        sizes.push_back(pull / 2);
        std::sort(sizes.begin(), sizes.end());
      }
      std::vector<double> breaks{broken ? pull : 0.0};
      // Over the fabric also the powers of two from twice the smallest training size below 2 KiB:
      // the sockets provider's one-way time steps up at 1 KiB (p = 4 on 2 cores: 44.5 µs at
      // 512 B, 130.5 at 1 KiB), which the training's 2 KiB runs straddle (Rabenseifner's 512
      // and 1024 B messages, recursive doubling's 2 KiB); with 2 KiB the first break tried,
      // reduce + bcast was chosen at 1 KiB and took twice its prediction (regret 32.2%).
      if (!broken && fabric)
        for (double b = 2 * smallest; b < 2048.0; b *= 2) breaks.push_back(b);
      // Then each training size between the smallest and the largest not tried yet. Over the
      // fabric none with fewer than two training sizes below it (tuning::break_has_sizes_below):
      // 384 B, with 256 B alone below it (inside a node with single copies off, 2 KiB with 64 B
      // below it is still tried: no launch measured it otherwise).
      if (!broken)
        for (std::size_t i = 1; i + 1 < sizes.size(); ++i)
          if (std::find(breaks.begin(), breaks.end(), sizes[i]) == breaks.end())
            breaks.push_back(sizes[i]);
      if (!broken && fabric)
        std::erase_if(breaks, [&](double brk) {
          return brk > 0 && !tuning::break_has_sizes_below(brk, sizes);
        });
      // Over the fabric the ping-pong's step, where it has one, is the break kept (whenever the
      // timed collectives pay for it): their few sizes only straddle it, and in one launch of
      // nine the fit kept 2 KiB where the ping-pong stepped up at 1 KiB (x1.39), and chose
      // reduce + bcast at 1 KiB (regret 28.1%).
      std::size_t step_at = 0;
      if (!broken && fabric) {
        pp_step = tuning::ping_pong_step(pp.medians, smallest, static_cast<double>(top));
        // (A step with fewer than two training sizes below it is not tried, as the others:
        // reported as none.)
        if (pp_step.n > 0 && !tuning::break_has_sizes_below(pp_step.n, sizes))
          pp_step = tuning::PingPongStep{};
        if (pp_step.n > 0) {
          const auto it = std::find(breaks.begin(), breaks.end(), pp_step.n);
          step_at = static_cast<std::size_t>(it - breaks.begin());
          if (it == breaks.end()) breaks.push_back(pp_step.n);
        }
      }
      // α of small messages lies below every break tried (CostPoint: above + small <= 1).
      for (const double brk : breaks)
        if (brk > 0 && small_bytes >= brk) {
          if (rank == 0)
            std::fprintf(stderr,
                         "fabcoll-calibrate: --small-below %.0f is not below the break tried at "
                         "%.0f B; no alpha of small messages\n",
                         small_bytes, brk);
          small_bytes = 0;
        }
      const auto largest = static_cast<std::size_t>(sizes.back());
      PageVector<double> a(largest * static_cast<std::size_t>(p) / sizeof(double) + 1, 1.0),
          b(a.size(), 0.0);
      // κ's runs (CostModel::streamed, below): inside a node the broadcast's pipelines are timed
      // among the whole-message broadcasts at the largest training sizes, as the validation
      // times them all together. Without them between their turns the whole-message
      // broadcasts ran 10-20% faster than in the validation (1 MiB, p = 4 shm: the naive one
      // 221-230 against 252-269 µs in two launches), and the fit took β beyond the cache
      // below what the validation measured. Their packet counts do not wait for the fit: the
      // ping-pong's model chose packets above the threshold in two of three launches, and κ
      // was not fitted there.
      tuning::TuningFile pre_file = file;
      pre_file.links = {lp};
      // (None where single copies are off: no threshold to keep the packets below.)
      std::vector<double> stream_sizes;
      if (link == "shm" && pull > 0) {
        stream_sizes.push_back(static_cast<double>(top));
        if (sizes.back() > top) stream_sizes.push_back(sizes.back());
      }
      // The reduce since W (CostModel::wake): its binomial and naive algorithms are the fan-in
      // collectives' one-way rounds (fans_in); reduce + bcast is costed as its binomial reduce
      // and broadcast (Algorithm::parts) and is not fitted itself.
      // Size by size, every collective at a size before the next size: the validation compares
      // algorithms of one size timed together, and the machine can change its pace within the
      // training. Timed collective by collective (every broadcast first), one p = 4 sockets
      // launch of eight saw the binomial broadcast at 1.2e-10 s per byte of its critical path
      // (96 to 384 KiB) and the binomial reduce at 5.8e-10 and recursive doubling at 10.3e-10,
      // where the other seven had the reduce at 1.4-1.8 times the broadcast (1.2-3.9e-10 s/B)
      // and recursive doubling at 2.5-3.2 times it; its ping-pong came out x2.10 after the
      // validation. The fit put reduce + bcast 20% under its time at 74 KiB and chose it over
      // recursive doubling, 13.4% faster. Size by size, a change of pace falls between sizes,
      // and the algorithms compared at one size see the same machine.
      // In kTrainingPasses passes over the sizes, as the validation times its sizes
      // (kValidationPasses), each size's rounds split evenly among them: every plan first, then
      // the passes, then the points.
      struct TrainPlan {
        Collective c;
        double n;
        std::vector<const Algorithm*> cands;
        std::vector<tuning::CostPoint> pts;
        std::vector<tuning::CostPoint> pts_beta;       // the same with G = β (see where it is set)
        std::vector<std::vector<double>> point_above;  // per point, per candidate break
        std::vector<std::vector<double>> point_above_bytes;  // the same, of its bytes
        std::vector<double> packets;
        std::vector<fabcoll::CostModel> run_models;
        std::size_t whole = 0;
        std::vector<std::vector<double>> rounds;  // per candidate, over the passes
      };
      std::vector<TrainPlan> train_plans;
      // Over the fabric where α of small messages is fitted, one size more below the inject size
      // (half small_below: 128 B on sockets), every message there injected: timed as the others
      // but not in the fit; K of small messages is refitted to it (CostModel::call_wake_small,
      // below). In the fit itself (one K) such a call took K from 256 B up, where over sockets
      // a call is mostly its first wake-up: p = 4 on 2 cores, the validation's naive broadcast
      // took 18-22 µs at 128 B and 44-65 at 256 B (fiftieth session), and every broadcast at
      // 128 B was predicted at 1.5-2.9 times its time. About 3 s a launch.
      // (In whole doubles, as run_once times them: at least one.)
      const double small_size = fabric ? std::floor(small_bytes / 16) * 8 : 0.0;
      const bool timed_small = small_size >= 8 && small_size < sizes.front();
      std::vector<double> timed_sizes = sizes;
      if (timed_small) timed_sizes.insert(timed_sizes.begin(), small_size);
      for (const double n : timed_sizes) {
        for (Collective c : {Collective::bcast, Collective::reduce, Collective::allreduce,
                             Collective::allgather}) {
          // Only formulas linear in α, β, γ (hybrid picks a strategy by the model: left out),
          // not pipelined (their k depends on the model), timed together as the validation
          // times its candidates (time_candidates).
          TrainPlan plan;
          plan.c = c;
          plan.n = n;
          auto& cands = plan.cands;
          auto& pts = plan.pts;
          auto& point_above = plan.point_above;
          auto& point_above_bytes = plan.point_above_bytes;
          // Nor one costed as the calls it makes (Algorithm::parts: reduce + bcast): those
          // calls are timed here, each as itself; nor one charged K more than once
          // (Algorithm::calls), which the fit's K column counts once.
          for (const Algorithm* alg : fabcoll::all_algorithms()) {
            if (alg->coll != c || alg->optimal_k != nullptr || !alg->parts.empty() ||
                alg->calls != 1 || !tuning::eligible(*alg, p, true))
              continue;
            double ua = 0, ub = 0, uc = 0;
            // Costed as the run goes: from shm's single-copy threshold the receivers pull (the
            // naive broadcast's root then pays o per receiver, not o + Gn).
            fabcoll::CostModel tm = lp.model;
            // δ as the tuning file's model charges it (tuning::model_for: the measured copy,
            // times the ranks per core where they share cores): Bruck's all-gather copies
            // (p + 1)n, which its c carries. Without it the fit took Bruck for recursive
            // doubling's twin (the same messages) where it took 1.3-3.0 times its time.
            tm.copy = tuning::layout_copy(fitted[9], layout, cores);
            tm.pull_bytes = pull;
            tm.placement = placed;  // the naive broadcast's pulls on one CPU, one after another
            // γ beyond the cache in c, mixed as tuning::segment_k mixes it (its bytes in
            // messages that reach gamma_large_from).
            if (tm.has_gamma_large() && n >= tm.gamma_large_from)
              tm.gamma += fabcoll::sim_break_shares(*alg, p, n, tm.gamma_large_from, -1).beta *
                          (tm.gamma_large - tm.gamma);
            tm.ring_exchange_beta = fit_ring_x ? 0.0 : -1.0;  // in bx (below), not in c
            // Above the break G is not the measured one (it was measured below: β there, as
            // model_for sets the upper segment, for an algorithm segment_k places there).
            if (broken && tuning::mean_message_bytes(*alg, n, p, tm) >= pull) tm.gap = -1;
            // The share of its rounds above the break, as the selector mixes α
            // (tuning::mixed_segments): for each candidate break.
            std::vector<double> above(breaks.size(), 0.0), above_bytes(breaks.size(), 0.0);
            for (std::size_t bi = 0; bi < breaks.size(); ++bi)
              if (breaks[bi] > 0) {
                const fabcoll::BreakShares sh =
                    fabcoll::sim_break_shares(*alg, p, n, breaks[bi], -1);
                above[bi] = sh.alpha;
                above_bytes[bi] = sh.beta;
              }
            // Its o and o_r terms (held in uc at the measured o; refit_overhead).
            double uo = 0, uor = 0, ubx = 0;
            if (!tuning::linear_cost_terms(*alg, n, p, tm, ua, ub, uc, &uo, &uor, &ubx)) continue;
            fabcoll::CostQuery fq;
            fq.n = n;
            fq.p = p;
            fq.m = lp.model;
            fq.m.placement = placed;
            // As Algorithm::costed charges ω: not below written_from (link_model's).
            fq.m.written_from = link == "shm" ? fabcoll::shm::pull_bytes_from_environment() : 0;
            const bool charged =
                !(fq.m.written_from > 0 && alg->mean_message(fq) < fq.m.written_from);
            cands.push_back(alg);
            const double e = alg->clamped_exchange_share(fq);
            // Its rounds that wait for a wake-up, as Algorithm::costed charges W.
            const double w = fabcoll::fans_in(c) ? ua * (1 - e) : 0.0;
            // Its bytes in whole messages beyond the cache, as tuning::segment_k mixes β.
            const double big = large && n >= large_bytes
                                   ? fabcoll::sim_break_shares(*alg, p, n, large_bytes, -1).beta
                                   : 0.0;
            // Its rounds of small messages, as tuning::segment_k mixes α, and their bytes, as
            // it mixes β below the break.
            const fabcoll::BreakShares small_sh =
                small_bytes > 0 ? fabcoll::sim_break_shares(*alg, p, n, small_bytes, -1)
                                : fabcoll::BreakShares{1, 1};
            const double small = 1 - small_sh.alpha;
            // (ua and ub hold its messages to core-mates already: linear_cost_terms costs tm,
            // which has the placement and the pull threshold, as Algorithm::costed does.)
            pts.push_back({ua, ub, uc, 0, charged ? alg->placed_written_share(fq) : 0.0, e, 0.0, w,
                           big, small});
            pts.back().small_bytes = 1 - small_sh.beta;
            pts.back().o = uo;
            pts.back().o_recv = uor;
            pts.back().bx = ubx;
            // With G measured (the ping-pong's own break, if any, above G's messages): the point
            // costed with G = β too, for the breaks tried at or below G's messages, under which
            // the fitted model leaves G unmeasured (after the fit, below); so each break is
            // judged (choose_break) as the model fitted under it would cost. Held at the
            // measured G in c under every break, the naive broadcast root's p − 2 further sends
            // and the naive reduce's p − 2 further messages were charged (p − 2)Gn in the fit
            // that the model then did not charge: p = 4 sockets on 2 cores, ten --quick
            // launches of 121 (thirty-fifth to forty-first sessions) held G at 5.1e-10-1.3e-9
            // s/B, c alone came to 0.90-4.0 times the naive broadcast's time at 384 KiB, and
            // every one of them kept the break at 1 KiB. Seven of the ten missed a target
            // (regrets 10.8-24.7%), against 18 of the other 111; in the last, the model put the
            // naive broadcast and reduce at 2-384 KiB 35-68% under their time (R² 0.34).
            plan.pts_beta.push_back(pts.back());
            if (tm.gap >= 0) {
              fabcoll::CostModel tb = tm;
              tb.gap = -1;
              double ba = 0, bb = 0, bc = 0, bo = 0, bor = 0, bbx = 0;
              if (tuning::linear_cost_terms(*alg, n, p, tb, ba, bb, bc, &bo, &bor, &bbx)) {
                tuning::CostPoint& q = plan.pts_beta.back();
                q.a = ba;
                q.b = bb;
                q.c = bc;
                q.bx = bbx;
                q.w = fabcoll::fans_in(c) ? ba * (1 - e) : 0.0;
                q.o = bo;
                q.o_recv = bor;
              }
            }
            point_above.push_back(std::move(above));
            point_above_bytes.push_back(std::move(above_bytes));
          }
          if (cands.empty()) continue;
          auto& packets = plan.packets;
          auto& run_models = plan.run_models;
          packets.assign(cands.size(), 0.0);
          run_models.assign(cands.size(), order);
          plan.whole = cands.size();
          if (c == Collective::bcast &&
              std::find(stream_sizes.begin(), stream_sizes.end(), n) != stream_sizes.end()) {
            for (const Algorithm* alg : fabcoll::all_algorithms()) {
              if (alg->coll != c || alg->optimal_k == nullptr || !tuning::eligible(*alg, p, true))
                continue;
              // Packets just below the single-copy threshold, as the fitted model chose them at
              // these sizes in every launch so far (384 KiB: 13, 1 MiB: 33 packets).
              const tuning::PacketChoice pc = packet_choice(*alg, n, p, pre_file, link, placed);
              const double k = std::floor(n / pull) + 1;
              const double packet = std::ceil(n / k);
              if (k < 2 || packet >= pull) continue;
              cands.push_back(alg);
              packets.push_back(packet);
              run_models.push_back(pc.m);
            }
          }
          plan.rounds.resize(cands.size());
          train_plans.push_back(std::move(plan));
        }
      }
      const int train_rounds = quick ? 21 : 41;
      const int pass_rounds = (train_rounds + kTrainingPasses - 1) / kTrainingPasses;
      // The plans and buffers outlive this block: the passes timed between the validation's
      // use them (train_pass).
      const auto shared_plans = std::make_shared<std::vector<TrainPlan>>(std::move(train_plans));
      const auto shared_ab = std::make_shared<std::pair<PageVector<double>, PageVector<double>>>(
          std::move(a), std::move(b));
      train_pass = [&, shared_plans, shared_ab, order, pass_rounds] {
        for (TrainPlan& plan : *shared_plans) {
          // With pipelines among them each runs under its own model, as in the validation (the
          // whole-message ones under the one that orders their roots); else the context's.
          const bool piped = plan.cands.size() > plan.whole;
          std::vector<std::vector<double>> rounds;
          (void)time_candidates(plan.c, world, fabcoll::world_comm(ctx), p, plan.cands,
                                plan.packets, piped ? &plan.run_models : nullptr,
                                static_cast<std::size_t>(plan.n), pass_rounds, barrier,
                                shared_ab->first, shared_ab->second, nullptr,
                                piped ? nullptr : &order, &rounds);
          for (std::size_t j = 0; j < rounds.size(); ++j)
            plan.rounds[j].insert(plan.rounds[j].end(), rounds[j].begin(), rounds[j].end());
          prog.advance(train_units / static_cast<double>(shared_plans->size() * kTrainingPasses));
        }
      };
      // Interleaved (unless --fit-first or --no-validate): the first pass before the fit, whose
      // model picks the validation's sizes, packet counts and strategies; the others between
      // the validation's passes, and the fit done again to all of them for the tables and the
      // predictions (refit_collectives, after the validation's passes). This VM's pace moves
      // within seconds: over 84 p = 4 sockets launches of the forty-ninth and fiftieth
      // sessions the validation's last pass took x0.79-1.22 its first, and a launch's median
      // signed error ran from -25.5% to +29.2% (its misses by median error at the ends); timed
      // first, the training saw the pace of the 20-30 s before the validation, not the pace
      // the validation saw.
      interleaved = !no_validate && !fit_first;
      for (int pass = 0; pass < (interleaved ? 1 : kTrainingPasses); ++pass) train_pass();
      // The model before the fit (the ping-pong's), from which every fit starts.
      const tuning::LinkParams lp_before = lp;
      refit_collectives = [=, &lp, &train, &train_runs, &small_runs, &fit_break_gain,
                           &fit_small_gain, &small_held, &small_paid, &omega_fitted, &o_burst,
                           &ring_ratio, &rings_disagree, &streamed_runs, &small_k_gain,
                           &small_k_runs](bool say) {
        lp = lp_before;
        omega_fitted = 0;
        ring_ratio = 0;
        rings_disagree = false;
        train.clear();
        train_runs.clear();
        small_runs.clear();
        const std::vector<TrainPlan>& train_plans = *shared_plans;
        std::vector<std::vector<tuning::CostPoint>> trains(breaks.size());
        std::vector<StreamedRun> pipe_timed;
        for (const TrainPlan& plan : train_plans) {
          const double n = plan.n;
          std::vector<double> t;
          for (auto& r : plan.rounds) t.push_back(std::max(1e-9, median(r)));
          for (std::size_t j = plan.whole; j < plan.cands.size(); ++j)
            pipe_timed.push_back(
                {std::string(plan.cands[j]->name), n, std::ceil(n / plan.packets[j]), 0, t[j], 0});
          for (std::size_t j = 0; j < plan.pts.size(); ++j) {
            if (timed_small && n == small_size) {
              small_runs.push_back({plan.cands[j], n, t[j]});
              continue;
            }
            for (std::size_t bi = 0; bi < breaks.size(); ++bi) {
              // G as the model fitted under this break keeps it (after the fit, below).
              trains[bi].push_back(tuning::gap_kept(breaks[bi], static_cast<double>(gap_bytes))
                                       ? plan.pts[j]
                                       : plan.pts_beta[j]);
              trains[bi].back().t = t[j];
              trains[bi].back().above = plan.point_above[j][bi];
              trains[bi].back().above_bytes = plan.point_above_bytes[j][bi];
            }
            train_runs.push_back({plan.cands[j], n});
          }
        }
        // ω and χ with α, β: the collectives' own written and exchange shares (each point's f and
        // e) tell them apart from β (one χ for α and β: the pairs' exchanges cannot be compared
        // with a one-way ping-pong here). ω only inside a node: it is the cost of reading another
        // core's modified cache lines (shm's single-copy reads); over the fabric the kernel's or
        // the provider's copies sit between, the quiet pair measured 1.0 and 1.2 on sockets, and a
        // free ω there only absorbed noise (sockets, p = 4 on 2 cores: ω = 10, the grid's end,
        // with β = 4.5e-11 s/B, a fifth of the pairs' 2.2e-10).
        const double max_omega = link.starts_with("ofi") ? 1.0 : 10.0;
        // Over the fabric three more (CostFitOptions): χα apart from χβ (up to kExchangeFileMax),
        // an α of their own for exchanges above the break, and K, a call's first wake-up
        // (CostModel::call_wake). p = 4 sockets on 2 cores, the timed collectives at 256 B of
        // thirteen --quick launches: a one-way call's first round took about 90 µs and its later
        // rounds 20-30 (the naive broadcast 100, the binomial tree 115, reduce + bcast 169), an
        // exchange round about 105; with one α per round (χα = χβ) the fit put reduce + bcast
        // 9-40% over its time (six launches) and predicted it above recursive doubling in every
        // launch, where it was within 2% of recursive doubling or faster in all thirteen. With
        // these (refitted offline from the same launches' training.csv) it came out below
        // recursive doubling in eleven and level in two, and in the four launches compared the
        // fit's weighted error fell to 0.37-0.64 of what it was. K in each segment, fitted apart
        // (CostModel::call_wake; above the break CostFit::call_wake_above): one K charged at every
        // size put reduce + bcast under recursive doubling from 29 KiB, where it was 3-17%
        // slower; none above the break put the naive broadcast and reduce just above a 1 KiB
        // break 32-40% under their training times (fourteen launches with K above apart: 0-13%,
        // no regret above 9.4%).
        // And β below the break apart from β above it (the sizes above say why). Inside a node
        // too, at shm's single-copy threshold: below it a message is copied twice, into a ring
        // cell its sender writes and out of it by the receiver, from it once (the receiver's CMA
        // read). In the VM's slowest mode (the written-data probe x5.7-6.3; reading lines
        // another core modified) every ring transfer pays for it: p = 4 on 2 cores, one β through
        // both put every algorithm 26-64% under its time at 8-33 KiB, and eight --quick launches
        // had median errors of 25.3-32.5% (five with regrets of 44-52%: the hybrid chosen at
        // 32 KiB, whose halves go through the rings, over recursive doubling's single copies).
        // With β below the break of its own (2.9-3.0e-10 s/B against 1.2-1.3e-10 above) six
        // launches in that mode came out at 12.5-14.5% and 4.8-9.3%.
        tuning::CostFitOptions fit_options;
        fit_options.split_above = fit_options.call = fabric;
        fit_options.beta_below = fabric || broken;
        // The grid of ω, χα and χβ searched in parts, one on each rank (every rank holds the
        // same points: the timed runs' slowest over the ranks), and the errors summed: the same
        // fit as fit_cost_points_written's on one rank. A collective call: every rank makes
        // the same calls in the same order (one per candidate break, and one more where some
        // point has small messages; the points, the breaks and the ping-pong's model are the
        // same on every rank), or the ranks wait for each other forever. Searched whole on
        // every rank with the search before the fifty-second session's, the fits took about
        // 6.5 s of each rank's CPU in a p = 4 sockets launch on 2 cores (perf), 8.1 s of the
        // launch's wall time for the fit done again after the validation, 1.1 s so.
        const auto fit_of = [&](const std::vector<tuning::CostPoint>& tr) {
          const double chi_hi = fabric ? tuning::kExchangeFileMax : tuning::kExchangeMax;
          const double chi_beta_lo = fabric ? tuning::kExchangeMin : 1;
          const double chi_beta_hi = fabric ? tuning::kExchangeMax : 1;
          std::vector<double> mine =
              tuning::written_fit_errors(tr, max_omega, tuning::kExchangeMin, chi_hi, chi_beta_lo,
                                         chi_beta_hi, fit_options, rank, p);
          std::vector<double> all(mine.size());
          check(fc_allreduce(mine.data(), all.data(), mine.size(), FC_DOUBLE, FC_SUM, world),
                "allreduce");
          return tuning::written_fit_from_errors(tr, max_omega, tuning::kExchangeMin, chi_hi,
                                                 chi_beta_lo, chi_beta_hi, fit_options, all);
        };
        std::vector<tuning::WrittenFit> fits;
        for (const auto& tr : trains) fits.push_back(fit_of(tr));
        const std::size_t kept = broken ? 0 : tuning::choose_break(fits, breaks, step_at);
        train = trains[kept];
        fit_break_gain = fits[kept].fit.sse > 0 ? fits[0].fit.sse / fits[kept].fit.sse : 1;
        tuning::WrittenFit wf = fits[kept];
        // α of small messages kept where the fit has it below α; else fitted without. The fit
        // holds it at most α (tuning::fit_cost_points); at α, nothing tells injected messages
        // apart, and kept it would still move their bytes to β above the break and turn on K
        // and o of small messages. Until the fifty-third session it was kept only where its one
        // more parameter also paid by the Bayesian information criterion, as a break does
        // (tuning::choose_break; reported, small_paid). But the fit's points lie at 256 B and
        // up, where only the algorithms that cut 256 B into pieces (the ring's, Rabenseifner's,
        // scatter + all-gather's) have small messages, so its gain there is small by
        // construction, while the calls it decides, those below the inject size, are not in
        // the fit at all (their K is refitted to them, below). p = 4 sockets on 2 cores: the
        // three launches of the fifty-first to fifty-third sessions where the criterion left it
        // out (error x0.97–0.99 with it) each missed at 128 B (regrets 17.9–23.2%: a call there
        // charged K and o of larger messages, reduce + bcast K twice), where of the 90 that
        // kept it and validated 128 B, 4 missed there (one with it at 2.94 α, before the
        // constraint).
        bool small_kept = false;
        small_held = false;
        small_paid = false;
        if (std::any_of(train.begin(), train.end(), [](const auto& pt) { return pt.small > 0; })) {
          std::vector<tuning::CostPoint> plain = train;
          for (auto& pt : plain) pt.small = 0;
          const tuning::WrittenFit without = fit_of(plain);
          const auto np = static_cast<double>(wf.fit.points);
          small_kept = wf.fit.alpha_small > 0 && wf.fit.alpha_small < wf.fit.alpha;
          small_paid = wf.fit.sse > 0 && np > 1 &&
                       np * std::log(without.fit.sse / wf.fit.sse) > std::log(np);
          fit_small_gain = wf.fit.sse > 0 ? without.fit.sse / wf.fit.sse : 1;
          small_held = wf.fit.alpha_small > 0 && wf.fit.alpha_small == wf.fit.alpha;
          if (!small_kept) {
            wf = without;
            train = std::move(plain);
          }
        }
        const tuning::CostFit& cf = wf.fit;
        lp.model.alpha = std::max(1e-9, cf.alpha);
        lp.model.beta = std::max(1e-13, cf.beta);
        lp.model.written = wf.omega;
        if (max_omega > 1) omega_fitted = wf.omega;
        lp.model.exchange_alpha = wf.chi;
        lp.model.exchange_beta = wf.chi_beta;
        lp.model.ring_exchange_beta = fit_ring_x ? cf.ring_exchange_beta : -1.0;
        lp.model.wake = cf.wake;
        lp.model.call_wake = cf.call_wake;
        // Over the fabric o, the sender's time per message (CostModel::overhead), refitted to the
        // timed collectives whose formulas charge it (the naive broadcast's p − 2),
        // the rest of the fit held: the burst measures 8-byte sends, which the provider injects
        // (sockets: 1.0-1.8 µs), where the naive broadcast's root sends 256 B and more. p = 4
        // sockets on 2 cores, five launches: with the burst's o its prediction came out 10-25%
        // under its time at 256-432 B and 28-46% at 1.7-67 KiB, and it was chosen where the
        // pipelined binary tree was faster, the launch's largest regret in four (6.7-14.2%, at
        // 256 B, 432 B, 67 KiB). Refitted, o came out 2.9-4.3 µs in eleven launches, nine of
        // them within the regret target; the naive broadcast chosen where another was faster
        // exceeded it in one (13.4% at 256 B). Fitted as a column of the fit itself, o took
        // residuals of α and K too: χβ came out 3.4-3.6 in two launches of five (1.9-2.7 without
        // it) and reduce + bcast was chosen over recursive doubling from 256 B up, 15-22% slower
        // at 16 KiB.
        // The naive reduce's folding rank receives: its o_r (CostModel::receive_overhead) is
        // refitted to its own points. With one o for both (four launches of the thirty-sixth
        // session) the naive broadcast's points below the break came out 2-12% under their time
        // and the naive reduce's 14-23% over, and the naive broadcast was chosen over the
        // pipelined binary tree at 256-448 B where that was 11-15% faster (two of the four);
        // refitted to the broadcast's points alone (offline, from the same launches), o came out
        // 5.0-7.5 µs and the tree was chosen there, the other choices unchanged.
        o_burst = -1;
        if (fabric && lp.model.overhead >= 0) {
          const double held = lp.model.overhead;  // c held o and o_r both at it
          const double o_fit = tuning::refit_overhead(train, cf.residuals, held);
          const double o_recv_fit = tuning::refit_overhead(train, cf.residuals, held, true);
          if (o_fit >= 0) {
            o_burst = held;
            lp.model.overhead = o_fit;
          }
          if (o_recv_fit >= 0) lp.model.receive_overhead = o_recv_fit;
        }
        bool any_large = false;
        for (const auto& pt : train) any_large = any_large || pt.large > 0;
        if (any_large && cf.beta_large > 0) {
          lp.model.large_from = large_bytes;
          lp.model.beta_large = cf.beta_large;
        }
        lp.model.overhead_small = -1;
        if (small_kept) {
          lp.model.small_below = small_bytes;
          lp.model.alpha_small = std::max(1e-9, cf.alpha_small);  // floored as α is
          // o of small messages (CostModel::overhead_small): the burst's, whose 8-byte sends the
          // provider injects, not o refitted to the naive broadcast's calls of 256 B and more.
          // p = 4 sockets on 2 cores (four launches of the fiftieth session): the burst measured
          // 0.8-1.2 µs and the refit 4.2-5.7 µs, capped at α; with the refit's o below the inject
          // size the naive broadcast's root at 128 B (two sends at o on top of α) came out above
          // the binomial tree's two hops, and that tree was chosen there, 48-49% slower.
          if (o_burst >= 0) lp.model.overhead_small = o_burst;
        }
        lp.break_bytes = breaks[kept];
        lp.alpha_above = lp.break_bytes > 0 ? std::max(1e-9, cf.alpha_above) : lp.model.alpha;
        lp.beta_above = lp.model.beta;
        // β below the break, where fitted apart: the lower segment's (lp.model), β the upper's.
        if (lp.break_bytes > 0 && cf.beta_below >= 0)
          lp.model.beta = std::max(1e-13, cf.beta_below);
        // Inside a node: the rings' β as the collectives saw them, against the pairs' ping-pong
        // just before, and whether the collectives saw them slower (tuning::ring_fit_disagrees;
        // with ranks sharing cores only, see fit_checks).
        if (broken && cf.beta_below >= 0) {
          ring_ratio = pairs_lp.model.beta / lp.model.beta;
          rings_disagree =
              fit_checks && tuning::ring_fit_disagrees(lp.model.beta, pairs_lp.model.beta);
        }
        // An exchange's α above the break, as a multiple of the one-way α there.
        lp.exchange_alpha_above = lp.break_bytes > 0 && cf.exchange_alpha_above >= 0
                                      ? std::clamp(cf.exchange_alpha_above / lp.alpha_above,
                                                   tuning::kExchangeMin, tuning::kExchangeFileMax)
                                      : 0.0;
        // K above the break (LinkParams::call_wake_above), where the fit took one.
        lp.call_wake_above = lp.break_bytes > 0 ? cf.call_wake_above : 0.0;
        lp.r2 = cf.r2;
        lp.points = static_cast<int>(train.size());
        // The fit held o and G fixed (linear_cost_terms counts measured ones in c); keep o <= α
        // and G <= β.
        const auto cap = [&](double& measured, double limit, const char* name,
                             const char* limit_name, const char* unit) {
          if (!(measured >= 0 && measured > limit)) return;
          if (rank == 0 && say)
            std::fprintf(
                stderr,
                "fabcoll-calibrate: refitted %s = %.3g %s below the measured %s = %.3g %s; "
                "%s clamped to %s\n",
                limit_name, limit, unit, name, measured, unit, name, limit_name);
          measured = limit;
        };
        cap(lp.model.overhead, lp.model.alpha, "sender overhead o", "alpha", "s");
        cap(lp.model.receive_overhead, lp.model.alpha, "receiver overhead o_r", "alpha", "s");
        if (lp.model.has_small())
          cap(lp.model.overhead_small, lp.model.alpha_small, "sender overhead of small messages",
              "alpha of small messages", "s");
        cap(lp.model.gap, lp.model.beta, "sender time per byte G", "beta", "s/B");
        // G is for messages below the break (as after the ping-pong's fit): a break kept at or
        // below G's message size leaves it measured in the other segment, so unmeasured (β).
        if (!tuning::gap_kept(lp.break_bytes, static_cast<double>(gap_bytes))) lp.model.gap = -1;

        // κ (CostModel::streamed): the broadcast's pipelines timed above, against their
        // prediction under the fitted model at the packet count they ran with: its fill F (κ = 0:
        // the first packet's trip) and stream S (the rest at κ = 1); κ = Σ((t − F)S/t²) /
        // Σ(S²/t²), the least relative squares of t ≈ F + κS. Runs of two packets or more
        // through the rings (below the single-copy threshold), the packets κ is charged to.
        // Inside a node only: over sockets (p = 4 on 2 cores, three launches) the pipelines'
        // first packet alone came out above the whole run's time (the linear pipeline at 384 KiB
        // in two 192 KiB packets: 451-668 µs predicted for the first, 334-622 measured for
        // both), so t ≈ F + κS does not describe them and κ stopped at the bound of 0.2 in each.
        streamed_runs.clear();
        {
          tuning::TuningFile fitted_file = file;
          fitted_file.links = {lp};
          const tuning::LinkModel fitted_link = link_model(fitted_file, link, p, placed);
          for (StreamedRun r : pipe_timed) {
            const Algorithm* alg = fabcoll::find_algorithm(Collective::bcast, r.algorithm);
            fabcoll::CostQuery q;
            q.n = r.n;
            q.p = p;
            q.k = r.k;
            q.m = fitted_link.at(std::ceil(r.n / r.k));
            q.m.streamed = 0;  // the fill alone
            r.fill = alg->predict(q);
            // F + S from κ = 2 (linear in κ): at κ = 1 itself costed leaves the fill at the
            // stream's exchange share, the texts' model, not the fill above.
            q.m.streamed = 2;
            r.predicted = r.fill + (alg->predict(q) - r.fill) / 2;
            streamed_runs.push_back(r);
          }
        }
        double num = 0, den = 0;
        for (const StreamedRun& r : streamed_runs) {
          const double stream = r.predicted - r.fill;
          num += (r.measured - r.fill) * stream / (r.measured * r.measured);
          den += stream * stream / (r.measured * r.measured);
        }
        lp.model.streamed =
            streamed_runs.size() >= 2 && den > 0 ? std::clamp(num / den, 0.2, 2.0) : 1.0;

        // K of small messages (CostModel::call_wake_small): refitted to the runs it is charged
        // to, the rest of the model held: those at half small_below (timed above, not in the
        // fit) and the fit's own whose rounds lie partly below small_below (at 256 B over sockets
        // the ring's and Rabenseifner's all-reduces, scatter + all-gather's broadcast: 64-128 B
        // messages; the fit charged them K there). The least relative squares of t ≈ m0 + x K_s,
        // m0 a run's prediction at K_s = 0 and x what a second of K_s adds to it (its share of
        // rounds below small_below not in exchanges, times its calls; tuning::refit_term).
        // Where fewer than two runs are charged it: K (-1).
        lp.model.call_wake_small = -1;
        small_k_gain = 1;
        small_k_runs = 0;
        if (lp.model.has_small() && !small_runs.empty()) {
          std::vector<TrainRun> runs = small_runs;
          for (std::size_t i = 0; i < train.size() && i < train_runs.size(); ++i)
            if (train[i].small > 0)
              runs.push_back({train_runs[i].alg, train_runs[i].n, train[i].t});
          const auto predict_at = [&](double k_small) {
            tuning::TuningFile at_k = file;
            at_k.links = {lp};
            at_k.links.front().model.call_wake_small = k_small;
            std::vector<double> out;
            for (const TrainRun& r : runs)
              out.push_back(training_prediction(r, p, at_k, link, placed));
            return out;
          };
          const std::vector<double> with_k = predict_at(-1), m0 = predict_at(0),
                                    m1 = predict_at(1e-6);
          std::vector<double> t, x;
          for (std::size_t i = 0; i < runs.size(); ++i) {
            t.push_back(runs[i].t);
            x.push_back((m1[i] - m0[i]) / 1e-6);
          }
          lp.model.call_wake_small = tuning::refit_term(t, m0, x, with_k, &small_k_gain);
          small_k_runs =
              static_cast<int>(std::count_if(x.begin(), x.end(), [](double v) { return v > 0; }));
        }
      };
      refit_collectives(!interleaved);
    }
    // 3c: the pull fan-out φ (CostModel::pull_fanout): the naive broadcast of messages its
    // receivers pull (shm's single-copy reads), timed as the validation times it, against its
    // cost with φ = 0; each receiver beyond the first adds φβn. Where every rank has a core of
    // its own (FABCOLL_CALIBRATE_TEST_FANOUT=1, tests: also with ranks sharing cores).
    // The naive broadcast's model at n with φ = 0, and φ from the runs timed (each receiver
    // beyond the first adds φβn): again after a fit done again (refit_collectives).
    const Algorithm* fanout_naive = fabcoll::find_algorithm(Collective::bcast, "naive");
    const auto fanout_model = [&](double n) {
      fabcoll::CostModel m = lp.model;
      if (lp.break_bytes > 0 && n >= lp.break_bytes) {
        m.alpha = lp.alpha_above;
        m.beta = lp.beta_above;
        m.gap = -1;
      }
      m.pull_bytes = m.written_from = pull;
      m.pull_fanout = 0;
      return m;
    };
    const auto fanout_phi = [&] {
      if (fanout_runs.empty()) return;
      std::vector<double> phis;
      for (FanoutRun& r : fanout_runs) {
        fabcoll::CostQuery q;
        q.n = r.n;
        q.p = p;
        q.m = fanout_model(r.n);
        r.flat = fanout_naive->cost(q);
        phis.push_back(std::max(0.0, (r.measured - r.flat) / (q.m.beta * r.n * (p - 2))));
      }
      lp.model.pull_fanout = median(phis);
    };
    fanout_runs.clear();
    if (pull > 0 && p >= 3 && (layout == 0 || test_fanout)) {
      prog.phase("3c/5 pull fan-out");
      for (const double n : {std::max(pull, 65536.0), 4 * std::max(pull, 65536.0)}) {
        const auto bytes = static_cast<std::size_t>(n);
        PageVector<double> a(bytes * static_cast<std::size_t>(p) / sizeof(double) + 1, 1.0),
            b(a.size(), 0.0);
        const std::vector<fabcoll::CostModel> models{fanout_model(n)};
        const double t =
            time_candidates(Collective::bcast, world, fabcoll::world_comm(ctx), p, {fanout_naive},
                            {0.0}, &models, bytes, quick ? 21 : 41, barrier, a, b, nullptr)
                .front();
        fanout_runs.push_back({n, t, 0});
      }
      fanout_phi();
    }

    // 4: crossover tables and k rules (again after a fit done again).
    const auto build_tables = [&] {
      file.links = {lp};
      file.crossovers.clear();
      file.k_rules.clear();
      tables.clear();
      const double n_max = double(1 << 26);
      for (Collective c :
           {Collective::bcast, Collective::reduce, Collective::allreduce, Collective::allgather,
            Collective::reduce_scatter_block, Collective::alltoall, Collective::scan}) {
        tables[c] = table_for(c, p, file, link, n_max, placed);
        tuning::CrossoverEntry e{fabcoll::collective_name(c), p, link, {}};
        for (const auto& s : tables[c])
          e.segments.push_back({std::string(s.algorithm->name), s.lo, s.hi});
        file.crossovers.push_back(std::move(e));
        for (const Algorithm* a : fabcoll::all_algorithms()) {
          if (a->coll != c || a->optimal_k == nullptr || !tuning::eligible(*a, p, true)) continue;
          tuning::KRule r{fabcoll::collective_name(c), std::string(a->name), p, link, {}};
          for (double n = 65536; n <= n_max; n *= 4)
            r.sizes.emplace_back(n, packet_choice(*a, n, p, file, link, placed).k);
          file.k_rules.push_back(std::move(r));
        }
      }
    };
    prog.phase("4/5 tables");
    build_tables();

    // The ping-pong once more (its round trips alone), against the first: before the
    // validation (5a) and after it (5b).
    const auto pingpong_again = [&] {
      const PingPong again =
          measure_pingpong(world, rank, p, layout > 0, all_pairs == "exchange", quick, prog, 0,
                           /*time_exchanges=*/false);
      return tuning::pingpong_drift(pp.medians, again.medians, kDriftLargeFrom);
    };
    // 5: validation, after the ping-pong once more (5a: drift_fit).
    drift_fit = 1;
    if (!no_validate) {
      prog.phase("5/5 ping-pong before the validation");
      drift_fit = pingpong_again().drift;
    }
    prog.phase("5/5 validate");
    const fabcoll::LinkModel context_link = fabcoll::world_comm(ctx).link();
    probes_during.clear();
    const double validation_start = now();
    // Every validated size's candidates, their predictions and what is timed of them, planned
    // before any is timed: the sizes are timed in kValidationPasses passes (see there).
    struct SizePlan {
      Collective c = Collective::bcast;
      double n = 0;
      std::vector<const Algorithm*> cands;
      std::vector<double> packets, predicted;
      std::vector<double> ks;                 // the packet count each prediction used
      std::vector<long> strategies;           // a hybrid's strategy under its model (-1: none)
      std::vector<fabcoll::sim::Stats> logs;  // each one's messages on the sim (message_log)
      std::vector<std::size_t> twin, timed_index;
      std::vector<const Algorithm*> timed_cands;
      std::vector<double> timed_packets;
      std::vector<fabcoll::CostModel> timed_models;
      std::vector<std::vector<double>> rounds;  // per timed candidate, over all passes
      std::vector<std::size_t> pass_rounds;     // how many rounds each pass timed
      double probe = 1;
    };
    // A size's plan under the tuning file as it stands.
    const auto make_plan = [&](Collective c, double n) {
      SizePlan plan;
      plan.c = c;
      plan.n = n;
      const auto bytes = static_cast<std::size_t>(n);
      std::vector<fabcoll::CostModel> models;  // the model each prediction used
      std::vector<fabcoll::sim::Stats>& logs = plan.logs;
      for (const Algorithm* alg : fabcoll::all_algorithms()) {
        if (alg->coll != c || !tuning::eligible(*alg, p, true)) continue;
        // The packet count the fitted model wants (elements of 8 bytes, as the engine counts).
        const tuning::PacketChoice pc = packet_choice(*alg, n, p, file, link, placed);
        fabcoll::CostQuery q;
        q.n = n;
        q.p = p;
        q.m = pc.m;
        q.k = 1;
        double packet = 0;
        if (alg->optimal_k != nullptr) {
          q.k = std::clamp(pc.k, 1.0, std::max(1.0, n / 8));
          packet = std::ceil(n / q.k);
        }
        plan.cands.push_back(alg);
        plan.packets.push_back(packet);
        plan.predicted.push_back(alg->predict(q));
        plan.ks.push_back(q.k);
        plan.strategies.push_back(alg->strategy != nullptr ? static_cast<long>(alg->strategy(q))
                                                           : -1);
        models.push_back(pc.m);
        logs.push_back(fabcoll::message_log(
            *alg, p, bytes, pc.m, static_cast<std::size_t>(packet > 0 ? std::ceil(n / packet) : 0),
            plan.strategies.back()));
      }
      // A candidate whose run sends the same messages as an earlier one's (fabcoll::
      // same_messages on the sim: the hybrid at recursive doubling's strategy; at p = 2 every
      // broadcast that sends its one message whole) is timed once, as that one. Timed twice,
      // two turns of one run came out apart by more than the regret target and the difference
      // counted as a wrong choice: at p = 2 over sockets, 1 MiB, recursive doubling measured
      // 0.97-1.13 times the hybrid in 14 launches, four turns of recursive doubling alone in
      // one validation-like loop (2026-11-26) had medians of 498-536 µs, and the naive
      // broadcast's one message 272 µs against 245 for the two-tree broadcast's.
      const std::size_t nc = plan.cands.size();
      plan.twin.assign(nc, SIZE_MAX);
      plan.timed_index.assign(nc, SIZE_MAX);
      for (std::size_t j = 0; j < nc; ++j) {
        for (std::size_t i = 0; i < j && plan.twin[j] == SIZE_MAX; ++i)
          if (plan.twin[i] == SIZE_MAX && fabcoll::same_messages(logs[i], logs[j]))
            plan.twin[j] = i;
        if (plan.twin[j] != SIZE_MAX) continue;
        plan.timed_index[j] = plan.timed_cands.size();
        plan.timed_cands.push_back(plan.cands[j]);
        plan.timed_packets.push_back(plan.packets[j]);
        plan.timed_models.push_back(models[j]);
      }
      plan.rounds.resize(plan.timed_cands.size());
      return plan;
    };
    std::vector<SizePlan> plans;
    for (Collective c : colls) {
      if (no_validate) break;
      for (double n : validation_sizes(tables[c], quick)) {
        SizePlan plan = make_plan(c, n);
        if (!plan.cands.empty()) plans.push_back(std::move(plan));
      }
    }
    // --quick shares what is left of kQuickValidationSeconds evenly over the turns left (one
    // per size and pass: time_candidates' budget), so what a cheap one leaves goes to the rest.
    std::size_t turns_left = plans.size() * kValidationPasses;
    training_between = outside_budget = 0;
    // --quick's seconds for the passes: kQuickValidationSeconds, less, where the training is
    // interleaved, kRetimeSeconds for the sizes timed once more after the fit done again (they
    // share what is left of kQuickValidationSeconds then).
    double quick_seconds =
        interleaved ? kQuickValidationSeconds - kRetimeSeconds : kQuickValidationSeconds;
    const int rounds_per_pass = (101 + kValidationPasses - 1) / kValidationPasses;
    const int pass_min = (kMinRounds + kValidationPasses - 1) / kValidationPasses;
    // A turn of a size: its candidates timed once more, their rounds appended (budget: --quick's
    // seconds for it; below 0: its share of what is left).
    const auto time_turn = [&](SizePlan& plan, double budget, int rounds_wanted, int min_rounds) {
      const auto bytes = static_cast<std::size_t>(plan.n);
      const std::size_t total = bytes * static_cast<std::size_t>(p);
      PageVector<double> a(total / sizeof(double) + 1, 1.0), b(total / sizeof(double) + 1, 0.0);
      // Timed as time_candidates says; each candidate under the model its prediction used
      // (the run chooses what its formula chooses by the model, e.g. hybrid's strategy, not
      // by the context's built-in one).
      double size_budget = quick ? budget : 0;
      if (quick && budget < 0) {
        // The slowest rank's clock: every rank must cut the rounds at the same count.
        double used = now() - validation_start - outside_budget;
        double used_max = 0;
        check(fc_allreduce(&used, &used_max, 1, FC_DOUBLE, FC_MAX, world), "allreduce");
        size_budget = std::max(1e-3, quick_seconds - used_max) /
                      static_cast<double>(std::max<std::size_t>(turns_left, 1));
      }
      if (turns_left > 0) --turns_left;
      std::vector<std::vector<double>> rounds;
      (void)time_candidates(plan.c, world, fabcoll::world_comm(ctx), p, plan.timed_cands,
                            plan.timed_packets, &plan.timed_models, bytes, rounds_wanted, barrier,
                            a, b, nullptr, nullptr, &rounds, size_budget, min_rounds);
      for (std::size_t t = 0; t < rounds.size(); ++t)
        plan.rounds[t].insert(plan.rounds[t].end(), rounds[t].begin(), rounds[t].end());
      plan.pass_rounds.push_back(rounds.empty() ? 0 : rounds.front().size());
    };
    for (int pass = 0; pass < kValidationPasses; ++pass) {
      for (SizePlan& plan : plans) {
        time_turn(plan, -1, rounds_per_pass, pass_min);
        prog.advance(static_cast<double>(plan.timed_cands.size()) / kValidationPasses);
        // The written-data probe after each size as well (in the last pass): the VM's slow mode
        // can come and go within the validation, unseen by the probes before the fit and after
        // the validation. A p = 4 launch whose probes read x2.23 and x2.19 (the fast mode)
        // validated the all-reduce at 194 KiB with every algorithm but recursive doubling at
        // 2.3-4 times its prediction, as the slow mode has it, and the hybrid's regret was 78%.
        if (pass + 1 == kValidationPasses) {
          probes_during.push_back(written_probe(world, rank, p, placed, quick));
          plan.probe = probes_during.back();
        }
      }
      // A pass of the fit's training between two of the validation's (interleaved, above).
      if (interleaved && pass + 1 < kValidationPasses) {
        const std::string name = "5/5 validate: the fit's pass " + std::to_string(pass + 2) +
                                 " of " + std::to_string(kTrainingPasses);
        prog.phase(name.c_str());
        const double t0 = now();
        // Under the context's own link, as the first pass ran (the validation's turns set
        // their candidates' models).
        fabcoll::world_comm(ctx).set_link(context_link);
        train_pass();
        training_between += now() - t0;
        outside_budget += now() - t0;
        prog.phase("5/5 validate");
      }
    }
    // The fit again, to every training pass, and the tables and predictions from it. A size
    // whose candidates the model fitted again runs at another packet count or strategy than
    // they were timed with is timed once more, every candidate of it as now chosen, in one
    // turn (its passes' rounds dropped: the regret compares rounds of one turn); refit_changed
    // counts those sizes.
    refit_changed = 0;
    // FABCOLL_CALIBRATE_TEST_RETIME=1 (tests): every size timed once more, as if changed.
    const char* retime_env = std::getenv("FABCOLL_CALIBRATE_TEST_RETIME");
    const bool test_retime = retime_env != nullptr && std::string(retime_env) == "1";
    if (interleaved) {
      prog.phase("5/5 the fit again, to every pass");
      const double t0 = now();
      refit_collectives(true);
      fanout_phi();
      build_tables();
      std::vector<SizePlan*> again;
      for (SizePlan& plan : plans) {
        SizePlan now_plan = make_plan(plan.c, plan.n);
        // The same runs: the same packet counts and strategies, and on the sim the same
        // messages (a choice the run makes by the model, as the grid all-to-all's).
        bool same = now_plan.ks == plan.ks && now_plan.strategies == plan.strategies &&
                    now_plan.logs.size() == plan.logs.size() && !test_retime;
        for (std::size_t j = 0; same && j < plan.logs.size(); ++j)
          same = fabcoll::same_sends(plan.logs[j], now_plan.logs[j]);
        if (same) {
          plan.predicted = now_plan.predicted;
          continue;
        }
        now_plan.probe = plan.probe;
        plan = std::move(now_plan);
        again.push_back(&plan);
      }
      refit_changed = static_cast<int>(again.size());
      outside_budget += now() - t0;  // the fit, the tables and the plans
      if (!again.empty()) prog.phase("5/5 validate: sizes timed once more");
      // Each with its share of what is left of --quick's budget, and the rounds a size gets
      // in all its passes (at least kMinRounds).
      quick_seconds = kQuickValidationSeconds;
      turns_left = again.size();
      for (SizePlan* plan : again) time_turn(*plan, -1, 101, kMinRounds);
    }
    for (const SizePlan& plan : plans) {
      std::vector<Measured> here;
      for (std::size_t j = 0; j < plan.cands.size(); ++j) {
        const std::size_t t = plan.timed_index[plan.twin[j] != SIZE_MAX ? plan.twin[j] : j];
        Measured me;
        me.coll = fabcoll::collective_name(plan.c);
        me.alg = std::string(plan.cands[j]->name);
        me.n = plan.n;
        me.predicted = plan.predicted[j];
        // The median of its rounds over all passes.
        me.measured = std::max(1e-9, median(plan.rounds[t]));
        me.samples = plan.rounds[t];
        me.pass_rounds = plan.pass_rounds;
        me.probe = plan.probe;
        if (plan.twin[j] != SIZE_MAX)
          me.same_messages_as = std::string(plan.cands[plan.twin[j]]->name);
        here.push_back(me);
      }
      auto best_m = std::min_element(here.begin(), here.end(), [](const auto& x, const auto& y) {
        return x.measured < y.measured;
      });
      best_m->fastest = true;
      const Algorithm* pick = tuning::table_lookup(tables[plan.c], plan.n);
      for (auto& me : here) me.chosen = pick != nullptr && me.alg == pick->name;
      results.insert(results.end(), here.begin(), here.end());
    }

    validation_seconds = now() - validation_start;
    {
      std::vector<double> ratios;
      for (const SizePlan& plan : plans) {
        if (plan.pass_rounds.size() < 2) continue;
        const std::size_t first = plan.pass_rounds.front();
        const std::size_t last = plan.pass_rounds.back();
        for (const auto& r : plan.rounds) {
          if (first == 0 || last == 0 || r.size() < first + last) continue;
          const double m0 = median(std::vector<double>(r.begin(), r.begin() + first));
          const double m1 = median(std::vector<double>(r.end() - last, r.end()));
          if (m0 > 0) ratios.push_back(m1 / m0);
        }
      }
      drift_passes = ratios.empty() ? 1 : median(ratios);
    }
    fabcoll::world_comm(ctx).set_link(context_link);

    // 5b: the ping-pong once more, after the validation. This VM (and any shared machine) can
    // change speed within a run: a validation that ran at a third of the ping-pong's speed made
    // the median error 60–130%. The median over the sizes of the second one-way time over the
    // first, below kDriftLargeFrom and from it, tells such a run apart (reported; nothing is
    // refitted from it).
    drift = drift_small = drift_large = 1;
    if (!no_validate) {
      prog.phase("5/5 ping-pong again");
      const tuning::Drift d = pingpong_again();
      drift_small = d.small;
      drift_large = d.large;
      drift = d.drift;
    }
    drifted = drift > kDriftHigh || drift < 1 / kDriftHigh;
    // The written-data probe again: its change is the VM's slow mode coming or going, which the
    // ping-pong of untouched data above does not see.
    probe_after = no_validate ? probe_before : written_probe(world, rank, p, placed, quick);
    // The probe's change: of the probes during and after the validation, the one furthest
    // from the probe before the fit (as a ratio).
    probe_change = 1;
    if (probe_before > 0) {
      std::vector<double> later = probes_during;
      later.push_back(probe_after);
      for (const double x : later)
        if (x > 0 && std::abs(std::log(x / probe_before)) > std::abs(std::log(probe_change)))
          probe_change = x / probe_before;
    }
    probe_moved = probe_change > kProbeHigh || probe_change < 1 / kProbeHigh;
    // And where ω was fitted to timed collectives (shm, ranks sharing cores): whether it shows
    // the probe's mode, ω against what the probe before the fit implies
    // (tuning::written_fit_disagrees). The probe before the fit can catch a mode that the
    // collectives timed after it no longer see: p = 4 shm on 2 cores, two launches of the
    // thirty-eighth and fortieth sessions fitted ω at 1.05 and 1.95 against probes of 5.6 and
    // 6.0 (the line: 3.3 and 3.6), and chose the hybrid all-reduce at 128 and 512 KiB, 56%
    // slower than recursive doubling. (Until the thirty-fourth session the VM showed another
    // pair of modes: with probes of 1.68–3.10, ω carried 0.57–1.10 of the probe's excess over 1,
    // and five launches with ω at 1.05–1.55 there, four of them misses by 23–30%, were the ones
    // that saw the other mode. The line takes the VM as it has been since.)
    omega_disagrees =
        fit_checks && omega_fitted > 0 && tuning::written_fit_disagrees(omega_fitted, probe_before);
    // (rings_disagree: set with the fit, above.)
    // Whether to measure again: rank 0 decides, all follow (one broadcast per attempt: the
    // ranks' clocks differ a little, and nothing else may tell them apart here). Without a
    // validation there is nothing to compare. FABCOLL_CALIBRATE_TEST_DISTURB=N (tests): the
    // first N attempts count as disturbed. --quick stays under kQuickSeconds: another attempt
    // must fit, as long as this one outside its validation and with a validation as long as
    // --quick's budget allows, or this one's where that ran over it (its last rounds and
    // probes; a forced one always runs: the test's load must not decide). An
    // attempt as long as this one was the rule until the forty-eighth session: a p = 4 sockets
    // launch whose first attempt validated in 25 s ran a second that took its validation's
    // whole budget, and the launch took 127 s (its single attempts 82-89 s that day).
    const bool forced = attempt <= test_disturbed;
    const bool disturbed = attempt_disturbed();
    // A forced attempt (the test's) ranks after any measured one; each check as a multiple of
    // its bound (tuning::AttemptChange).
    const double ring_change = rings_disagree ? 1 + std::log(tuning::kRingRatioLow / ring_ratio) /
                                                        std::log(tuning::kRingRatioLow)
                                              : 0.0;
    const tuning::AttemptChange change{
        .machine = std::max(std::abs(std::log(drift)) / std::log(kDriftHigh),
                            std::abs(std::log(probe_change)) / std::log(kProbeHigh)),
        .fit = std::max(fit_checks && omega_fitted > 0
                            ? tuning::written_fit_excess(omega_fitted, probe_before)
                            : 0.0,
                        ring_change),
        .forced = forced};
    if (disturbed && (!least_changed || tuning::attempt_changed_less(change, least_change))) {
      least_changed = values_of(state());
      least_change = change;
      kept = attempt;
    }
    const double took = prog.elapsed() - attempt_start;
    // (The validation's own time, not the training passes between its passes, is what its
    // budget bounds: a next attempt may take all of that budget and those passes again.)
    const double validating = validation_seconds - outside_budget;
    const double next = took - validating + std::max(validating, kQuickValidationSeconds);
    const bool in_time = forced || !quick || prog.elapsed() + next <= kQuickSeconds;
    std::int32_t again = disturbed && attempt <= retries && in_time ? 1 : 0;
    check(fc_bcast(&again, 1, FC_INT32, 0, world), "bcast");
    const std::string omega_note =
        omega_disagrees ? fmt("; the fit's omega %.2f", omega_fitted) +
                              fmt(" against written data x%.2f before it", probe_before) +
                              fmt(" (implies %.2f)", tuning::written_expected(probe_before))
                        : std::string();
    const std::string ring_note =
        rings_disagree ? fmt("; the fit's rings x%.2f the ping-pong's beta below the threshold",
                             1 / ring_ratio)
                       : std::string();
    if (rank == 0 && disturbed && attempt <= retries)
      std::fprintf(stderr,
                   "fabcoll-calibrate: attempt %d: the machine changed speed during the run "
                   "(ping-pong after the validation x%.2f the one before: x%.2f below 64 KiB, "
                   "x%.2f from 64 KiB; written data across CPUs x%.2f%s%s%s); %s\n",
                   attempt, drift, drift_small, drift_large, probe_change, omega_note.c_str(),
                   ring_note.c_str(), forced ? ", FABCOLL_CALIBRATE_TEST_DISTURB" : "",
                   again != 0 ? ("measuring again (" + std::to_string(attempt) + " of --retries " +
                                 std::to_string(retries) + ")")
                                    .c_str()
                              : "not measuring again: another attempt would take --quick past "
                                "its time limit");
    if (again == 0) break;
  }  // attempts
  // The last attempt is kept unless it was disturbed too and an earlier one was less disturbed.
  const bool last_disturbed = attempt_disturbed();
  if (!last_disturbed || kept == attempt) {
    kept = attempt;
  } else {
    state() = std::move(*least_changed);
  }

  // Summary (rank 0).
  int rc = 0;
  if (rank == 0) {
    // Every (algorithm, size) point, a twin with its sibling's time (the run it performs, timed
    // once); and the runs timed alone, each once.
    std::vector<double> errs, errs_timed;
    double max_regret = 0;
    tuning::RegretInterval max_interval;  // of the size with the largest regret
    std::map<std::pair<std::string, double>, double> probe_of;  // after the size
    // Per size: every candidate's rounds, and which of them is the chosen one (the regret and
    // its interval come from them: tuning::regret_interval).
    struct Rounds {
      std::vector<std::vector<double>> of;
      std::size_t chosen = SIZE_MAX;
    };
    std::map<std::pair<std::string, double>, Rounds> rounds_of;
    for (const auto& me : results) {
      errs.push_back((me.predicted - me.measured) / me.measured);
      if (me.same_messages_as.empty()) errs_timed.push_back(errs.back());
      const std::pair<std::string, double> key{me.coll, me.n};
      probe_of[key] = me.probe;
      Rounds& r = rounds_of[key];
      if (me.chosen) r.chosen = r.of.size();
      r.of.push_back(me.samples);
    }
    nlohmann::json regrets = nlohmann::json::array();
    for (const auto& [key, r] : rounds_of) {
      const tuning::RegretInterval iv = tuning::regret_interval(r.of, r.chosen);
      const double regret = iv.regret;
      if (regret > max_regret || regrets.empty()) max_interval = iv;
      max_regret = std::max(max_regret, regret);
      regrets.push_back({{"collective", key.first},
                         {"n", key.second},
                         {"regret", regret},
                         {"interval", {iv.lo, iv.hi}},
                         {"probe", probe_of[key]}});
    }
    const double med_err = tuning::median_abs(errs);
    const double med_err_timed = tuning::median_abs(errs_timed);
    nlohmann::json v;
    v["p"] = p;
    v["link"] = link;
    v["quick"] = quick;
    v["median_abs_rel_error"] = med_err;
    v["median_abs_rel_error_timed"] = med_err_timed;
    v["timed_runs"] = errs_timed.size();
    v["max_regret"] = max_regret;
    v["pingpong_drift"] = drift;
    v["pingpong_drift_below_64k"] = drift_small;
    v["pingpong_drift_from_64k"] = drift_large;
    v["pingpong_drift_before_validation"] = drift_fit;
    v["validation_last_pass_over_first"] = drift_passes;
    v["attempts"] = attempt;
    v["passes"] = kValidationPasses;
    v["kept_attempt"] = kept;
    // The pairs' ping-pong β below shm's threshold over the fit's (0: not fitted apart).
    v["ring_ratio"] = ring_ratio;
    // The barrier taken off each batch (BarrierTime): measured alone, and the range of those
    // timed beside the batches (null where no call timed batches back to back).
    v["barrier"] = {{"alone", barrier.before},
                    {"beside", barrier.calls > 0 ? nlohmann::json::array(
                                                       {barrier.during_low, barrier.during_high})
                                                 : nlohmann::json(nullptr)},
                    {"lowered", barrier.lowered},
                    {"calls", barrier.calls}};
    v["written_probe"] = {
        {"before", probe_before}, {"after", probe_after}, {"during", probes_during}};
    if (!fanout_runs.empty()) {
      nlohmann::json runs = nlohmann::json::array();
      for (const FanoutRun& f : fanout_runs)
        runs.push_back({{"n", f.n}, {"measured", f.measured}, {"flat", f.flat}});
      v["pull_fanout"] = {{"phi", lp.model.pull_fanout}, {"runs", runs}};
    }
    if (!streamed_runs.empty()) {
      nlohmann::json runs = nlohmann::json::array();
      for (const StreamedRun& r : streamed_runs)
        runs.push_back({{"algorithm", r.algorithm},
                        {"n", r.n},
                        {"k", r.k},
                        {"predicted_at_kappa_1", r.predicted},
                        {"first_packet", r.fill},
                        {"measured", r.measured}});
      v["streamed"] = {{"kappa", lp.model.streamed}, {"runs", runs}};
    }
    v["regret_by_size"] = regrets;
    v["seconds"] = prog.elapsed();
    v["validation_seconds"] = validation_seconds;
    v["training_interleaved"] = interleaved;
    if (interleaved) {
      v["training_seconds_between_passes"] = training_between;
      v["sizes_timed_again"] = refit_changed;
    }
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& me : results)
      rows.push_back({{"collective", me.coll},
                      {"algorithm", me.alg},
                      {"n", me.n},
                      {"rounds", me.samples.size()},
                      {"rounds_per_pass", me.pass_rounds},
                      {"predicted", me.predicted},
                      {"measured", me.measured},
                      {"chosen", me.chosen},
                      {"fastest", me.fastest},
                      {"same_messages_as", me.same_messages_as},
                      {"timed", timed_apart() ? "apart" : "batch"},
                      {"probe", me.probe}});
    v["runs"] = rows;
    file.validation_json = v.dump();

    std::printf("# fabcoll-calibrate: p = %d, link %s%s\n", p, link.c_str(),
                quick ? " (--quick)" : "");
    // The bandwidth is large messages': above the break where there is one (below it β can be
    // steeper: over sockets the one-way time climbs from 256 B to 1 KiB).
    const double bandwidth_beta = lp.break_bytes > 0 ? lp.beta_above : lp.model.beta;
    std::printf(
        "link %s: alpha = %.3g s, beta = %.3g s/B, o = %.3g s, G = %.3g s/B, "
        "R^2 = %.4f, written data x%.2f, exchanges x%.2f alpha x%.2f beta",
        link.c_str(), lp.model.alpha, lp.model.beta, lp.model.overhead, lp.model.gap, lp.r2,
        lp.model.written, lp.model.exchange_alpha, lp.model.exchange_beta);
    if (lp.model.ring_exchange_beta >= 0)
      std::printf(", exchanges' ring bytes between CPUs beta_x = %.3g s/B",
                  lp.model.ring_exchange_beta);
    if (lp.model.wake > 0) std::printf(", wake-up W = %.3g s", lp.model.wake);
    if (lp.model.has_large())
      std::printf(", whole messages from %.0f B (beyond the cache): beta = %.3g s/B (x%.2f)",
                  lp.model.large_from, lp.model.beta_large,
                  lp.model.beta_large / (lp.break_bytes > 0 && lp.model.large_from >= lp.break_bytes
                                             ? lp.beta_above
                                             : lp.model.beta));
    if (lp.model.call_wake > 0)
      std::printf(", a call's first wake-up K = %.3g s (below the break, x(1 - exchange share))",
                  lp.model.call_wake);
    if (lp.break_bytes > 0)
      std::printf("; break at %.0f B: alpha = %.3g s, beta = %.3g s/B above", lp.break_bytes,
                  lp.alpha_above, lp.beta_above);
    if (lp.exchange_alpha_above > 0)
      std::printf(", exchanges x%.2f alpha there", lp.exchange_alpha_above);
    if (lp.call_wake_above > 0) std::printf(", K = %.3g s there", lp.call_wake_above);
    std::printf("; bandwidth %.3g GB/s\n", 1e-9 / bandwidth_beta);
    if (!streamed_runs.empty()) {
      std::printf("streamed packets: kappa = %.2f (pipelined broadcasts:", lp.model.streamed);
      for (const StreamedRun& r : streamed_runs)
        std::printf(
            " %s %.0f B k = %.0f: %.1f us against %.1f us at kappa = 1 (first packet "
            "%.1f us);",
            r.algorithm.c_str(), r.n, r.k, r.measured * 1e6, r.predicted * 1e6, r.fill * 1e6);
      std::printf(
          " the rounds a broadcast's further packets through the rings add cost kappa (alpha "
          "+ beta m))\n");
    }
    if (!fanout_runs.empty()) {
      std::printf("pull fan-out: phi = %.2f (naive broadcast of pulled messages:",
                  lp.model.pull_fanout);
      for (const FanoutRun& f : fanout_runs)
        std::printf(" %.0f B %.1f us against %.1f us with phi = 0;", f.n, f.measured * 1e6,
                    f.flat * 1e6);
      std::printf(" each receiver beyond the first adds phi * beta * n)\n");
    }
    if (layout > 0 || fit_collectives) {
      std::printf("layout %s: alpha, beta fitted to %s",
                  tuning::layout_name(p, cores, mapping).c_str(),
                  fit_collectives ? "timed collectives" : "the concurrent pairs");
      if (fit_collectives && link.starts_with("ofi")) {
        std::printf(lp.break_bytes > 0 ? " (break at %.0f B: error x%.2f of one line"
                                       : " (no break: none paid for its α",
                    lp.break_bytes, 1 / fit_break_gain);
        if (pp_step.n > 0)
          std::printf("; the ping-pong steps up x%.2f at %.0f B)", pp_step.ratio, pp_step.n);
        else
          std::printf("; no step in the ping-pong)");
      }
      if (fit_collectives && lp.model.has_small()) {
        std::printf(
            "; alpha of messages below %.0f B (injected) = %.3g s: error x%.2f of one alpha%s",
            lp.model.small_below, lp.model.alpha_small, 1 / fit_small_gain,
            small_paid ? "" : " (kept below alpha, though the information criterion does not pay)");
        if (lp.model.call_wake_small >= 0)
          std::printf(
              "; a call's K there = %.3g s, refitted to the %d runs charged it (%zu at %.0f B, "
              "not in the fit): their error x%.2f of K's",
              lp.model.call_wake_small, small_k_runs, small_runs.size(), small_runs.front().n,
              1 / small_k_gain);
      } else if (fit_collectives && small_bytes > 0)
        std::printf("; no alpha of its own below %.0f B (injected): error x%.2f with one%s",
                    small_bytes, 1 / fit_small_gain,
                    small_held ? " (the fit held it at alpha, at most alpha)" : "");
      std::printf("; pairs (%s): alpha = %.3g s, beta = %.3g s/B, R^2 = %.4f; ",
                  layout > 0 ? all_pairs.c_str() : "ping-pong", pairs_lp.model.alpha,
                  pairs_lp.model.beta, pairs_lp.r2);
      if (o_burst >= 0)
        std::printf(
            "sender overhead o fitted to the timed collectives (a burst of 8-byte sends: "
            "%.3g s%s)%s, time per byte G measured by %s\n",
            o_burst,
            lp.model.has_small() && lp.model.overhead_small >= 0
                ? (fmt(", kept as o below %.0f B: ", lp.model.small_below) +
                   fmt("%.3g s", lp.model.overhead_small))
                      .c_str()
                : "",
            lp.model.receive_overhead >= 0
                ? fmt(", receiver overhead o_r = %.3g s fitted to the naive reduce's",
                      lp.model.receive_overhead)
                      .c_str()
                : "",
            layout > 0 ? "all pairs at once" : "one pair");
      else
        std::printf("sender overhead o and time per byte G measured by %s\n",
                    layout > 0 ? "all pairs at once" : "one pair");
    }
    for (const auto& g : file.gammas)
      std::printf("gamma %s/%s = %.3g s/B\n", g.op.c_str(), g.datatype.c_str(), g.gamma);
    if (lp.model.has_gamma_large())
      std::printf(
          "gamma beyond the cache = %.3g s/B (x%.2f gamma sum/float64): combines of "
          "messages from %.0f B (%s; gamma.csv, kind sum/float64/combine_to)\n",
          lp.model.gamma_large, lp.model.gamma_large / file.gammas.front().gamma,
          lp.model.gamma_large_from,
          gamma_large_from >= 0 ? "--gamma-large-from"
                                : "a core's L2 over three buffers and its ranks");
    for (Collective c : colls) {
      std::string t = tuning::format_table(tables[c]);
      if (t.size() > 400) t = t.substr(0, 400) + " …";
      std::printf("crossovers %s: %s\n", fabcoll::collective_name(c), t.c_str());
    }
    if (timed_apart()) {
      std::printf(
          "barrier: %.2f us measured alone (each call timed apart, between barriers: "
          "none taken off)\n",
          barrier.before * 1e6);
    } else {
      std::printf("barrier (taken off each batch of calls back to back): %.2f us measured alone",
                  barrier.before * 1e6);
      if (barrier.calls > 0)
        std::printf(
            "; %.2f-%.2f us beside the batches (taken off in place of the one alone, "
            "where lower: in %d of %d calls)",
            barrier.during_low * 1e6, barrier.during_high * 1e6, barrier.lowered, barrier.calls);
      std::printf("\n");
    }
    // A barrier measured alone far above the lowest beside the batches (twice, and 100 µs
    // more): the machine was busy then (BarrierTime). Not against the highest: under load
    // one call's rounds can be slow too (ctest -j2: no notice where the one alone took 4 ms).
    if (barrier.calls > 0 && barrier.before > 2 * barrier.during_low &&
        barrier.before - barrier.during_low > 100e-6)
      std::fprintf(stderr,
                   "fabcoll-calibrate: the barrier measured alone took %.0f us, %.1f times the "
                   "lowest timed beside the batches (%.0f us): the machine was busy then; the "
                   "lower was taken off in %d of %d calls\n",
                   barrier.before * 1e6, barrier.before / barrier.during_low,
                   barrier.during_low * 1e6, barrier.lowered, barrier.calls);
    if (!results.empty())
      std::printf("%-22s %-24s %10s %14s %14s %8s  %s\n", "collective", "algorithm", "bytes",
                  "predicted(us)", "measured(us)", "error", "");
    for (const auto& me : results)
      std::printf("%-22s %-24s %10.0f %14.2f %14.2f %+7.0f%%  %s%s%s\n", me.coll.c_str(),
                  me.alg.c_str(), me.n, me.predicted * 1e6, me.measured * 1e6,
                  100 * (me.predicted - me.measured) / me.measured, me.chosen ? "chosen " : "",
                  me.fastest ? "fastest" : "",
                  me.same_messages_as.empty()
                      ? ""
                      : (" (the messages of " + me.same_messages_as + ", timed once)").c_str());
    if (results.empty()) {
      std::printf("validation skipped (--no-validate); %.1f s\n", prog.elapsed());
    } else {
      std::printf(
          "median |predicted - measured| / measured = %.1f%%, max selection regret = "
          "%.1f%% (90%% interval %.1f–%.1f%%; %zu runs, %.1f s)\n",
          100 * med_err, 100 * max_regret, 100 * max_interval.lo, 100 * max_interval.hi,
          results.size(), prog.elapsed());
      // Candidates that send the same messages were timed once (same_messages_as): the median
      // over the runs timed, each once, beside the one over every (algorithm, size).
      if (errs_timed.size() < errs.size())
        std::printf(
            "%zu of them timed (the others send the same messages as one of those); "
            "median |predicted - measured| / measured over those: %.1f%%\n",
            errs_timed.size(), 100 * med_err_timed);
      // Each regret over 10% with the written-data probe taken right after its size: whether
      // that size ran in the state the fit saw.
      for (const auto& r : regrets)
        if (r["regret"].get<double>() > 0.10)
          std::printf(
              "regret %.1f%% at %s %.0f B (90%% interval %.1f–%.1f%%): written data across "
              "CPUs x%.2f right after it, x%.2f before the fit\n",
              100 * r["regret"].get<double>(), r["collective"].get<std::string>().c_str(),
              r["n"].get<double>(), 100 * r["interval"][0].get<double>(),
              100 * r["interval"][1].get<double>(), r["probe"].get<double>(), probe_before);
      // After a retry the last attempt is either undisturbed (reported as it is) or, where the
      // machine changed speed during every one, the least disturbed is kept (possibly the last).
      if (attempt > 1 && !last_disturbed)
        std::printf("attempts: %d (the machine changed speed during the %s)\n", attempt,
                    attempt == 2 ? "first" : ("first " + std::to_string(attempt - 1)).c_str());
      else if (attempt > 1)
        std::printf(
            "attempts: %d (the machine changed speed during every one; kept attempt %d, the "
            "least disturbed)\n",
            attempt, kept);
      std::printf(
          "ping-pong after the validation: x%.2f the one before (median over sizes: x%.2f below "
          "64 KiB, x%.2f from 64 KiB)\n",
          drift, drift_small, drift_large);
      std::printf(
          "the pace within the run: ping-pong before the validation x%.2f the first; the "
          "validation's last pass x%.2f its first (median over the runs timed)\n",
          drift_fit, drift_passes);
      if (interleaved)
        std::printf(
            "the fit's timed collectives: the first of %d passes before the validation, the "
            "others between its passes (%.1f s of its %.1f s), the fit done again to all of "
            "them; %d validated sizes timed once more after it, where it runs a candidate "
            "otherwise (another packet count, strategy or messages)\n",
            kTrainingPasses, training_between, validation_seconds, refit_changed);
      if (drifted)
        std::fprintf(stderr,
                     "fabcoll-calibrate: warning: the ping-pong after the validation took "
                     "x%.2f the time of the one before: the machine changed speed during the "
                     "run, and the errors above include that; calibrate again on a quiet "
                     "machine\n",
                     drift);
      if (drift_fit > kDriftHigh || drift_fit < 1 / kDriftHigh)
        // A note, not a check: of the forty-ninth session's 38 p = 4 sockets launches, 12 had
        // it past the bound and 3 of those missed a target (one with the break at 384 B since
        // not tried); none of the other 26 missed.
        std::fprintf(stderr,
                     "fabcoll-calibrate: note: the ping-pong before the validation took x%.2f "
                     "the time of the first: the machine's pace may have moved between the "
                     "fit's timed collectives and the validation; a large error can come from "
                     "that\n",
                     drift_fit);
      std::printf(
          "written data across CPUs (128 KiB round trip, written / untouched): x%.2f before the "
          "fit, x%.2f after the validation%s\n",
          probe_before, probe_after, during_range(probes_during).c_str());
      if (probe_moved)
        std::fprintf(
            stderr,
            "fabcoll-calibrate: warning: written data across CPUs cost x%.2f as much "
            "during or after the validation as before the fit: the machine changed how fast a "
            "core reads what another just wrote, and the errors and regrets above "
            "include that; calibrate again\n",
            probe_change);
      if (omega_disagrees)
        std::fprintf(stderr,
                     "fabcoll-calibrate: warning: the fit put written data at omega = %.2f, "
                     "where the probe before it (x%.2f) implies %.2f (within 1.5 times either "
                     "way where the timed collectives see the probe's mode): they saw the "
                     "machine in another mode; calibrate again\n",
                     omega_fitted, probe_before, tuning::written_expected(probe_before));
      if (rings_disagree)
        std::fprintf(stderr,
                     "fabcoll-calibrate: warning: the fit put shm's rings at beta = x%.2f the "
                     "pairs' ping-pong's below the single-copy threshold (x%.2f at most where "
                     "they keep their speed): the timed collectives saw slower rings; "
                     "calibrate again\n",
                     1 / ring_ratio, 1 / tuning::kRingRatioLow);
    }

    std::string err;
    const tuning::TuningFile this_run = file;  // the report shows this run's entry only
    // Keep what an earlier calibration of this machine measured in other layouts or link
    // classes (p = 2 and p = 4 on a 2-core node: both entries, model_for picks by layout).
    if (!out_path.empty() && !replace && std::filesystem::exists(out_path)) {
      std::string why;
      std::ifstream in(out_path);
      std::stringstream ss;
      ss << in.rdbuf();
      if (const auto old = tuning::parse_tuning(ss.str(), why);
          old && tuning::same_machine(*old, file.machine, why)) {
        const int kept = tuning::merge_tuning(file, *old);
        if (kept > 0)
          std::fprintf(
              stderr,
              "fabcoll-calibrate: kept %d link entr%s of %s (other class, layout or mapping; "
              "--replace drops them)\n",
              kept, kept == 1 ? "y" : "ies", out_path.c_str());
      }
    }
    if (!out_path.empty() && tuning::save_tuning(file, out_path, err)) {
      std::fprintf(stderr, "fabcoll-calibrate: wrote %s\n", out_path.c_str());
    } else {
      std::fprintf(stderr, "fabcoll-calibrate: %s\n",
                   out_path.empty() ? "no output path (set -o)" : err.c_str());
      rc = 1;
    }
    if (!report_dir.empty()) {
      std::filesystem::create_directories(report_dir);
      tuning::save_tuning(this_run, report_dir + "/tuning.json", err);
      {
        std::ofstream csv(report_dir + "/pingpong.csv");
        csv << "link,n,t,kind\n";
        for (const auto& pt : pp.all) csv << link << ',' << pt.n << ',' << pt.t << ",rep\n";
        for (const auto& pt : pp.medians) csv << link << ',' << pt.n << ',' << pt.t << ",median\n";
        for (const auto& pt : pp.written_all)
          csv << link << ',' << pt.n << ',' << pt.t << ",written\n";
        for (const auto& pt : pp.written_medians)
          csv << link << ',' << pt.n << ',' << pt.t << ",written_median\n";
        for (const auto& pt : pp.exchange_all)
          csv << link << ',' << pt.n << ',' << pt.t << ",exchange\n";
        for (const auto& pt : pp.exchange_medians)
          csv << link << ',' << pt.n << ',' << pt.t << ",exchange_median\n";
      }
      {
        std::ofstream csv(report_dir + "/gamma.csv");
        csv << "kernel,n,t\n";
        for (const auto& [k, pt] : gamma_pts) csv << k << ',' << pt.n << ',' << pt.t << '\n';
      }
      if (!train.empty()) {
        // The oversubscribed fit's runs (3b): t ≈ a α + b β (1 + f(ω − 1)) χ-scaled + bx β_x + c;
        // `predicted`: what the model written predicts for the run, as the validation predicts
        // its runs (the training's residuals at a glance, against t).
        std::ofstream csv(report_dir + "/training.csv");
        csv << "collective,algorithm,n,a,b,c,f,e,above,t,w,large,small,o,o_recv,bx,predicted\n";
        for (std::size_t i = 0; i < train.size(); ++i)
          csv << fabcoll::collective_name(train_runs[i].alg->coll) << ',' << train_runs[i].alg->name
              << ',' << fmt("%.0f", train_runs[i].n) << ',' << train[i].a << ',' << train[i].b
              << ',' << train[i].c << ',' << train[i].f << ',' << train[i].e << ','
              << train[i].above << ',' << train[i].t << ',' << train[i].w << ',' << train[i].large
              << ',' << train[i].small << ',' << train[i].o << ',' << train[i].o_recv << ','
              << train[i].bx << ',' << training_prediction(train_runs[i], p, file, link, placed)
              << '\n';
      }
      if (!small_runs.empty()) {
        // The runs timed below the inject size (not in the fit: training.csv holds its points),
        // each with the model written's prediction; K of small messages, where refitted, was
        // refitted to them and to training.csv's runs with rounds below it.
        std::ofstream csv(report_dir + "/training_small.csv");
        csv << "collective,algorithm,n,t,predicted\n";
        for (const TrainRun& r : small_runs)
          csv << fabcoll::collective_name(r.alg->coll) << ',' << r.alg->name << ','
              << fmt("%.0f", r.n) << ',' << r.t << ','
              << training_prediction(r, p, file, link, placed) << '\n';
      }
      {
        std::ofstream csv(report_dir + "/validation.csv");
        csv << "collective,algorithm,n,predicted,measured,chosen,fastest,probe,same_messages_as,"
               "timed\n";
        for (const auto& me : results)
          csv << me.coll << ',' << me.alg << ',' << me.n << ',' << me.predicted << ','
              << me.measured << ',' << int(me.chosen) << ',' << int(me.fastest) << ',' << me.probe
              << ',' << me.same_messages_as << ',' << (timed_apart() ? "apart" : "batch") << '\n';
      }
      std::string fanout_text;
      if (!fanout_runs.empty()) {
        fanout_text =
            "\n\nφ (pull fan-out): a message its receivers pull (shm's single-copy "
            "reads) costs the last of p − 1 receivers pulling one buffer at once "
            "α + βn(1 + φ(p − 2)) + (p − 2)o; φ = " +
            fmt("%.2f", lp.model.pull_fanout) +
            ", from the naive broadcast timed as the validation times it:";
        for (const FanoutRun& f : fanout_runs)
          fanout_text += " " + fmt("%.0f", f.n) + " B " + fmt("%.1f", f.measured * 1e6) +
                         " µs against " + fmt("%.1f", f.flat * 1e6) + " µs with φ = 0;";
        fanout_text.back() = '.';
      }
      std::ofstream md(report_dir + "/summary.md");
      md << "# fabcoll calibration report\n\n"
         << "Machine `" << file.machine.hostname << "`, " << file.machine.cores
         << " cores, fabcoll " << file.machine.fabcoll_version << ", " << file.created
         << ". p = " << p << ", link class `" << link << "`" << (quick ? ", `--quick`" : "")
         << ".\n\n"
         << "## Link model\n\n| class | α (µs) | β (ns/B) | bandwidth (GB/s) | o (µs) | o_r (µs) "
            "| G (ns/B) "
            "| R² | break (B) | α above (µs) | β above (ns/B) | ω (written data) | χα, χβ "
            "(exchanges) | W (µs) | β beyond the cache (ns/B, from) | α of small messages (µs, "
            "below) | K (µs) |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
            "| --- | --- | --- | --- | --- | --- |\n"
         << "| " << link << (layout > 0 ? " (" + tuning::layout_name(p, cores, mapping) + ")" : "")
         << " | " << fmt("%.3f", lp.model.alpha * 1e6) << " | " << fmt("%.4f", lp.model.beta * 1e9)
         << " | " << fmt("%.2f", 1e-9 / (lp.break_bytes > 0 ? lp.beta_above : lp.model.beta))
         << " | " << fmt("%.3f", lp.model.overhead * 1e6) << " | "
         << (lp.model.receive_overhead >= 0 ? fmt("%.3f", lp.model.receive_overhead * 1e6)
                                            : std::string("= o"))
         << " | " << fmt("%.4f", lp.model.gap * 1e9) << " | " << fmt("%.4f", lp.r2) << " | "
         << (lp.break_bytes > 0 ? fmt("%.0f", lp.break_bytes) : std::string("none")) << " | "
         << fmt("%.3f", lp.alpha_above * 1e6) << " | " << fmt("%.4f", lp.beta_above * 1e9) << " | "
         << fmt("%.2f", lp.model.written) << " | " << fmt("%.2f", lp.model.exchange_alpha)
         << (lp.exchange_alpha_above > 0
                 ? " (" + fmt("%.2f", lp.exchange_alpha_above) + " above the break)"
                 : std::string())
         << ", " << fmt("%.2f", lp.model.exchange_beta) << " | " << fmt("%.3f", lp.model.wake * 1e6)
         << " | "
         << (lp.model.has_large() ? fmt("%.4f", lp.model.beta_large * 1e9) + ", " +
                                        fmt("%.0f", lp.model.large_from) + " B"
                                  : std::string("none"))
         << " | "
         << (lp.model.has_small() ? fmt("%.3f", lp.model.alpha_small * 1e6) + ", " +
                                        fmt("%.0f", lp.model.small_below) + " B"
                                  : std::string("none"))
         << " | " << fmt("%.3f", lp.model.call_wake * 1e6)
         << (lp.call_wake_above > 0
                 ? " (" + fmt("%.3f", lp.call_wake_above * 1e6) + " above the break)"
                 : std::string())
         << (lp.model.has_small() && lp.model.call_wake_small >= 0
                 ? " (" + fmt("%.3f", lp.model.call_wake_small * 1e6) + " below " +
                       fmt("%.0f B, refitted to the runs in training_small.csv and "
                           "training.csv's with rounds below it)",
                           lp.model.small_below)
                 : std::string())
         << " |\n\nω: data its sender wrote within the collective (received, combined, "
            "copied) costs βω per byte; measured by the ping-pong bouncing a buffer, each "
            "round trip right after an untouched one, from "
         << fmt("%.0f", written_from) << " B up to below " << fmt("%.0f", written_sizes_end())
         << " B (a core's L2 cache; pingpong.csv, kind `written`): the median ratio of its β "
            "time to the untouched ping-pong's"
         << (fit_collectives ? " (where α, β are fitted to the timed collectives: fitted with them)"
                             : "")
         << ".\n\nχα, χβ: a message whose sender receives, or whose receiver sends, while it is "
            "under way (an exchange: recursive doubling, halving, the rings) costs χα·α + "
            "χβ·βn; "
         << (fit_collectives
                 ? std::string(link.starts_with("ofi")
                                   ? "fitted with α and β to the timed collectives, χα apart "
                                     "from χβ."
                                   : "one χ for both, fitted with α, β and ω to the timed "
                                     "collectives.")
             : layout > 0
                 ? std::string("1: with ranks sharing cores the concurrent pairs exchange "
                               "already (--oversubscribed-fit pairs).")
                 : "measured by chains of exchanges (both ranks sending n bytes at once) timed "
                   "after each size's untouched round trips (pingpong.csv, kind `exchange`): "
                   "χα the "
                   "median ratio of exchange to one-way time up to " +
                       fmt("%.0f", kExchangeAlphaTo) +
                       " B, χβ the median ratio of their β times from " +
                       fmt("%.0f", kExchangeBetaFrom) + " B up.")
         << (lp.model.ring_exchange_beta >= 0
                 ? " Inside a node, an exchange's bytes between CPUs through the rings (below "
                   "the single-copy threshold) cost β_x = " +
                       fmt("%.4f", lp.model.ring_exchange_beta * 1e9) +
                       " ns/B instead of χβ·β; fitted with the others to the timed collectives "
                       "(training.csv, column bx: such bytes of each run)."
                 : std::string())
         << (fit_collectives
                 ? "\n\nW (wake-up): a one-way message of a fan-in collective (every one but the "
                   "broadcast and the scatter) waits for its receiver to be "
                   "switched back onto its core, and costs α + W; fitted with α, β, ω and χ to the "
                   "timed collectives (training.csv, column w: such rounds of each run)."
                   "\n\nβ beyond the cache: whole messages from --large-from's size (with ranks "
                   "sharing cores the L2 size over the ranks per core) cost their own β per byte; "
                   "fitted with the others to "
                   "the timed collectives, one size of which lies beyond (training.csv, column "
                   "large: the share of each run's bytes in such messages)."
                   "\n\nα of small messages: over the fabric, messages the engine injects "
                   "(below the provider's inject size) cost their own α; fitted with the others "
                   "to the timed collectives and kept where it comes out below α (the Bayesian "
                   "information criterion's verdict printed beside it) (training.csv, column "
                   "small: the share of each run's rounds in such "
                   "messages). Over the fabric χα is fitted apart from χβ, with an exchange's "
                   "α above the break of its own, and K, a call's first wake-up: what a call "
                   "adds once for the share of its path not in exchanges and below the break." +
                       (link.starts_with("ofi")
                            ? std::string(" The break: ") +
                                  (pp_step.n > 0
                                       ? "the ping-pong steps up x" + fmt("%.2f", pp_step.ratio) +
                                             " at " + fmt("%.0f", pp_step.n) +
                                             " B (a line with a step fitted to its medians "
                                             "from the smallest training size), tried first; "
                                             "kept where the timed collectives pay for it by "
                                             "the criterion, else the best of the sizes tried."
                                       : "no step in the ping-pong; the best of the sizes "
                                         "tried, where the timed collectives pay for it.")
                            : std::string())
                 : std::string(""))
         << (layout == 0 && !fit_collectives && lp.model.has_large()
                 ? "\n\nβ beyond the cache: a single copy from " +
                       fmt("%.0f", lp.model.large_from) +
                       " B (half the L2: its source and destination; --large-from) costs " +
                       fmt("%.4f", lp.model.beta_large * 1e9) +
                       " ns/B, fitted to the ping-pong's sizes from there at the upper "
                       "segment's α, the segment to those below it; a broadcast costs at least "
                       "its busiest rank's copies at it."
                 : std::string())
         << fanout_text
         << "\n\n![ping-pong](pingpong.png)\n\n## Reduction "
            "kernels (γ)\n\n| "
            "op | datatype | "
            "γ (ns/B) |\n| --- | --- | --- |\n";
      for (const auto& g : file.gammas)
        md << "| " << g.op << " | " << g.datatype << " | " << fmt("%.4f", g.gamma * 1e9) << " |\n";
      if (lp.model.has_gamma_large())
        md << "\nγ beyond the cache: a combine of a message of at least "
           << fmt("%.0f", lp.model.gamma_large_from)
           << (gamma_large_from >= 0 ? " B (--gamma-large-from) costs "
                                     : " B (a core's L2 over three buffers and the ranks per "
                                       "core) costs ")
           << fmt("%.4f", lp.model.gamma_large * 1e9)
           << " ns/B: the median per byte of the sum of float64 into a third buffer, as the "
              "engine combines a received message with its own data, at 1, 1.5, 2 and 3 times "
              "that size (gamma.csv, kind sum/float64/combine_to). An algorithm's γ is mixed by "
              "the share of its critical path's bytes in such messages.\n";
      md << "\n## Crossovers (predicted fastest algorithm per size range)\n\n";
      for (Collective c : colls)
        md << "- **" << fabcoll::collective_name(c) << "**: " << tuning::format_table(tables[c])
           << "\n";
      md << "\n## Validation\n\nEach measured time is the median over rounds of the slowest "
         << "rank's time per call: "
         << (timed_apart() ? "each call between barriers of its own (validation.csv, column "
                             "timed). "
                           : "calls back to back in a batch between two barriers. ")
         << "Median |predicted − measured| / measured: **" << fmt("%.1f", 100 * med_err)
         << "%**; maximum selection regret (time of the chosen "
         << "algorithm / fastest measured − 1): **" << fmt("%.1f", 100 * max_regret) << "%** "
         << "(90% interval " << fmt("%.1f", 100 * max_interval.lo) << "–"
         << fmt("%.1f", 100 * max_interval.hi)
         << "%: the validation's rounds resampled, every candidate with the same rounds)."
         << (errs_timed.size() < errs.size()
                 ? " " + std::to_string(errs_timed.size()) + " of the " +
                       std::to_string(errs.size()) +
                       " runs were timed; the others send the same messages as one of those "
                       "(on the sim) and share its time. Median error over the runs timed: " +
                       fmt("%.1f", 100 * med_err_timed) + "%."
                 : std::string())
         << "\n\n"
         << "The ping-pong timed again after the validation took **x" << fmt("%.2f", drift)
         << "** the time of the first (median over the sizes below 64 KiB: x"
         << fmt("%.2f", drift_small) << ", from 64 KiB: x" << fmt("%.2f", drift_large)
         << "; the one that moved more)"
         << (drifted ? ": the machine changed speed during the run, and the errors include that."
                     : ".")
         << " Timed once more just before the validation it took x" << fmt("%.2f", drift_fit)
         << " the time of the first (the fit's timed collectives lie between them"
         << (interleaved ? ", their first pass: the others ran between the validation's passes"
                         : "")
         << "), and the validation's last pass x" << fmt("%.2f", drift_passes)
         << " the time of its first (the median over the runs timed)."
         << (interleaved
                 ? " The fit was done again to all of its passes (" +
                       fmt("%.1f", training_between) +
                       " s of the validation's time) for the tables and predictions; " +
                       std::to_string(refit_changed) +
                       " validated sizes, where it runs a candidate otherwise than the fit to the "
                       "first pass did (another packet count, strategy or messages on the sim), "
                       "were timed once more after it, every candidate there in one turn as now "
                       "chosen."
                 : std::string())
         << " Written data across CPUs (a 128 KiB round trip of just-written against untouched "
         << "messages): **x" << fmt("%.2f", probe_before) << "** before the fit, **x"
         << fmt("%.2f", probe_after) << "** after the validation" << during_range(probes_during)
         << (probe_moved ? ": the cost of written data changed during the run." : ".")
         << (omega_disagrees ? " The fit put written data at ω " + fmt("%.2f", omega_fitted) +
                                   ", where the probe before it implies " +
                                   fmt("%.2f", tuning::written_expected(probe_before)) +
                                   " (within 1.5 times either way in the probe's mode): the timed "
                                   "collectives saw the machine in another mode than the probe."
                             : std::string())
         << (rings_disagree
                 ? " The fit put shm's rings (β below the single-copy threshold) at x" +
                       fmt("%.2f", 1 / ring_ratio) +
                       " the pairs' ping-pong's: the timed collectives saw slower rings than "
                       "the ping-pong before them."
                 : std::string())
         << (attempt > 1 && !last_disturbed
                 ? " This was attempt " + std::to_string(attempt) +
                       ": in the attempts before it the machine changed speed (--retries)."
             : attempt > 1
                 ? " This was attempt " + std::to_string(kept) + " of " + std::to_string(attempt) +
                       ": the machine changed speed during every one, this the least "
                       "disturbed (--retries)."
                 : std::string())
         << "\n\n"
         << "| collective | algorithm | bytes | predicted (µs) | measured (µs) | error | |\n"
         << "| --- | --- | --- | --- | --- | --- | --- |\n";
      for (const auto& me : results)
        md << "| " << me.coll << " | " << me.alg << " | " << fmt("%.0f", me.n) << " | "
           << fmt("%.2f", me.predicted * 1e6) << " | " << fmt("%.2f", me.measured * 1e6) << " | "
           << fmt("%+.0f%%", 100 * (me.predicted - me.measured) / me.measured) << " | "
           << (me.chosen ? "chosen " : "") << (me.fastest ? "fastest" : "")
           << (me.same_messages_as.empty()
                   ? ""
                   : " (the messages of " + me.same_messages_as + ", timed once)")
           << " |\n";
      for (Collective c : colls)
        md << "\n![" << fabcoll::collective_name(c) << "](validation_"
           << fabcoll::collective_name(c) << ".png)\n";
      md.close();
      // Plots: scripts/calibration_report.py (python3 + matplotlib).
      std::string script = FABCOLL_SOURCE_DIR "/scripts/calibration_report.py";
      if (const char* s = std::getenv("FABCOLL_REPORT_SCRIPT"); s != nullptr && *s) script = s;
      // python3 from PATH may be a private interpreter without matplotlib (pyenv): prefer the
      // system one, where Debian's python3-matplotlib lives. FABCOLL_PYTHON overrides.
      std::string python =
          std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
      if (const char* py = std::getenv("FABCOLL_PYTHON"); py != nullptr && *py) python = py;
      const std::string cmd = python + " '" + script + "' '" + report_dir + "'";
      if (std::system(cmd.c_str()) != 0)
        std::fprintf(stderr,
                     "fabcoll-calibrate: plots not made (%s failed; needs python3 and "
                     "matplotlib); the CSV files and summary.md are in %s\n",
                     cmd.c_str(), report_dir.c_str());
      else
        std::fprintf(stderr, "fabcoll-calibrate: report in %s/summary.md\n", report_dir.c_str());
    }
  }
  check(fc_barrier(world), "barrier");
  fc_finalize(ctx);
  return rc;
}

int main(int argc, char** argv) {
  // Memory the machine does not have (a size or option too large for it) is an error of its
  // own, not an abort with a backtrace.
  try {
    return calibrate(argc, argv);
  } catch (const std::bad_alloc&) {
    fail("out of memory (a size or an option too large for this machine?)");
  }
}
