#include "transports/shm/shm.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#include "bootstrap/launcher_store.hpp"
#include "engine/copy.hpp"
#include "engine/datatype.hpp"
#include "engine/errors.hpp"

namespace fabcoll::shm {

namespace {

constexpr std::uint64_t kMagic = 0x32'6c'6c'6f'63'62'61'66ull;  // "fabcoll2" (frame format 2)
constexpr std::size_t kRingBytes = std::size_t{128} << 10;
constexpr std::size_t kFrameAlign = 64;  // frames start on a cache line
constexpr std::size_t kMaxFragment = kRingBytes / 4 - kFrameAlign;
// At most this many bytes per process_vm_readv call of a plain (non-folding) receive. Streaming
// 4 MiB messages (fabcoll-pingpong's 64-message windows, 2 ranks pinned to 2 cores), paired runs
// of a 1 MiB and a 4 MiB limit: the 4 MiB limit had the higher bandwidth in 6 of 7 pairs (e.g.
// 12630 / 12134, 12269 / 11668 MB/s); latency up to 1 MiB does not depend on it.
constexpr std::size_t kCmaChunk = std::size_t{4} << 20;
// A fold reads the sender's buffer in pieces of this size (into the result, or a per-endpoint
// buffer where the result is also an operand) and combines each piece while it is still in
// cache (see cma_read). Measured, for the per-endpoint buffer
// (16 MiB of doubles from another process, sum into a result, best of 15, loaded 2-core EPYC
// VM): receive-then-combine 4.8-5.3 ms; fold in 64 KiB pieces 5.5-5.9, 128 KiB 5.3-5.7,
// 256 KiB 5.4-5.5, 512 KiB 5.2, 1 MiB 4.7-4.9, 2-4 MiB 4.6-5.0. Each process_vm_readv call
// costs a few microseconds beyond its bytes here, so small pieces lose more in calls than
// they gain in cache; 1 MiB (the L2 of a core, and the CMA's best call size) wins.
constexpr std::size_t kFoldChunk = std::size_t{1} << 20;
// read_remote's pieces where the kernel's copy would be slow for the buffers' alignment
// (engine/copy.hpp): read into a buffer at the sender's offset in a cache line, then copied
// on while in this core's L2 (1 MiB on this machine, shared by the ranks on the core).
constexpr std::size_t kBounceBytes = std::size_t{256} << 10;
constexpr std::uint64_t kProbeValue = 0x5eed'f00d'cafe'd00dull;
constexpr std::size_t kFirstLineLastFrom = 512;  // write_frame

enum Kind : std::uint32_t { kData = 1, kRts = 2, kFin = 3, kPad = 4 };

// A frame is published by its seq word, written last (release): seq = the frame's stream
// position + 1, so a consumer polls the frame itself (one cache line for a small message:
// 40 header bytes, up to 24 payload bytes) instead of a shared head counter and then the
// frame (two lines), and a stale frame from an earlier lap never looks valid.
struct Frame {
  std::uint64_t tag;     // FIN: the send id
  std::uint64_t total;   // message size; FIN: status (errno, 0 = ok)
  std::uint64_t offset;  // DATA: offset of this fragment; RTS: sender's address
  std::uint32_t len;     // payload bytes following the header
  std::uint32_t kind;
  std::uint64_t seq;  // stream position + 1; written last
};
constexpr std::size_t kSeqOffset = offsetof(Frame, seq);
static_assert(sizeof(Frame) == 40 && kSeqOffset == 32 && kFrameAlign % 8 == 0);

std::atomic_ref<std::uint64_t> seq_at(std::byte* frame) {
  return std::atomic_ref<std::uint64_t>(
      *std::launder(reinterpret_cast<std::uint64_t*>(frame + kSeqOffset)));
}

struct alignas(64) Header {
  std::uint64_t magic;
  std::uint32_t nlocal;
  std::uint32_t ring_bytes;
};
struct alignas(64) RankInfo {
  std::atomic<std::int32_t> pid;
  std::atomic<std::uint32_t> cma_ok;      // this rank can read other ranks' memory with CMA
  std::atomic<std::uint64_t> probe_addr;  // address of a word with kProbeValue in its process
};
static_assert(sizeof(Header) == 64 && sizeof(RankInfo) == 64);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::int32_t>::is_always_lock_free);

const std::uint64_t g_probe_word = kProbeValue;

std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// One direction of one pair: the producer owns head, the consumer owns tail; each on its own
// cache line so the two sides never share a line they write. The consumer finds frames by
// their seq word (never reads head); the producer reads tail only when its cached copy says
// the ring is full.
struct Ring {
  alignas(64) std::atomic<std::uint64_t> head;  // bytes ever written
  alignas(64) std::atomic<std::uint64_t> tail;  // bytes ever consumed
  alignas(64) std::byte data[kRingBytes];
};
static_assert(offsetof(Ring, tail) == 64 && offsetof(Ring, data) == 128);

struct Layout {
  static std::size_t rings_offset(std::size_t n) { return round_up(64 + n * 64, 4096); }
  static std::size_t bytes(std::size_t n) { return rings_offset(n) + n * n * sizeof(Ring); }
};

Header* header_of(void* base) { return static_cast<Header*>(base); }
RankInfo* info_of(void* base, int li) {
  return reinterpret_cast<RankInfo*>(static_cast<std::byte*>(base) + 64 + 64 * li);
}
}  // namespace

Endpoint::Endpoint(Store& store, int world_rank, std::vector<int> local_ranks,
                   const std::string& node_key, double timeout_s)
    : me_(world_rank), local_(std::move(local_ranks)) {
  std::sort(local_.begin(), local_.end());
  const auto n = local_.size();
  if (!local_.empty() && local_.front() < 0) raise(Errc::internal, "shm: negative world rank");
  index_of_.assign(local_.empty() ? 0 : static_cast<std::size_t>(local_.back()) + 1, -1);
  for (std::size_t i = 0; i < n; ++i)
    index_of_[static_cast<std::size_t>(local_[i])] = static_cast<int>(i);
  li_ = local_index(me_);
  if (li_ < 0) raise(Errc::internal, "shm: this rank is not in its node");
  incoming_.resize(n);
  sends_.resize(n);
  tail_cache_.assign(n, 0);
  cma_threshold_ = cma_threshold_from_environment();
  const char* fold = std::getenv("FABCOLL_SHM_FOLD");
  fold_ = fold == nullptr || std::strcmp(fold, "0") != 0;
  const char* chunk = std::getenv("FABCOLL_SHM_FOLD_CHUNK");
  fold_chunk_ = chunk != nullptr ? std::strtoull(chunk, nullptr, 10) : kFoldChunk;
  if (fold_chunk_ == 0) fold_chunk_ = kFoldChunk;
  bytes_ = Layout::bytes(n);

  int fd = -1;
  if (li_ == 0) {
    name_ = "/fabcoll-" + random_hex(12);
    fd = ::shm_open(name_.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) raise(Errc::transport, sys_error("shm: shm_open(" + name_ + ")"));
    if (::ftruncate(fd, static_cast<off_t>(bytes_)) != 0) {
      const std::string err = sys_error("shm: ftruncate");
      ::close(fd);
      ::shm_unlink(name_.c_str());
      raise(Errc::transport, err);
    }
    store.put(node_key + "/segment", name_);
  } else {
    name_ = store.get(node_key + "/segment", timeout_s);
    fd = ::shm_open(name_.c_str(), O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) raise(Errc::transport, sys_error("shm: shm_open(" + name_ + ") to attach"));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) != bytes_) {
      ::close(fd);
      raise(Errc::transport, "shm: segment " + name_ + " has the wrong size");
    }
  }
  base_ = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    if (li_ == 0) ::shm_unlink(name_.c_str());
    raise(Errc::transport, sys_error("shm: mmap"));
  }
  // The rings of this rank (to and from each local rank), located once: a send and every poll
  // use them.
  for (std::size_t li = 0; li < n; ++li) {
    std::byte* rings = static_cast<std::byte*>(base_) + Layout::rings_offset(n);
    const auto me = static_cast<std::size_t>(li_);
    out_rings_.push_back(rings + (me * n + li) * sizeof(Ring));
    in_rings_.push_back(rings + (li * n + me) * sizeof(Ring));
  }
  if (li_ == 0) {
    header_of(base_)->magic = kMagic;
    header_of(base_)->nlocal = static_cast<std::uint32_t>(n);
    header_of(base_)->ring_bytes = static_cast<std::uint32_t>(kRingBytes);
  }
  // Let node peers read our memory with process_vm_readv even under Yama ptrace_scope = 1.
#ifdef PR_SET_PTRACER
  (void)::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
  RankInfo* mine = info_of(base_, li_);
  mine->probe_addr.store(reinterpret_cast<std::uint64_t>(&g_probe_word), std::memory_order_relaxed);
  mine->pid.store(static_cast<std::int32_t>(::getpid()), std::memory_order_release);
  store.put(node_key + "/attached/" + std::to_string(li_), "1");

  // The segment is unlinked once everyone is attached: from then on it lives only as long as
  // the processes that map it.
  if (li_ == 0) {
    for (std::size_t i = 1; i < n; ++i)
      (void)store.get(node_key + "/attached/" + std::to_string(i), timeout_s);
    ::shm_unlink(name_.c_str());
    unlinked_ = true;
  } else {
    (void)store.get(node_key + "/attached/0", timeout_s);
  }
  if (header_of(base_)->magic != kMagic)
    raise(Errc::transport, "shm: segment " + name_ + " is not a fabcoll segment");

  // Probe CMA by reading a known word from the next local rank (or ourselves when alone).
  bool cma = cma_requested_by_environment();
  if (cma) {
    const int peer = (li_ + 1) % static_cast<int>(n);
    (void)store.get(node_key + "/attached/" + std::to_string(peer), timeout_s);
    const RankInfo* pi = info_of(base_, peer);
    std::uint64_t value = 0;
    iovec local{&value, sizeof value};
    iovec remote{reinterpret_cast<void*>(pi->probe_addr.load(std::memory_order_acquire)),
                 sizeof value};
    const ssize_t got =
        ::process_vm_readv(pi->pid.load(std::memory_order_acquire), &local, 1, &remote, 1, 0);
    cma = got == static_cast<ssize_t>(sizeof value) && value == kProbeValue;
  }
  mine->cma_ok.store(cma ? 1 : 0, std::memory_order_release);
  // Everyone's CMA verdict is published before the first message.
  store.put(node_key + "/cma/" + std::to_string(li_), cma ? "1" : "0");
  for (std::size_t i = 0; i < n; ++i)
    (void)store.get(node_key + "/cma/" + std::to_string(i), timeout_s);
}

Endpoint::~Endpoint() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
  if (li_ == 0 && !unlinked_ && !name_.empty()) ::shm_unlink(name_.c_str());
}

bool cma_requested_by_environment() {
  const char* cma = std::getenv("FABCOLL_SHM_CMA");
  return cma == nullptr || std::strcmp(cma, "0") != 0;
}

std::uint64_t cma_threshold_from_environment() {
  const char* thr = std::getenv("FABCOLL_SHM_CMA_THRESHOLD");
  return thr != nullptr ? std::strtoull(thr, nullptr, 10) : 32768;
}

bool Endpoint::cma_enabled() const {
  return info_of(base_, li_)->cma_ok.load(std::memory_order_acquire) != 0;
}

bool Endpoint::can_reach(int world_rank) const { return local_index(world_rank) >= 0; }

int Endpoint::local_index(int world_rank) const {
  return world_rank >= 0 && static_cast<std::size_t>(world_rank) < index_of_.size()
             ? index_of_[static_cast<std::size_t>(world_rank)]
             : -1;
}

bool Endpoint::write_frame(int li, std::uint32_t kind, std::uint64_t tag, std::uint64_t total,
                           std::uint64_t offset, const void* payload, std::uint32_t len) {
  auto* ring = static_cast<Ring*>(out_rings_[static_cast<std::size_t>(li)]);
  const std::uint64_t fs = round_up(sizeof(Frame) + len, kFrameAlign);
  std::uint64_t head = ring->head.load(std::memory_order_relaxed);
  std::uint64_t pos = head % kRingBytes;
  const std::uint64_t contig = kRingBytes - pos;
  const std::uint64_t need = fs <= contig ? fs : contig + fs;
  std::uint64_t& tail = tail_cache_[static_cast<std::size_t>(li)];
  if (kRingBytes - (head - tail) < need) {
    tail = ring->tail.load(std::memory_order_acquire);
    if (kRingBytes - (head - tail) < need) return false;  // full: retried from progress()
  }
  if (fs > contig) {  // a frame never wraps: pad to the end of the ring
    const Frame pad{0, 0, 0, 0, kPad, 0};
    std::memcpy(ring->data + pos, &pad, kSeqOffset);
    seq_at(ring->data + pos).store(head + 1, std::memory_order_release);
    head += contig;
    pos = 0;
  }
  // From kFirstLineLastFrom payload bytes the frame's first line (header, seq and the payload's
  // first bytes) is written last, right before its seq: the consumer polls that line, and
  // written first it was taken from the consumer for the header and again for the seq after the
  // payload's copy. Shorter copies gain from taking the line early (the fetch overlaps them).
  // Measured against Open MPI (fabcoll-pingpong-mpi --compare-mpi --batches 61, latency ratio,
  // six launches before, two after): 512 B 0.94-1.06 -> 0.83, 0.88; 1 KiB 1.06-1.28 -> 0.91,
  // 1.01; 2 KiB 1.13-1.23 -> 1.07, 1.09. Reordered at every size, 256 B went 0.90-1.03
  // -> 1.10-1.14.
  const Frame f{tag, total, offset, len, kind, 0};
  std::byte* const at = ring->data + pos;
  const auto* src = static_cast<const std::byte*>(payload);
  if (len >= kFirstLineLastFrom) {
    constexpr std::size_t kFirstLine = kFrameAlign - sizeof f;  // payload bytes in line one
    copy_bytes(at + kFrameAlign, src + kFirstLine, len - kFirstLine);
    std::memcpy(at, &f, kSeqOffset);
    std::memcpy(at + sizeof f, src, kFirstLine);
  } else {
    std::memcpy(at, &f, kSeqOffset);
    if (len > 0) copy_bytes(at + sizeof f, src, len);
  }
  seq_at(at).store(head + 1, std::memory_order_release);  // publishes the frame
  ring->head.store(head + fs, std::memory_order_relaxed);
  return true;
}

bool Endpoint::send_now(int peer, std::uint64_t tag, const std::byte* data, std::size_t size) {
  const int li = local_index(peer);
  if (li < 0) return false;  // post_send fails it
  const SendState& s = sends_[static_cast<std::size_t>(li)];
  // The common small case: nothing queued ahead, one frame, room in the ring.
  if (!s.queue.empty() || !s.fins.empty() || s.zero_fill != 0 || size >= cma_threshold_ ||
      size > kMaxFragment ||
      !write_frame(li, kData, tag, size, 0, data, static_cast<std::uint32_t>(size)))
    return false;
  ++stats_.messages;
  stats_.bytes_ring += size;
  return true;
}

void Endpoint::post_send(PostedOp* op) {
  if (send_now(op->peer, op->tag, op->send_data, op->size)) {
    op->complete();
    return;
  }
  const int li = local_index(op->peer);
  if (li < 0) {
    op->fail(Errc::invalid_argument,
             "shm: world rank " + std::to_string(op->peer) + " is not on this node");
    return;
  }
  ++stats_.messages;
  sends_[static_cast<std::size_t>(li)].queue.push_back(op);
  pump(li);
}

bool Endpoint::pump(int li) {
  SendState& s = sends_[static_cast<std::size_t>(li)];
  bool any = false;
  // Control first: FINs release the peer's send buffers.
  while (!s.fins.empty()) {
    const std::uint64_t packed = s.fins.front();
    const std::uint64_t id = packed >> 16;
    const std::uint64_t status = packed & 0xffffu;
    if (!write_frame(li, kFin, id, status, 0, nullptr, 0)) return any;
    s.fins.pop_front();
    any = true;
  }
  // A cancelled message that was half sent: finish it with zeros so the stream stays framed.
  while (s.zero_fill > 0) {
    static const std::byte kZeros[kMaxFragment] = {};
    const auto len = static_cast<std::uint32_t>(std::min<std::uint64_t>(s.zero_fill, kMaxFragment));
    if (!write_frame(li, kData, s.zero_fill_tag, s.zero_fill_total, s.zero_fill_total - s.zero_fill,
                     kZeros, len))
      return any;
    s.zero_fill -= len;
    any = true;
  }
  while (!s.queue.empty()) {
    PostedOp* op = s.queue.front();
    const bool use_cma = op->size >= cma_threshold_ &&
                         info_of(base_, li)->cma_ok.load(std::memory_order_acquire) != 0;
    if (use_cma) {
      const std::uint64_t id = next_send_id_++;
      const std::uint64_t payload[1] = {id};
      if (!write_frame(li, kRts, op->tag, op->size, reinterpret_cast<std::uint64_t>(op->send_data),
                       payload, sizeof payload))
        return any;
      awaiting_fin_[id] = op;
      s.queue.pop_front();
      any = true;
      continue;
    }
    // Eager: fragments through the ring; a zero-byte message is one empty fragment.
    do {
      const auto len =
          static_cast<std::uint32_t>(std::min<std::uint64_t>(op->size - s.sent, kMaxFragment));
      if (!write_frame(li, kData, op->tag, op->size, s.sent, op->send_data + s.sent, len))
        return any;
      s.sent += len;
      s.started = true;
      stats_.bytes_ring += len;
      any = true;
    } while (s.sent < op->size);
    s.queue.pop_front();
    s.sent = 0;
    s.started = false;
    op->complete();
  }
  return any;
}

void Endpoint::finish_recv(PostedOp* op, std::uint64_t total, bool truncated) {
  op->received = truncated ? 0 : total;
  if (truncated) {
    op->fail(Errc::truncation, "shm: message of " + std::to_string(total) +
                                   " bytes into a receive of " + std::to_string(op->size) +
                                   " bytes (from world rank " + std::to_string(op->peer) + ")");
  } else {
    op->complete();
  }
}

void Endpoint::deliver(PostedOp* op, std::uint64_t offset, const std::byte* data, std::size_t len) {
  if (len == 0) return;
  if (op->fold.op == nullptr) {
    copy_bytes(op->recv_data + offset, data, len);
    return;
  }
  // Pieces arrive in order. Whole elements are folded straight from `data`; the bytes of an
  // element cut by a piece boundary wait in recv_data (scratch of the message's size) until
  // its last byte arrives.
  const std::size_t es = op->fold.op->elem_size();
  const std::size_t end = offset + len;
  const std::size_t first = elements_in(offset + es - 1, es) * es;  // first boundary >= offset
  const std::size_t last = elements_in(end, es) * es;               // last boundary <= end
  if (first > offset) {
    copy_bytes(op->recv_data + offset, data, std::min(first, end) - offset);
    if (first <= end) op->fold.apply(first - es, op->recv_data + (first - es), es);
  }
  if (last > first) op->fold.apply(first, data + (first - offset), last - first);
  const std::size_t rest = std::max(first, last);
  if (end > rest) copy_bytes(op->recv_data + rest, data + (rest - offset), end - rest);
  stats_.bytes_folded += len;
}

void Endpoint::on_data(int li, std::uint64_t tag, std::uint64_t total, std::uint64_t offset,
                       const std::byte* payload, std::uint32_t len) {
  Incoming& in = incoming_[static_cast<std::size_t>(li)];
  const int src = local_[static_cast<std::size_t>(li)];
  if (offset == 0) {  // a new message: match the oldest posted receive
    in = Incoming{};
    in.active = true;
    in.total = total;
    const auto it = std::find_if(posted_.begin(), posted_.end(), [&](const PostedOp* r) {
      return r->peer == src && r->tag == tag;
    });
    if (it != posted_.end()) {
      in.op = *it;
      posted_.erase(it);
      in.truncated = total > in.op->size;
    } else {
      auto u = new_unexpected(src, tag, total);
      u->data.resize(total);
      in.u = u.get();
      unexpected_.push_back(std::move(u));
    }
  }
  if (len > 0) {
    if (in.op != nullptr && !in.truncated) deliver(in.op, offset, payload, len);
    if (in.u != nullptr) copy_bytes(in.u->data.data() + offset, payload, len);
  }
  in.got += len;
  if (in.got < in.total) return;
  in.active = false;
  if (in.op != nullptr) {
    finish_recv(in.op, in.total, in.truncated);
  } else if (in.u != nullptr) {
    in.u->complete = true;
    if (PostedOp* op = in.u->claimed) {  // a receive was posted while the message streamed in
      const bool trunc = in.u->total > op->size;
      if (!trunc) deliver(op, 0, in.u->data.data(), in.u->total);
      const Unexpected* done = in.u;
      drop_unexpected(std::find_if(unexpected_.begin(), unexpected_.end(),
                                   [&](const auto& p) { return p.get() == done; }));
      finish_recv(op, in.total, trunc);
    }
  }
  in.op = nullptr;
  in.u = nullptr;
}

void Endpoint::send_fin(int li, std::uint64_t send_id, int err) {
  SendState& s = sends_[static_cast<std::size_t>(li)];
  const auto status = static_cast<std::uint64_t>(err & 0xffff);
  if (s.fins.empty() && write_frame(li, kFin, send_id, status, 0, nullptr, 0)) return;
  s.fins.push_back((send_id << 16) | status);
}

int Endpoint::cma_read(int li, PostedOp* op, std::uint64_t addr, std::uint64_t size,
                       std::uint64_t send_id) {
  const int err = cma_read_all(li, op, addr, size, send_id);
  if (err != 0) send_fin(li, send_id, err);
  return err;
}

int Endpoint::cma_read_all(int li, PostedOp* op, std::uint64_t addr, std::uint64_t size,
                           std::uint64_t send_id) {
  const pid_t pid = info_of(base_, li)->pid.load(std::memory_order_acquire);
  std::uint64_t off = 0;
  if (op->fold.op != nullptr) {
    const std::size_t es = op->fold.op->elem_size();
    // Whole pages of whole elements (a unit of several elements, like the tests' 2x2
    // matrices of int32, is then never cut either).
    const std::size_t chunk =
        std::max(es, std::max<std::size_t>(fold_chunk_ / 4096, 1) * 4096 / es * es);
    // other disjoint from out: each chunk lands in out itself and is folded there (out's lines
    // are then in this core's cache, written once; no staging buffer).
    const bool landed = op->fold.other != op->fold.out;
    // Every piece read before any is folded: the FIN (below, after the last read) then frees
    // the sender before the combines.
    const bool read_first = landed && op->fold.release_sender_first;
    if (!landed && fold_buf_.size() < chunk) fold_buf_.resize(chunk);
    while (off < size) {
      // Read one chunk of whole elements (the last may be short), then fold it.
      const std::size_t want = std::min<std::uint64_t>(chunk, size - off);
      std::byte* const dst = landed ? op->fold.out + off : fold_buf_.data();
      if (const int err = read_remote(pid, dst, addr + off, want); err != 0) return err;
      // Measured p = 2 binomial reduce of 1 MiB: the sender waited for the combine too.
      if (off + want == size) send_fin(li, send_id, 0);
      if (!landed) {
        deliver(op, off, fold_buf_.data(), want);
      } else if (!read_first) {
        op->fold.apply_landed(off, want);
        stats_.bytes_folded += want;
      }
      off += want;
    }
    for (std::uint64_t at = 0; read_first && at < size; at += chunk) {
      const std::size_t len = std::min<std::uint64_t>(chunk, size - at);
      op->fold.apply_landed(at, len);
      stats_.bytes_folded += len;
    }
    if (size == 0) send_fin(li, send_id, 0);  // no piece was read (FABCOLL_SHM_CMA_THRESHOLD=0)
    return 0;
  }
  if (const int err = read_remote(pid, op->recv_data, addr, size); err != 0) return err;
  send_fin(li, send_id, 0);
  return 0;
}

int Endpoint::read_remote(pid_t pid, std::byte* dst, std::uint64_t addr, std::size_t len) {
  const bool bounce = len >= kSlowCopyFrom && rep_movsb_slow(dst, reinterpret_cast<void*>(addr));
  if (bounce && bounce_.size() < kBounceBytes + 64) bounce_.resize(kBounceBytes + 64);
  const std::size_t most = bounce ? kBounceBytes : kCmaChunk;
  std::size_t off = 0;
  while (off < len) {
    const std::size_t want = std::min(most, len - off);
    // The piece's start in bounce_: at its source's offset in a cache line (after a short
    // read too), so the kernel copies line to line.
    std::byte* const stage =
        bounce ? bounce_.data() +
                     ((addr + off - reinterpret_cast<std::uintptr_t>(bounce_.data())) & 63)
               : nullptr;
    iovec local{bounce ? stage : dst + off, want};
    iovec remote{reinterpret_cast<void*>(addr + off), want};
    const ssize_t got = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (got == 0) return EFAULT;
    if (bounce) {
      copy_bytes(dst + off, stage, static_cast<std::size_t>(got));
      stats_.bytes_realigned += static_cast<std::uint64_t>(got);
    }
    off += static_cast<std::size_t>(got);
  }
  return 0;
}

void Endpoint::on_rts(int li, std::uint64_t tag, std::uint64_t size, std::uint64_t addr,
                      std::uint64_t send_id) {
  const int src = local_[static_cast<std::size_t>(li)];
  const auto it = std::find_if(posted_.begin(), posted_.end(),
                               [&](const PostedOp* r) { return r->peer == src && r->tag == tag; });
  if (it == posted_.end()) {
    auto u = new_unexpected(src, tag, size);
    u->rts = true;
    u->addr = addr;
    u->send_id = send_id;
    u->complete = true;
    unexpected_.push_back(std::move(u));
    return;
  }
  PostedOp* op = *it;
  posted_.erase(it);
  SendState& s = sends_[static_cast<std::size_t>(li)];
  if (size > op->size) {
    s.fins.push_back(send_id << 16);  // the sender's part is done; our receive fails
    finish_recv(op, size, true);
    return;
  }
  const int err = cma_read(li, op, addr, size, send_id);
  if (err != 0) {
    op->fail(Errc::transport, std::string("shm: process_vm_readv from world rank ") +
                                  std::to_string(src) + " failed: " + std::strerror(err));
    return;
  }
  finish_recv(op, size, false);
}

void Endpoint::on_fin(std::uint64_t send_id, std::uint32_t status) {
  const auto it = awaiting_fin_.find(send_id);
  if (it == awaiting_fin_.end()) return;  // the send was cancelled
  PostedOp* op = it->second;
  awaiting_fin_.erase(it);
  if (status != 0) {
    op->fail(Errc::transport, std::string("shm: the receiver could not read our buffer: ") +
                                  std::strerror(static_cast<int>(status)));
    return;
  }
  stats_.bytes_cma += op->size;
  op->complete();
}

bool Endpoint::consume(int li) {
  auto* ring = static_cast<Ring*>(in_rings_[static_cast<std::size_t>(li)]);
  std::uint64_t tail = ring->tail.load(std::memory_order_relaxed);
  bool any = false;
  for (;;) {
    const std::uint64_t pos = tail % kRingBytes;
    std::byte* at = ring->data + pos;
    if (seq_at(at).load(std::memory_order_acquire) != tail + 1) return any;  // nothing new
    any = true;
    Frame f;
    std::memcpy(&f, at, sizeof f);
    if (f.kind == kPad) {
      tail += kRingBytes - pos;
      ring->tail.store(tail, std::memory_order_release);
      continue;
    }
    const std::byte* payload = at + sizeof f;
    switch (f.kind) {
      case kData:
        on_data(li, f.tag, f.total, f.offset, payload, f.len);
        break;
      case kRts: {
        std::uint64_t id = 0;
        std::memcpy(&id, payload, sizeof id);
        on_rts(li, f.tag, f.total, f.offset, id);
        break;
      }
      case kFin:
        on_fin(f.tag, static_cast<std::uint32_t>(f.total));
        break;
      default:
        break;
    }
    // Only now is the frame's memory handed back to the producer.
    tail += round_up(sizeof(Frame) + f.len, kFrameAlign);
    ring->tail.store(tail, std::memory_order_release);
  }
}

std::unique_ptr<Endpoint::Unexpected> Endpoint::new_unexpected(int src, std::uint64_t tag,
                                                               std::uint64_t total) {
  std::unique_ptr<Unexpected> u;
  if (spare_.empty()) {
    u = std::make_unique<Unexpected>();
  } else {
    u = std::move(spare_.back());
    spare_.pop_back();
    std::vector<std::byte> data = std::move(u->data);  // keeps its capacity
    data.clear();
    *u = Unexpected{};
    u->data = std::move(data);
  }
  u->src = src;
  u->tag = tag;
  u->total = total;
  return u;
}

void Endpoint::drop_unexpected(std::deque<std::unique_ptr<Unexpected>>::iterator it) {
  // Kept for the next unexpected message: up to kSpareRecords records whose buffers hold at
  // most kSpareBytes (a small message arriving before its receive then allocates nothing).
  constexpr std::size_t kSpareRecords = 64;
  constexpr std::size_t kSpareBytes = 16384;
  if (spare_.size() < kSpareRecords && (*it)->data.capacity() <= kSpareBytes)
    spare_.push_back(std::move(*it));
  unexpected_.erase(it);
}

void Endpoint::post_recv(PostedOp* op) {
  const auto it = std::find_if(unexpected_.begin(), unexpected_.end(), [&](const auto& u) {
    return u->src == op->peer && u->tag == op->tag && u->claimed == nullptr;
  });
  if (it == unexpected_.end()) {
    posted_.push_back(op);
    return;
  }
  Unexpected& u = **it;
  if (!u.complete) {  // still streaming in: take it over when it completes
    u.claimed = op;
    return;
  }
  const std::uint64_t total = u.total;
  const bool trunc = total > op->size;
  if (u.rts) {
    const int li = local_index(u.src);
    int err = 0;
    if (trunc)
      send_fin(li, u.send_id, 0);
    else
      err = cma_read(li, op, u.addr, total, u.send_id);
    drop_unexpected(it);
    pump(li);
    if (err != 0) {
      op->fail(Errc::transport, std::string("shm: process_vm_readv failed: ") + std::strerror(err));
      return;
    }
    finish_recv(op, total, trunc);
    return;
  }
  if (!trunc) deliver(op, 0, u.data.data(), total);
  drop_unexpected(it);
  finish_recv(op, total, trunc);
}

void Endpoint::cancel(PostedOp* op) {
  if (const auto it = std::find(posted_.begin(), posted_.end(), op); it != posted_.end()) {
    posted_.erase(it);
    return;
  }
  for (Incoming& in : incoming_)
    if (in.op == op) {
      in.op = nullptr;  // the rest of the message is consumed and dropped
      in.u = nullptr;
    }
  for (auto& u : unexpected_)
    if (u->claimed == op) u->claimed = nullptr;
  for (std::size_t li = 0; li < sends_.size(); ++li) {
    SendState& s = sends_[li];
    const auto it = std::find(s.queue.begin(), s.queue.end(), op);
    if (it == s.queue.end()) continue;
    if (it == s.queue.begin() && s.started) {  // half sent: owe the rest as zeros
      s.zero_fill = op->size - s.sent;
      s.zero_fill_total = op->size;
      s.zero_fill_tag = op->tag;
      s.sent = 0;
      s.started = false;
    }
    s.queue.erase(it);
  }
  for (auto it = awaiting_fin_.begin(); it != awaiting_fin_.end(); ++it) {
    if (it->second == op) {
      awaiting_fin_.erase(it);
      break;
    }
  }
}

void Endpoint::check_peers_alive() {
  std::vector<bool> involved(local_.size(), false);
  for (const PostedOp* op : posted_) {
    const int li = local_index(op->peer);
    if (li >= 0) involved[static_cast<std::size_t>(li)] = true;
  }
  for (std::size_t li = 0; li < sends_.size(); ++li)
    if (!sends_[li].queue.empty()) involved[li] = true;
  for (const auto& [id, op] : awaiting_fin_)
    involved[static_cast<std::size_t>(local_index(op->peer))] = true;
  for (std::size_t li = 0; li < local_.size(); ++li) {
    if (!involved[li] || static_cast<int>(li) == li_) continue;
    const pid_t pid = info_of(base_, static_cast<int>(li))->pid.load(std::memory_order_acquire);
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;
    const int w = local_[li];
    const std::string msg =
        "shm: world rank " + std::to_string(w) + " (pid " + std::to_string(pid) + ") died";
    std::vector<PostedOp*> failed;
    for (auto it = posted_.begin(); it != posted_.end();) {
      if ((*it)->peer == w) {
        failed.push_back(*it);
        it = posted_.erase(it);
      } else {
        ++it;
      }
    }
    for (PostedOp* op : sends_[li].queue) failed.push_back(op);
    sends_[li].queue.clear();
    for (auto it = awaiting_fin_.begin(); it != awaiting_fin_.end();) {
      if (it->second->peer == w) {
        failed.push_back(it->second);
        it = awaiting_fin_.erase(it);
      } else {
        ++it;
      }
    }
    for (PostedOp* op : failed) op->fail(Errc::peer_failure, msg);
  }
}

bool Endpoint::progress() {
  bool any = false;
  const auto n = static_cast<int>(local_.size());
  for (int li = 0; li < n; ++li) any |= consume(li);
  for (int li = 0; li < n; ++li) {
    const SendState& s = sends_[static_cast<std::size_t>(li)];
    if (!s.queue.empty() || !s.fins.empty() || s.zero_fill > 0) any |= pump(li);
  }
  if (any) {
    idle_polls_ = 0;
  } else if (++idle_polls_ % 20000 == 0) {
    check_peers_alive();
  }
  return any;
}

std::vector<int> Endpoint::pending_peers() const {
  std::vector<int> peers;
  for (const PostedOp* op : posted_) peers.push_back(op->peer);
  for (const auto& [id, op] : awaiting_fin_) peers.push_back(op->peer);
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  return peers;
}

}  // namespace fabcoll::shm
