// fabcoll-info: what this build offers and how it chooses.
//   fabcoll-info --algorithms [--markdown]   the algorithm registry, one row per algorithm
//   fabcoll-info --explain <collective> <bytes> [--p P] [--noncommutative]
//                                            predicted time of every algorithm, the chosen one
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "collectives/collectives.hpp"
#include "transports/sim/sim.hpp"

namespace {

using fabcoll::Algorithm;
using fabcoll::Collective;

std::string text(std::string_view s) { return std::string(s); }

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

int explain(const std::string& coll_name, double bytes, int p, bool noncommutative) {
  Collective coll = Collective::count_;
  for (int c = 0; c < static_cast<int>(Collective::count_); ++c)
    if (coll_name == fabcoll::collective_name(static_cast<Collective>(c)))
      coll = static_cast<Collective>(c);
  if (coll == Collective::count_) {
    std::fprintf(stderr, "fabcoll-info: unknown collective '%s'\n", coll_name.c_str());
    return 2;
  }
  fabcoll::sim::World world(p, fabcoll::CostModel{});
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
  std::printf("# %s of %.0f bytes on p = %d; model alpha = %.3g s, beta = %.3g s/B, gamma = %.3g s/B "
              "(built-in defaults)\n",
              coll_name.c_str(), bytes, p, m.alpha, m.beta, m.gamma);
  std::printf("%-24s %14s %10s  %s\n", "algorithm", "predicted(us)", "k", "note");
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
    std::printf("%-24s %14.3f %10zu  %s\n", text(a->name).c_str(),
                fabcoll::predicted_cost(comm, *a, args) * 1e6,
                fabcoll::packet_count(comm, *a, args), note.c_str());
  }
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
  CLI11_PARSE(app, argc, argv);
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
    return explain(explain_args[0], bytes, p, noncommutative);
  }
  std::fputs(app.help().c_str(), stdout);
  return 0;
}
