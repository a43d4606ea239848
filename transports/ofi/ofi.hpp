// The fabric transport: one libfabric RDM endpoint per rank (tagged messages + RMA).
//
// Addressing: at start-up every rank publishes its endpoint name in the bootstrap Store under
// "ofi/addr/<rank>" (hex, then "/rendezvous" or "/eager": ranks must agree on the message
// framing, else opening fails naming FABCOLL_OFI_RENDEZVOUS) and inserts all names, in rank order,
// into an FI_AV_TABLE address vector, so world rank r is fi_addr r. One Endpoint per Store: the
// keys are not generational.
//
// Matching: the PostedOp's 64-bit tag is the libfabric tag and the source is matched by
// FI_DIRECTED_RECV, so the provider keeps the tagged-message rules every transport keeps
// (oldest posted receive with the same (source, tag); unmatched messages wait in order).
//
// Protocols, chosen by size:
//  - eager (size < eager limit): straight from and into the user buffers; with the rendezvous
//    on, each message is [constant 32-byte header][payload] (fi_tsendv) and each receive
//    posts [private registered 32-byte header slot][user buffer][sink], so the payload still
//    lands in place and an RTS (exactly the 32-byte header) never lands in the user buffer;
//  - rendezvous (size >= eager limit, when the provider grants RMA): the sender registers its
//    buffer and injects a 32-byte RTS {cookie, address, key, size} on the same tag, marked by
//    remote CQ data or, on sockets, by tag bit 63 that receives ignore (there user tags must
//    leave bit 63 clear: communicator ids below 2^19). The receiver, whose matching receive
//    got the RTS, registers its own buffer and fi_read()s straight from the sender's buffer in
//    chunks, then sends a FIN {cookie, status} as an untagged message (a separate queue, so
//    it cannot collide with any user tag); the sender's op completes on FIN. No staging copy.
//    READ + FIN rather than write-with-data because tcp;ofi_rxm has no remote write events.
//    The RTS once landed in the user buffer: receives posted at once into one buffer (a
//    bandwidth window) overwrote each other's RTS before their completions were read, and
//    senders waited forever for FINs carrying the overwritten cookies.
// Every buffer is registered (fi_mr_reg) and its descriptor passed, also where the provider does
// not ask for it, so the path FI_MR_LOCAL providers (verbs) need is the one that runs in tests:
// buffers inside a region the user registered (register_region, fc_mem_register) use that
// region's registration; others are registered per call and released with their operation.
// Internal memory (receive header slots, eager prefix, FIN slab, sink) is registered once. Every
// receive gets a shared "sink" iov of eager-limit bytes last, so an oversized eager message neither
// overruns the user buffer nor makes the provider truncate: the size check (Errc::truncation) is
// ours.
//
// libfabric 1.17 bugs this works around (each also named where the code does it):
//  - tcp;ofi_rxm stops delivering on a connection after it reported FI_ETRUNC (#8274): hence
//    the sink;
//  - sockets loses FI_REMOTE_CQ_DATA on unexpected messages, shm ignores the receive's ignore
//    mask for unexpected messages: hence the RTS marker chosen per provider;
//  - shm answers -FI_ENOMEM, not -FI_EAGAIN, when its posted-receive pool is full: both retry.
//
// Progress is manual and only happens in progress(): it reads the CQ, retries posts that got
// -FI_EAGAIN (queued in posting order, sends and receives apart), and drives the rendezvous.
// Only the owning thread may call into an Endpoint (FI_THREAD_DOMAIN, one domain each).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/store.hpp"
#include "engine/transfer.hpp"

namespace fabcoll::ofi {

/// Options::fan_in_clear: the provider's default (kSocketsFanInClear on sockets, else 0).
inline constexpr std::size_t kFanInClearAuto = std::numeric_limits<std::size_t>::max();

struct Options {
  /// libfabric provider string ("sockets", "tcp;ofi_rxm", "shm", ...); "" picks the fastest
  /// present among verbs;ofi_rxm, psm2, efa, cxi, tcp;ofi_rxm, sockets.
  std::string provider;
  /// Deadline (seconds) for the address exchange and the shutdown handshake.
  double timeout_s = 120.0;
  /// Messages of at least this many bytes go by RMA-read rendezvous (when the provider has RMA):
  /// by default those of more than 16 KiB. A 16 KiB message goes eager: tcp;ofi_rxm moves up to
  /// 16384 bytes by its own eager protocol, in 10-21 us, where the rendezvous took 28-48 us.
  std::size_t eager_limit = 16384 + 1;
  /// false: never use the rendezvous (every message eager), as on providers without RMA.
  bool rendezvous = true;
  /// The rendezvous on the sockets provider too. Off by default: there (libfabric 1.17) RMA
  /// reads stalled for good with ~100 rendezvous outstanding between two endpoints, also with
  /// at most 16 reads in flight and with 4 MiB socket buffers asked (the read responses travel
  /// to the connecting side, whose buffer the provider leaves at the kernel's default; ofi.cpp).
  /// FABCOLL_OFI_RENDEZVOUS=1 sets it.
  bool rendezvous_on_sockets = false;
  /// Eager messages above the inject size go without the 32-byte prefix too (kRawData in ofi.cpp;
  /// only where the rendezvous marker is CQ data). FABCOLL_OFI_RAW_EAGER=0 turns it off.
  bool raw_eager = true;
  /// Bounds of the registry of user regions (register_region): count and total bytes.
  std::size_t max_regions = 1024;
  std::size_t max_region_bytes = std::size_t{64} << 30;
  /// Transport::clear_fan_in_from: fan-in messages of at least this many bytes wait for their
  /// receiver's go-ahead (0: never). kFanInClearAuto: kSocketsFanInClear on the sockets
  /// provider, else 0. FABCOLL_OFI_FAN_IN_CLEAR=bytes sets it.
  std::size_t fan_in_clear = kFanInClearAuto;
};
/// The sockets provider (libfabric 1.17, p = 4 on 2 cores over loopback): three ranks sending
/// one message each to a fourth at once took, median of 200 naive reduces between barriers,
/// 114-149 us at 16-32 KiB (183 at 48 KiB), 681 at 64 KiB, 1.6-1.7 ms at 256 KiB and 7.8 ms
/// at 1 MiB; cleared one at a time 225-268, 229, 281-292 us and 1.3 ms (tcp;ofi_rxm: 336 us at
/// 256 KiB, 633 cleared, so not there).
inline constexpr std::size_t kSocketsFanInClear = 65536;

/// Per-endpoint counters (FABCOLL_STATS).
struct Stats {
  std::uint64_t eager_messages = 0;
  std::uint64_t eager_bytes_sent = 0;
  std::uint64_t rendezvous_messages = 0;
  std::uint64_t rma_bytes_sent = 0;    // payload bytes peers read from our buffers
  std::uint64_t rma_bytes_read = 0;    // payload bytes we read from peers' buffers
  std::uint64_t staged_bytes = 0;      // payload bytes copied through an internal buffer
  std::uint64_t inline_messages = 0;   // small eager sends posted by fi_tinject (no request)
  std::uint64_t raw_messages = 0;      // eager sends without the 32-byte prefix (kRawData)
  std::uint64_t eagain_retries = 0;    // posts that got -FI_EAGAIN and were queued
  std::uint64_t mr_per_call = 0;       // user buffers registered (fi_mr_reg) for one operation
  std::uint64_t mr_registry_hits = 0;  // user buffers found inside a registered region
  std::uint64_t flush_kicks = 0;       // CQ reads a collective's end made to send what was queued
};

/// Options from the environment: provider from FABCOLL_PROVIDER, else FI_PROVIDER, else auto;
/// timeout from FABCOLL_TIMEOUT (default_timeout_seconds()); rendezvous from
/// FABCOLL_OFI_RENDEZVOUS; raw eager framing from FABCOLL_OFI_RAW_EAGER; the rendezvous threshold
/// from FABCOLL_OFI_EAGER_LIMIT; registry bounds from FABCOLL_MR_MAX_REGIONS, FABCOLL_MR_MAX_BYTES.
Options options_from_environment();

/// FABCOLL_OFI_RENDEZVOUS: "0" turns the rendezvous off; unset or anything else leaves it on
/// ("1" also turns it on for the sockets provider: Options::rendezvous_on_sockets).
bool rendezvous_from_environment();

/// One line for FABCOLL_STATS: "ofi(tcp;ofi_rxm): eager 12 msgs / 3456 B, rendezvous ...".
std::string format_stats(const std::string& provider, const Stats& s);

/// The socket buffer size (SO_RCVBUF, SO_SNDBUF) asked of the sockets provider through
/// FI_SOCKETS_MAX_BUF_SZ when the user has not set it (apply_provider_defaults).
inline constexpr std::size_t kSocketsBufferBytes = std::size_t{4} << 20;

/// Sets the libfabric provider parameters fabcoll needs, in the environment, where the user has
/// not set them; called before a fabric opens (providers read them then). Today one:
/// FI_SOCKETS_MAX_BUF_SZ = kSocketsBufferBytes (why: ofi.cpp). It uses setenv: a thread of the
/// application that reads the environment at that moment races with it, as with any setenv
/// (the provider offers no other way to pass its parameters).
void apply_provider_defaults();

/// Providers that can open an RDM endpoint with tagged messages here (deduplicated, in
/// libfabric's order), e.g. {"tcp;ofi_rxm", "sockets", "shm", "udp;ofi_rxd"}.
std::vector<std::string> available_providers();

class Endpoint final : public Transport {
 public:
  /// Opens the endpoint and exchanges addresses through store (collective over the world).
  /// Throws EngineError(Errc::transport) when the provider is missing (the message lists the
  /// providers present) or cannot open, Errc::timeout when a peer's address does not appear.
  /// store must outlive the Endpoint: the destructor runs a shutdown handshake through it,
  /// waiting (at most min(timeout_s, 10 s)) for every rank to reach its own destructor, while
  /// still progressing, so that no FIN a peer waits for is lost with a closed endpoint.
  Endpoint(Store& store, const Options& options);
  ~Endpoint() override;
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  [[nodiscard]] const char* name() const override { return "ofi"; }
  void post_send(PostedOp* op) override;
  bool send_now(int peer, std::uint64_t tag, const std::byte* data, std::size_t size) override;
  void post_recv(PostedOp* op) override;
  void cancel(PostedOp* op) override;
  bool progress() override;
  /// sockets only: one more run of its progress engine (queued messages leave now).
  void flush() override;
  [[nodiscard]] std::vector<int> pending_peers() const override;
  /// Options::fan_in_clear as resolved for the provider in use.
  [[nodiscard]] std::size_t clear_fan_in_from(int peer) const override;

  /// Registers [buf, buf + len) with the domain once (fi_mr_reg, also where the provider does
  /// not require registration), kept until deregister_region: sends and receives whose buffer
  /// lies inside use its descriptor and key instead of a per-call registration. Only regions
  /// the user registers are kept; unregistered buffers are registered per call and released
  /// with their operation (no cache: a freed and reused buffer must not meet a stale one).
  /// Throws Errc::invalid_argument (null or empty), Errc::no_memory when the registry's
  /// count or byte bound (Options) would be exceeded, Errc::transport when fi_mr_reg fails.
  std::uint64_t register_region(void* buf, std::size_t len);
  /// Releases a region. Throws Errc::invalid_argument when handle is unknown (deregistered
  /// before) or a posted operation still uses the region (nothing is released then).
  void deregister_region(std::uint64_t handle);
  [[nodiscard]] std::size_t registered_regions() const;
  [[nodiscard]] std::size_t registered_bytes() const;

  /// Transport requests (one per send or receive not done at post, e.g. not by fi_tinject):
  /// those live now (in flight, or cancelled and not yet given back by the provider) and all
  /// ever made. Requests are pooled: a finished one is reused, so the second is the most that
  /// were live at once, not the number of operations.
  [[nodiscard]] std::size_t live_requests() const;
  [[nodiscard]] std::size_t pooled_requests() const;

  [[nodiscard]] const Stats& stats() const;
  /// The provider in use, as libfabric names it ("tcp;ofi_rxm").
  [[nodiscard]] const std::string& provider() const;
  /// False when the provider lacks RMA (or Options::rendezvous is off): every message eager.
  [[nodiscard]] bool rendezvous_enabled() const;
  [[nodiscard]] std::size_t eager_limit() const;
  /// Whether eager messages above the inject size go without the prefix (Options::raw_eager, and
  /// the rendezvous on with its CQ-data marker).
  [[nodiscard]] bool raw_eager_enabled() const;
  /// Messages of fewer bytes than this leave by fi_tinject (taken by the provider at once, no
  /// completion), as Impl::inject sends them: the provider's inject size less any prefix (256
  /// on sockets, whose inject size is 255 B). 0: none.
  [[nodiscard]] std::size_t inject_below() const;
  /// One line on what was negotiated: provider, progress modes, mr_mode bits, RTS marker.
  [[nodiscard]] std::string describe() const;
  /// What is in flight, for diagnosing a stall: requests per phase, queued posts, FIN slots.
  [[nodiscard]] std::string debug_state() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fabcoll::ofi
