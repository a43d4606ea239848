// fabcoll-info: what this build offers and how it chooses.
//   fabcoll-info --algorithms [--markdown]   the algorithm registry, one row per algorithm
//   fabcoll-info --explain <collective> <bytes> [--p P] [--noncommutative]
//                [--tuning FILE [--link CLASS]]   (model from a fabcoll-calibrate tuning file)
//                                            predicted time of every algorithm, the chosen one
#include <hwloc.h>
#include <rdma/fabric.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/registry.hpp"
#include "bootstrap/node_map.hpp"
#include "collectives/collectives.hpp"
#include "collectives/context_info.hpp"
#include "collectives/placement.hpp"
#include "fabcoll/fabcoll.h"
#include "transports/shm/shm.hpp"
#include "transports/sim/sim.hpp"
#include "tuning/tuning_file.hpp"

namespace {

using fabcoll::Algorithm;
using fabcoll::Collective;

std::string text(std::string_view s) { return std::string(s); }

/// The segment column: "above", "below", or for a whole-message algorithm with messages on
/// both sides of the break the share of its latencies above it ("62%").
std::string segment_text(const fabcoll::SegmentChoice& sc) {
  if (sc.alpha_share > 0 && sc.alpha_share < 1) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.0f%%", 100 * sc.alpha_share);
    return buf;
  }
  return sc.above ? "above" : "below";
}

void print_algorithms(bool markdown) {
  if (markdown) {
    std::puts("| collective | algorithm | reference | cost T(n, p) | requires | checked by |");
    std::puts("| --- | --- | --- | --- | --- | --- |");
  } else {
    std::printf("%-22s %-24s %-16s %s\n", "algorithm", "collective", "requires", "cost T(n, p)");
  }
  for (const Algorithm* a : fabcoll::all_algorithms()) {
    std::string req;
    if (a->needs_commutative) req += "commutative op";
    if (a->needs_power_of_two) req += std::string(req.empty() ? "" : ", ") + "p = 2^d";
    if (a->optimal_k != nullptr) req += std::string(req.empty() ? "" : ", ") + "k packets";
    if (req.empty()) req = "—";
    if (markdown) {
      std::printf("| %s | `%s` | %s | %s | %s | `%s` |\n", fabcoll::collective_name(a->coll),
                  text(a->name).c_str(), text(a->reference).c_str(), text(a->formula).c_str(),
                  req.c_str(), text(a->test).c_str());
    } else {
      std::printf("%-22s %-24s %-16s %s\n", text(a->name).c_str(),
                  fabcoll::collective_name(a->coll), req.c_str(), text(a->formula).c_str());
    }
  }
}

int explain(const std::string& coll_name, double bytes, int p, bool noncommutative,
            const fabcoll::LinkModel& link, const std::string& model_source) {
  Collective coll = Collective::count_;
  for (int c = 0; c < static_cast<int>(Collective::count_); ++c)
    if (coll_name == fabcoll::collective_name(static_cast<Collective>(c)))
      coll = static_cast<Collective>(c);
  if (coll == Collective::count_) {
    std::fprintf(stderr, "fabcoll-info: unknown collective '%s'\n", coll_name.c_str());
    return 2;
  }
  fabcoll::sim::World world(p, link.below);
  world.comm(0).set_link(link);
  const fabcoll::Comm& comm = world.comm(0);
  fabcoll::CollArgs args;
  args.coll = coll;
  args.elem_size = 1;
  args.count = static_cast<std::size_t>(bytes);
  if (noncommutative) {
    static const fc_user_fn kNone = [](const void*, void*, size_t, fc_datatype_t) {};
    args.op = fabcoll::ReduceOp(fabcoll::register_user_op(kNone, false), FC_UINT8);
  } else {
    args.op = fabcoll::ReduceOp(FC_SUM, FC_UINT8);
  }
  const fabcoll::CostModel& m = comm.model();
  std::printf(
      "# %s of %.0f bytes on p = %d; model alpha = %.3g s, beta = %.3g s/B, gamma = %.3g s/B, "
      "send overhead o = %.3g s%s, receive overhead o_r = %.3g s%s, sender time per byte G = "
      "%.3g s/B%s, local copy delta = %.3g s/B%s (%s)\n",
      coll_name.c_str(), bytes, p, m.alpha, m.beta, m.gamma, m.send_overhead(),
      m.overhead < 0 ? " (= alpha)" : "", m.recv_overhead(), m.receive_overhead < 0 ? " (= o)" : "",
      m.send_gap(), m.gap < 0 ? " (= beta)" : "", m.copy,
      m.pull_bytes > 0 ? (", receiver-pulled from " +
                          std::to_string(static_cast<long long>(m.pull_bytes)) + " B")
                             .c_str()
                       : "",
      model_source.c_str());
  if (link.has_break())
    std::printf(
        "# protocol break at %.0f B: from there alpha = %.3g s, beta = %.3g s/B, an exchange "
        "%.2f alpha (segment 'above': the algorithm's messages or packets fall there)\n",
        link.break_bytes, link.above.alpha, link.above.beta, link.above.exchange_alpha);
  std::printf(
      "# data its sender wrote within the collective (received, combined, copied) costs %.2f "
      "beta a byte%s; 'written' is the share f of each algorithm's bytes that carry it%s\n",
      m.written,
      m.written_from > 0 ? (" in messages of " +
                            std::to_string(static_cast<long long>(m.written_from)) + " B and more")
                               .c_str()
                         : "",
      m.placement != nullptr ? " to another CPU (ranks share CPUs)" : "");
  std::printf(
      "# a message whose sender receives, or whose receiver sends, while it is under way (an "
      "exchange) costs %.2f alpha + "
      "%.2f beta a byte; 'exchange' is the share e of each algorithm's critical path in them\n",
      m.exchange_alpha, m.exchange_beta);
  if (m.wake > 0)
    std::printf(
        "# a one-way message of a fan-in collective (every one but the broadcast and the "
        "scatter) adds a wake-up of %.3g us, its receiver switched "
        "back onto a core it shares: alpha + (1 - exchange) W a round%s\n",
        m.wake * 1e6, fabcoll::fans_in(args.coll) ? "" : " (not this collective)");
  if (m.streamed != 1)
    std::printf(
        "# a broadcast's pipelined packets (k >= 2) through the rings: the rounds the packets "
        "after the first add cost %.2f (alpha + beta m) each%s\n",
        m.streamed, args.coll == fabcoll::Collective::bcast ? "" : " (not this collective)");
  if (m.has_large())
    std::printf(
        "# beyond the cache: whole messages (or packets) of %.0f B and more cost beta = %.3g "
        "s/B (x%.2f); an algorithm's beta is mixed by the share of its bytes in them\n",
        m.large_from, m.beta_large,
        m.beta_large /
            (link.break_bytes > 0 && m.large_from >= link.break_bytes ? link.above.beta : m.beta));
  if (m.has_gamma_large())
    std::printf(
        "# beyond the cache: combines of messages (or packets) of %.0f B and more cost gamma = "
        "%.3g s/B (x%.2f)%s; an algorithm's gamma is mixed by the share of its bytes in them\n",
        m.gamma_large_from, m.gamma_large, m.gamma > 0 ? m.gamma_large / m.gamma : 0.0,
        fabcoll::combines(args.coll) ? "" : " (not this collective)");
  if (m.call_wake > 0 || link.above.call_wake > 0) {
    // K of each segment: an algorithm whose rounds lie on both sides takes them by the shares.
    char above[96] = "";
    if (link.has_break())
      std::snprintf(above, sizeof above,
                    "; above it %.3g us, mixed by the share of the rounds there",
                    link.above.call_wake * 1e6);
    std::printf(
        "# a call's first wake-up: K = %.3g us once per call, times the share of its path not in "
        "exchanges (below the break%s; twice for the two-tree all-reduce, once for each call "
        "reduce + bcast makes, its broadcast none where n takes alpha of small messages)\n",
        m.call_wake * 1e6, above);
  }
  if (m.has_small()) {
    const bool small_o = m.overhead_small >= 0 && m.overhead >= 0;
    const bool small_k = m.call_wake_small >= 0;
    char o_text[64] = "", k_text[64] = "";
    if (small_o)
      std::snprintf(o_text, sizeof o_text, ", their sender o = %.3g us", m.overhead_small * 1e6);
    if (small_k)
      std::snprintf(k_text, sizeof k_text, ", a call's K = %.3g us", m.call_wake_small * 1e6);
    std::printf(
        "# small messages: those of fewer than %.0f B (injected) cost alpha = %.3g us%s%s; an "
        "algorithm's alpha is mixed by the share of its rounds in them%s\n",
        m.small_below, m.alpha_small * 1e6, o_text, k_text,
        small_o && small_k ? ", and its o and K alike"
        : small_o          ? ", and its o alike"
        : small_k          ? ", and its K alike"
                           : "");
  }
  if (m.placement != nullptr && m.placement->size() == p)
    std::printf(
        "# ranks share CPUs: a message for a rank on its sender's CPU is read once the sender "
        "has sent what it queued (shm's rings below the pull threshold, the fabric at every "
        "size), and a pipelined algorithm's ring packet (or, over the fabric, its one injected "
        "packet) for a rank whose core-mate sends elsewhere once that one has sent it all; an "
        "algorithm costs alpha and beta times its "
        "'core-mates' factor (in the note where not 1); where none of its messages is pulled "
        "(shm's rings), in its exchanges its bytes between core-mates cost the local copy delta "
        "and the rest beta (the share of its bytes not at delta, 'across', in the note where "
        "not 1; of it, where beta_x is fitted, 'ring x' at beta_x); two CPUs' one-way messages "
        "at once go one after the other ('CPU ports' on beta); where nothing is pulled, a "
        "broadcast's stream of packets of 1 KiB or more takes both CPUs of each hop, one port "
        "per CPU, in place of the exchange factor ('stream on CPU ports' on alpha and beta, "
        "exchange share 0)\n");
  if (m.ring_exchange_beta >= 0)
    std::printf(
        "# an exchange's bytes between CPUs through the rings cost beta_x = %.3g s/B a byte, "
        "not %.2f beta: the share of its bytes so costed, 'ring x', in the note\n",
        m.ring_exchange_beta, m.exchange_beta);
  std::printf("%-24s %14s %10s %8s %8s %8s  %s\n", "algorithm", "predicted(us)", "k", "segment",
              "written", "exchange", "note");
  const Algorithm* chosen = nullptr;
  try {
    chosen = &fabcoll::select_algorithm(comm, args);
  } catch (const std::exception& e) {
    std::printf("no choice: %s\n", e.what());
  }
  for (const Algorithm* a : fabcoll::all_algorithms()) {
    if (a->coll != coll) continue;
    std::string note;
    if (a->needs_commutative && noncommutative) note = "excluded: needs a commutative operator";
    if (a->needs_power_of_two && (p & (p - 1)) != 0) note = "excluded: needs p = 2^d";
    if (a == chosen) note = "CHOSEN: least predicted time";
    const fabcoll::SegmentChoice sc = fabcoll::choose_segment(comm, *a, args);
    fabcoll::CostQuery q;
    q.n = bytes;
    q.p = p;
    q.m = sc.m;
    q.k = a->optimal_k != nullptr ? static_cast<double>(sc.packets) : 0;
    // As Algorithm::costed charges it: ω not below written_from (the share shown is 0 there).
    const bool charged = !(q.m.written_from > 0 && a->mean_message(q) < q.m.written_from);
    if (!charged) q.m.written = 1;
    if (!a->parts.empty()) {
      // Costed as the calls it makes (Algorithm::parts), each with its own shares and factors,
      // at the model and packets its prediction takes (the sum is predicted_cost).
      fabcoll::CostQuery pq = q;
      pq.m = sc.m;
      pq.k = static_cast<double>(sc.packets);
      std::string calls = "costed as its calls:";
      const bool injected = fabcoll::Algorithm::part_injected(pq);
      for (std::size_t i = 0; i < a->parts.size(); ++i) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "%s %s %s %.3f%s", i == 0 ? "" : " +",
                      fabcoll::collective_name(a->parts[i]->coll), text(a->parts[i]->name).c_str(),
                      a->part_predict(pq, i) * 1e6,
                      i > 0 && injected ? " (no K: its first message injected)" : "");
        calls += buf;
      }
      note += (note.empty() ? "" : "; ") + calls;
      std::printf("%-24s %14.3f %10zu %8s %8s %8s  %s\n", text(a->name).c_str(),
                  fabcoll::predicted_cost(comm, *a, args) * 1e6, sc.packets,
                  segment_text(sc).c_str(), "-", "-", note.c_str());
      continue;
    }
    if (const double d = a->core_mate_factor(q); d != 1) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "core-mates x%.2f", d);
      note += (note.empty() ? "" : "; ") + std::string(buf);
    }
    if (const double d = a->cpu_port_factor(q); d != 1) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "CPU ports x%.2f on beta", d);
      note += (note.empty() ? "" : "; ") + std::string(buf);
    }
    if (const double d = a->stream_port_factor(q); d != 1) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "stream on CPU ports x%.2f", d);
      note += (note.empty() ? "" : "; ") + std::string(buf);
    }
    if (const double x = a->ring_bytes_across(q); x != 1) {
      char buf[48];
      std::snprintf(buf, sizeof buf, "across %.2f", x);
      note += (note.empty() ? "" : "; ") + std::string(buf);
    }
    if (q.m.ring_exchange_beta >= 0)
      if (const double x = a->ring_shares(q).across; x > 0) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "ring x %.2f", x);
        note += (note.empty() ? "" : "; ") + std::string(buf);
      }
    std::printf("%-24s %14.3f %10zu %8s %8.3f %8.3f  %s\n", text(a->name).c_str(),
                fabcoll::predicted_cost(comm, *a, args) * 1e6, sc.packets, segment_text(sc).c_str(),
                charged ? a->placed_written_share(q) : 0.0, a->clamped_exchange_share(q),
                note.c_str());
  }
  return 0;
}

// Every provider fabcoll knows, probed for an RDM endpoint with tagged messages: usable or why not.
void print_providers() {
  std::puts("# libfabric providers (RDM endpoint, tagged messages); fabcoll's default order:");
  const char* names[] = {"verbs;ofi_rxm", "psm2",    "psm3", "efa",        "cxi",
                         "tcp;ofi_rxm",   "sockets", "shm",  "udp;ofi_rxd"};
  for (const char* name : names) {
    // Ask for RMA first (the zero-copy rendezvous), then for tagged messages alone.
    int rc = 0;
    bool rma = true;
    fi_info* info = nullptr;
    for (const std::uint64_t caps :
         std::initializer_list<std::uint64_t>{FI_TAGGED | FI_RMA | FI_MSG, FI_TAGGED}) {
      fi_info* hints = fi_allocinfo();
      hints->ep_attr->type = FI_EP_RDM;
      hints->caps = caps;
      hints->mode = FI_CONTEXT | FI_CONTEXT2;  // what the transport accepts
      hints->domain_attr->mr_mode =
          FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
      hints->fabric_attr->prov_name = strdup(name);
      rc = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &info);
      fi_freeinfo(hints);
      if (rc == 0 && info != nullptr) break;
      rma = false;
    }
    if (rc == 0 && info != nullptr) {
      std::printf("  %-16s usable (fabric %s, domain %s)%s\n", name, info->fabric_attr->name,
                  info->domain_attr->name, rma ? ", RMA" : ", no RMA: eager messages only");
      fi_freeinfo(info);
    } else {
      std::printf("  %-16s not usable: %s\n", name, fi_strerror(-rc));
    }
  }
}

void print_topology() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return;
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return;
  }
  const auto count = [&](hwloc_obj_type_t t) { return hwloc_get_nbobjs_by_type(topo, t); };
  std::printf(
      "# topology (hwloc): %d package(s), %d NUMA node(s), %d core(s), %d hardware thread(s)\n",
      count(HWLOC_OBJ_PACKAGE), count(HWLOC_OBJ_NUMANODE), count(HWLOC_OBJ_CORE),
      count(HWLOC_OBJ_PU));
  for (const hwloc_obj_type_t t : {HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE}) {
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, t, 0);
    if (o != nullptr && o->attr != nullptr)
      std::printf("  %s: %d x %llu KiB\n", t == HWLOC_OBJ_L2CACHE ? "L2" : "L3", count(t),
                  static_cast<unsigned long long>(o->attr->cache.size >> 10));
  }
  int nics = 0;
  for (hwloc_obj_t o = hwloc_get_next_osdev(topo, nullptr); o != nullptr;
       o = hwloc_get_next_osdev(topo, o)) {
    if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK ||
        o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
      std::printf("  NIC: %s (%s)\n", o->name,
                  o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS ? "RDMA" : "network");
      ++nics;
    }
  }
  if (nics == 0) std::puts("  NICs: none reported by hwloc");
  hwloc_topology_destroy(topo);
}

/// Under fabcoll-run or mpirun: the node map and the transport each rank uses to reach the
/// others (printed by rank 0).
int print_layout() {
  fc_context_t ctx = nullptr;
  if (fc_init(&ctx) != FC_SUCCESS) {
    std::fprintf(stderr, "fabcoll-info: fc_init failed: %s\n", fc_last_error_message());
    return 1;
  }
  const fabcoll::ContextInfo info = fabcoll::describe_context(ctx);
  if (info.rank == 0) {
    std::printf("# layout: %d rank(s), bootstrap: %s\n", info.size, info.bootstrap.c_str());
    for (int r = 0; r < info.size; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      std::printf("  rank %-4d node %-16s reached from rank 0 by %s\n", r,
                  ur < info.node_of.size() ? info.node_of[ur].c_str() : "-",
                  info.transport_of[ur].c_str());
    }
    std::printf("  ranks sharing a CPU: %s\n", info.mapping.empty()
                                                   ? "none (at most one rank per CPU in use)"
                                                   : info.mapping.c_str());
    // The model's placement: written data costs ω only where it crosses CPUs (Placement).
    if (const fabcoll::Placement* placed = fabcoll::world_comm(ctx).link().below.placement) {
      std::printf("  model places ranks on CPUs:");
      for (const int cpu : placed->cpus()) std::printf(" %d", cpu);
      std::printf(" (written data costs omega only between CPUs)\n");
    }
    std::printf("  shm single-copy (CMA): %s\n", info.shm_cma ? "on" : "off");
    std::printf("  cost model in force: %s\n", info.tuning.c_str());
  }
  fc_finalize(ctx);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fabcoll-info: the algorithms this build offers and how it chooses among them"};
  bool algorithms = false;
  bool markdown = false;
  std::vector<std::string> explain_args;
  int p = 4;
  bool noncommutative = false;
  app.add_flag("--algorithms", algorithms, "list every algorithm of the registry");
  app.add_flag("--markdown", markdown, "with --algorithms: print the table of docs/algorithms.md");
  app.add_option("--explain", explain_args,
                 "<collective> <bytes>: predicted time of every algorithm and the chosen one")
      ->expected(2);
  app.add_option("--p", p, "number of ranks for --explain")->check(CLI::Range(1, 1 << 20));
  app.add_flag("--noncommutative", noncommutative, "with --explain: a non-commutative operator");
  std::string tuning_file;
  std::string link_class;
  app.add_option("--tuning", tuning_file,
                 "with --explain: take the model from this tuning file (fabcoll-calibrate)");
  app.add_option("--link", link_class,
                 "with --tuning: link class whose model to use (default: the file's first)");
  std::string mapping;
  app.add_option("--mapping", mapping,
                 "with --tuning and more ranks than cores: the entry measured with this mapping "
                 "of ranks to CPUs (fabcoll-run --map-by; default: the layout's entry without a "
                 "mapping, else its first), and the model places the ranks so (cyclic, block)")
      ->check(CLI::IsMember({"cyclic", "block", "other", "unpinned"}));
  bool providers = false;
  bool topology = false;
  bool layout = false;
  app.add_flag("--providers", providers,
               "libfabric providers found, and why others are not usable");
  app.add_flag("--topology", topology, "the machine as hwloc sees it (cores, caches, NUMA, NICs)");
  app.add_flag("--layout", layout,
               "run under fabcoll-run or mpirun: node map and transport chosen per peer");
  app.footer("Without options: providers, topology and (when launched) the layout.");
  CLI11_PARSE(app, argc, argv);
  if (providers || topology || layout) {
    if (providers) print_providers();
    if (topology) print_topology();
    return layout ? print_layout() : 0;
  }
  if (algorithms) {
    print_algorithms(markdown);
    return 0;
  }
  if (!explain_args.empty()) {
    double bytes = 0;
    try {
      bytes = std::stod(explain_args[1]);
    } catch (const std::exception&) {
      std::fprintf(stderr, "fabcoll-info: '%s' is not a byte count\n", explain_args[1].c_str());
      return 2;
    }
    // p ranks on this node, as with a tuning file: more than its cores is the oversubscribed
    // built-in model.
    const bool oversubscribed =
        fabcoll::tuning::layout_key(p, static_cast<int>(std::thread::hardware_concurrency())) != 0;
    std::string cls = link_class.empty() ? std::string("shm") : link_class;
    // Inside a node, messages from the single-copy threshold up are read by their receiver
    // (as a context with CMA sets it: FABCOLL_SHM_CMA=0 turns CMA off).
    const double single_copy =
        cls.starts_with("ofi") ? 0.0 : fabcoll::shm::pull_bytes_from_environment();
    const double cores = std::max(1u, std::thread::hardware_concurrency());
    fabcoll::LinkModel model =
        fabcoll::builtin_link(cls, oversubscribed ? p / cores : 1.0, single_copy);
    std::string source = "built-in defaults (" + cls +
                         (oversubscribed && !cls.starts_with("ofi") ? ", oversubscribed" : "") +
                         ")";
    if (!tuning_file.empty()) {
      std::string notice;
      const auto f = fabcoll::tuning::load_tuning_from(tuning_file, notice);
      if (!notice.empty()) std::fprintf(stderr, "%s\n", notice.c_str());
      if (f && !f->links.empty()) {
        if (link_class.empty()) cls = f->links.front().link_class;
        // p ranks on this node: the entry measured in that layout (p ranks on fewer cores).
        model = fabcoll::tuning::link_model_for(*f, cls, p, mapping)
                    .value_or(fabcoll::LinkModel::uniform(
                        fabcoll::tuning::model_for(*f, cls, bytes, p, mapping)));
        const fabcoll::tuning::LinkParams* used = fabcoll::tuning::link_for(*f, cls, p, mapping);
        source = "tuning file " + tuning_file + ", link " + cls +
                 (used != nullptr
                      ? " measured " + fabcoll::tuning::layout_name(used->local_ranks,
                                                                    f->machine.cores, used->mapping)
                      : std::string());
        if (mapping.empty() && used != nullptr) mapping = used->mapping;
      }
    }
    if (!cls.starts_with("ofi")) model.set_single_copy(single_copy);  // as a context does
    // Which ranks share a CPU, as fabcoll-run --bind-to core --map-by places them from this
    // shell (on its allowed CPUs; the engine reads them from the node map): ω on the written
    // data that crosses CPUs only.
    const auto allowed = static_cast<int>(fabcoll::allowed_cpus().size());
    if (const fabcoll::Placement* placed = fabcoll::placement_for_mapping(
            mapping, p, allowed > 0 ? allowed : static_cast<int>(cores))) {
      model.below.placement = model.above.placement = placed;
      source += "; ω on written data crossing CPUs, ranks placed " + mapping;
    }
    return explain(explain_args[0], bytes, p, noncommutative, model, source);
  }
  std::printf("fabcoll %d.%d.%d\n", FABCOLL_VERSION_MAJOR, FABCOLL_VERSION_MINOR,
              FABCOLL_VERSION_PATCH);
  print_providers();
  print_topology();
  if (std::getenv("FABCOLL_STORE") != nullptr || std::getenv("PMIX_RANK") != nullptr)
    return print_layout();
  std::puts("# layout: not launched (run `fabcoll-run -n P fabcoll-info --layout` to see one)");
  return 0;
}
