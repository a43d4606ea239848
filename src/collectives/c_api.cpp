// The C API: the one place where engine exceptions become FC_ERR_* codes (plus a message
// kept per thread for fc_last_error_message).
#include <arpa/inet.h>
#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "bootstrap/launcher_store.hpp"
#include "bootstrap/node_map.hpp"
#include "bootstrap/pmix_bootstrap.hpp"
#include "collectives/collectives.hpp"
#include "collectives/context_info.hpp"
#include "collectives/placement.hpp"
#include "engine/datatype.hpp"
#include "engine/errors.hpp"
#include "engine/progress.hpp"
#include "engine/router.hpp"
#include "fabcoll/fabcoll.h"
#include "transports/inproc/inproc.hpp"
#include "transports/ofi/ofi.hpp"
#include "transports/shm/shm.hpp"
#include "tuning/tuning_file.hpp"

using fabcoll::CollArgs;
using fabcoll::Collective;
using fabcoll::Errc;

struct fc_thread_world_s {
  explicit fc_thread_world_s(int p) : fabric(p) {}
  fabcoll::inproc::Fabric fabric;
};

struct fc_comm_s {
  fc_context_s* ctx = nullptr;
  std::unique_ptr<fabcoll::Comm> comm;
  bool world = false;
};

struct fc_context_s {
  std::unique_ptr<fabcoll::inproc::Fabric> own_fabric;  // lone process: a world of one
  std::unique_ptr<fabcoll::StoreServerThread> server;   // rank 0 outside fabcoll-run
  std::unique_ptr<fabcoll::Store> store;                // launched jobs: the bootstrap store
  bool pmix = false;
  std::unique_ptr<fabcoll::shm::Endpoint> shm;
  std::unique_ptr<fabcoll::ofi::Endpoint> ofi;
  std::unique_ptr<fabcoll::Router> router;
  fabcoll::Transport* transport = nullptr;
  std::string bootstrap = "lone process";
  std::string tuning = "built-in defaults";
  std::vector<std::string> node_of;
  std::string mapping;  // which ranks of this rank's node share a CPU (cpu_mapping)
  fabcoll::Progress progress;
  fabcoll::CidCounter cids;
  fc_comm_s world;
  int outstanding_requests = 0;
};

struct fc_request_s {
  fc_context_s* ctx;
  fabcoll::CollRequest req;
};

struct fc_mem_s {
  fc_context_s* ctx;
  void* buf;
  std::size_t len;
  std::uint64_t ofi_region;  // the ofi endpoint's registration (0: no fabric endpoint)
};

namespace {

thread_local std::string t_last_error;

// Live fc_mem_t handles, so that deregistering one twice (or after fc_finalize) is a clear
// error rather than a use after free.
std::mutex g_mems_mutex;
std::unordered_set<fc_mem_s*> g_mems;

int fail(int code, std::string msg) {
  t_last_error = std::move(msg);
  return code;
}

/// Runs f, converting exceptions into error codes.
template <class F>
int guarded(F&& f) noexcept {
  try {
    f();
    t_last_error.clear();
    return FC_SUCCESS;
  } catch (const fabcoll::EngineError& e) {
    return fail(static_cast<int>(e.errc()), e.what());
  } catch (const std::bad_alloc&) {
    return fail(FC_ERR_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(FC_ERR_INTERNAL, e.what());
  } catch (...) {
    return fail(FC_ERR_INTERNAL, "unknown exception");
  }
}

fabcoll::Comm& comm_of(fc_comm_t c) {
  if (c == nullptr || !c->comm) fabcoll::raise(Errc::invalid_argument, "communicator is null");
  return *c->comm;
}

void need_out(const void* p, const char* what) {
  if (p == nullptr) fabcoll::raise(Errc::invalid_argument, std::string(what) + " is null");
}

std::size_t elem_size(fc_datatype_t dt) {
  const std::size_t s = fabcoll::datatype_size(dt);
  if (s == 0)
    fabcoll::raise(Errc::invalid_datatype,
                   "unknown datatype " + std::to_string(static_cast<int>(dt)));
  return s;
}

/// More ranks on this node than it has cores (the layout key of the tuning file).
bool ranks_outnumber_cores(int local_ranks) {
  return fabcoll::tuning::layout_key(local_ranks,
                                     static_cast<int>(std::thread::hardware_concurrency())) != 0;
}

/// local_ranks: the ranks of the job on this rank's node (decides how a waiting rank spins).
void init_context(fc_context_s& ctx, fabcoll::Transport& t, int rank, int size, int local_ranks) {
  fabcoll::refresh_overrides();
  ctx.progress.set_oversubscribed(ranks_outnumber_cores(local_ranks));
  // FABCOLL_SPIN_US: microseconds a waiting rank spins before it yields (default 4; 0 when the
  // node has more ranks than cores).
  if (const char* spin = std::getenv("FABCOLL_SPIN_US"); spin != nullptr && *spin != '\0')
    ctx.progress.set_spin_before_yield(
        std::chrono::nanoseconds(static_cast<long long>(std::strtod(spin, nullptr) * 1000)));
  ctx.transport = &t;
  ctx.progress.add_transport(&t);
  ctx.world.ctx = &ctx;
  ctx.world.world = true;
  ctx.world.comm = std::make_unique<fabcoll::Comm>(t, ctx.progress, rank, size, std::vector<int>{},
                                                   0, fabcoll::CostModel{}, &ctx.cids);
}

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0')
    fabcoll::raise(Errc::invalid_argument,
                   std::string(name) + " is not set (start ranks with fabcoll-run)");
  return std::atoi(v);
}

/// Bootstrap through a store at `address`: build the node map, and route every peer to the
/// transport that reaches it.
void bootstrap_with_store(fc_context_s& c, const std::string& address, const std::string& secret,
                          int rank, int size) {
  const double timeout = fabcoll::default_timeout_seconds();
  if (size < 1 || rank < 0 || rank >= size)
    fabcoll::raise(Errc::invalid_argument, "rank " + std::to_string(rank) + " of " +
                                               std::to_string(size) + " is inconsistent");
  c.store = std::make_unique<fabcoll::LauncherStore>(address, secret, rank, size, timeout);
  const fabcoll::NodeMap nodes = fabcoll::exchange_node_map(*c.store, timeout);
  c.node_of = nodes.node_of;
  c.mapping =
      fabcoll::cpu_mapping(nodes.local_cpus, static_cast<int>(std::thread::hardware_concurrency()));
  std::string mode =
      std::getenv("FABCOLL_TRANSPORT") != nullptr ? std::getenv("FABCOLL_TRANSPORT") : "auto";
  if (mode.empty()) mode = "auto";
  if (mode != "auto" && mode != "shm" && mode != "ofi")
    fabcoll::raise(Errc::invalid_argument,
                   "FABCOLL_TRANSPORT=" + mode + ": expected auto, shm or ofi");
  if (mode == "shm" && nodes.nodes > 1)
    fabcoll::raise(Errc::invalid_argument,
                   "FABCOLL_TRANSPORT=shm needs a single node, but the ranks are on " +
                       std::to_string(nodes.nodes) + " nodes");
  // Every rank opens the fabric endpoint when any pair needs it (the address exchange is
  // collective), and the shm endpoint unless the fabric is forced for every peer.
  if (mode == "ofi" || nodes.nodes > 1) {
    fabcoll::ofi::Options o = fabcoll::ofi::options_from_environment();  // + registry bounds
    for (const char* var : {"FABCOLL_PROVIDER", "FI_PROVIDER"}) {
      if (const char* v = std::getenv(var); v != nullptr && *v != '\0') {
        o.provider = v;
        break;
      }
    }
    o.timeout_s = timeout;
    // The zero-copy RMA-read rendezvous is on by default above the eager limit;
    // FABCOLL_OFI_RENDEZVOUS=0 turns it off (every message a tagged send, large ones moved by
    // the provider's own protocol).
    o.rendezvous = fabcoll::ofi::rendezvous_from_environment();
    c.ofi = std::make_unique<fabcoll::ofi::Endpoint>(*c.store, o);
  }
  if (mode != "ofi") {
    c.shm = std::make_unique<fabcoll::shm::Endpoint>(
        *c.store, rank, nodes.local, "shm/" + std::to_string(nodes.node_index), timeout);
  }
  c.router = std::make_unique<fabcoll::Router>(size);
  for (int peer = 0; peer < size; ++peer) {
    const bool local = nodes.node_of[static_cast<std::size_t>(peer)] ==
                       nodes.node_of[static_cast<std::size_t>(rank)];
    c.router->set_route(peer, local && c.shm ? static_cast<fabcoll::Transport*>(c.shm.get())
                                             : static_cast<fabcoll::Transport*>(c.ofi.get()));
  }
  int local_ranks = 0;
  for (const std::string& n : nodes.node_of)
    local_ranks += n == nodes.node_of[static_cast<std::size_t>(rank)] ? 1 : 0;
  fabcoll::Transport* sole = c.router->sole();
  init_context(c, sole != nullptr ? *sole : *c.router, rank, size, local_ranks);
  // The cost model: the calibrated one for this machine (fabcoll-calibrate's tuning file), else
  // built-in defaults for the slowest link class in use, with a one-line notice on rank 0.
  const bool fabric = c.ofi && (mode == "ofi" || nodes.nodes > 1);
  const std::string link = fabric ? "ofi/" + c.ofi->provider() : "shm";
  std::string notice;
  // Inside one node, messages from the single-copy threshold up are read by their receiver,
  // after a request-to-send: the shm link's protocol break.
  const double single_copy =
      !fabric && c.shm && c.shm->cma_enabled() ? static_cast<double>(c.shm->cma_threshold()) : 0;
  if (const auto tuning = fabcoll::tuning::load_tuning(notice)) {
    // The entry of this link class measured in this layout (local ranks vs cores), if any,
    // with its protocol break.
    // Among entries of that layout, the one measured with the same ranks sharing CPUs.
    c.world.comm->set_link(
        fabcoll::tuning::link_model_for(*tuning, link, local_ranks, c.mapping)
            .value_or(fabcoll::LinkModel::uniform(fabcoll::tuning::model_for(*tuning, link))));
    const fabcoll::tuning::LinkParams* used =
        fabcoll::tuning::link_for(*tuning, link, local_ranks, c.mapping);
    c.tuning = "tuning file " + fabcoll::tuning::tuning_path() + " (" + link +
               (used != nullptr ? ", " + used->link_class + " measured " +
                                      fabcoll::tuning::layout_name(
                                          used->local_ranks, tuning->machine.cores, used->mapping)
                                : std::string(", no entry: defaults")) +
               ")";
    // Which algorithm is fastest depends on which ranks share a CPU (README, Calibration).
    if (used != nullptr && !used->mapping.empty() && !c.mapping.empty() &&
        used->mapping != c.mapping && notice.empty())
      notice = "fabcoll: the tuning file's " + used->link_class + " model was measured with " +
               used->mapping + " mapping of ranks to CPUs, these ranks are " + c.mapping +
               "; calibrate with this mapping (fabcoll-run --map-by) for a model of it";
  } else {
    // Defaults per link class (measured once on the development machine; calibrate to replace).
    const bool oversubscribed = ranks_outnumber_cores(local_ranks);
    const double cores = std::max(1u, std::thread::hardware_concurrency());
    c.world.comm->set_link(fabcoll::builtin_link(link, local_ranks / cores, single_copy));
    c.tuning =
        "built-in defaults (" + link + (oversubscribed && !fabric ? ", oversubscribed" : "") + ")";
    if (notice.empty())
      notice = "fabcoll: no tuning file (FABCOLL_TUNING or " + fabcoll::tuning::tuning_path() +
               "); using built-in " + link +
               " defaults; run fabcoll-calibrate to measure this machine";
  }
  if (rank == 0 && !notice.empty() && std::getenv("FABCOLL_QUIET") == nullptr)
    std::fprintf(stderr, "%s\n", notice.c_str());
  if (single_copy > 0) {
    fabcoll::LinkModel l = c.world.comm->link();
    l.set_single_copy(single_copy);
    c.world.comm->set_link(l);
  }
  // Every rank must choose the same algorithms, so every rank uses rank 0's model (hosts may
  // hold different tuning files). Rank 0 too takes the model as its line reads back: a field
  // the line does not carry would otherwise differ between rank 0 and the others, and their
  // choices with it (a hang).
  if (rank == 0) {
    const std::string line = fabcoll::tuning::format_link_model(c.world.comm->link());
    fabcoll::LinkModel l;
    if (fabcoll::tuning::parse_link_model(line, l) == 0)
      fabcoll::raise(Errc::internal, "bootstrap: the cost model line does not read back");
    c.world.comm->set_link(l);
    c.store->put("model/0", line + " " + c.tuning);
  } else {
    const std::string text = c.store->get("model/0", timeout);
    fabcoll::LinkModel l;
    const std::size_t used = fabcoll::tuning::parse_link_model(text, l);
    if (used == 0) fabcoll::raise(Errc::transport, "bootstrap: rank 0's cost model is garbled");
    c.world.comm->set_link(l);
    c.tuning = text.substr(used) + ", from rank 0";
  }
  // Which ranks share a CPU (every rank reads the same node map): ω then falls on written data
  // that crosses CPUs only. One node only: local_cpus covers this node's ranks.
  if (nodes.nodes == 1) {
    if (const fabcoll::Placement* placed = fabcoll::placement_of(nodes.local_cpus)) {
      fabcoll::LinkModel l = c.world.comm->link();
      l.below.placement = l.above.placement = placed;
      c.world.comm->set_link(l);
    }
  }
}

/// The first non-loopback IPv4 address of this host (for a TCP bootstrap store).
std::string host_address() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  std::string out = "127.0.0.1";
  if (::getaddrinfo(host, nullptr, &hints, &res) == 0) {
    for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
      char buf[INET_ADDRSTRLEN] = {};
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      ::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
      if (std::strncmp(buf, "127.", 4) != 0) {
        out = buf;
        break;
      }
    }
    ::freeaddrinfo(res);
  }
  return out;
}

/// Rank 0 serves a store; its address and secret reach the others through bcast.
void bootstrap_with_bcast(fc_context_s& c, int rank, int size, bool single_node, fc_bcast_fn bcast,
                          void* arg) {
  if (bcast == nullptr) fabcoll::raise(Errc::invalid_argument, "bcast function is null");
  char buf[512] = {};
  if (rank == 0) {
    const std::string secret = fabcoll::random_hex(16);
    c.server =
        std::make_unique<fabcoll::StoreServerThread>(secret, single_node ? "" : host_address());
    std::snprintf(buf, sizeof buf, "%s %s", c.server->address().c_str(), secret.c_str());
  }
  if (const int rc = bcast(buf, static_cast<int>(sizeof buf), arg); rc != 0)
    fabcoll::raise(Errc::transport, "bootstrap broadcast failed (" + std::to_string(rc) + ")");
  buf[sizeof buf - 1] = '\0';
  const std::string line(buf);
  const auto sp = line.find(' ');
  if (sp == std::string::npos)
    fabcoll::raise(Errc::transport, "bootstrap broadcast carried garbage");
  bootstrap_with_store(c, line.substr(0, sp), line.substr(sp + 1), rank, size);
}

/// Store::barrier that keeps the transports progressing meanwhile. Under manual progress a
/// message this rank's transport queued may leave only while it progresses: the ofi
/// rendezvous FIN of a receive that already completed here, for which the sender still waits
/// (a plain barrier deadlocked fc_finalize after a large bcast over sockets).
void progressing_barrier(fc_context_s& ctx, const std::string& name, double timeout_s) {
  fabcoll::Store& store = *ctx.store;
  store.put("barrier/" + name + "/" + std::to_string(store.rank()), "1");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (int r = 0; r < store.size(); ++r) {
    const std::string key = "barrier/" + name + "/" + std::to_string(r);
    for (;;) {
      ctx.progress.poll();
      try {
        (void)store.get(key, 0.001);
        break;
      } catch (const fabcoll::EngineError&) {
        if (std::chrono::steady_clock::now() >= deadline) throw;
      }
    }
  }
}

/// Leaves the job: endpoints close first (their shutdown may use the store), then every rank
/// says goodbye through the store so that rank 0 stops serving only when nobody needs it.
void teardown(fc_context_s* ctx) {
  const bool broken = ctx->world.comm && ctx->world.comm->broken();
  const double timeout = broken ? 5.0 : fabcoll::default_timeout_seconds();
  ctx->world.comm.reset();
  ctx->ofi.reset();
  ctx->shm.reset();
  if (ctx->store && ctx->server) {
    try {
      ctx->store->put("bye/" + std::to_string(ctx->store->rank()), "1");
      for (int r = 0; r < ctx->store->size(); ++r)
        (void)ctx->store->get("bye/" + std::to_string(r), timeout);
    } catch (const std::exception&) {
      // a rank that died never says goodbye; stop serving anyway
    }
  } else if (ctx->store) {
    try {
      ctx->store->put("bye/" + std::to_string(ctx->store->rank()), "1");
    } catch (const std::exception&) {
    }
  }
  ctx->store.reset();
  ctx->server.reset();
  if (ctx->pmix) fabcoll::pmix::finalize();
  delete ctx;
}

/// Starts a collective; blocking when req == nullptr.
void start(fc_comm_t c, CollArgs& args, fc_request_t* req) {
  fabcoll::Comm& comm = comm_of(c);
  fabcoll::validate(comm, args);
  if (req == nullptr) {
    fabcoll::run_collective_blocking(comm, c->ctx->progress, args);
    return;
  }
  *req = new fc_request_s{
      c->ctx, fabcoll::CollRequest(comm, c->ctx->progress, fabcoll::run_collective(comm, args))};
  ++c->ctx->outstanding_requests;
}

CollArgs reduction_args(Collective coll, const void* sendbuf, void* recvbuf, std::size_t count,
                        fc_datatype_t dt, fc_op_t op) {
  CollArgs a;
  a.coll = coll;
  a.sendbuf = sendbuf;
  a.recvbuf = recvbuf;
  a.count = count;
  a.elem_size = elem_size(dt);
  a.op = fabcoll::ReduceOp(op, dt);
  return a;
}

/// gather / scatter / allgather / alltoall: both sides must describe the same bytes per block.
CollArgs block_args(Collective coll, const void* sendbuf, std::size_t sendcount,
                    fc_datatype_t sendtype, void* recvbuf, std::size_t recvcount,
                    fc_datatype_t recvtype, bool send_side_matters, bool recv_side_matters) {
  CollArgs a;
  a.coll = coll;
  a.sendbuf = sendbuf;
  a.recvbuf = recvbuf;
  const std::size_t ss = send_side_matters ? elem_size(sendtype) : 0;
  const std::size_t rs = recv_side_matters ? elem_size(recvtype) : 0;
  if (send_side_matters && recv_side_matters && ss * sendcount != rs * recvcount) {
    fabcoll::raise(Errc::invalid_count, "send block (" + std::to_string(ss * sendcount) +
                                            " bytes) and receive block (" +
                                            std::to_string(rs * recvcount) + " bytes) differ");
  }
  if (recv_side_matters) {
    a.elem_size = rs;
    a.count = recvcount;
  } else {
    a.elem_size = ss;
    a.count = sendcount;
  }
  return a;
}

const void* const kInPlace = FC_IN_PLACE;

/// Drives a split like any collective: the CollRequest runs a Task<>.
fabcoll::Task<> split_driver(fabcoll::Task<std::unique_ptr<fabcoll::Comm>> t,
                             std::unique_ptr<fabcoll::Comm>* out) {
  *out = co_await t;
}

}  // namespace

namespace fabcoll {

ContextInfo describe_context(fc_context_t ctx) {
  ContextInfo info;
  if (ctx == nullptr || !ctx->world.comm) return info;
  info.rank = ctx->world.comm->rank();
  info.size = ctx->world.comm->size();
  info.bootstrap = ctx->bootstrap;
  info.tuning = ctx->tuning;
  info.node_of = ctx->node_of;
  info.mapping = ctx->mapping;
  info.shm_cma = ctx->shm && ctx->shm->cma_enabled();
  for (int r = 0; r < info.size; ++r) {
    std::string t = ctx->transport->name();
    if (ctx->router) {
      const Transport* via = ctx->router->route(r);
      t = via == ctx->shm.get() ? "shm" : std::string("ofi (") + ctx->ofi->provider() + ")";
    }
    info.transport_of.push_back(t);
  }
  return info;
}

Comm& world_comm(fc_context_t ctx) { return *ctx->world.comm; }
Progress& context_progress(fc_context_t ctx) { return ctx->progress; }
ofi::Endpoint* context_ofi(fc_context_t ctx) { return ctx->ofi.get(); }

}  // namespace fabcoll

extern "C" {

const char* fc_strerror(int err) {
  if (err == FC_SUCCESS) return "success";
  if (err < 0 || err > FC_ERR_INTERNAL) return "unknown error code";
  return fabcoll::errc_name(static_cast<Errc>(err));
}

const char* fc_last_error_message(void) { return t_last_error.c_str(); }

size_t fc_datatype_size(fc_datatype_t dt) { return fabcoll::datatype_size(dt); }

int fc_init(fc_context_t* ctx) {
  return guarded([&] {
    need_out(ctx, "ctx");
    auto c = std::make_unique<fc_context_s>();
    if (const char* path = std::getenv("FABCOLL_STORE"); path != nullptr && *path != '\0') {
      const char* secret = std::getenv("FABCOLL_SECRET");
      bootstrap_with_store(*c, path, secret != nullptr ? secret : "", env_int("FABCOLL_RANK"),
                           env_int("FABCOLL_SIZE"));
      c->bootstrap = "fabcoll-run";
    } else if (fabcoll::pmix::launched_by_pmix()) {
      const fabcoll::pmix::Job job = fabcoll::pmix::init();
      c->pmix = true;
      bootstrap_with_bcast(*c, job.rank, job.size, job.single_node, fabcoll::pmix::bcast, nullptr);
      c->bootstrap = "PMIx";
    } else {
      c->own_fabric = std::make_unique<fabcoll::inproc::Fabric>(1);
      init_context(*c, c->own_fabric->endpoint(0), 0, 1, 1);
    }
    *ctx = c.release();
  });
}

int fc_init_bcast(int rank, int size, int single_node, fc_bcast_fn bcast, void* arg,
                  fc_context_t* ctx) {
  return guarded([&] {
    need_out(ctx, "ctx");
    auto c = std::make_unique<fc_context_s>();
    bootstrap_with_bcast(*c, rank, size, single_node != 0, bcast, arg);
    c->bootstrap = "caller's broadcast (e.g. MPI)";
    *ctx = c.release();
  });
}

int fc_thread_world_create(int size, fc_thread_world_t* world) {
  return guarded([&] {
    need_out(world, "world");
    if (size < 1) fabcoll::raise(Errc::invalid_argument, "thread world size must be >= 1");
    *world = new fc_thread_world_s(size);
  });
}

int fc_thread_world_free(fc_thread_world_t* world) {
  return guarded([&] {
    need_out(world, "world");
    delete *world;
    *world = nullptr;
  });
}

int fc_init_thread(fc_thread_world_t world, int rank, fc_context_t* ctx) {
  return guarded([&] {
    need_out(world, "world");
    need_out(ctx, "ctx");
    if (rank < 0 || rank >= world->fabric.size())
      fabcoll::raise(Errc::invalid_argument, "rank " + std::to_string(rank) + " outside 0.." +
                                                 std::to_string(world->fabric.size() - 1));
    auto c = std::make_unique<fc_context_s>();
    init_context(*c, world->fabric.endpoint(rank), rank, world->fabric.size(),
                 world->fabric.size());
    c->bootstrap = "thread world";
    *ctx = c.release();
  });
}

int fc_finalize(fc_context_t ctx) {
  return guarded([&] {
    need_out(ctx, "ctx");
    if (ctx->outstanding_requests > 0)
      fabcoll::raise(Errc::invalid_argument,
                     "fc_finalize: " + std::to_string(ctx->outstanding_requests) +
                         " request(s) still pending; fc_wait them first");
    if (const char* s = std::getenv("FABCOLL_STATS"); s != nullptr && std::strcmp(s, "1") == 0) {
      if (ctx->shm) {
        const fabcoll::shm::Stats& st = ctx->shm->stats();
        std::fprintf(stderr,
                     "fabcoll stats: world rank %d: shm messages %llu, bytes through rings "
                     "(staged) %llu, bytes single-copy (CMA) %llu, CMA %s, bytes folded on "
                     "arrival %llu, bytes realigned %llu\n",
                     ctx->world.comm->rank(), static_cast<unsigned long long>(st.messages),
                     static_cast<unsigned long long>(st.bytes_ring),
                     static_cast<unsigned long long>(st.bytes_cma),
                     ctx->shm->cma_enabled() ? "on" : "off",
                     static_cast<unsigned long long>(st.bytes_folded),
                     static_cast<unsigned long long>(st.bytes_realigned));
      }
      if (ctx->ofi) {
        const fabcoll::ofi::Stats& st = ctx->ofi->stats();
        std::fprintf(
            stderr,
            "fabcoll stats: world rank %d: ofi (%s) eager messages %llu (%llu bytes, %llu "
            "inline), "
            "rendezvous messages %llu, bytes read by peers (zero-copy) %llu, bytes we read "
            "%llu, bytes staged %llu, per-call registrations %llu, registry hits %llu, "
            "registered regions %zu (%zu bytes)\n",
            ctx->world.comm->rank(), ctx->ofi->provider().c_str(),
            static_cast<unsigned long long>(st.eager_messages),
            static_cast<unsigned long long>(st.eager_bytes_sent),
            static_cast<unsigned long long>(st.inline_messages),
            static_cast<unsigned long long>(st.rendezvous_messages),
            static_cast<unsigned long long>(st.rma_bytes_sent),
            static_cast<unsigned long long>(st.rma_bytes_read),
            static_cast<unsigned long long>(st.staged_bytes),
            static_cast<unsigned long long>(st.mr_per_call),
            static_cast<unsigned long long>(st.mr_registry_hits), ctx->ofi->registered_regions(),
            ctx->ofi->registered_bytes());
      }
    }
    // Everyone leaves together, so no rank tears down its endpoint while a peer still reads
    // from it (CMA reads our buffers; the segment stays mapped until all are done).
    if (ctx->store && !ctx->world.comm->broken()) {
      if (ctx->ofi)
        progressing_barrier(*ctx, "finalize", fabcoll::default_timeout_seconds());
      else
        ctx->store->barrier("finalize", fabcoll::default_timeout_seconds());
    }
    {  // regions still registered go with their context (the endpoint closes their MRs)
      const std::lock_guard lock(g_mems_mutex);
      std::erase_if(g_mems, [ctx](fc_mem_s* m) {
        if (m->ctx != ctx) return false;
        delete m;
        return true;
      });
    }
    teardown(ctx);
  });
}

int fc_comm_world(fc_context_t ctx, fc_comm_t* comm) {
  return guarded([&] {
    need_out(ctx, "ctx");
    need_out(comm, "comm");
    *comm = &ctx->world;
  });
}

int fc_comm_rank(fc_comm_t comm, int* rank) {
  return guarded([&] {
    need_out(rank, "rank");
    *rank = comm_of(comm).rank();
  });
}

int fc_comm_size(fc_comm_t comm, int* size) {
  return guarded([&] {
    need_out(size, "size");
    *size = comm_of(comm).size();
  });
}

int fc_comm_split(fc_comm_t comm, int color, int key, fc_comm_t* newcomm) {
  return guarded([&] {
    need_out(newcomm, "newcomm");
    fabcoll::Comm& parent = comm_of(comm);
    if (color < 0 && color != FC_UNDEFINED)
      fabcoll::raise(Errc::invalid_argument, "color must be >= 0 or FC_UNDEFINED");
    fabcoll::refresh_overrides();  // a new communicator sees the environment as it is now
    fabcoll::Task<std::unique_ptr<fabcoll::Comm>> task = fabcoll::comm_split(parent, color, key);
    std::unique_ptr<fabcoll::Comm> result;
    fabcoll::run_blocking(parent, comm->ctx->progress, split_driver(std::move(task), &result));
    if (!result) {
      *newcomm = FC_COMM_NULL;
      return;
    }
    auto* c = new fc_comm_s;
    c->ctx = comm->ctx;
    c->comm = std::move(result);
    *newcomm = c;
  });
}

int fc_comm_free(fc_comm_t* comm) {
  return guarded([&] {
    need_out(comm, "comm");
    if (*comm == nullptr) return;
    if ((*comm)->world)
      fabcoll::raise(Errc::invalid_argument, "the world communicator is freed by fc_finalize");
    delete *comm;
    *comm = FC_COMM_NULL;
  });
}

// ---- collectives --------------------------------------------------------------------------

int fc_ibcast(void* buf, size_t count, fc_datatype_t dt, int root, fc_comm_t comm,
              fc_request_t* req) {
  return guarded([&] {
    CollArgs a;
    a.coll = Collective::bcast;
    a.recvbuf = buf;
    a.sendbuf = buf;
    a.count = count;
    a.elem_size = elem_size(dt);
    a.root = root;
    start(comm, a, req);
  });
}

int fc_ireduce(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
               int root, fc_comm_t comm, fc_request_t* req) {
  return guarded([&] {
    CollArgs a = reduction_args(Collective::reduce, sendbuf, recvbuf, count, dt, op);
    a.root = root;
    start(comm, a, req);
  });
}

int fc_iallreduce(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
                  fc_comm_t comm, fc_request_t* req) {
  return guarded([&] {
    CollArgs a = reduction_args(Collective::allreduce, sendbuf, recvbuf, count, dt, op);
    start(comm, a, req);
  });
}

int fc_iscan(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
             fc_comm_t comm, fc_request_t* req) {
  return guarded([&] {
    CollArgs a = reduction_args(Collective::scan, sendbuf, recvbuf, count, dt, op);
    start(comm, a, req);
  });
}

int fc_iexscan(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
               fc_comm_t comm, fc_request_t* req) {
  return guarded([&] {
    CollArgs a = reduction_args(Collective::exscan, sendbuf, recvbuf, count, dt, op);
    start(comm, a, req);
  });
}

int fc_ibarrier(fc_comm_t comm, fc_request_t* req) {
  return guarded([&] {
    CollArgs a;
    a.coll = Collective::barrier;
    start(comm, a, req);
  });
}

int fc_igather(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
               size_t recvcount, fc_datatype_t recvtype, int root, fc_comm_t comm,
               fc_request_t* req) {
  return guarded([&] {
    const int me = comm_of(comm).rank();
    const bool at_root = me == root;
    CollArgs a = block_args(Collective::gather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, sendbuf != kInPlace, at_root);
    a.root = root;
    start(comm, a, req);
  });
}

int fc_iscatter(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                size_t recvcount, fc_datatype_t recvtype, int root, fc_comm_t comm,
                fc_request_t* req) {
  return guarded([&] {
    const int me = comm_of(comm).rank();
    const bool at_root = me == root;
    CollArgs a = block_args(Collective::scatter, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, at_root, recvbuf != kInPlace);
    a.root = root;
    start(comm, a, req);
  });
}

int fc_iallgather(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                  size_t recvcount, fc_datatype_t recvtype, fc_comm_t comm, fc_request_t* req) {
  return guarded([&] {
    CollArgs a = block_args(Collective::allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, sendbuf != kInPlace, true);
    start(comm, a, req);
  });
}

int fc_iallgatherv(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                   const size_t* recvcounts, const size_t* displs, fc_datatype_t recvtype,
                   fc_comm_t comm, fc_request_t* req) {
  return guarded([&] {
    CollArgs a;
    a.coll = Collective::allgatherv;
    a.sendbuf = sendbuf;
    a.recvbuf = recvbuf;
    a.elem_size = elem_size(recvtype);
    if (sendbuf != kInPlace && elem_size(sendtype) != a.elem_size)
      fabcoll::raise(Errc::invalid_datatype, "allgatherv: sendtype and recvtype differ in size");
    a.count = sendcount;
    a.counts = recvcounts;
    a.displs = displs;
    start(comm, a, req);
  });
}

int fc_ialltoall(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                 size_t recvcount, fc_datatype_t recvtype, fc_comm_t comm, fc_request_t* req) {
  return guarded([&] {
    CollArgs a = block_args(Collective::alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, sendbuf != kInPlace, true);
    start(comm, a, req);
  });
}

int fc_ialltoallv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                  fc_datatype_t sendtype, void* recvbuf, const size_t* recvcounts,
                  const size_t* rdispls, fc_datatype_t recvtype, fc_comm_t comm,
                  fc_request_t* req) {
  return guarded([&] {
    CollArgs a;
    a.coll = Collective::alltoallv;
    a.sendbuf = sendbuf;
    a.recvbuf = recvbuf;
    a.elem_size = elem_size(recvtype);
    if (elem_size(sendtype) != a.elem_size)
      fabcoll::raise(Errc::invalid_datatype, "alltoallv: sendtype and recvtype differ in size");
    a.scounts = sendcounts;
    a.sdispls = sdispls;
    a.counts = recvcounts;
    a.displs = rdispls;
    start(comm, a, req);
  });
}

int fc_ireduce_scatter_block(const void* sendbuf, void* recvbuf, size_t recvcount, fc_datatype_t dt,
                             fc_op_t op, fc_comm_t comm, fc_request_t* req) {
  return guarded([&] {
    CollArgs a =
        reduction_args(Collective::reduce_scatter_block, sendbuf, recvbuf, recvcount, dt, op);
    start(comm, a, req);
  });
}

int fc_bcast(void* buf, size_t count, fc_datatype_t dt, int root, fc_comm_t comm) {
  return fc_ibcast(buf, count, dt, root, comm, nullptr);
}
int fc_reduce(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
              int root, fc_comm_t comm) {
  return fc_ireduce(sendbuf, recvbuf, count, dt, op, root, comm, nullptr);
}
int fc_allreduce(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
                 fc_comm_t comm) {
  return fc_iallreduce(sendbuf, recvbuf, count, dt, op, comm, nullptr);
}
int fc_scan(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
            fc_comm_t comm) {
  return fc_iscan(sendbuf, recvbuf, count, dt, op, comm, nullptr);
}
int fc_exscan(const void* sendbuf, void* recvbuf, size_t count, fc_datatype_t dt, fc_op_t op,
              fc_comm_t comm) {
  return fc_iexscan(sendbuf, recvbuf, count, dt, op, comm, nullptr);
}
int fc_barrier(fc_comm_t comm) { return fc_ibarrier(comm, nullptr); }
int fc_gather(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
              size_t recvcount, fc_datatype_t recvtype, int root, fc_comm_t comm) {
  return fc_igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                    nullptr);
}
int fc_scatter(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
               size_t recvcount, fc_datatype_t recvtype, int root, fc_comm_t comm) {
  return fc_iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
                     nullptr);
}
int fc_allgather(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                 size_t recvcount, fc_datatype_t recvtype, fc_comm_t comm) {
  return fc_iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
}
int fc_allgatherv(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                  const size_t* recvcounts, const size_t* displs, fc_datatype_t recvtype,
                  fc_comm_t comm) {
  return fc_iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                        nullptr);
}
int fc_alltoall(const void* sendbuf, size_t sendcount, fc_datatype_t sendtype, void* recvbuf,
                size_t recvcount, fc_datatype_t recvtype, fc_comm_t comm) {
  return fc_ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, nullptr);
}
int fc_alltoallv(const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                 fc_datatype_t sendtype, void* recvbuf, const size_t* recvcounts,
                 const size_t* rdispls, fc_datatype_t recvtype, fc_comm_t comm) {
  return fc_ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                       recvtype, comm, nullptr);
}
int fc_reduce_scatter_block(const void* sendbuf, void* recvbuf, size_t recvcount, fc_datatype_t dt,
                            fc_op_t op, fc_comm_t comm) {
  return fc_ireduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op, comm, nullptr);
}

int fc_wait(fc_request_t* req) {
  if (req == nullptr) return fail(FC_ERR_INVALID_ARG, "req is null");
  if (*req == nullptr) return FC_SUCCESS;  // like MPI_REQUEST_NULL
  fc_request_s* r = *req;
  const int rc = guarded([&] { r->req.wait(r->ctx->progress.timeout_seconds()); });
  --r->ctx->outstanding_requests;
  delete r;
  *req = nullptr;
  return rc;
}

int fc_test(fc_request_t* req, int* done) {
  if (req == nullptr || done == nullptr) return fail(FC_ERR_INVALID_ARG, "req or done is null");
  if (*req == nullptr) {
    *done = 1;
    return FC_SUCCESS;
  }
  fc_request_s* r = *req;
  bool finished = false;
  const int rc = guarded([&] { finished = r->req.test(); });
  if (finished || rc != FC_SUCCESS) {
    --r->ctx->outstanding_requests;
    delete r;
    *req = nullptr;
    *done = 1;
  } else {
    *done = 0;
  }
  return rc;
}

int fc_mem_register(fc_context_t ctx, void* buf, size_t len, fc_mem_t* mem) {
  return guarded([&] {
    need_out(ctx, "ctx");
    need_out(mem, "mem");
    if (buf == nullptr || len == 0)
      fabcoll::raise(Errc::invalid_argument, "fc_mem_register: null buffer or zero length");
    auto m = std::make_unique<fc_mem_s>(fc_mem_s{ctx, buf, len, 0});
    // Registered with the fabric domain once, until fc_mem_deregister (bounded: see
    // FABCOLL_MR_MAX_REGIONS / FABCOLL_MR_MAX_BYTES). Without a fabric endpoint (one node,
    // own shm transport) nothing needs registering: the region is only recorded.
    if (ctx->ofi) m->ofi_region = ctx->ofi->register_region(buf, len);
    const std::lock_guard lock(g_mems_mutex);
    g_mems.insert(m.get());
    *mem = m.release();
  });
}

int fc_mem_deregister(fc_mem_t* mem) {
  return guarded([&] {
    need_out(mem, "mem");
    fc_mem_s* m = *mem;
    if (m == nullptr)
      fabcoll::raise(Errc::invalid_argument,
                     "fc_mem_deregister: the handle is null (deregistered already?)");
    {
      const std::lock_guard lock(g_mems_mutex);
      if (g_mems.count(m) == 0)
        fabcoll::raise(Errc::invalid_argument,
                       "fc_mem_deregister: unknown region (deregistered already, or its "
                       "context was finalized)");
    }
    if (m->ctx->outstanding_requests > 0)
      fabcoll::raise(Errc::invalid_argument,
                     "fc_mem_deregister: " + std::to_string(m->ctx->outstanding_requests) +
                         " nonblocking collective(s) in flight on this context; fc_wait them "
                         "first");
    // Refuses (nothing released) while a posted transfer still uses the registration.
    if (m->ofi_region != 0 && m->ctx->ofi) m->ctx->ofi->deregister_region(m->ofi_region);
    {
      const std::lock_guard lock(g_mems_mutex);
      g_mems.erase(m);
    }
    delete m;
    *mem = nullptr;
  });
}

int fc_op_create(fc_user_fn fn, int commutative, fc_op_t* op) {
  return guarded([&] {
    need_out(op, "op");
    *op = fabcoll::register_user_op(fn, commutative != 0);
  });
}

int fc_op_free(fc_op_t* op) {
  return guarded([&] {
    need_out(op, "op");
    fabcoll::free_user_op(*op);
    *op = FC_OP_NULL;
  });
}

}  // extern "C"
