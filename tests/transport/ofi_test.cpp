// The libfabric transport on a world of threads in one process: every thread is a rank with its
// own ofi::Endpoint (its own fabric, domain and RDM endpoint) over a shared in-memory bootstrap
// store, and its own Progress. A conformance suite (ordering per (source, tag) across both
// protocols, unexpected messages, zero bytes, rendezvous without staging, thousands of
// outstanding transfers, truncation), then collectives end to end, for each provider that can
// open here: sockets, tcp;ofi_rxm, shm.
#include "transports/ofi/ofi.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store.hpp"
#include "collectives/collectives.hpp"
#include "engine/communicator.hpp"
#include "engine/datatype.hpp"
#include "engine/progress.hpp"

namespace fabcoll {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kWaitSeconds = 30;

/// One rank of a thread world.
struct RankCtx {
  int rank;
  int size;
  ofi::Endpoint& ep;
  Progress& progress;
  Store& store;
};

/// Whether provider opens here (a world of one); the reason when it does not.
bool provider_opens(const std::string& provider, std::string& why) {
  static std::mutex mutex;
  static std::map<std::string, std::string> cache;  // provider -> "" (opens) or the reason
  const std::lock_guard lock(mutex);
  auto it = cache.find(provider);
  if (it == cache.end()) {
    std::string reason;
    try {
      MemoryStore store(std::make_shared<MemoryStoreHub>(), 0, 1);
      ofi::Endpoint ep(store, ofi::Options{provider, 5.0});
    } catch (const std::exception& e) {
      reason = e.what();
      if (reason.empty()) reason = "unknown error";
    }
    it = cache.emplace(provider, reason).first;
  }
  why = it->second;
  return why.empty();
}

/// Runs body on p threads, each a rank with its own endpoint.
void run_world(const ofi::Options& opts, int p, const std::function<void(RankCtx&)>& body) {
  auto hub = std::make_shared<MemoryStoreHub>();
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      try {
        MemoryStore store(hub, r, p);
        ofi::Endpoint ep(store, opts);
        Progress progress;
        progress.add_transport(&ep);
        RankCtx ctx{r, p, ep, progress, store};
        body(ctx);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "rank " << r << ": " << e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
}

Transfer post(RankCtx& c, OpKind kind, int peer, std::uint64_t tag, void* buf, std::size_t n) {
  auto* op = new PostedOp;
  op->kind = kind;
  op->peer = peer;
  op->tag = tag;
  op->size = n;
  op->transport = &c.ep;
  if (kind == OpKind::send) {
    op->send_data = static_cast<const std::byte*>(buf);
    c.ep.post_send(op);
  } else {
    op->recv_data = static_cast<std::byte*>(buf);
    c.ep.post_recv(op);
  }
  return Transfer(op, &c.progress);
}

Transfer send(RankCtx& c, int peer, std::uint64_t tag, const void* buf, std::size_t n) {
  return post(c, OpKind::send, peer, tag, const_cast<void*>(buf), n);
}
Transfer recv(RankCtx& c, int peer, std::uint64_t tag, void* buf, std::size_t n) {
  return post(c, OpKind::recv, peer, tag, buf, n);
}

/// Progresses until every transfer finished; false on the deadline.
bool wait_all(RankCtx& c, const std::vector<Transfer*>& ts, double seconds = kWaitSeconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    const bool done =
        std::all_of(ts.begin(), ts.end(), [](const Transfer* t) { return t->finished(); });
    if (done) return true;
    if (Clock::now() > deadline) {
      std::string pending;
      for (std::size_t i = 0; i < ts.size(); ++i)
        if (!ts[i]->finished()) pending += " " + std::to_string(i);
      ADD_FAILURE() << "rank " << c.rank << ": transfers still pending:" << pending << "\n"
                    << c.ep.debug_state();
      return false;
    }
    c.progress.poll();
  }
}
bool wait_all(RankCtx& c, std::vector<Transfer>& ts, double seconds = kWaitSeconds) {
  std::vector<Transfer*> ptrs;
  for (Transfer& t : ts) ptrs.push_back(&t);
  return wait_all(c, ptrs, seconds);
}

Errc error_of(const Transfer& t) {
  return t.op()->state.load() == OpState::failed ? t.op()->error : Errc::success;
}

/// A byte pattern that names (source, sequence, offset).
std::byte pattern(int src, std::size_t seq, std::size_t i) {
  return static_cast<std::byte>(
      (static_cast<std::size_t>(src) * 131 + seq * 31 + i * 7 + (i >> 8)) & 0xff);
}
std::vector<std::byte> make_payload(int src, std::size_t seq, std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern(src, seq, i);
  return v;
}
bool check_payload(const std::byte* p, int src, std::size_t seq, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] != pattern(src, seq, i)) return false;
  return true;
}

/// A store-based barrier that keeps progressing (peers may need our progress meanwhile).
void progress_barrier(RankCtx& c, const std::string& name) {
  c.store.put("test/" + name + "/" + std::to_string(c.rank), "1");
  for (int r = 0; r < c.size; ++r) {
    const std::string key = "test/" + name + "/" + std::to_string(r);
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    for (;;) {
      c.progress.poll();
      try {
        (void)c.store.get(key, 0.0005);
        break;
      } catch (const EngineError&) {
        if (Clock::now() > deadline) throw;
      }
    }
  }
}

class OfiConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (!provider_opens(GetParam(), why))
      GTEST_SKIP() << "libfabric provider '" << GetParam() << "' cannot open here: " << why;
    static std::map<std::string, bool> described;
    if (!described[GetParam()]) {  // once per provider, for the log
      described[GetParam()] = true;
      MemoryStore store(std::make_shared<MemoryStoreHub>(), 0, 1);
      const ofi::Endpoint ep(store, options());
      std::cout << ep.describe() << "\n";
    }
  }
  /// sockets_rendezvous: the rendezvous also on sockets (off there by default), so its RTS
  /// marker (tag bit 63) stays tested; not where ~100 rendezvous are outstanding (it stalls).
  [[nodiscard]] ofi::Options options(std::size_t eager_limit = ofi::Options{}.eager_limit,
                                     bool sockets_rendezvous = true) const {
    ofi::Options o;
    o.provider = GetParam();
    o.timeout_s = 20;
    o.eager_limit = eager_limit;
    o.rendezvous_on_sockets = sockets_rendezvous;
    return o;
  }
};

// Messages with equal (source, tag) match in send order, also when eager messages and
// rendezvous messages (RTS on the same tag) interleave; different tags do not interfere.
TEST_P(OfiConformance, OrderingPerSourceAndTag) {
  constexpr std::size_t kEager = 256;
  constexpr std::size_t kPerTag = 40;
  run_world(options(kEager), 3, [&](RankCtx& c) {
    auto size_of = [](std::size_t seq) { return seq % 3 == 2 ? 3 * kEager + seq : 8 + seq; };
    std::vector<std::vector<std::byte>> out;
    std::vector<std::vector<std::byte>> in;
    std::vector<Transfer> ts;
    struct Expect {
      int src;
      std::size_t seq;
      std::size_t index;
    };
    std::vector<Expect> expect;
    for (int peer = 0; peer < c.size; ++peer) {
      if (peer == c.rank) continue;
      for (std::uint64_t tag : {7u, 9u}) {
        for (std::size_t s = 0; s < kPerTag; ++s) {
          const std::size_t seq = s * 2 + (tag == 9 ? 1 : 0);
          in.emplace_back(size_of(seq));
          expect.push_back(Expect{peer, seq, in.size() - 1});
          ts.push_back(recv(c, peer, tag, in.back().data(), in.back().size()));
        }
      }
    }
    for (int peer = 0; peer < c.size; ++peer) {
      if (peer == c.rank) continue;
      for (std::size_t s = 0; s < kPerTag; ++s) {  // tags interleaved in send order
        for (std::uint64_t tag : {9u, 7u}) {
          const std::size_t seq = s * 2 + (tag == 9 ? 1 : 0);
          out.push_back(make_payload(c.rank, seq, size_of(seq)));
          ts.push_back(send(c, peer, tag, out.back().data(), out.back().size()));
        }
      }
    }
    ASSERT_TRUE(wait_all(c, ts)) << "rank " << c.rank << " timed out";
    for (const Transfer& t : ts) ASSERT_EQ(error_of(t), Errc::success) << t.op()->message;
    for (const Expect& e : expect) {
      const std::vector<std::byte>& b = in[e.index];
      EXPECT_TRUE(check_payload(b.data(), e.src, e.seq, b.size()))
          << "rank " << c.rank << " got message " << e.seq << " from " << e.src << " out of order";
    }
    if (c.ep.rendezvous_enabled()) {
      EXPECT_GT(c.ep.stats().rendezvous_messages, 0u);
    }
    progress_barrier(c, "ordering");
  });
}

// Sends posted (and delivered) before the receives exist: eager payloads and RTSs wait in the
// provider as unexpected messages; receives posted later in another order still match.
TEST_P(OfiConformance, UnexpectedMessages) {
  constexpr std::size_t kEager = 1024;
  constexpr std::size_t kCount = 24;
  run_world(options(kEager), 2, [&](RankCtx& c) {
    auto size_of = [](std::size_t i) { return i % 2 == 0 ? 100 + i : 5000 + i; };
    if (c.rank == 0) {
      std::vector<std::vector<std::byte>> out;
      std::vector<Transfer> ts;
      for (std::size_t i = 0; i < kCount; ++i) {
        out.push_back(make_payload(0, i, size_of(i)));
        ts.push_back(send(c, 1, 100 + i, out.back().data(), out.back().size()));
      }
      // Eager sends complete locally; let them leave before the receiver starts.
      const auto until = Clock::now() + std::chrono::milliseconds(100);
      while (Clock::now() < until) c.progress.poll();
      c.store.put("test/unexpected/sent", "1");
      ASSERT_TRUE(wait_all(c, ts));
      for (const Transfer& t : ts) EXPECT_EQ(error_of(t), Errc::success) << t.op()->message;
    } else {
      (void)c.store.get("test/unexpected/sent", 20);
      const auto until = Clock::now() + std::chrono::milliseconds(50);
      while (Clock::now() < until) c.progress.poll();  // messages arrive with no receive posted
      std::vector<std::vector<std::byte>> in(kCount);
      std::vector<Transfer> ts;
      for (std::size_t k = 0; k < kCount; ++k) {
        const std::size_t i = kCount - 1 - k;  // reverse tag order
        in[i].resize(size_of(i) + 16);
        ts.push_back(recv(c, 0, 100 + i, in[i].data(), in[i].size()));
      }
      ASSERT_TRUE(wait_all(c, ts));
      for (std::size_t k = 0; k < kCount; ++k) {
        const std::size_t i = kCount - 1 - k;
        ASSERT_EQ(error_of(ts[k]), Errc::success) << ts[k].op()->message;
        EXPECT_EQ(ts[k].received(), size_of(i));
        EXPECT_TRUE(check_payload(in[i].data(), 0, i, size_of(i))) << "message " << i;
      }
    }
    progress_barrier(c, "unexpected");
  });
}

TEST_P(OfiConformance, ZeroByteMessages) {
  run_world(options(), 2, [&](RankCtx& c) {
    const int peer = 1 - c.rank;
    std::vector<Transfer> ts;
    std::byte guard[4] = {std::byte{0x5a}, std::byte{0x5a}, std::byte{0x5a}, std::byte{0x5a}};
    ts.push_back(recv(c, peer, 1, nullptr, 0));
    ts.push_back(recv(c, peer, 2, guard, sizeof guard));  // a zero-byte message into 4 bytes
    ts.push_back(send(c, peer, 2, nullptr, 0));
    ts.push_back(send(c, peer, 1, nullptr, 0));
    ASSERT_TRUE(wait_all(c, ts));
    for (const Transfer& t : ts) EXPECT_EQ(error_of(t), Errc::success) << t.op()->message;
    EXPECT_EQ(ts[0].received(), 0u);
    EXPECT_EQ(ts[1].received(), 0u);
    EXPECT_EQ(guard[0], std::byte{0x5a});
    progress_barrier(c, "zero");
  });
}

// Above the eager limit, both directions at once: the RMA-read rendezvous moves the bytes
// with no staging copy, in chunks (9 MiB is more than two 4 MiB reads).
TEST_P(OfiConformance, AboveEagerLimitRendezvousWithoutStaging) {
  run_world(options(), 2, [&](RankCtx& c) {
    const int peer = 1 - c.rank;
    const std::size_t limit = c.ep.eager_limit();
    const std::vector<std::size_t> sizes = {limit - 1, limit, limit + 1, (1u << 20) + 7,
                                            (9u << 20) + 1};
    const ofi::Stats before = c.ep.stats();
    std::vector<std::vector<std::byte>> out;
    std::vector<std::vector<std::byte>> in;
    std::vector<Transfer> ts;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      in.emplace_back(sizes[i]);
      ts.push_back(recv(c, peer, 50 + i, in.back().data(), in.back().size()));
    }
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      out.push_back(make_payload(c.rank, i, sizes[i]));
      ts.push_back(send(c, peer, 50 + i, out.back().data(), out.back().size()));
    }
    ASSERT_TRUE(wait_all(c, ts));
    for (const Transfer& t : ts) ASSERT_EQ(error_of(t), Errc::success) << t.op()->message;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_EQ(ts[i].received(), sizes[i]);
      EXPECT_TRUE(check_payload(in[i].data(), peer, i, sizes[i])) << "size " << sizes[i];
    }
    const ofi::Stats& after = c.ep.stats();
    EXPECT_EQ(after.staged_bytes, before.staged_bytes) << "the rendezvous must not stage";
    if (c.ep.rendezvous_enabled()) {
      std::uint64_t large = 0;
      for (std::size_t s : sizes) large += s >= limit ? s : 0;
      EXPECT_EQ(after.rendezvous_messages - before.rendezvous_messages, 4u);
      EXPECT_EQ(after.rma_bytes_sent - before.rma_bytes_sent, large);
      EXPECT_EQ(after.rma_bytes_read - before.rma_bytes_read, large);
      EXPECT_EQ(after.eager_bytes_sent - before.eager_bytes_sent, limit - 1);
    }
    progress_barrier(c, "rendezvous");
  });
}

// Eager sizes around the 32-byte header slot, the providers' inject sizes (shm 4096, sockets
// 255, tcp;ofi_rxm 64) and up to 16 KiB (tcp;ofi_rxm's eager buffer; the default eager limit is
// above it): eager sends go without the prefix where the RTS marker is CQ data (with
// Options::raw_eager off, only those the provider can inject), and the receiver moves the bytes
// that landed in its header slot into place. Each receive sits in a larger buffer whose tail
// must stay untouched; in the second pass every message arrives before its receive. Then the
// raw truncation cases: a message longer than its receive by at most the header slot (nothing
// reaches the sink), and bytes into a receive of none.
void eager_sizes_around_the_header_and_inject_sizes(const ofi::Options& o) {
  run_world(o, 2, [&](RankCtx& c) {
    const int peer = 1 - c.rank;
    const std::vector<std::size_t> sizes = {1,    8,    31,   32,   33,   63,    64,   65,
                                            200,  255,  256,  4063, 4064, 4065,  4095, 4096,
                                            4097, 8191, 8192, 8193, 9000, 16383, 16384};
    ASSERT_GT(c.ep.eager_limit(), sizes.back()) << "every size here must go eager";
    const ofi::Stats before = c.ep.stats();
    for (const bool unexpected : {false, true}) {
      std::vector<std::vector<std::byte>> out;
      std::vector<std::vector<std::byte>> in;
      std::vector<Transfer> sends;
      std::vector<Transfer> recvs;
      auto post_recvs = [&] {
        for (std::size_t i = 0; i < sizes.size(); ++i) {
          in.emplace_back(sizes[i] + 48, std::byte{0xee});
          recvs.push_back(recv(c, peer, 300 + i, in.back().data(), sizes[i] + 16));
        }
      };
      if (!unexpected) post_recvs();
      progress_barrier(c, unexpected ? "raw-posted-u" : "raw-posted");
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        out.push_back(make_payload(c.rank, i, sizes[i]));
        sends.push_back(send(c, peer, 300 + i, out.back().data(), out.back().size()));
      }
      if (unexpected) {
        const auto until = Clock::now() + std::chrono::milliseconds(50);
        while (Clock::now() < until) c.progress.poll();
        post_recvs();
      }
      ASSERT_TRUE(wait_all(c, sends));
      ASSERT_TRUE(wait_all(c, recvs));
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        ASSERT_EQ(error_of(recvs[i]), Errc::success) << recvs[i].op()->message;
        EXPECT_EQ(recvs[i].received(), sizes[i]);
        EXPECT_TRUE(check_payload(in[i].data(), peer, i, sizes[i])) << "size " << sizes[i];
        for (std::size_t j = sizes[i]; j < in[i].size(); ++j)
          ASSERT_EQ(in[i][j], std::byte{0xee}) << "size " << sizes[i] << ", byte " << j;
      }
      progress_barrier(c, unexpected ? "raw-u" : "raw");
    }
    const ofi::Stats& after = c.ep.stats();
    EXPECT_EQ(after.rendezvous_messages, before.rendezvous_messages);
    if (c.ep.raw_eager_enabled()) {  // every one of them went without the prefix
      EXPECT_EQ(after.raw_messages - before.raw_messages, 2 * sizes.size());
    } else if (!o.raw_eager && c.ep.rendezvous_enabled()) {  // only those the provider injected
      EXPECT_LT(after.raw_messages - before.raw_messages, 2 * sizes.size());
    }
    // Truncation: 40 bytes into 20 (20 < 40 <= 20 + 32), 8 into 0; then 0 into 0 still works.
    const std::vector<std::byte> forty = make_payload(c.rank, 7, 40);
    std::vector<std::byte> into20(20 + 48, std::byte{0xee});
    std::vector<Transfer> ts;
    ts.push_back(recv(c, peer, 400, into20.data(), 20));
    ts.push_back(recv(c, peer, 401, nullptr, 0));
    ts.push_back(recv(c, peer, 402, nullptr, 0));
    ts.push_back(send(c, peer, 400, forty.data(), forty.size()));
    ts.push_back(send(c, peer, 401, forty.data(), 8));
    ts.push_back(send(c, peer, 402, nullptr, 0));
    ASSERT_TRUE(wait_all(c, ts));
    EXPECT_EQ(error_of(ts[0]), Errc::truncation) << ts[0].op()->message;
    EXPECT_EQ(error_of(ts[1]), Errc::truncation) << ts[1].op()->message;
    EXPECT_EQ(error_of(ts[2]), Errc::success) << ts[2].op()->message;
    EXPECT_EQ(ts[2].received(), 0u);
    for (std::size_t j = 20; j < into20.size(); ++j) ASSERT_EQ(into20[j], std::byte{0xee}) << j;
    for (std::size_t i = 3; i < ts.size(); ++i)
      EXPECT_EQ(error_of(ts[i]), Errc::success) << ts[i].op()->message;
    progress_barrier(c, "raw-trunc");
  });
}

TEST_P(OfiConformance, EagerSizesAroundTheHeaderAndInjectSizes) {
  eager_sizes_around_the_header_and_inject_sizes(options());
}

TEST_P(OfiConformance, EagerSizesWithThePrefixAboveTheInjectSize) {
  ofi::Options o = options();
  o.raw_eager = false;
  eager_sizes_around_the_header_and_inject_sizes(o);
}

// A small send goes out by fi_tinject with no op at all (Transport::send_now, what
// Channel::send tries first): the bytes arrive intact and in order with sends that were posted,
// and what it cannot take (too large for inject, a bad peer) is left to post_send.
TEST_P(OfiConformance, SmallSendsNeedNoOp) {
  run_world(options(), 2, [&](RankCtx& c) {
    const int peer = 1 - c.rank;
    {  // connect first: a provider may refuse injects (busy) while it sets up the connection
      std::byte a{}, b{};
      std::vector<Transfer> ts;
      ts.push_back(recv(c, peer, 499, &a, 1));
      ts.push_back(send(c, peer, 499, &b, 1));
      ASSERT_TRUE(wait_all(c, ts));
    }
    const std::vector<std::size_t> sizes = {0, 1, 8, 32, 100};
    std::vector<std::vector<std::byte>> in;
    std::vector<Transfer> recvs;
    for (std::size_t i = 0; i < sizes.size(); ++i) {  // twice each size on one tag: order
      for (int twice = 0; twice < 2; ++twice) {
        in.emplace_back(sizes[i] + 8, std::byte{0xee});
        recvs.push_back(recv(c, peer, 500, in.back().data(), sizes[i]));
      }
    }
    progress_barrier(c, "now-posted");
    std::vector<std::vector<std::byte>> out;
    std::vector<Transfer> posted;
    std::size_t taken = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      out.push_back(make_payload(c.rank, 2 * i, sizes[i]));
      // The first of each pair by send_now where it can, the second always posted. Up to 32 B
      // every provider's inject takes it; a busy provider (or a posted send queued behind
      // one) makes send_now decline until progress clears it, so it is tried again.
      bool now = false;
      for (int tries = 0; tries < 1000 && !now; ++tries) {
        const ofi::Stats s0 = c.ep.stats();
        const std::size_t live0 = c.ep.live_requests();
        now = c.ep.send_now(peer, 500, out.back().data(), sizes[i]);
        if (now) {  // sent by one inject: counted once, no request made
          EXPECT_EQ(c.ep.stats().inline_messages - s0.inline_messages, 1u);
          EXPECT_EQ(c.ep.stats().eager_messages - s0.eager_messages, 1u);
          EXPECT_EQ(c.ep.live_requests(), live0);
        } else {
          EXPECT_EQ(c.ep.stats().inline_messages, s0.inline_messages);  // nothing went
          if (sizes[i] > 32) break;
          c.progress.poll();
        }
      }
      if (now) {
        ++taken;
      } else {
        posted.push_back(send(c, peer, 500, out.back().data(), sizes[i]));
      }
      out.push_back(make_payload(c.rank, 2 * i + 1, sizes[i]));
      posted.push_back(send(c, peer, 500, out.back().data(), sizes[i]));
    }
    EXPECT_GE(taken, 4u) << "0 to 32 bytes fit every provider's inject size";
    // Not taken: larger than any inject size, a peer out of range, the reserved tag bit.
    const std::vector<std::byte> big(8192);
    EXPECT_FALSE(c.ep.send_now(peer, 501, big.data(), big.size()));
    EXPECT_FALSE(c.ep.send_now(2, 501, big.data(), 8));
    EXPECT_FALSE(c.ep.send_now(-1, 501, big.data(), 8));
    if (c.ep.describe().find("tag bit 63") != std::string::npos) {  // reserved for the RTS
      EXPECT_FALSE(c.ep.send_now(peer, std::uint64_t{1} << 63, big.data(), 8));
    }
    ASSERT_TRUE(wait_all(c, posted));
    ASSERT_TRUE(wait_all(c, recvs));
    EXPECT_EQ(c.ep.live_requests(), 0u) << c.ep.debug_state();
    for (std::size_t j = 0; j < recvs.size(); ++j) {
      const std::size_t n = sizes[j / 2];
      ASSERT_EQ(error_of(recvs[j]), Errc::success) << recvs[j].op()->message;
      EXPECT_EQ(recvs[j].received(), n);
      EXPECT_TRUE(check_payload(in[j].data(), peer, j, n)) << "message " << j << ", " << n << " B";
      for (std::size_t k = n; k < in[j].size(); ++k) ASSERT_EQ(in[j][k], std::byte{0xee});
    }
    progress_barrier(c, "now-done");
  });
}

// With the rendezvous switched off (the path for providers without RMA) every size goes eager
// and the provider moves large messages by its own protocol.
TEST_P(OfiConformance, EagerOnlyCarriesEverySize) {
  ofi::Options o = options();
  o.rendezvous = false;
  run_world(o, 2, [&](RankCtx& c) {
    EXPECT_FALSE(c.ep.rendezvous_enabled());
    const int peer = 1 - c.rank;
    const std::vector<std::size_t> sizes = {0, 1, 31, 32, 16383, 16384, (1u << 20) + 7};
    std::vector<std::vector<std::byte>> out;
    std::vector<std::vector<std::byte>> in;
    std::vector<Transfer> ts;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      in.emplace_back(sizes[i]);
      ts.push_back(recv(c, peer, 20 + i, in.back().data(), in.back().size()));
      out.push_back(make_payload(c.rank, i, sizes[i]));
      ts.push_back(send(c, peer, 20 + i, out.back().data(), out.back().size()));
    }
    ASSERT_TRUE(wait_all(c, ts));
    for (const Transfer& t : ts) ASSERT_EQ(error_of(t), Errc::success) << t.op()->message;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_EQ(ts[2 * i].received(), sizes[i]);
      EXPECT_TRUE(check_payload(in[i].data(), peer, i, sizes[i])) << "size " << sizes[i];
    }
    EXPECT_EQ(c.ep.stats().rendezvous_messages, 0u);
    progress_barrier(c, "eager-only");
  });
}

// A rank can message itself (eager and rendezvous), as the in-process transport allows.
TEST_P(OfiConformance, SendToSelf) {
  run_world(options(1024), 2, [&](RankCtx& c) {
    const std::vector<std::byte> small = make_payload(c.rank, 1, 100);
    const std::vector<std::byte> large = make_payload(c.rank, 2, 100000);
    std::vector<std::byte> a(100);
    std::vector<std::byte> b(100000);
    std::vector<Transfer> ts;
    ts.push_back(send(c, c.rank, 3, small.data(), small.size()));
    ts.push_back(send(c, c.rank, 4, large.data(), large.size()));
    ts.push_back(recv(c, c.rank, 4, b.data(), b.size()));
    ts.push_back(recv(c, c.rank, 3, a.data(), a.size()));
    ASSERT_TRUE(wait_all(c, ts));
    for (const Transfer& t : ts) ASSERT_EQ(error_of(t), Errc::success) << t.op()->message;
    EXPECT_EQ(a, small);
    EXPECT_EQ(b, large);
    progress_barrier(c, "self");
  });
}

// Thousands of transfers in flight at once: more than the provider's queues hold, so posts
// meet -FI_EAGAIN and wait in the transport's retry queues (never leaking upward).
TEST_P(OfiConformance, ThousandsOfOutstandingTransfers) {
  constexpr std::size_t kSmall = 1500;
  constexpr std::size_t kLarge = 64;
  run_world(options(4096, false), 2, [&](RankCtx& c) {
    const int peer = 1 - c.rank;
    std::vector<std::uint64_t> out(kSmall);
    std::vector<std::uint64_t> in(kSmall, 0);
    std::vector<std::vector<std::byte>> big_out;
    std::vector<std::vector<std::byte>> big_in(kLarge, std::vector<std::byte>(9000));
    std::vector<Transfer> ts;
    ts.reserve(2 * (kSmall + kLarge));
    for (std::size_t i = 0; i < kSmall; ++i)
      ts.push_back(recv(c, peer, i % 7, &in[i], sizeof(std::uint64_t)));  // 7 tags, in order
    for (std::size_t i = 0; i < kLarge; ++i)
      ts.push_back(recv(c, peer, 1000 + i, big_in[i].data(), big_in[i].size()));
    for (std::size_t i = 0; i < kSmall; ++i) {
      out[i] = static_cast<std::uint64_t>(c.rank) << 32 | i;
      ts.push_back(send(c, peer, i % 7, &out[i], sizeof(std::uint64_t)));
    }
    for (std::size_t i = 0; i < kLarge; ++i) {
      big_out.push_back(make_payload(c.rank, i, 9000));
      ts.push_back(send(c, peer, 1000 + i, big_out.back().data(), 9000));
    }
    ASSERT_TRUE(wait_all(c, ts, 60));
    for (const Transfer& t : ts) ASSERT_EQ(error_of(t), Errc::success) << t.op()->message;
    for (std::size_t i = 0; i < kSmall; ++i)
      ASSERT_EQ(in[i], static_cast<std::uint64_t>(peer) << 32 | i) << "message " << i;
    for (std::size_t i = 0; i < kLarge; ++i)
      ASSERT_TRUE(check_payload(big_in[i].data(), peer, i, 9000)) << "large message " << i;
    progress_barrier(c, "many");
  });
}

// Many rendezvous sends outstanding to one peer at once, more than the sender's 64 FIN
// receive slots, both directions: receives posted before and after the RTSs arrived, and a
// bandwidth window (as fabcoll-pingpong and osu_bw do): every send from one buffer, every
// receive into one buffer. The window hung before the RTS got its own header slot: RTSs landed
// in the shared user buffer, overwrote each other (and were overwritten by rendezvous reads)
// before their completions were handled, so FINs carried wrong cookies and senders waited.
TEST_P(OfiConformance, ManyOutstandingRendezvousToOnePeer) {
  constexpr std::size_t kCount = 200;
  constexpr std::size_t kBytes = 20000;
  enum class Layout { distinct, distinct_late, one_buffer };
  for (const Layout layout : {Layout::distinct, Layout::distinct_late, Layout::one_buffer}) {
    const bool late = layout == Layout::distinct_late;
    const bool one = layout == Layout::one_buffer;
    SCOPED_TRACE(one ? "one buffer" : late ? "receives posted late" : "receives posted first");
    run_world(options(4096, false), 2, [&](RankCtx& c) {
      const int peer = 1 - c.rank;
      std::vector<std::vector<std::byte>> out;
      std::vector<std::vector<std::byte>> in(one ? 1 : kCount, std::vector<std::byte>(kBytes));
      std::vector<Transfer> ts;
      ts.reserve(2 * kCount);
      auto post_recvs = [&] {
        for (std::size_t i = 0; i < kCount; ++i)
          ts.push_back(recv(c, peer, 300 + i % 5, in[one ? 0 : i].data(), kBytes));
      };
      if (!late) post_recvs();
      for (std::size_t i = 0; i < kCount; ++i) {
        if (!one || out.empty()) out.push_back(make_payload(c.rank, one ? 0 : i, kBytes));
        ts.push_back(send(c, peer, 300 + i % 5, out.back().data(), kBytes));
      }
      if (late) {
        const auto until = Clock::now() + std::chrono::milliseconds(100);
        while (Clock::now() < until) c.progress.poll();  // the RTSs arrive unexpected
        post_recvs();
      }
      ASSERT_TRUE(wait_all(c, ts, 60)) << c.ep.describe();
      for (const Transfer& t : ts) ASSERT_EQ(error_of(t), Errc::success) << t.op()->message;
      const std::size_t first = late ? kCount : 0;
      for (std::size_t i = 0; i < kCount; ++i)
        ASSERT_EQ(ts[first + i].received(), kBytes) << "message " << i;
      for (std::size_t i = 0; i < in.size(); ++i)
        ASSERT_TRUE(check_payload(in[i].data(), peer, i, kBytes)) << "message " << i;
      if (c.ep.rendezvous_enabled()) {
        EXPECT_GE(c.ep.stats().rendezvous_messages, kCount);
      }
      progress_barrier(c, one ? "many-rdv-one" : late ? "many-rdv-late" : "many-rdv");
    });
  }
}

// The sockets provider's connections get the socket buffer fabcoll asks for
// (apply_provider_defaults): without it, the stream above stalled for good about one run in
// 160 (a header split across a zero receive window; ofi.cpp). The provider sets the buffer on
// its listening socket, and the connections it accepts, which carry the data each way here,
// inherit it; the kernel doubles the size asked for and caps it at net.core.rmem_max.
TEST_P(OfiConformance, SocketsConnectionsGetTheAskedBuffer) {
  if (GetParam() != "sockets") GTEST_SKIP() << "a sockets provider parameter";
  run_world(options(), 2, [&](RankCtx& c) {
    const int peer = 1 - c.rank;
    const std::vector<std::byte> out = make_payload(c.rank, 0, 64);
    std::vector<std::byte> in(64);
    std::vector<Transfer> ts;
    ts.push_back(recv(c, peer, 7, in.data(), in.size()));
    ts.push_back(send(c, peer, 7, out.data(), out.size()));
    ASSERT_TRUE(wait_all(c, ts));
    progress_barrier(c, "sockbuf-exchanged");
    if (c.rank == 0) {  // both ranks' endpoints live in this process
      const char* asked = std::getenv("FI_SOCKETS_MAX_BUF_SZ");
      ASSERT_NE(asked, nullptr) << "the endpoint did not set FI_SOCKETS_MAX_BUF_SZ";
      long rmem_max = 0;
      std::ifstream("/proc/sys/net/core/rmem_max") >> rmem_max;
      ASSERT_GT(rmem_max, 0);
      const long expect = 2 * std::min(std::atol(asked), rmem_max);
      int connected = 0;
      int with_buffer = 0;
      for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
        const int fd = std::atoi(e.path().filename().c_str());
        int type = 0;
        int listening = 0;
        int rcvbuf = 0;
        sockaddr_storage addr{};
        socklen_t len = sizeof type;
        if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
          continue;
        len = sizeof addr;
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
            (addr.ss_family != AF_INET && addr.ss_family != AF_INET6))
          continue;
        len = sizeof listening;
        (void)::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len);
        if (listening != 0) continue;
        len = sizeof rcvbuf;
        ASSERT_EQ(::getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len), 0);
        ++connected;
        with_buffer += rcvbuf == expect ? 1 : 0;
      }
      EXPECT_GE(connected, 2);
      EXPECT_GE(with_buffer, 2) << "of " << connected << " connections, " << with_buffer
                                << " have SO_RCVBUF " << expect;
    }
    progress_barrier(c, "sockbuf-checked");
  });
}

// fc_mem_register's transport side: a large (rendezvous) and a small (eager) message whose
// buffers lie inside registered regions, the send at an offset into its region (the offset
// RTS address where the provider does not use virtual addresses), move with no per-call
// registration and no staging; the same messages on unregistered buffers are registered per
// call, once per send and receive (but a send that goes inline by fi_tinject: none).
TEST_P(OfiConformance, RegisteredRegionsNeedNoPerCallRegistration) {
  run_world(options(4096), 2, [&](RankCtx& c) {
    const int peer = 1 - c.rank;
    constexpr std::size_t kLarge = (9u << 20) + 3;  // three reads of at most 4 MiB
    constexpr std::size_t kSmall = 100;
    constexpr std::size_t kOffset = 4096 + 8;
    std::vector<std::byte> sregion(kOffset + kLarge + 64);
    std::vector<std::byte> rregion(kLarge + kSmall + 64);
    const std::uint64_t sh = c.ep.register_region(sregion.data(), sregion.size());
    const std::uint64_t rh = c.ep.register_region(rregion.data(), rregion.size());
    EXPECT_EQ(c.ep.registered_regions(), 2u);
    EXPECT_EQ(c.ep.registered_bytes(), sregion.size() + rregion.size());
    const std::vector<std::byte> large = make_payload(c.rank, 1, kLarge);
    const std::vector<std::byte> small = make_payload(c.rank, 2, kSmall);
    std::copy(large.begin(), large.end(), sregion.begin() + kOffset);
    std::copy(small.begin(), small.end(), sregion.begin());
    auto exchange = [&](std::byte* sbase, std::size_t soff, std::byte* rbase) {
      std::vector<Transfer> ts;
      ts.push_back(recv(c, peer, 11, rbase, kLarge));
      ts.push_back(recv(c, peer, 12, rbase + kLarge, kSmall));
      ts.push_back(send(c, peer, 11, sbase + soff, kLarge));
      ts.push_back(send(c, peer, 12, sbase, kSmall));
      ASSERT_TRUE(wait_all(c, ts));
      for (const Transfer& t : ts) ASSERT_EQ(error_of(t), Errc::success) << t.op()->message;
      EXPECT_TRUE(check_payload(rbase, peer, 1, kLarge));
      EXPECT_TRUE(check_payload(rbase + kLarge, peer, 2, kSmall));
    };
    const ofi::Stats before = c.ep.stats();
    exchange(sregion.data(), kOffset, rregion.data());
    const ofi::Stats mid = c.ep.stats();
    // A send small enough for fi_tinject (the provider's inject size, at most 256 B with the
    // header) is copied at post: it needs no memory descriptor, so no registration at all.
    const std::uint64_t inlined = mid.inline_messages - before.inline_messages;
    EXPECT_LE(inlined, 1u);  // only the 100-byte send may go inline
    EXPECT_EQ(mid.mr_per_call - before.mr_per_call, 0u);
    EXPECT_EQ(mid.mr_registry_hits - before.mr_registry_hits, 4u - inlined);
    EXPECT_EQ(mid.staged_bytes, before.staged_bytes);
    if (c.ep.rendezvous_enabled()) {
      EXPECT_EQ(mid.rendezvous_messages - before.rendezvous_messages, 1u);
      EXPECT_EQ(mid.rma_bytes_read - before.rma_bytes_read, kLarge);
    }
    // While a receive in a region is posted, the region cannot be deregistered.
    {
      Transfer pending = recv(c, peer, 13, rregion.data(), 8);
      try {
        c.ep.deregister_region(rh);
        ADD_FAILURE() << "deregistered a region with a receive in flight";
      } catch (const EngineError& e) {
        EXPECT_EQ(e.errc(), Errc::invalid_argument);
        EXPECT_NE(std::string(e.what()).find("in flight"), std::string::npos) << e.what();
      }
    }                                   // cancelled here
    progress_barrier(c, "registered");  // both sides done with the regions
    c.ep.deregister_region(sh);
    c.ep.deregister_region(rh);
    EXPECT_EQ(c.ep.registered_regions(), 0u);
    try {
      c.ep.deregister_region(rh);
      ADD_FAILURE() << "deregistered a region twice";
    } catch (const EngineError& e) {
      EXPECT_EQ(e.errc(), Errc::invalid_argument);
    }
    // Without registration: one per-call registration per send and per receive.
    std::vector<std::byte> sbuf(kOffset + kLarge);
    std::vector<std::byte> rbuf(kLarge + kSmall);
    std::copy(large.begin(), large.end(), sbuf.begin() + kOffset);
    std::copy(small.begin(), small.end(), sbuf.begin());
    const ofi::Stats unregistered = c.ep.stats();
    exchange(sbuf.data(), kOffset, rbuf.data());
    const ofi::Stats after = c.ep.stats();
    // (whether it goes inline depends on the tx queue: behind a queued send it waits its turn)
    const std::uint64_t inlined_now = after.inline_messages - unregistered.inline_messages;
    EXPECT_LE(inlined_now, 1u);
    EXPECT_EQ(after.mr_per_call - unregistered.mr_per_call, 4u - inlined_now);
    EXPECT_EQ(after.mr_registry_hits - unregistered.mr_registry_hits, 0u);
    EXPECT_EQ(after.staged_bytes, before.staged_bytes);
    progress_barrier(c, "unregistered");
  });
}

// Transport requests are pooled: rounds of mixed sizes (zero bytes, inline, eager through a
// request, rendezvous), receives in a registered region and outside it, a cancelled receive
// each round. Every payload arrives intact through reused requests (their header slots and
// registrations), no request stays live, and the pool holds at most one round's worth, not
// one per message. A region deregistered and its buffer used again takes a per-call
// registration: the endpoint's last-region shortcut must not hand out the closed one.
TEST_P(OfiConformance, RequestPoolReusesRequestsAcrossMixedSizes) {
  constexpr std::size_t kRounds = 40;
  const std::vector<std::size_t> sizes{0, 8, 200, 1000, 3000, 5000, 20000};  // eager limit 4096
  const std::size_t per_round = 2 * sizes.size() + 1;  // receives, sends, the cancelled one
  run_world(options(4096), 2, [&](RankCtx& c) {
    const int peer = 1 - c.rank;
    std::size_t total = 0;
    for (const std::size_t n : sizes) total += n + 16;
    std::vector<std::byte> region(total);  // receives of even rounds land here (registered)
    std::vector<std::byte> plain(total);   // those of odd rounds here (per-call registration)
    const std::uint64_t handle = c.ep.register_region(region.data(), region.size());
    auto round = [&](std::size_t r, std::byte* rbase) {
      std::vector<std::vector<std::byte>> out;
      std::vector<Transfer> ts;
      std::size_t off = 0;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        ts.push_back(recv(c, peer, 100 + i, rbase + off, sizes[i]));
        off += sizes[i] + 16;
      }
      {
        std::uint64_t never = 0;
        Transfer cancelled = recv(c, peer, 99, &never, sizeof never);
        c.progress.poll();
      }  // cancelled here
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        out.push_back(make_payload(c.rank, r * 16 + i, sizes[i]));
        ts.push_back(send(c, peer, 100 + i, out.back().data(), sizes[i]));
      }
      ASSERT_TRUE(wait_all(c, ts));
      for (const Transfer& t : ts) ASSERT_EQ(error_of(t), Errc::success) << t.op()->message;
      off = 0;
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        EXPECT_EQ(ts[i].received(), sizes[i]);
        EXPECT_TRUE(check_payload(rbase + off, peer, r * 16 + i, sizes[i]))
            << "round " << r << ", " << sizes[i] << " bytes";
        off += sizes[i] + 16;
      }
      EXPECT_EQ(c.ep.live_requests(), 0u) << "round " << r << ": " << c.ep.debug_state();
      EXPECT_TRUE(c.ep.pending_peers().empty());
    };
    for (std::size_t r = 0; r < kRounds; ++r) round(r, r % 2 == 0 ? region.data() : plain.data());
    EXPECT_GT(c.ep.pooled_requests(), 0u);
    EXPECT_LE(c.ep.pooled_requests(), per_round) << c.ep.debug_state();
    progress_barrier(c, "pool");  // the peer is done reading from our region
    c.ep.deregister_region(handle);
    const ofi::Stats before = c.ep.stats();
    round(kRounds, region.data());
    const ofi::Stats after = c.ep.stats();
    EXPECT_EQ(after.mr_registry_hits, before.mr_registry_hits);
    // Every receive but the zero-byte one registers its buffer (sends may go inline).
    EXPECT_GE(after.mr_per_call - before.mr_per_call, sizes.size() - 1);
    EXPECT_LE(c.ep.pooled_requests(), per_round);
    progress_barrier(c, "pool-done");
  });
}

// The registry is bounded in count and bytes, with a clear error.
TEST_P(OfiConformance, RegistryBounds) {
  ofi::Options o = options();
  o.max_regions = 2;
  o.max_region_bytes = 10000;
  run_world(o, 1, [&](RankCtx& c) {
    std::vector<std::byte> a(4000);
    std::vector<std::byte> b(4000);
    std::vector<std::byte> d(4000);
    const std::uint64_t ha = c.ep.register_region(a.data(), a.size());
    try {
      (void)c.ep.register_region(b.data(), 7000);
      ADD_FAILURE() << "registered beyond the byte bound";
    } catch (const EngineError& e) {
      EXPECT_EQ(e.errc(), Errc::no_memory);
      EXPECT_NE(std::string(e.what()).find("FABCOLL_MR_MAX_BYTES"), std::string::npos);
    }
    const std::uint64_t hb = c.ep.register_region(b.data(), b.size());
    try {
      (void)c.ep.register_region(d.data(), 10);
      ADD_FAILURE() << "registered beyond the count bound";
    } catch (const EngineError& e) {
      EXPECT_EQ(e.errc(), Errc::no_memory);
      EXPECT_NE(std::string(e.what()).find("FABCOLL_MR_MAX_REGIONS"), std::string::npos);
    }
    try {
      (void)c.ep.register_region(nullptr, 10);
      ADD_FAILURE() << "registered a null buffer";
    } catch (const EngineError& e) {
      EXPECT_EQ(e.errc(), Errc::invalid_argument);
    }
    c.ep.deregister_region(ha);
    const std::uint64_t hd = c.ep.register_region(d.data(), d.size());
    c.ep.deregister_region(hb);
    c.ep.deregister_region(hd);
    EXPECT_EQ(c.ep.registered_bytes(), 0u);
  });
}

// Opens a world of two with `base` options, changed by `set` for each rank r; each rank's
// outcome: "opened", or the message of its Errc::invalid_argument (another code marked wrong).
std::vector<std::string> open_two_apart(const ofi::Options& base,
                                        const std::function<void(ofi::Options&, int)>& set) {
  auto hub = std::make_shared<MemoryStoreHub>();
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      ofi::Options o = base;
      set(o, r);
      o.timeout_s = 10;
      try {
        MemoryStore store(hub, r, 2);
        ofi::Endpoint ep(store, o);
        errors[r] = "opened";
      } catch (const EngineError& e) {
        errors[r] =
            e.errc() == Errc::invalid_argument ? e.what() : "wrong code: " + std::string(e.what());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return errors;
}

// Ranks that disagree on the rendezvous (and so on the message framing) fail to open, with an
// error naming the setting, instead of misreading each other's messages.
TEST_P(OfiConformance, RanksDisagreeingOnTheRendezvousFailClearly) {
  for (const std::string& e :
       open_two_apart(options(), [](ofi::Options&o, int r) { o.rendezvous = r == 0; }))
    EXPECT_NE(e.find("FABCOLL_OFI_RENDEZVOUS"), std::string::npos) << e;
}

// Fan-ins are cleared from kSocketsFanInClear on the sockets provider and nowhere else by
// default (Transport::clear_fan_in_from); FABCOLL_OFI_FAN_IN_CLEAR (Options::fan_in_clear)
// sets it, 0 turning it off; ranks that disagree fail to open, naming the variable, instead of
// a sender waiting for a go-ahead that never comes.
TEST_P(OfiConformance, FanInClearingIsTheProvidersAndAgreed) {
  for (const std::size_t asked : {ofi::kFanInClearAuto, std::size_t{0}, std::size_t{4096}}) {
    ofi::Options o = options();
    o.fan_in_clear = asked;
    run_world(o, 2, [&](RankCtx& c) {
      const std::size_t want = asked != ofi::kFanInClearAuto  ? asked
                               : c.ep.provider() == "sockets" ? ofi::kSocketsFanInClear
                                                              : 0;
      EXPECT_EQ(c.ep.clear_fan_in_from(1 - c.rank), want) << c.ep.provider();
    });
  }
  for (const std::string& e : open_two_apart(
           options(), [](ofi::Options&o, int r) { o.fan_in_clear = r == 0 ? 65536 : 0; }))
    EXPECT_NE(e.find("FABCOLL_OFI_FAN_IN_CLEAR"), std::string::npos) << e;
}

// A message longer than its receive fails that receive with Errc::truncation, writes nothing
// past the buffer, leaves the sender complete, and the endpoint keeps working.
TEST_P(OfiConformance, TruncationFailsTheReceiveOnly) {
  run_world(options(4096), 2, [&](RankCtx& c) {
    const std::size_t big = 64 * 1024;
    if (c.rank == 0) {
      const std::vector<std::byte> eager = make_payload(0, 1, 100);
      const std::vector<std::byte> tiny = make_payload(0, 2, 20);
      const std::vector<std::byte> large = make_payload(0, 3, big);
      const std::vector<std::byte> after = make_payload(0, 4, 300);
      std::vector<Transfer> ts;
      ts.push_back(send(c, 1, 1, eager.data(), eager.size()));
      ts.push_back(send(c, 1, 2, tiny.data(), tiny.size()));
      ts.push_back(send(c, 1, 3, large.data(), large.size()));
      ts.push_back(send(c, 1, 5, tiny.data(), 8));
      ts.push_back(send(c, 1, 6, large.data(), large.size()));  // an RTS into 16 bytes
      ts.push_back(send(c, 1, 7, large.data(), large.size()));  // an RTS into 100 bytes
      ts.push_back(send(c, 1, 8, large.data(), large.size()));  // an RTS into none
      ts.push_back(send(c, 1, 4, after.data(), after.size()));
      ASSERT_TRUE(wait_all(c, ts));
      for (const Transfer& t : ts) EXPECT_EQ(error_of(t), Errc::success) << t.op()->message;
    } else {
      // Each receive sits inside a larger buffer whose tail must stay untouched.
      std::vector<std::byte> b1(50 + 64, std::byte{0xee});
      std::vector<std::byte> b2(10 + 64, std::byte{0xee});
      std::vector<std::byte> b3(big / 2 + 64, std::byte{0xee});
      std::vector<std::byte> b4(300);
      std::vector<std::byte> b6(16 + 64, std::byte{0xee});
      std::vector<std::byte> b7(100 + 64, std::byte{0xee});
      std::vector<Transfer> ts;
      ts.push_back(recv(c, 0, 1, b1.data(), 50));
      ts.push_back(recv(c, 0, 2, b2.data(), 10));
      ts.push_back(recv(c, 0, 3, b3.data(), big / 2));
      ts.push_back(recv(c, 0, 5, nullptr, 0));
      ts.push_back(recv(c, 0, 6, b6.data(), 16));
      ts.push_back(recv(c, 0, 7, b7.data(), 100));
      ts.push_back(recv(c, 0, 8, nullptr, 0));
      ts.push_back(recv(c, 0, 4, b4.data(), b4.size()));
      ASSERT_TRUE(wait_all(c, ts));
      EXPECT_EQ(error_of(ts[0]), Errc::truncation) << ts[0].op()->message;
      EXPECT_EQ(error_of(ts[1]), Errc::truncation) << ts[1].op()->message;
      EXPECT_EQ(error_of(ts[2]), Errc::truncation) << ts[2].op()->message;
      EXPECT_EQ(error_of(ts[3]), Errc::truncation) << ts[3].op()->message;
      EXPECT_NE(ts[2].op()->message.find("65536"), std::string::npos) << ts[2].op()->message;
      for (std::size_t i = 50; i < b1.size(); ++i) ASSERT_EQ(b1[i], std::byte{0xee}) << i;
      for (std::size_t i = 10; i < b2.size(); ++i) ASSERT_EQ(b2[i], std::byte{0xee}) << i;
      for (std::size_t i = big / 2; i < b3.size(); ++i) ASSERT_EQ(b3[i], std::byte{0xee}) << i;
      // Below the eager limit a receive posts its header slot after the buffer: an RTS lands
      // across both (16 bytes), in the buffer (100) or in the slot (0), and its size still
      // comes through.
      for (const std::size_t i : {4, 5, 6}) {
        EXPECT_EQ(error_of(ts[i]), Errc::truncation) << ts[i].op()->message;
        EXPECT_NE(ts[i].op()->message.find("65536"), std::string::npos) << ts[i].op()->message;
      }
      for (std::size_t i = 16; i < b6.size(); ++i) ASSERT_EQ(b6[i], std::byte{0xee}) << i;
      for (std::size_t i = 100; i < b7.size(); ++i) ASSERT_EQ(b7[i], std::byte{0xee}) << i;
      ASSERT_EQ(error_of(ts[7]), Errc::success) << ts[7].op()->message;
      EXPECT_TRUE(check_payload(b4.data(), 0, 4, 300));
    }
    progress_barrier(c, "truncation");
  });
}

// A pending receive can be cancelled (the Transfer dropped) and the endpoint stays usable.
TEST_P(OfiConformance, CancelPendingReceive) {
  run_world(options(), 2, [&](RankCtx& c) {
    const int peer = 1 - c.rank;
    std::uint64_t never = 0;
    {
      Transfer t = recv(c, peer, 77, &never, sizeof never);
      c.progress.poll();
      EXPECT_EQ(c.ep.pending_peers(), std::vector<int>{peer});
    }  // cancelled here
    EXPECT_TRUE(c.ep.pending_peers().empty());
    std::uint64_t in = 0;
    const std::uint64_t out = 1234 + static_cast<std::uint64_t>(c.rank);
    std::vector<Transfer> ts;
    ts.push_back(recv(c, peer, 78, &in, sizeof in));
    ts.push_back(send(c, peer, 78, &out, sizeof out));
    ASSERT_TRUE(wait_all(c, ts));
    EXPECT_EQ(in, 1234u + static_cast<std::uint64_t>(peer));
    EXPECT_EQ(never, 0u);
    progress_barrier(c, "cancel");
  });
}

// ---- collectives end to end --------------------------------------------------------------------

void check_collectives(const ofi::Options& opts, int p) {
  run_world(opts, p, [&](RankCtx& c) {
    CidCounter cids;
    Comm comm(c.ep, c.progress, c.rank, c.size, {}, 0, CostModel{}, &cids);
    for (const std::size_t count : {std::size_t{1}, std::size_t{1000}, std::size_t{70000}}) {
      // allreduce (sum of doubles that add exactly)
      std::vector<double> in(count);
      for (std::size_t i = 0; i < count; ++i) in[i] = static_cast<double>((c.rank + 1) * (i % 97));
      std::vector<double> out(count, -1.0);
      CollArgs a;
      a.coll = Collective::allreduce;
      a.sendbuf = in.data();
      a.recvbuf = out.data();
      a.count = count;
      a.elem_size = sizeof(double);
      a.op = ReduceOp(FC_SUM, FC_DOUBLE);
      validate(comm, a);
      run_blocking(comm, c.progress, run_collective(comm, a));
      const double ranks = static_cast<double>(p * (p + 1) / 2);
      for (std::size_t i = 0; i < count; ++i)
        ASSERT_EQ(out[i], ranks * static_cast<double>(i % 97))
            << "allreduce p=" << p << " count=" << count << " i=" << i;
      // bcast from every root
      for (int root = 0; root < p; ++root) {
        std::vector<std::int64_t> buf(count, -1);
        if (c.rank == root)
          for (std::size_t i = 0; i < count; ++i)
            buf[i] = root * 1000003 + static_cast<std::int64_t>(i);
        CollArgs b;
        b.coll = Collective::bcast;
        b.sendbuf = buf.data();
        b.recvbuf = buf.data();
        b.count = count;
        b.elem_size = sizeof(std::int64_t);
        b.root = root;
        validate(comm, b);
        run_blocking(comm, c.progress, run_collective(comm, b));
        for (std::size_t i = 0; i < count; ++i)
          ASSERT_EQ(buf[i], root * 1000003 + static_cast<std::int64_t>(i))
              << "bcast p=" << p << " root=" << root << " count=" << count << " i=" << i;
      }
    }
    EXPECT_EQ(c.ep.stats().staged_bytes, 0u);
    progress_barrier(c, "collectives");
  });
}

TEST_P(OfiConformance, AllreduceAndBcastP2to5) {
  for (const int p : {2, 3, 4, 5}) {
    SCOPED_TRACE("p = " + std::to_string(p));
    check_collectives(options(), p);
  }
}

// A rank whose collective has ended may not call in again for a long time: what its last
// message needs from it must be done by then (CollRequest::finish flushes the transport; the
// sockets provider otherwise kept an injected message queued until the sender's next call).
// Rank 1 broadcasts 8 bytes to rank 0 and then stays away for 3 s; rank 0 must have them at once.
// The flush reads the queue only on the rank whose message may still be queued.
TEST_P(OfiConformance, ALastMessageLeavesBeforeItsCollectiveReturns) {
  run_world(options(), 2, [&](RankCtx& c) {
    CidCounter cids;
    Comm comm(c.ep, c.progress, c.rank, c.size, {}, 0, CostModel{}, &cids);
    std::int64_t value = c.rank == 1 ? 4242 : -1;
    CollArgs b;
    b.coll = Collective::bcast;
    b.sendbuf = &value;
    b.recvbuf = &value;
    b.count = 1;
    b.elem_size = sizeof value;
    b.root = 1;
    validate(comm, b);
    // Rank 0 waits in its receive (reading the queue) while rank 1 is away for 50 ms.
    if (c.rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::uint64_t kicks_before = c.ep.stats().flush_kicks;
    const auto t0 = Clock::now();
    run_blocking(comm, c.progress, run_collective(comm, b));
    const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
    // Only the rank that sent last needs its queue read at the end: the receiver has read it
    // all along while it waited (three extra reads cost it ~6 us of a 23 us ping-pong).
    const std::uint64_t kicks = c.ep.stats().flush_kicks - kicks_before;
    if (GetParam() == "sockets") {
      if (c.rank == 1) {
        EXPECT_GE(kicks, 1u) << "the root's injected message must be pushed out";
        EXPECT_LE(kicks, 3u);
      } else {
        EXPECT_EQ(kicks, 0u) << "the receiver sent nothing since it last read the queue";
      }
    } else {
      EXPECT_EQ(kicks, 0u) << "only sockets queues a sent message until a later read";
    }
    if (c.rank == 1) {
      std::this_thread::sleep_for(std::chrono::seconds(3));  // no fabcoll call meanwhile
    } else {
      EXPECT_EQ(value, 4242);
      EXPECT_LT(waited, 1.5) << "rank 0 waited for rank 1's next call into fabcoll";
    }
    progress_barrier(c, "flush");
  });
}

INSTANTIATE_TEST_SUITE_P(Providers, OfiConformance,
                         ::testing::Values("sockets", "tcp;ofi_rxm", "shm"),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           std::replace(n.begin(), n.end(), ';', '_');
                           return n;
                         });

TEST(OfiEndpoint, MissingProviderListsThePresentOnes) {
  MemoryStore store(std::make_shared<MemoryStoreHub>(), 0, 1);
  try {
    ofi::Endpoint ep(store, ofi::Options{"no_such_provider", 1.0});
    FAIL() << "opened a provider that does not exist";
  } catch (const EngineError& e) {
    EXPECT_EQ(e.errc(), Errc::transport);
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no_such_provider"), std::string::npos) << msg;
    EXPECT_NE(msg.find("present:"), std::string::npos) << msg;
    for (const std::string& p : ofi::available_providers())
      EXPECT_NE(msg.find(p), std::string::npos) << "missing " << p << " in: " << msg;
    EXPECT_FALSE(ofi::available_providers().empty());
  }
}

TEST(OfiEndpoint, OptionsFromTheEnvironment) {
  // Restores the caller's settings afterwards (FI_PROVIDER may be set for the whole run).
  struct Saved {
    std::string name;
    bool set;
    std::string value;
  };
  std::vector<Saved> saved;
  for (const char* var : {"FABCOLL_PROVIDER", "FI_PROVIDER"}) {
    const char* v = std::getenv(var);
    saved.push_back(Saved{var, v != nullptr, v != nullptr ? v : ""});
  }
  ::setenv("FABCOLL_PROVIDER", "sockets", 1);
  ::setenv("FI_PROVIDER", "shm", 1);
  EXPECT_EQ(ofi::options_from_environment().provider, "sockets");
  ::unsetenv("FABCOLL_PROVIDER");
  EXPECT_EQ(ofi::options_from_environment().provider, "shm");
  ::unsetenv("FI_PROVIDER");
  EXPECT_EQ(ofi::options_from_environment().provider, "");
  ofi::Stats st;
  st.staged_bytes = 5;
  EXPECT_NE(ofi::format_stats("shm", st).find("staged 5 B"), std::string::npos);
  for (const Saved& v : saved)
    if (v.set) ::setenv(v.name.c_str(), v.value.c_str(), 1);
}

TEST(OfiEndpoint, AutomaticChoiceOpensAProvider) {
  MemoryStore store(std::make_shared<MemoryStoreHub>(), 0, 1);
  ofi::Endpoint ep(store, ofi::Options{"", 5.0});
  EXPECT_FALSE(ep.provider().empty());
  std::cout << "automatic choice: " << ep.describe() << "\n";
  EXPECT_NE(ep.provider(), "shm");
  EXPECT_NE(ep.provider().find("udp"), 0u);
}

}  // namespace
}  // namespace fabcoll
