#include "transports/ofi/ofi.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_map>

#include "engine/errors.hpp"
#include "engine/progress.hpp"

namespace fabcoll::ofi {

namespace {

using Clock = std::chrono::steady_clock;

/// The rendezvous request-to-send, carried as the payload of a tagged message with CQ data.
struct RtsHeader {
  std::uint64_t cookie;  // names the sender's request in the FIN
  std::uint64_t addr;    // remote address (virtual address or offset, per FI_MR_VIRT_ADDR)
  std::uint64_t key;
  std::uint64_t size;
};
static_assert(sizeof(RtsHeader) == 32, "the RTS is exactly a receive header slot");

/// The rendezvous finish, an untagged message from the receiver back to the sender.
struct FinMsg {
  std::uint64_t cookie;
  std::uint32_t status;
  std::uint32_t reserved;
};
enum FinStatus : std::uint32_t { kFinOk = 0, kFinTruncated = 1, kFinFailed = 2 };

// How a receiver tells an RTS from an eager message of 32 bytes. Both markers keep the RTS on
// the user's tag, so it matches like the message it announces and keeps its place in the
// (source, tag) order. Each works around a libfabric 1.17 bug on messages that arrived
// before their receive was posted (unexpected):
//  - cq_data: the RTS carries remote CQ data kRtsData (eager sends carry none, or kRawData
//    when they go without the prefix). The sockets
//    provider drops FI_REMOTE_CQ_DATA (and leaves stale data) on unexpected messages.
//  - tag_bit: the RTS travels on tag | kRtsBit and receives ignore that bit. shm matches
//    unexpected messages without the receive's ignore mask (smr_match_tagged uses the queued
//    entry's), so an unexpected RTS would never match there.
// sockets uses tag_bit; every other provider with CQ data uses cq_data.
enum class RtsMarker : std::uint8_t { cq_data, tag_bit };
constexpr std::uint64_t kRtsData = 0x5254530000000001ull;  // "RTS" + version
// An eager message sent without the 32-byte prefix (where the RTS marker is CQ data). A receive
// smaller than the eager limit posts its header slot after the buffer (Impl::header_last), and
// the message lands in place. Into a larger receive, its first 32 bytes land in the header
// slot, the rest at the buffer's start, and the receiver moves them into place (a memmove of
// the message). Why raw: the prefix pushed messages
// past a provider's protocol sizes. The shm provider's 4096-byte inject size: a 4 KiB ping-pong
// took 4.28 against 0.86 us bare. tcp;ofi_rxm's 16 KiB eager buffer: a 16 KiB message went by
// rxm's rendezvous, 60 against 21 us bare (fabcoll-pingpong --compare-bare). Up to the inject
// size it goes by fi_tinjectdata, above it by fi_tsenddata (Options::raw_eager).
constexpr std::uint64_t kRawData = 0x5241570000000001ull;  // "RAW" + version
constexpr std::uint64_t kRtsBit = std::uint64_t{1} << 63;
constexpr std::size_t kCtrlSlots = 64;  // pre-posted FIN receive slots
constexpr std::size_t kCtrlSlotBytes = 64;
constexpr std::size_t kReadsInFlight = 4;  // per rendezvous receive
// Per endpoint, over all receives. Without a cap, 200 rendezvous receives each way between two
// sockets endpoints stalled for good with 94 reads in flight on each side, none completing
// (ManyOutstandingRendezvousToOnePeer, about one run in six). Our reading: the sockets provider
// serves our reads, their responses and the peer's read requests from one fixed pool of
// SOCK_PE_MAX_ENTRIES = 128 progress entries per domain, which 94 + 94 exhausted. With the cap
// the rendezvous on sockets still stalls (so it is off there: Options::rendezvous_on_sockets),
// and ss shows why: the read responses flow to the endpoint that opened the connection, whose
// socket keeps the kernel's default buffer (the provider sets FI_SOCKETS_MAX_BUF_SZ only on its
// listening socket), and stop there at a zero window over a partial header, as described at
// apply_provider_defaults (first run of 400 with 4 MiB asked: 320632 bytes not sent, 8 received).
constexpr std::size_t kEndpointReadsInFlight = 16;
// Reads in chunks of at most 4 MiB (and the provider's max_msg_size). It was 1 MiB, for the
// DESIGN fact that one large CMA copy loses speed beyond 1 MiB; but each chunk is a request,
// a completion and, on libfabric shm, a round through the peer's progress, and the provider
// chunks its own copies. fabcoll-pingpong --compare-bare, 1-4 MiB, against the bare endpoint's
// single fi_tsend: libfabric shm at 2-4 MiB 1.06-1.13 with 1 MiB chunks (three launches),
// 0.98-1.04 with 4 MiB (three); tcp;ofi_rxm 1.00-1.12 against 0.85-1.03 (two each). Our own
// shm transport settled on the same 4 MiB (kCmaChunk, shm.cpp).
constexpr std::size_t kReadChunk = std::size_t{4} << 20;
/// The largest [prefix][payload] a small send copies into a stack buffer for fi_tinject.
constexpr std::size_t kInlineMax = 256;
constexpr int kCqBatch = 16;
/// CQ reads that take a queued small message out of the sockets provider (flush): measured,
/// one left it queued and two sent it, also as a connection's first message; three for a
/// margin.
constexpr int kFlushReads = 3;
constexpr std::uint32_t kHdrSlabSlots = 256;  // receive header slots per registered slab

/// A post that may succeed later: -FI_EAGAIN, or -FI_ENOMEM from providers whose request pools
/// run dry (shm returns it once its rx entries, shared by all posted receives, are used up).
/// The op waits in a retry queue; it never surfaces as an error.
bool is_busy(int rc) { return rc == -FI_EAGAIN || rc == -FI_ENOMEM; }

std::string fi_text(int rc) { return fi_strerror(rc < 0 ? -rc : rc); }

[[noreturn]] void raise_fi(const std::string& what, int rc) {
  raise(Errc::transport, "ofi: " + what + " failed: " + fi_text(rc));
}

std::string to_hex(const std::byte* p, std::size_t n) {
  static const char* const kDigits = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<unsigned>(p[i]);
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15u]);
  }
  return s;
}

std::vector<std::byte> from_hex(const std::string& s) {
  auto nibble = [](char c) -> unsigned {
    if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<unsigned>(c - 'A' + 10);
    raise(Errc::transport, "ofi: malformed address in the bootstrap store");
  };
  if (s.size() % 2 != 0) raise(Errc::transport, "ofi: malformed address in the bootstrap store");
  std::vector<std::byte> out(s.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<std::byte>((nibble(s[2 * i]) << 4) | nibble(s[2 * i + 1]));
  return out;
}

/// Errors that mean the peer is gone rather than the fabric misbehaving.
bool is_peer_gone(int err) {
  switch (err) {
    case FI_ECONNREFUSED:
    case FI_ECONNRESET:
    case FI_ECONNABORTED:
    case FI_ENOTCONN:
    case FI_EHOSTUNREACH:
    case FI_ENETUNREACH:
    case FI_EADDRNOTAVAIL:
    case FI_EHOSTDOWN:
    case FI_ESHUTDOWN:
    case FI_ETIMEDOUT:
    // The sockets provider reports a send to a killed peer (its connection lost) as FI_EIO.
    // Every op here names one peer of a reliable endpoint, so an I/O error means that peer.
    case FI_EIO:
      return true;
    default:
      return false;
  }
}

/// The error class of a failed send post (rc < 0). Besides the errors of is_peer_gone, the
/// sockets provider refuses a send to a killed peer at post time with FI_ENOENT (no connection
/// to it can be made: seen in the dead-peer test, rank 2's small send to the dead rank 1).
Errc send_error(int rc) {
  return is_peer_gone(-rc) || rc == -FI_ENOENT ? Errc::peer_failure : Errc::transport;
}

std::string truncation_message(std::uint64_t got, int src, std::size_t cap) {
  return "message of " + std::to_string(got) + " bytes from rank " + std::to_string(src) +
         " into a receive of " + std::to_string(cap) + " bytes";
}

struct InfoDeleter {
  void operator()(fi_info* i) const { fi_freeinfo(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

/// The hints this transport asks for. rma: ask for RMA (+ FI_MSG for the FIN channel).
InfoPtr make_hints(const std::string& provider, bool rma, bool manual_control) {
  InfoPtr h(fi_allocinfo());
  if (!h) raise(Errc::no_memory, "ofi: fi_allocinfo failed");
  h->ep_attr->type = FI_EP_RDM;
  h->caps = FI_TAGGED | FI_DIRECTED_RECV | (rma ? (FI_RMA | FI_MSG) : 0);
  h->mode = FI_CONTEXT | FI_CONTEXT2;
  h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  h->domain_attr->control_progress = manual_control ? FI_PROGRESS_MANUAL : FI_PROGRESS_UNSPEC;
  h->domain_attr->threading = FI_THREAD_DOMAIN;
  h->domain_attr->av_type = FI_AV_TABLE;
  // The registration modes this code handles; the provider answers with those it needs.
  h->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
  // Messages between two endpoints must match in the order they were sent.
  h->tx_attr->msg_order = FI_ORDER_SAS;
  h->rx_attr->msg_order = FI_ORDER_SAS;
  if (!provider.empty()) h->fabric_attr->prov_name = strdup(provider.c_str());
  return h;
}

InfoPtr getinfo(const fi_info* hints) {
  fi_info* out = nullptr;
  const int rc = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &out);
  if (rc != 0 || out == nullptr) {
    if (out != nullptr) fi_freeinfo(out);
    return nullptr;
  }
  return InfoPtr(out);
}

/// The best info for provider: manual progress everywhere, then manual data progress only,
/// then without RMA (eager only).
InfoPtr find_info(const std::string& provider) {
  for (const bool rma : {true, false}) {
    for (const bool manual_control : {true, false}) {
      InfoPtr hints = make_hints(provider, rma, manual_control);
      if (InfoPtr info = getinfo(hints.get())) return info;
    }
  }
  return nullptr;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "(none)" : s;
}

}  // namespace

Options options_from_environment() {
  Options o;
  for (const char* var : {"FABCOLL_PROVIDER", "FI_PROVIDER"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') {
      o.provider = v;
      break;
    }
  }
  o.timeout_s = default_timeout_seconds();
  o.rendezvous = rendezvous_from_environment();
  const char* rdv = std::getenv("FABCOLL_OFI_RENDEZVOUS");
  o.rendezvous_on_sockets = rdv != nullptr && std::strcmp(rdv, "1") == 0;
  const char* raw = std::getenv("FABCOLL_OFI_RAW_EAGER");
  o.raw_eager = raw == nullptr || std::strcmp(raw, "0") != 0;
  for (const auto& [var, field] : {std::pair{"FABCOLL_MR_MAX_REGIONS", &o.max_regions},
                                   std::pair{"FABCOLL_MR_MAX_BYTES", &o.max_region_bytes},
                                   std::pair{"FABCOLL_OFI_EAGER_LIMIT", &o.eager_limit},
                                   std::pair{"FABCOLL_OFI_FAN_IN_CLEAR", &o.fan_in_clear}}) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (end == v || *end != '\0')
      raise(Errc::invalid_argument, std::string(var) + "=" + v + ": expected a number");
    *field = static_cast<std::size_t>(n);
  }
  return o;
}

bool rendezvous_from_environment() {
  const char* v = std::getenv("FABCOLL_OFI_RENDEZVOUS");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

std::string format_stats(const std::string& provider, const Stats& s) {
  return "ofi(" + provider + "): eager " + std::to_string(s.eager_messages) + " msgs / " +
         std::to_string(s.eager_bytes_sent) + " B (" + std::to_string(s.inline_messages) +
         " inline, " + std::to_string(s.raw_messages) + " raw), rendezvous " +
         std::to_string(s.rendezvous_messages) + " msgs / " + std::to_string(s.rma_bytes_sent) +
         " B read by peers, " + std::to_string(s.rma_bytes_read) + " B read from peers, staged " +
         std::to_string(s.staged_bytes) + " B, busy retries " + std::to_string(s.eagain_retries) +
         ", per-call registrations " + std::to_string(s.mr_per_call) + ", registry hits " +
         std::to_string(s.mr_registry_hits);
}

// The sockets provider reads a message header only once all of it has arrived (it peeks for
// it), and until then reads nothing more from that connection. With the kernel's default,
// autotuned receive buffer (131072 B here) a stream of 20000-byte messages each way stopped for
// good about one run in 160 of ManyOutstandingRendezvousToOnePeer/sockets. What ss showed: the
// receiver held 18 bytes (of a 24-byte header) and advertised a zero window; the sender had
// 560878 bytes, the rest of 28 messages, not sent, 100% receive-window limited. Our reading:
// the 18 bytes sit in a large loopback segment whose whole size is charged to the receive
// buffer, and the free space left is under one segment (mss 65483), so the window stays shut
// and the header's other 6 bytes never come. A larger buffer (the kernel doubles the size
// asked for, and caps it at net.core.rmem_max) leaves room for a segment beside any partial
// header: 1400 runs passed with it. The provider sets it on its listening socket only, so it
// reaches the connections a rank accepts (where that stream's data arrived), not the ones it
// opens (where the rendezvous's read responses arrive: that still stalls, see
// kEndpointReadsInFlight). It also turns the kernel's autotuning off for those sockets.
void apply_provider_defaults() {
  static std::mutex m;
  const std::lock_guard lock(m);
  (void)::setenv("FI_SOCKETS_MAX_BUF_SZ", std::to_string(kSocketsBufferBytes).c_str(), 0);
}

std::vector<std::string> available_providers() {
  std::vector<std::string> names;
  for (const bool rma : {true, false}) {
    InfoPtr hints = make_hints("", rma, false);
    InfoPtr info = getinfo(hints.get());
    for (const fi_info* i = info.get(); i != nullptr; i = i->next) {
      const std::string n = i->fabric_attr->prov_name;
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  }
  return names;
}

// ---- the endpoint's state ---------------------------------------------------------------------

struct Endpoint::Impl {
  enum class CtxKind : std::uint8_t { main, read, ctrl };
  struct Req;

  /// What libfabric gets as the operation context. fi_context2 first: the provider may use it.
  struct Ctx {
    fi_context2 fctx{};
    Req* req = nullptr;
    CtxKind kind = CtxKind::main;
    std::uint32_t index = 0;
  };

  // With the rendezvous on, every tagged message starts with a 32-byte header and every receive
  // posts a private, registered 32-byte header slot as its first iov: an RTS is exactly the
  // header; an eager message is a constant prefix followed by the payload, which lands straight
  // in the user buffer (the second iov). Except raw ones (kRawData, every eager message where the
  // marker is CQ data, unless Options::raw_eager is off): no prefix; into a receive smaller than
  // the eager limit they land in place (its slot is posted after the buffer: header_last), into a
  // larger one their first 32 bytes land in the slot and the rest at the buffer's start, moved
  // into place on completion. Receives that share one buffer (overlapping receives, erroneous in
  // MPI) may then hold a mix of their messages; each stays inside its own [0, size). A
  // legitimate RTS must never land in the user buffer: receives posted at once into one buffer
  // (a bandwidth window, like osu_bw's) overwrote each other's RTS (and rendezvous reads
  // overwrote it with payload) before its completion was handled, so receivers read wrong
  // cookies and sizes and senders waited forever for their FINs (a receive below the eager
  // limit gets no legitimate RTS: see header_last). Every receive also gets the shared sink
  // (eager limit bytes) as its last iov, so that no eager message can overflow a posted receive at
  // the provider: the truncation check is ours (received > capacity). Reason: tcp;ofi_rxm in
  // libfabric 1.17 stops delivering on a connection after it reports FI_ETRUNC
  // (ofiwg/libfabric#8274, fixed in 1.18). The sink's contents are garbage by design and never
  // read.

  enum class Phase : std::uint8_t {
    queued,    // waiting in a retry queue (nothing handed to the provider yet)
    posted,    // send or receive handed to the provider
    wait_fin,  // rendezvous send: RTS injected, waiting for the receiver's FIN
    reading,   // rendezvous receive: reading from the sender
  };

  /// A user region registered once (register_region), until deregister_region.
  struct Region {
    std::uint64_t handle = 0;
    std::uintptr_t base = 0;
    std::size_t len = 0;
    fid_mr* mr = nullptr;
    void* desc = nullptr;
    std::uint64_t key = 0;
    std::size_t in_use = 0;  // live Reqs using its registration
  };

  /// One operation's transport state. Pooled: Impl::new_req hands one out (reset), free_req
  /// puts it back on the free list; every Req lives in req_store until close_all. op is
  /// nullptr once cancelled; while attached, op->next points back here (req_of).
  struct Req {
    Ctx main;
    std::array<Ctx, kReadsInFlight> reads;
    std::array<std::size_t, kReadsInFlight> read_len{};
    std::array<bool, kReadsInFlight> read_busy{};
    // Pool bookkeeping, kept across reuse.
    Req* live_prev = nullptr;  // the list of live Reqs (live_head)
    Req* live_next = nullptr;  // the list of live Reqs, or the free list (req_free)
    bool live = false;
    std::uint64_t gen = 0;         // counts the times this Req was handed out
    std::byte* own_hdr = nullptr;  // this Req's receive header slot (take_hdr), kept for reuse
    void* own_hdr_desc = nullptr;
    // Per operation (reset()).
    PostedOp* op = nullptr;
    bool is_send = false;
    bool rendezvous = false;
    bool tx_queued = false;  // an item for it sits in tx_queue_
    Phase phase = Phase::queued;
    int peer = -1;
    std::uint64_t tag = 0;
    const std::byte* sbuf = nullptr;
    std::byte* rbuf = nullptr;
    std::size_t size = 0;
    fid_mr* mr = nullptr;      // a per-call registration of the user buffer, or
    Region* region = nullptr;  // the registered region the user buffer lies in
    void* desc = nullptr;
    std::byte* hdr = nullptr;  // a receive's header slot (rendezvous on): own_hdr, else null
    void* hdr_desc = nullptr;
    bool hdr_last = false;  // the slot is posted after the user buffer (Impl::header_last)
    // Rendezvous.
    std::uint64_t cookie = 0;
    RtsHeader rts{};
    std::size_t read_next = 0;
    std::size_t reads_in_flight = 0;
    bool read_failed = false;
    bool abandoned = false;  // cancelled and not given back in time: never touch its buffer
    std::string fail_message;

    /// The per-operation fields back to their defaults (main, reads, read_len and the pool
    /// fields are set where they are used).
    void reset() {
      read_busy.fill(false);
      op = nullptr;
      is_send = false;
      rendezvous = false;
      tx_queued = false;
      phase = Phase::queued;
      peer = -1;
      tag = 0;
      sbuf = nullptr;
      rbuf = nullptr;
      size = 0;
      mr = nullptr;
      region = nullptr;
      desc = nullptr;
      hdr = nullptr;
      hdr_desc = nullptr;
      hdr_last = false;
      cookie = 0;
      rts = RtsHeader{};
      read_next = 0;
      reads_in_flight = 0;
      read_failed = false;
      abandoned = false;
      fail_message.clear();
    }
  };

  enum class TxKind : std::uint8_t { send, rts, fin, read };
  struct TxItem {
    TxKind kind;
    Req* req;
    fi_addr_t peer;
    FinMsg fin;
  };

  Impl(Store& s, const Options& o) : store(s), opts(o) {}

  Store& store;
  Options opts;
  int rank = 0;
  int size = 1;
  std::string provider;
  InfoPtr info;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_cq* cq = nullptr;
  fid_av* av = nullptr;
  fid_ep* ep = nullptr;

  bool rma = false;
  // sockets: run the progress engine once more when a collective ends (flush, kick).
  bool kick_progress = false;
  std::size_t clear_fan_in = 0;  // Options::fan_in_clear, resolved
  // Reads of the CQ (each runs the sockets progress engine) since a send, RTS, FIN or read was
  // last handed to the provider, up to kFlushReads: flush kicks only for what is missing.
  int reads_since_tx = kFlushReads;  // nothing handed over yet
  std::size_t raw_limit = 0;         // eager sends up to this size go without the prefix (kRawData)
  bool raw_eager = false;            // eager sends above the inject size go raw too (fi_tsenddata)

  /// Whether r's header slot goes after its user buffer: where every eager message is raw
  /// (raw_eager, on every rank: the framing says so) and r is smaller than the eager limit,
  /// so that no correct sender sends it an RTS (those announce eager_limit bytes or more). A
  /// raw message then lands in place, with no memmove on completion. An RTS that comes anyway
  /// (a sender's larger message) overwrites at most the first 32 bytes of a receive that
  /// fails with a truncation error.
  [[nodiscard]] bool header_last(const Req* r) const {
    return r->hdr != nullptr && raw_eager && r->size < eager_limit;
  }
  RtsMarker marker = RtsMarker::cq_data;
  bool mr_local = false;
  bool mr_virt_addr = false;
  bool mr_prov_key = false;
  bool mr_endpoint = false;
  std::size_t eager_limit = 0;
  std::size_t inline_limit = 0;  // prefix + payload sent by fi_tinject (0: never)
  std::size_t max_msg = 0;
  std::size_t read_chunk = kReadChunk;
  std::size_t rx_iov_limit = 1;
  std::uint64_t next_key = 1;
  std::uint64_t next_cookie = 1;

  /// Registered 32-byte header slots for receives, kHdrSlabSlots per slab, registered once.
  struct HdrSlab {
    std::unique_ptr<std::byte[]> mem;
    fid_mr* mr = nullptr;
    void* desc = nullptr;
  };
  std::vector<HdrSlab> hdr_slabs;
  std::size_t hdr_used = 0;  // slots handed out (each to one pooled Req, for good)
  // The constant header eager messages start with (registered once; the provider only reads).
  alignas(8) std::array<std::byte, sizeof(RtsHeader)> eager_prefix{};
  fid_mr* prefix_mr = nullptr;
  void* prefix_desc = nullptr;

  std::unordered_map<std::uint64_t, std::unique_ptr<Region>> regions;  // by handle
  std::multimap<std::uintptr_t, Region*> regions_by_base;
  std::size_t region_bytes = 0;
  std::size_t longest_region = 0;
  std::uint64_t next_region = 1;
  // The region find_region found last: a ping-pong or a collective posts into the same
  // registered buffer over and over, and the multimap walk cost as much as the rest of
  // post_recv. Any region holding the buffer will do (regions may overlap).
  mutable Region* last_region = nullptr;

  std::vector<std::byte> sink;
  fid_mr* sink_mr = nullptr;
  void* sink_desc = nullptr;
  std::vector<std::byte> ctrl_buf;
  fid_mr* ctrl_mr = nullptr;
  void* ctrl_desc = nullptr;
  std::array<Ctx, kCtrlSlots> ctrl_ctx{};
  std::vector<std::uint32_t> ctrl_repost;
  bool ctrl_posted = false;

  // The Req pool: no allocation and no hash-map update per message on the eager path (each
  // cost about as much as the provider's own work per message over shm).
  std::vector<std::unique_ptr<Req>> req_store;  // every Req made, live or free
  Req* req_free = nullptr;                      // free list (through live_next)
  Req* live_head = nullptr;                     // live Reqs (through live_prev, live_next)
  std::size_t live_count = 0;
  std::unordered_map<std::uint64_t, Req*> sends;  // rendezvous sends waiting for FIN
  std::deque<TxItem> tx_queue;
  std::deque<Req*> rx_queue;
  Stats stats;
  std::size_t reads_outstanding = 0;  // fi_reads in flight, all receives (kEndpointReadsInFlight)
  std::uint64_t fins_received = 0;    // debug_state()
  std::uint64_t fins_sent = 0;
  std::uint64_t fins_unknown = 0;

  void open();
  void exchange_addresses();
  void shutdown_handshake();
  void close_all();

  int reg(const void* buf, std::size_t len, std::uint64_t access, fid_mr** mr, void** desc);
  void unreg(fid_mr*& mr);
  Req* new_req(PostedOp* op);
  static Req* req_of(const PostedOp* op);
  int take_hdr(Req* r);
  Region* find_region(const void* buf, std::size_t len) const;
  int attach_user_buffer(Req* r, const void* buf, std::size_t len, std::uint64_t access);
  void free_req(Req* r);
  void fail_req(Req* r, Errc e, std::string msg);
  void complete_req(Req* r);
  int inject(int peer, std::uint64_t tag, const std::byte* data, std::size_t size);
  bool post_inline(PostedOp* op);

  void submit_tx(const TxItem& item);
  int try_tx(TxItem& item);
  int try_rx(Req* r);
  void post_ctrl(std::uint32_t slot);
  void queue_fin(Req* r, std::uint32_t status);
  void start_read(Req* r, const RtsHeader& h);
  void finish_read(Req* r);

  bool poll_cq();
  void on_completion(const fi_cq_tagged_entry& e);
  void on_error(const fi_cq_err_entry& e);
  bool drain_queues();
  void drain_until_gone(Req* r);
  void kick();
};

// ---- set-up -----------------------------------------------------------------------------------

void Endpoint::Impl::open() {
  apply_provider_defaults();
  rank = store.rank();
  size = store.size();
  if (!opts.provider.empty()) {
    info = find_info(opts.provider);
    if (!info) {
      raise(Errc::transport,
            "ofi: provider '" + opts.provider +
                "' is not available here; present: " + join(available_providers()));
    }
  } else {
    for (const char* p : {"verbs;ofi_rxm", "psm2", "efa", "cxi", "tcp;ofi_rxm", "sockets"}) {
      info = find_info(p);
      if (info) break;
    }
    if (!info) {
      raise(Errc::transport,
            "ofi: none of verbs;ofi_rxm, psm2, efa, cxi, tcp;ofi_rxm, sockets can open an RDM "
            "endpoint here; present: " +
                join(available_providers()));
    }
  }
  provider = info->fabric_attr->prov_name;
  const std::uint64_t mr_mode = info->domain_attr->mr_mode;
  mr_local = (mr_mode & FI_MR_LOCAL) != 0;
  mr_virt_addr = (mr_mode & FI_MR_VIRT_ADDR) != 0;
  mr_prov_key = (mr_mode & FI_MR_PROV_KEY) != 0;
  mr_endpoint = (mr_mode & FI_MR_ENDPOINT) != 0;
  // The rendezvous needs RMA, FI_MSG for the FIN, an inject size that holds the RTS and the
  // tag's top bit. Without them every message goes eager.
  rma = opts.rendezvous && (provider != "sockets" || opts.rendezvous_on_sockets) &&
        (info->caps & FI_RMA) != 0 && (info->caps & FI_MSG) != 0 &&
        info->tx_attr->inject_size >= sizeof(RtsHeader) && info->rx_attr->iov_limit >= 3 &&
        info->tx_attr->iov_limit >= 2;
  marker = provider == "sockets" || info->domain_attr->cq_data_size < sizeof(kRtsData)
               ? RtsMarker::tag_bit
               : RtsMarker::cq_data;
  kick_progress = provider == "sockets";
  clear_fan_in = opts.fan_in_clear != kFanInClearAuto ? opts.fan_in_clear
                 : provider == "sockets"              ? kSocketsFanInClear
                                                      : 0;
  max_msg = info->ep_attr->max_msg_size;
  eager_limit = std::max<std::size_t>(std::min(opts.eager_limit, max_msg), sizeof(RtsHeader));
  read_chunk = std::min(kReadChunk, max_msg);
  inline_limit = std::min<std::size_t>(info->tx_attr->inject_size, kInlineMax);
  // Raw sends (kRawData) need the CQ-data marker and stay below the rendezvous.
  raw_limit = rma && marker == RtsMarker::cq_data
                  ? std::min<std::size_t>(info->tx_attr->inject_size, eager_limit - 1)
                  : 0;
  rx_iov_limit = info->rx_attr->iov_limit;
  raw_eager = raw_limit > 0 && opts.raw_eager;

  int rc = fi_fabric(info->fabric_attr, &fabric, nullptr);
  if (rc != 0) raise_fi("fi_fabric(" + provider + ")", rc);
  rc = fi_domain(fabric, info.get(), &domain, nullptr);
  if (rc != 0) raise_fi("fi_domain(" + provider + ")", rc);

  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.wait_obj = FI_WAIT_NONE;
  cq_attr.size = std::clamp<std::size_t>(info->tx_attr->size + info->rx_attr->size, 1024, 65536);
  rc = fi_cq_open(domain, &cq_attr, &cq, nullptr);
  if (rc != 0) raise_fi("fi_cq_open", rc);

  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  av_attr.count = static_cast<std::size_t>(size);
  rc = fi_av_open(domain, &av_attr, &av, nullptr);
  if (rc != 0) raise_fi("fi_av_open", rc);

  rc = fi_endpoint(domain, info.get(), &ep, nullptr);
  if (rc != 0) raise_fi("fi_endpoint", rc);
  rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV);
  if (rc != 0) raise_fi("fi_ep_bind(cq)", rc);
  rc = fi_ep_bind(ep, &av->fid, 0);
  if (rc != 0) raise_fi("fi_ep_bind(av)", rc);
  rc = fi_enable(ep);
  if (rc != 0) raise_fi("fi_enable", rc);

  if (rx_iov_limit >= 2) {
    sink.resize(eager_limit);
    rc = reg(sink.data(), sink.size(), FI_RECV, &sink_mr, &sink_desc);
    if (rc != 0) raise_fi("fi_mr_reg(receive sink)", rc);
  }
  if (rma) {
    // The FIN channel: untagged receives on a registered slab, reposted as they complete.
    ctrl_buf.resize(kCtrlSlots * kCtrlSlotBytes);
    rc = reg(ctrl_buf.data(), ctrl_buf.size(), FI_RECV, &ctrl_mr, &ctrl_desc);
    if (rc != 0) raise_fi("fi_mr_reg(control slab)", rc);
    rc = reg(eager_prefix.data(), eager_prefix.size(), FI_SEND, &prefix_mr, &prefix_desc);
    if (rc != 0) raise_fi("fi_mr_reg(eager prefix)", rc);
    for (std::uint32_t i = 0; i < kCtrlSlots; ++i) {
      ctrl_ctx[i].kind = CtxKind::ctrl;
      ctrl_ctx[i].index = i;
      post_ctrl(i);
    }
    ctrl_posted = true;
  }
  exchange_addresses();
}

void Endpoint::Impl::exchange_addresses() {
  std::array<std::byte, 1024> name{};
  std::size_t len = name.size();
  int rc = fi_getname(&ep->fid, name.data(), &len);
  if (rc != 0) raise_fi("fi_getname", rc);
  // The address carries whether this rank frames messages for the rendezvous (a 32-byte
  // header on every tagged message but raw ones): ranks that disagree could not read each
  // other's messages; and, with the rendezvous, its eager limit, which sizes the receives' sink
  // (a larger eager message than a receiver's limit would fail at its provider); and from
  // which size fan-ins are cleared (a sender waiting for a go-ahead its receiver never sends
  // would wait until the timeout).
  const std::string framing = (rma ? std::string(raw_eager       ? "/rendezvous+raw@"
                                                 : raw_limit > 0 ? "/rendezvous+rawinject@"
                                                                 : "/rendezvous@") +
                                         std::to_string(eager_limit)
                                   : std::string("/eager")) +
                              "+clear-fan-in@" + std::to_string(clear_fan_in);
  store.put("ofi/addr/" + std::to_string(rank), to_hex(name.data(), len) + framing);
  for (int r = 0; r < size; ++r) {
    std::string value = store.get("ofi/addr/" + std::to_string(r), opts.timeout_s);
    const std::size_t slash = value.find('/');
    if (slash == std::string::npos || value.substr(slash) != framing) {
      raise(Errc::invalid_argument, "ofi: world rank " + std::to_string(r) + " uses " +
                                        (slash == std::string::npos ? std::string("another framing")
                                                                    : value.substr(slash + 1)) +
                                        " framing, this rank (" + std::to_string(rank) + ") " +
                                        framing.substr(1) +
                                        ": set FABCOLL_OFI_RENDEZVOUS, FABCOLL_OFI_EAGER_LIMIT, "
                                        "FABCOLL_OFI_RAW_EAGER and FABCOLL_OFI_FAN_IN_CLEAR alike "
                                        "on every rank");
    }
    value.resize(slash);
    std::vector<std::byte> addr = from_hex(value);
    // Pad to the provider's address length: some providers read a fixed-size address.
    if (addr.size() < info->src_addrlen) addr.resize(info->src_addrlen);
    fi_addr_t fa = FI_ADDR_UNSPEC;
    rc = fi_av_insert(av, addr.data(), 1, &fa, 0, nullptr);
    if (rc != 1) raise_fi("fi_av_insert(rank " + std::to_string(r) + ")", rc < 0 ? rc : -FI_EINVAL);
    if (fa != static_cast<fi_addr_t>(r))
      raise(Errc::internal, "ofi: address vector gave rank " + std::to_string(r) + " fi_addr " +
                                std::to_string(fa));
  }
}

int Endpoint::Impl::reg(const void* buf, std::size_t len, std::uint64_t access, fid_mr** mr,
                        void** desc) {
  *mr = nullptr;
  *desc = nullptr;
  if (len == 0) return 0;
  const std::uint64_t key = mr_prov_key ? 0 : next_key++;
  int rc = fi_mr_reg(domain, buf, len, access, 0, key, 0, mr, nullptr);
  if (rc != 0) {
    *mr = nullptr;
    return rc;
  }
  if (mr_endpoint) {
    rc = fi_mr_bind(*mr, &ep->fid, 0);
    if (rc == 0) rc = fi_mr_enable(*mr);
    if (rc != 0) {
      unreg(*mr);
      return rc;
    }
  }
  *desc = fi_mr_desc(*mr);
  return 0;
}

void Endpoint::Impl::unreg(fid_mr*& mr) {
  if (mr != nullptr) fi_close(&mr->fid);
  mr = nullptr;
}

// ---- requests -----------------------------------------------------------------------------------

/// A Req from the pool (or a new one), reset, live, attached to op (op->next points to it).
Endpoint::Impl::Req* Endpoint::Impl::new_req(PostedOp* op) {
  Req* r = req_free;
  if (r != nullptr) {
    req_free = r->live_next;
  } else {
    req_store.push_back(std::make_unique<Req>());
    r = req_store.back().get();
    r->main.req = r;
  }
  r->reset();
  r->live = true;
  ++r->gen;
  r->live_prev = nullptr;
  r->live_next = live_head;
  if (live_head != nullptr) live_head->live_prev = r;
  live_head = r;
  ++live_count;
  r->op = op;
  // PostedOp::next is the transport's: it holds the op's Req while attached (req_of).
  op->next = reinterpret_cast<PostedOp*>(r);
  return r;
}

/// The live Req attached to op, or nullptr (completed, failed at post, or cancelled).
Endpoint::Impl::Req* Endpoint::Impl::req_of(const PostedOp* op) {
  auto* r = reinterpret_cast<Req*>(op->next);
  return r != nullptr && r->live && r->op == op ? r : nullptr;
}

/// Gives the receive r its header slot: the Req's own, taken (registering a new slab when all
/// are handed out) the first time this pooled Req receives, then kept with it.
int Endpoint::Impl::take_hdr(Req* r) {
  if (r->own_hdr == nullptr) {
    if (hdr_used == hdr_slabs.size() * kHdrSlabSlots) {
      HdrSlab slab;
      slab.mem = std::make_unique<std::byte[]>(kHdrSlabSlots * sizeof(RtsHeader));
      const int rc =
          reg(slab.mem.get(), kHdrSlabSlots * sizeof(RtsHeader), FI_RECV, &slab.mr, &slab.desc);
      if (rc != 0) return rc;
      hdr_slabs.push_back(std::move(slab));
    }
    const std::size_t slot = hdr_used++;
    const HdrSlab& slab = hdr_slabs[slot / kHdrSlabSlots];
    r->own_hdr = slab.mem.get() + (slot % kHdrSlabSlots) * sizeof(RtsHeader);
    r->own_hdr_desc = slab.desc;
  }
  r->hdr = r->own_hdr;
  r->hdr_desc = r->own_hdr_desc;
  return 0;
}

/// The registered region holding all of [buf, buf + len), or nullptr.
Endpoint::Impl::Region* Endpoint::Impl::find_region(const void* buf, std::size_t len) const {
  if (regions_by_base.empty()) return nullptr;
  const auto a = reinterpret_cast<std::uintptr_t>(buf);
  auto holds = [a, len](const Region* g) {  // a below base wraps around to a huge offset
    return a - g->base <= g->len && len <= g->len - (a - g->base);
  };
  if (last_region != nullptr && holds(last_region)) return last_region;
  auto it = regions_by_base.upper_bound(a);
  while (it != regions_by_base.begin()) {
    --it;
    if (a - it->first > longest_region) break;  // no region starting here or lower reaches
    if (holds(it->second)) {
      last_region = it->second;
      return it->second;
    }
  }
  return nullptr;
}

/// Gives r the registration of its user buffer: its registered region's, else a per-call one.
int Endpoint::Impl::attach_user_buffer(Req* r, const void* buf, std::size_t len,
                                       std::uint64_t access) {
  if (len == 0) return 0;
  Region* g = last_region;
  const auto a = reinterpret_cast<std::uintptr_t>(buf);
  if (g == nullptr || a - g->base > g->len || len > g->len - (a - g->base))
    g = find_region(buf, len);  // not in the region found last (the check of find_region)
  if (g != nullptr) {
    r->region = g;
    r->desc = g->desc;
    ++g->in_use;
    ++stats.mr_registry_hits;
    return 0;
  }
  ++stats.mr_per_call;
  return reg(buf, len, access, &r->mr, &r->desc);
}

/// Releases r's registration and puts it back in the pool (its op is not completed here).
void Endpoint::Impl::free_req(Req* r) {
  unreg(r->mr);
  if (r->region != nullptr) --r->region->in_use;
  if (r->op != nullptr) r->op->next = nullptr;
  if (r->rendezvous && r->is_send) sends.erase(r->cookie);
  if (r->live_prev != nullptr) {
    r->live_prev->live_next = r->live_next;
  } else {
    live_head = r->live_next;
  }
  if (r->live_next != nullptr) r->live_next->live_prev = r->live_prev;
  --live_count;
  r->live = false;
  r->op = nullptr;
  r->live_prev = nullptr;
  r->live_next = req_free;
  req_free = r;
}

// msg by value: callers pass r->fail_message, which the pool may reuse once r is free.
void Endpoint::Impl::fail_req(Req* r, Errc e, std::string msg) {
  PostedOp* op = r->op;
  free_req(r);
  if (op != nullptr) op->fail(e, std::move(msg));
}

void Endpoint::Impl::complete_req(Req* r) {
  PostedOp* op = r->op;
  free_req(r);
  if (op != nullptr) op->complete();
}

/// A small eager send: [header prefix][payload] copied into one stack buffer and posted with
/// fi_tinject, which takes the bytes at once and reports no completion. No request, no
/// per-call registration (inject data needs no descriptor, also under FI_MR_LOCAL), no
/// completion to reap: the send is complete on return. Measured over the libfabric shm
/// provider, 8 B ping-pong: 0.40 us with a request per send against 0.29 us for a bare
/// fi_tsend. Returns 1 when sent, 0 when the message does not fit, the tx queue holds earlier
/// sends (order) or the provider is busy (the caller then takes the normal path, which
/// queues), and the provider's (negative) error when it refused the message.
int Endpoint::Impl::inject(int peer, std::uint64_t tag, const std::byte* data, std::size_t size) {
  if (!tx_queue.empty()) return 0;
  reads_since_tx = 0;
  const auto dst = static_cast<fi_addr_t>(peer);
  int rc = 0;
  const bool raw = raw_limit > 0 && size <= raw_limit;
  if (raw) {  // no prefix: see kRawData
    rc = static_cast<int>(fi_tinjectdata(ep, data, size, kRawData, dst, tag));
  } else {
    const std::size_t prefix = rma ? eager_prefix.size() : 0;
    if (size + prefix > inline_limit) return 0;
    if (rma && size >= eager_limit) return 0;
    alignas(8) std::array<std::byte, kInlineMax> buf;
    if (rma) std::memcpy(buf.data(), eager_prefix.data(), sizeof(RtsHeader));  // inlined: constant
    if (size > 0) std::memcpy(buf.data() + prefix, data, size);
    rc = static_cast<int>(fi_tinject(ep, buf.data(), prefix + size, dst, tag));
  }
  if (is_busy(rc)) return 0;
  if (rc != 0) return rc;
  ++stats.eager_messages;
  ++stats.inline_messages;
  if (raw) ++stats.raw_messages;
  stats.eager_bytes_sent += size;
  return 1;
}

/// inject for a posted op: true when the op is done (sent, or failed with the provider's error).
bool Endpoint::Impl::post_inline(PostedOp* op) {
  const int rc = inject(op->peer, op->tag, op->send_data, op->size);
  if (rc == 0) return false;
  if (rc < 0) {
    op->fail(send_error(rc),
             "ofi: send to world rank " + std::to_string(op->peer) + " failed: " + fi_text(rc));
  } else {
    op->complete();
  }
  return true;
}

void Endpoint::Impl::submit_tx(const TxItem& item) {
  // Keep posting order: while anything waits in the queue, later items wait behind it.
  if (tx_queue.empty()) {
    TxItem it = item;
    const int rc = try_tx(it);
    if (!is_busy(rc)) return;
  }
  ++stats.eagain_retries;
  if (item.req != nullptr) item.req->tx_queued = true;
  tx_queue.push_back(item);
}

/// Posts one tx item: 0 when done (or failed and dealt with), -FI_EAGAIN to retry later.
int Endpoint::Impl::try_tx(TxItem& item) {
  Req* r = item.req;
  reads_since_tx = 0;
  int rc = 0;
  switch (item.kind) {
    case TxKind::send:
      if (raw_eager) {  // the payload alone, marked by CQ data: see kRawData
        rc = static_cast<int>(fi_tsenddata(ep, r->sbuf, r->size, r->desc, kRawData, item.peer,
                                           r->tag, &r->main.fctx));
        if (rc == 0) ++stats.raw_messages;
      } else if (rma) {  // [constant header][payload]: see the receive's header slot
        std::array<iovec, 2> iov{iovec{eager_prefix.data(), eager_prefix.size()},
                                 iovec{const_cast<std::byte*>(r->sbuf), r->size}};
        std::array<void*, 2> desc{prefix_desc, r->desc};
        rc = static_cast<int>(fi_tsendv(ep, iov.data(), desc.data(), r->size > 0 ? 2 : 1, item.peer,
                                        r->tag, &r->main.fctx));
      } else {
        rc = static_cast<int>(
            fi_tsend(ep, r->sbuf, r->size, r->desc, item.peer, r->tag, &r->main.fctx));
      }
      if (rc == 0) r->phase = Phase::posted;
      break;
    case TxKind::rts:
      rc = marker == RtsMarker::tag_bit
               ? static_cast<int>(
                     fi_tinject(ep, &r->rts, sizeof(RtsHeader), item.peer, r->tag | kRtsBit))
               : static_cast<int>(
                     fi_tinjectdata(ep, &r->rts, sizeof(RtsHeader), kRtsData, item.peer, r->tag));
      if (rc == 0) r->phase = Phase::wait_fin;
      break;
    case TxKind::fin:
      rc = static_cast<int>(fi_inject(ep, &item.fin, sizeof(FinMsg), item.peer));
      if (is_busy(rc)) return -FI_EAGAIN;
      if (rc == 0) ++fins_sent;
      // A FIN that cannot be sent leaves the sender to its deadline; nothing else to do here.
      return 0;
    case TxKind::read:
      while (r->read_next < r->rts.size && r->reads_in_flight < kReadsInFlight && !r->read_failed) {
        if (reads_outstanding >= kEndpointReadsInFlight) {
          rc = -FI_EAGAIN;  // retried from the queue when a read completes
          break;
        }
        std::size_t slot = 0;
        while (r->read_busy[slot]) ++slot;
        const std::size_t len = std::min(read_chunk, r->rts.size - r->read_next);
        rc =
            static_cast<int>(fi_read(ep, r->rbuf + r->read_next, len, r->desc, item.peer,
                                     r->rts.addr + r->read_next, r->rts.key, &r->reads[slot].fctx));
        if (rc != 0) break;
        r->read_busy[slot] = true;
        r->read_len[slot] = len;
        r->read_next += len;
        ++r->reads_in_flight;
        ++reads_outstanding;
      }
      if (is_busy(rc)) return -FI_EAGAIN;
      if (rc != 0) {
        r->read_failed = true;
        r->fail_message =
            "ofi: fi_read from world rank " + std::to_string(r->peer) + " failed: " + fi_text(rc);
        if (r->reads_in_flight == 0) finish_read(r);
      }
      return 0;
  }
  if (is_busy(rc)) return -FI_EAGAIN;
  if (rc != 0) {
    fail_req(r, send_error(rc),
             "ofi: send to world rank " + std::to_string(r->peer) + " failed: " + fi_text(rc));
  }
  return 0;
}

int Endpoint::Impl::try_rx(Req* r) {
  int rc = 0;
  const auto src = static_cast<fi_addr_t>(r->peer);
  const std::uint64_t ignore = rma && marker == RtsMarker::tag_bit ? kRtsBit : 0;
  // iovs: [header slot, rendezvous on] [user buffer] [shared sink]: see the header slot.
  std::array<iovec, 3> iov;
  std::array<void*, 3> desc;
  std::size_t n = 0;
  r->hdr_last = header_last(r);
  if (r->hdr != nullptr && !r->hdr_last) {
    iov[n] = iovec{r->hdr, sizeof(RtsHeader)};
    desc[n++] = r->hdr_desc;
  }
  if (r->size > 0) {
    iov[n] = iovec{r->rbuf, r->size};
    desc[n++] = r->desc;
  }
  if (r->hdr_last) {
    iov[n] = iovec{r->hdr, sizeof(RtsHeader)};
    desc[n++] = r->hdr_desc;
  }
  if (!sink.empty()) {
    iov[n] = iovec{sink.data(), sink.size()};
    desc[n++] = sink_desc;
  }
  if (n == 0) {
    rc = static_cast<int>(fi_trecv(ep, nullptr, 0, nullptr, src, r->tag, ignore, &r->main.fctx));
  } else if (n == 1) {
    rc = static_cast<int>(
        fi_trecv(ep, iov[0].iov_base, iov[0].iov_len, desc[0], src, r->tag, ignore, &r->main.fctx));
  } else {
    rc = static_cast<int>(
        fi_trecvv(ep, iov.data(), desc.data(), n, src, r->tag, ignore, &r->main.fctx));
  }
  if (is_busy(rc)) return -FI_EAGAIN;
  if (rc != 0) {
    const Errc e = is_peer_gone(-rc) ? Errc::peer_failure : Errc::transport;
    fail_req(r, e,
             "ofi: receive from world rank " + std::to_string(r->peer) + " failed: " + fi_text(rc));
    return 0;
  }
  r->phase = Phase::posted;
  return 0;
}

void Endpoint::Impl::post_ctrl(std::uint32_t slot) {
  const int rc =
      static_cast<int>(fi_recv(ep, ctrl_buf.data() + slot * kCtrlSlotBytes, kCtrlSlotBytes,
                               ctrl_desc, FI_ADDR_UNSPEC, &ctrl_ctx[slot].fctx));
  // Busy or failed: retried from progress() (a lost FIN slot only means fewer in flight;
  // FINs that find no slot wait in the provider as unexpected messages).
  if (rc != 0) ctrl_repost.push_back(slot);
}

void Endpoint::Impl::queue_fin(Req* r, std::uint32_t status) {
  TxItem item{TxKind::fin, nullptr, static_cast<fi_addr_t>(r->peer),
              FinMsg{r->rts.cookie, status, 0}};
  submit_tx(item);
}

void Endpoint::Impl::start_read(Req* r, const RtsHeader& h) {
  r->rendezvous = true;
  r->rts = h;
  r->read_next = 0;
  r->reads_in_flight = 0;
  r->phase = Phase::reading;
  for (std::size_t i = 0; i < kReadsInFlight; ++i) {
    r->reads[i].req = r;
    r->reads[i].kind = CtxKind::read;
    r->reads[i].index = static_cast<std::uint32_t>(i);
  }
  if (h.size == 0) {  // nothing to read (no sender of ours sends such an RTS)
    finish_read(r);
    return;
  }
  submit_tx(TxItem{TxKind::read, r, static_cast<fi_addr_t>(r->peer), FinMsg{}});
}

/// All reads of a rendezvous receive are back (or failed): complete it and tell the sender.
void Endpoint::Impl::finish_read(Req* r) {
  if (r->read_failed) {
    queue_fin(r, kFinFailed);
    fail_req(r, Errc::transport, r->fail_message);
    return;
  }
  stats.rma_bytes_read += r->rts.size;
  queue_fin(r, kFinOk);
  if (r->op != nullptr) r->op->received = r->rts.size;
  complete_req(r);
}

// ---- completions --------------------------------------------------------------------------------

/// The sockets provider only queues a small message (injected, or sent with fi_tsend and
/// already reported complete); its progress engine writes it to the socket on a later
/// fi_cq_read. A rank whose collective ended that way kept its last message until its next
/// fabcoll call, and its peer waited that long (measured: a ping-pong whose rank 1 went on to
/// other work left rank 0 waiting for good). A read of no entries runs the progress engine
/// and takes no completion. Once per collective (flush): after every inject and every batch
/// of completions it cost 1.5-2 us of an 11 us 8-byte ping-pong.
void Endpoint::Impl::kick() {
  (void)fi_cq_read(cq, nullptr, 0);
  ++stats.flush_kicks;
  if (reads_since_tx < kFlushReads) ++reads_since_tx;
}

bool Endpoint::Impl::poll_cq() {
  bool any = false;
  std::array<fi_cq_tagged_entry, kCqBatch> entries;  // filled by fi_cq_read
  for (int round = 0; round < 8; ++round) {
    const ssize_t n = fi_cq_read(cq, entries.data(), entries.size());
    if (reads_since_tx < kFlushReads) ++reads_since_tx;
    if (n > 0) {
      any = true;
      for (ssize_t i = 0; i < n; ++i) on_completion(entries[static_cast<std::size_t>(i)]);
      if (n < static_cast<ssize_t>(entries.size())) break;
      continue;
    }
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      if (fi_cq_readerr(cq, &err, 0) > 0) {
        any = true;
        on_error(err);
      }
      continue;
    }
    break;  // -FI_EAGAIN: nothing more now
  }
  return any;
}

void Endpoint::Impl::on_completion(const fi_cq_tagged_entry& e) {
  auto* ctx = static_cast<Ctx*>(e.op_context);
  if (ctx == nullptr) return;
  if (ctx->kind == CtxKind::ctrl) {
    FinMsg fin{};
    std::memcpy(&fin, ctrl_buf.data() + ctx->index * kCtrlSlotBytes, sizeof fin);
    post_ctrl(ctx->index);
    ++fins_received;
    const auto it = sends.find(fin.cookie);
    if (it == sends.end()) {  // its send was cancelled
      ++fins_unknown;
      return;
    }
    Req* r = it->second;
    if (fin.status == kFinFailed) {
      fail_req(
          r, Errc::transport,
          "ofi: world rank " + std::to_string(r->peer) + " failed to read a rendezvous message");
      return;
    }
    // A truncated receive still consumed the message: the send completes, as in MPI.
    stats.rma_bytes_sent += fin.status == kFinOk ? r->size : 0;
    complete_req(r);
    return;
  }
  Req* r = ctx->req;
  if (ctx->kind == CtxKind::read) {
    r->read_busy[ctx->index] = false;
    --r->reads_in_flight;
    --reads_outstanding;
    if (r->read_next < r->rts.size && !r->read_failed) {
      if (!r->tx_queued)
        submit_tx(TxItem{TxKind::read, r, static_cast<fi_addr_t>(r->peer), FinMsg{}});
    } else if (r->reads_in_flight == 0 && !r->tx_queued) {
      finish_read(r);
    }
    return;
  }
  if (r->is_send || r->abandoned) {  // eager send, or a receive whose buffer may be gone
    complete_req(r);
    return;
  }
  // A receive: an eager message or an RTS.
  const std::size_t hdr_len = r->hdr != nullptr ? sizeof(RtsHeader) : 0;
  const std::size_t cap = r->size;
  const bool is_rts = rma && (marker == RtsMarker::tag_bit
                                  ? (e.tag & kRtsBit) != 0
                                  : (e.flags & FI_REMOTE_CQ_DATA) != 0 && e.data == kRtsData);
  if (is_rts) {
    RtsHeader h{};
    if (e.len != sizeof h || r->hdr == nullptr) {
      fail_req(r, Errc::transport,
               "ofi: malformed rendezvous header from world rank " + std::to_string(r->peer));
      return;
    }
    if (r->hdr_last) {  // [user buffer][slot]: the RTS's first min(size, 32) bytes in the buffer
      const std::size_t in_buf = std::min(cap, sizeof h);
      if (in_buf > 0) std::memcpy(&h, r->rbuf, in_buf);
      std::memcpy(reinterpret_cast<std::byte*>(&h) + in_buf, r->hdr, sizeof h - in_buf);
    } else {
      std::memcpy(&h, r->hdr, sizeof h);
    }
    if (h.size > cap) {
      r->rts = h;
      queue_fin(r, kFinTruncated);
      fail_req(r, Errc::truncation, truncation_message(h.size, r->peer, cap));
      return;
    }
    start_read(r, h);
    return;
  }
  if ((e.flags & FI_REMOTE_CQ_DATA) != 0 && e.data == kRawData && r->hdr != nullptr) {
    const std::size_t got = e.len;
    if (got > cap) {
      fail_req(r, Errc::truncation, truncation_message(got, r->peer, cap));
      return;
    }
    if (r->hdr_last) {  // in place: the slot comes after the buffer
      if (r->op != nullptr) r->op->received = got;
      complete_req(r);
      return;
    }
    // The message's first 32 bytes are in the header slot, the rest at the buffer's start.
    auto* out = static_cast<std::byte*>(r->rbuf);
    const std::size_t head = std::min(got, sizeof(RtsHeader));
    if (got > head) std::memmove(out + head, out, got - head);
    if (head > 0) std::memcpy(out, r->hdr, head);
    if (r->op != nullptr) r->op->received = got;
    complete_req(r);
    return;
  }
  if (e.len < hdr_len || r->hdr_last) {  // hdr_last: every eager message is raw (the framing)
    fail_req(r, Errc::transport,
             "ofi: message without its header from world rank " + std::to_string(r->peer));
    return;
  }
  const std::size_t got = e.len - hdr_len;
  if (got > cap) {
    fail_req(r, Errc::truncation, truncation_message(got, r->peer, cap));
    return;
  }
  if (r->op != nullptr) r->op->received = got;
  complete_req(r);
}

void Endpoint::Impl::on_error(const fi_cq_err_entry& e) {
  auto* ctx = static_cast<Ctx*>(e.op_context);
  if (ctx == nullptr) return;
  std::array<char, 256> buf{};
  const char* text = fi_cq_strerror(cq, e.prov_errno, e.err_data, buf.data(), buf.size());
  // Providers differ in the sign of err (shm reports -FI_ETRUNC).
  const int err = e.err < 0 ? -e.err : e.err;
  std::string detail = fi_text(err);
  if (text != nullptr && *text != '\0') detail += std::string(" (") + text + ")";
  const Errc errc = is_peer_gone(err) ? Errc::peer_failure : Errc::transport;
  if (ctx->kind == CtxKind::ctrl) {
    if (err != FI_ECANCELED) post_ctrl(ctx->index);
    return;
  }
  Req* r = ctx->req;
  if (ctx->kind == CtxKind::read) {
    r->read_busy[ctx->index] = false;
    --r->reads_in_flight;
    --reads_outstanding;
    if (!r->read_failed) {
      r->read_failed = true;
      r->fail_message =
          "ofi: reading from world rank " + std::to_string(r->peer) + " failed: " + detail;
    }
    if (r->reads_in_flight == 0 && !r->tx_queued) finish_read(r);
    return;
  }
  if (err == FI_ECANCELED) {
    fail_req(r, Errc::transport, "ofi: operation cancelled");
    return;
  }
  if (!r->is_send && err == FI_ETRUNC) {
    const std::size_t hdr_len = r->hdr != nullptr ? sizeof(RtsHeader) : 0;
    // Every posted byte was filled before the overflow (olen). Not e.len + e.olen: sockets
    // (1.17) reports the whole message length as len, which counted the overflow twice.
    const std::size_t total = hdr_len + r->size + sink.size() + e.olen;
    fail_req(r, Errc::truncation,
             truncation_message(total >= hdr_len ? total - hdr_len : total, r->peer, r->size));
    return;
  }
  fail_req(r, errc,
           std::string("ofi: ") + (r->is_send ? "send to" : "receive from") + " world rank " +
               std::to_string(r->peer) + " failed: " + detail);
}

bool Endpoint::Impl::drain_queues() {
  bool any = false;
  while (!ctrl_repost.empty()) {
    const std::uint32_t slot = ctrl_repost.back();
    ctrl_repost.pop_back();
    const std::size_t before = ctrl_repost.size();
    post_ctrl(slot);
    if (ctrl_repost.size() > before) break;
  }
  while (!tx_queue.empty()) {
    TxItem& item = tx_queue.front();
    if (item.req != nullptr) item.req->tx_queued = false;
    Req* r = item.req;
    const int rc = try_tx(item);
    if (rc == -FI_EAGAIN) {
      if (r != nullptr) r->tx_queued = true;
      break;
    }
    any = true;
    tx_queue.pop_front();
    // A read item whose reads all completed meanwhile finishes here (its completions saw
    // tx_queued and left the finish to us).
    if (r != nullptr && r->live && r->phase == Phase::reading && !r->tx_queued &&
        r->reads_in_flight == 0 && (r->read_next >= r->rts.size || r->read_failed)) {
      finish_read(r);
    }
  }
  while (!rx_queue.empty()) {
    if (try_rx(rx_queue.front()) == -FI_EAGAIN) break;
    any = true;
    rx_queue.pop_front();
  }
  return any;
}

// ---- cancel and shutdown ------------------------------------------------------------------------

/// Progresses until r's provider operations are back (so no buffer of the cancelled op is
/// still in use), bounded by the endpoint's deadline.
void Endpoint::Impl::drain_until_gone(Req* r) {
  const double limit = std::isfinite(opts.timeout_s) ? std::min(opts.timeout_s, 10.0) : 10.0;
  const auto deadline = Clock::now() + std::chrono::duration<double>(limit);
  const std::uint64_t gen = r->gen;
  auto alive = [r, gen] { return r->live && r->gen == gen; };
  while (alive() && Clock::now() < deadline) {
    poll_cq();
    drain_queues();
  }
  if (alive()) r->abandoned = true;
}

void Endpoint::Impl::shutdown_handshake() {
  // Everyone stays alive (and keeps progressing, so injected FINs leave) until all ranks are
  // here: a rank that closed early could strand a FIN its peer still waits for.
  const double limit = std::isfinite(opts.timeout_s) ? std::min(opts.timeout_s, 10.0) : 10.0;
  const auto deadline = Clock::now() + std::chrono::duration<double>(limit);
  store.put("ofi/fini/" + std::to_string(rank), "1");
  for (int r = 0; r < size; ++r) {
    const std::string key = "ofi/fini/" + std::to_string(r);
    for (;;) {
      poll_cq();
      drain_queues();
      try {
        (void)store.get(key, 0.0005);
        break;
      } catch (const EngineError&) {
        if (Clock::now() >= deadline) return;
      }
    }
  }
}

void Endpoint::Impl::close_all() {
  if (ep != nullptr) fi_close(&ep->fid);
  ep = nullptr;
  while (live_head != nullptr) {
    Req* r = live_head;
    r->op = nullptr;  // the op may be gone: never touch it
    free_req(r);
  }
  req_free = nullptr;
  req_store.clear();
  sends.clear();
  unreg(ctrl_mr);
  unreg(sink_mr);
  unreg(prefix_mr);
  for (HdrSlab& slab : hdr_slabs) unreg(slab.mr);
  for (auto& [handle, g] : regions) unreg(g->mr);
  last_region = nullptr;
  regions.clear();
  regions_by_base.clear();
  hdr_slabs.clear();
  hdr_used = 0;
  if (av != nullptr) fi_close(&av->fid);
  if (cq != nullptr) fi_close(&cq->fid);
  if (domain != nullptr) fi_close(&domain->fid);
  if (fabric != nullptr) fi_close(&fabric->fid);
  av = nullptr;
  cq = nullptr;
  domain = nullptr;
  fabric = nullptr;
}

// ---- the Transport interface
// ---------------------------------------------------------------------

Endpoint::Endpoint(Store& store, const Options& options)
    : impl_(std::make_unique<Impl>(store, options)) {
  try {
    impl_->open();
  } catch (...) {
    impl_->close_all();
    throw;
  }
}

Endpoint::~Endpoint() {
  try {
    impl_->shutdown_handshake();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
  }
  impl_->close_all();
}

/// A small send that fi_tinject takes at once needs no op (Transport::send_now): no PostedOp,
/// Transfer or request is made for it. Anything else (a bad peer or tag, a message that does
/// not fit, a busy provider, a provider error) goes through post_send, which reports it.
bool Endpoint::send_now(int peer, std::uint64_t tag, const std::byte* data, std::size_t size) {
  Impl& m = *impl_;
  if (peer < 0 || peer >= m.size) return false;
  if (m.rma && m.marker == RtsMarker::tag_bit && (tag & kRtsBit) != 0) return false;
  return m.inject(peer, tag, data, size) > 0;
}

void Endpoint::post_send(PostedOp* op) {
  Impl& m = *impl_;
  if (op->peer < 0 || op->peer >= m.size) {
    op->fail(Errc::invalid_argument, "send to rank " + std::to_string(op->peer) + " out of range");
    return;
  }
  if (m.rma && m.marker == RtsMarker::tag_bit && (op->tag & kRtsBit) != 0) {
    op->fail(Errc::invalid_argument, "ofi: tag bit 63 is reserved for the rendezvous");
    return;
  }
  if (m.post_inline(op)) return;
  const bool rendezvous = m.rma && op->size >= m.eager_limit;
  if (!rendezvous && op->size > m.max_msg - (m.rma ? sizeof(RtsHeader) : 0)) {
    op->fail(Errc::unsupported,
             "ofi: message of " + std::to_string(op->size) + " bytes exceeds the provider's limit");
    return;
  }
  Impl::Req* r = m.new_req(op);
  r->is_send = true;
  r->peer = op->peer;
  r->tag = op->tag;
  r->sbuf = op->send_data;
  r->size = op->size;
  r->rendezvous = rendezvous;
  const int rc =
      m.attach_user_buffer(r, r->sbuf, r->size, r->rendezvous ? FI_REMOTE_READ : FI_SEND);
  if (rc != 0) {
    m.fail_req(r, Errc::transport, "ofi: fi_mr_reg of a send buffer failed: " + fi_text(rc));
    return;
  }
  const auto dst = static_cast<fi_addr_t>(op->peer);
  if (r->rendezvous) {
    r->cookie = m.next_cookie++;
    // The remote address is virtual (FI_MR_VIRT_ADDR) or an offset into the registration.
    const auto addr = reinterpret_cast<std::uint64_t>(r->sbuf);
    const std::uint64_t base = r->region != nullptr ? r->region->base : addr;
    r->rts = RtsHeader{r->cookie, m.mr_virt_addr ? addr : addr - base,
                       r->region != nullptr ? r->region->key : fi_mr_key(r->mr), r->size};
    m.sends.emplace(r->cookie, r);
    ++m.stats.rendezvous_messages;
    m.submit_tx(Impl::TxItem{Impl::TxKind::rts, r, dst, FinMsg{}});
  } else {
    ++m.stats.eager_messages;
    m.stats.eager_bytes_sent += r->size;
    m.submit_tx(Impl::TxItem{Impl::TxKind::send, r, dst, FinMsg{}});
  }
}

void Endpoint::post_recv(PostedOp* op) {
  Impl& m = *impl_;
  if (op->peer < 0 || op->peer >= m.size) {
    op->fail(Errc::invalid_argument,
             "receive from rank " + std::to_string(op->peer) + " out of range");
    return;
  }
  if (m.rma && m.marker == RtsMarker::tag_bit && (op->tag & kRtsBit) != 0) {
    op->fail(Errc::invalid_argument, "ofi: tag bit 63 is reserved for the rendezvous");
    return;
  }
  Impl::Req* r = m.new_req(op);
  r->peer = op->peer;
  r->tag = op->tag;
  r->rbuf = op->recv_data;
  r->size = op->size;
  // The user buffer is both a receive target and the local side of rendezvous reads. The
  // header slot is the pooled Req's own (from the registered slabs).
  int rc = m.attach_user_buffer(r, r->rbuf, r->size, FI_RECV | FI_READ);
  if (rc == 0 && m.rma) {
    if (r->own_hdr != nullptr) {  // the common case: this pooled Req received before
      r->hdr = r->own_hdr;
      r->hdr_desc = r->own_hdr_desc;
    } else {
      rc = m.take_hdr(r);
    }
  }
  if (rc != 0) {
    m.fail_req(r, Errc::transport, "ofi: fi_mr_reg of a receive buffer failed: " + fi_text(rc));
    return;
  }
  if (m.rx_queue.empty() && !is_busy(m.try_rx(r))) return;
  ++m.stats.eagain_retries;
  m.rx_queue.push_back(r);
}

void Endpoint::cancel(PostedOp* op) {
  Impl& m = *impl_;
  Impl::Req* r = Impl::req_of(op);
  if (r == nullptr) return;
  op->next = nullptr;
  r->op = nullptr;  // from here on nothing touches op
  if (r->phase == Impl::Phase::queued) {
    if (r->is_send) {
      std::erase_if(m.tx_queue, [r](const Impl::TxItem& i) { return i.req == r; });
    } else {
      std::erase(m.rx_queue, r);
    }
    m.free_req(r);
    return;
  }
  if (r->is_send && r->phase == Impl::Phase::wait_fin) {
    // Closing the registration revokes the receiver's access to our buffer (which may be
    // freed once we return), and a late FIN finds no request. The receiver's read then fails
    // on sockets; on tcp;ofi_rxm and shm (1.17) it never completes, so that receive ends at
    // its collective's deadline (Errc::timeout). Cancelling happens on broken communicators.
    m.free_req(r);
    return;
  }
  if (!r->is_send && r->phase == Impl::Phase::posted) fi_cancel(&m.ep->fid, &r->main.fctx);
  // Wait for the provider to give the operation back: until then it may use the buffer.
  m.drain_until_gone(r);
}

void Endpoint::flush() {
  Impl& m = *impl_;
  // Our own retry queue first: a FIN or send that found the provider busy would otherwise
  // wait for this rank's next call (a few tries; a provider still busy keeps it queued).
  for (int i = 0; i < 3 && !m.tx_queue.empty(); ++i) (void)progress();
  // kFlushReads reads of the queue since the last message was handed over (a rank that only
  // received since then needs none). Each is a zero-entry read (kick): no completion is taken
  // here. Three kicks after every collective cost a receiving rank about 6 us of a 23 us
  // 8-byte ping-pong of p = 2 broadcasts over sockets (development VM), where only the rank that
  // sent last needs them.
  if (!m.kick_progress) return;
  while (m.reads_since_tx < kFlushReads) m.kick();
}

bool Endpoint::progress() {
  Impl& m = *impl_;
  const bool a = m.poll_cq();
  if (m.ctrl_repost.empty() && m.tx_queue.empty() && m.rx_queue.empty()) return a;
  const bool b = m.drain_queues();
  return a || b;
}

std::vector<int> Endpoint::pending_peers() const {
  std::vector<int> peers;
  for (const Impl::Req* r = impl_->live_head; r != nullptr; r = r->live_next)
    if (r->op != nullptr && !r->is_send) peers.push_back(r->peer);
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

std::uint64_t Endpoint::register_region(void* buf, std::size_t len) {
  Impl& m = *impl_;
  if (buf == nullptr || len == 0)
    raise(Errc::invalid_argument, "ofi: registering a null buffer or zero bytes");
  if (m.regions.size() >= m.opts.max_regions)
    raise(Errc::no_memory, "ofi: the registry holds its maximum of " +
                               std::to_string(m.opts.max_regions) +
                               " regions (FABCOLL_MR_MAX_REGIONS); deregister some first");
  if (len > m.opts.max_region_bytes || m.region_bytes > m.opts.max_region_bytes - len)
    raise(Errc::no_memory, "ofi: registering " + std::to_string(len) + " bytes would exceed the " +
                               "registry's bound of " + std::to_string(m.opts.max_region_bytes) +
                               " bytes (FABCOLL_MR_MAX_BYTES; " + std::to_string(m.region_bytes) +
                               " registered)");
  auto g = std::make_unique<Impl::Region>();
  const int rc = m.reg(buf, len, FI_SEND | FI_RECV | FI_READ | FI_REMOTE_READ, &g->mr, &g->desc);
  if (rc != 0) raise_fi("fi_mr_reg of a registered region (" + std::to_string(len) + " B)", rc);
  g->handle = m.next_region++;
  g->base = reinterpret_cast<std::uintptr_t>(buf);
  g->len = len;
  g->key = fi_mr_key(g->mr);
  m.regions_by_base.emplace(g->base, g.get());
  m.region_bytes += len;
  m.longest_region = std::max(m.longest_region, len);
  const std::uint64_t handle = g->handle;
  m.regions.emplace(handle, std::move(g));
  return handle;
}

void Endpoint::deregister_region(std::uint64_t handle) {
  Impl& m = *impl_;
  const auto it = m.regions.find(handle);
  if (it == m.regions.end())
    raise(Errc::invalid_argument,
          "ofi: no registered region " + std::to_string(handle) + " (deregistered already?)");
  Impl::Region* g = it->second.get();
  if (g->in_use > 0)
    raise(Errc::invalid_argument, "ofi: the region is in use by " + std::to_string(g->in_use) +
                                      " transfer(s) in flight; wait for them first");
  for (auto b = m.regions_by_base.lower_bound(g->base);
       b != m.regions_by_base.end() && b->first == g->base; ++b) {
    if (b->second == g) {
      m.regions_by_base.erase(b);
      break;
    }
  }
  m.region_bytes -= g->len;
  m.unreg(g->mr);
  if (m.last_region == g) m.last_region = nullptr;
  m.regions.erase(it);
  m.longest_region = 0;
  for (const auto& [h, r] : m.regions) m.longest_region = std::max(m.longest_region, r->len);
}

std::size_t Endpoint::registered_regions() const { return impl_->regions.size(); }
std::size_t Endpoint::registered_bytes() const { return impl_->region_bytes; }

std::size_t Endpoint::live_requests() const { return impl_->live_count; }
std::size_t Endpoint::pooled_requests() const { return impl_->req_store.size(); }

const Stats& Endpoint::stats() const { return impl_->stats; }
const std::string& Endpoint::provider() const { return impl_->provider; }
bool Endpoint::rendezvous_enabled() const { return impl_->rma; }
std::size_t Endpoint::eager_limit() const { return impl_->eager_limit; }
bool Endpoint::raw_eager_enabled() const { return impl_->raw_eager; }
std::size_t Endpoint::clear_fan_in_from(int /*peer*/) const { return impl_->clear_fan_in; }

std::size_t Endpoint::inject_below() const {
  const Impl& m = *impl_;
  // As Impl::inject sends: raw up to raw_limit, else prefix and payload within inline_limit.
  if (m.raw_limit > 0) return m.raw_limit + 1;
  const std::size_t prefix = m.rma ? sizeof(RtsHeader) : 0;
  std::size_t limit = m.inline_limit > prefix ? m.inline_limit - prefix + 1 : 0;
  if (m.rma) limit = std::min(limit, m.eager_limit);
  return limit;
}

std::string Endpoint::debug_state() const {
  const Impl& m = *impl_;
  std::size_t by_phase[4] = {0, 0, 0, 0};
  std::size_t sends = 0;
  std::size_t reads = 0;
  std::size_t queued_flag = 0;
  for (const Impl::Req* r = m.live_head; r != nullptr; r = r->live_next) {
    ++by_phase[static_cast<int>(r->phase)];
    sends += r->is_send ? 1 : 0;
    reads += r->reads_in_flight;
    queued_flag += r->tx_queued ? 1 : 0;
  }
  std::size_t fins = 0;
  for (const Impl::TxItem& i : m.tx_queue) fins += i.kind == Impl::TxKind::fin ? 1 : 0;
  return "rank " + std::to_string(m.rank) + ": " + std::to_string(m.live_count) + " requests (" +
         std::to_string(sends) + " sends; queued " + std::to_string(by_phase[0]) + ", posted " +
         std::to_string(by_phase[1]) + ", waiting for FIN " + std::to_string(by_phase[2]) +
         ", reading " + std::to_string(by_phase[3]) + "), reads in flight " +
         std::to_string(reads) + ", tx queue " + std::to_string(m.tx_queue.size()) + " (" +
         std::to_string(fins) + " FINs, " + std::to_string(queued_flag) + " flagged), rx queue " +
         std::to_string(m.rx_queue.size()) + ", FIN slots to repost " +
         std::to_string(m.ctrl_repost.size()) + ", FINs received " +
         std::to_string(m.fins_received) + ", FINs sent " + std::to_string(m.fins_sent) +
         ", FINs for unknown cookies " + std::to_string(m.fins_unknown);
}

std::string Endpoint::describe() const {
  const Impl& m = *impl_;
  auto progress_name = [](fi_progress p) {
    return p == FI_PROGRESS_MANUAL ? "manual" : p == FI_PROGRESS_AUTO ? "auto" : "unspec";
  };
  std::string mr;
  if (m.mr_local) mr += " FI_MR_LOCAL";
  if (m.mr_virt_addr) mr += " FI_MR_VIRT_ADDR";
  if (m.mr_prov_key) mr += " FI_MR_PROV_KEY";
  if (m.mr_endpoint) mr += " FI_MR_ENDPOINT";
  if (mr.empty()) mr = " none";
  return m.provider + ": data progress " + progress_name(m.info->domain_attr->data_progress) +
         ", control progress " + progress_name(m.info->domain_attr->control_progress) +
         ", mr_mode" + mr + ", " +
         (m.rma ? std::string("rendezvous by RMA read, RTS marked by ") +
                      (m.marker == RtsMarker::tag_bit ? "tag bit 63" : "CQ data")
                : std::string("eager only")) +
         ", eager limit " + std::to_string(m.eager_limit) + " B";
}

}  // namespace fabcoll::ofi
