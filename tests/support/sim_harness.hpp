// Runs one algorithm on the sim transport with pattern inputs and checks every rank's output
// against a serial reference. Shared by all algorithm tests.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "collectives/collectives.hpp"
#include "collectives/sim_cost.hpp"
#include "support/reference.hpp"
#include "transports/sim/sim.hpp"

namespace fabcoll::testing {

struct Case {
  const Algorithm* alg = nullptr;
  int p = 1;
  std::size_t count = 1;  // elements (per block for gather-like collectives)
  fc_datatype_t dt = FC_INT32;
  fc_op_t op = FC_SUM;
  int root = 0;
  std::size_t packets = 0;
  CostModel model{};
  bool separate_input = false;   // all-reduce: the input in its own sendbuf, recvbuf poisoned
  std::size_t clear_fan_in = 0;  // sim::World::set_clear_fan_in (0: fan-ins not cleared)
};

inline std::string describe(const Case& c) {
  std::ostringstream os;
  os << collective_name(c.alg->coll) << "/" << c.alg->name << " p=" << c.p << " count=" << c.count
     << " dt=" << datatype_name(c.dt) << " op=" << op_name(c.op) << " root=" << c.root
     << " k=" << c.packets;
  return os.str();
}

/// Per-rank counts for the v-variants: uneven, with zeros, deterministic.
inline std::vector<std::size_t> uneven_counts(int p, std::size_t base, std::uint32_t salt) {
  std::vector<std::size_t> v(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i)
    v[static_cast<std::size_t>(i)] =
        ((static_cast<std::uint32_t>(i) * 2654435761u + salt) % 5u == 0)
            ? 0
            : (base + static_cast<std::size_t>(i) % 3);
  return v;
}

/// Runs the case; returns failure text, or "" when every rank's output matches.
inline ::testing::AssertionResult check_case(const Case& c) {
  const int p = c.p;
  const auto np = static_cast<std::size_t>(p);
  const ReduceOp op = (c.op == FC_OP_NULL) ? ReduceOp() : ReduceOp(c.op, c.dt);
  const std::size_t es = datatype_size(c.dt);
  const std::size_t n = c.count * es;
  const Collective coll = c.alg->coll;
  // Inputs: block-sized per rank (p blocks for alltoall / reduce_scatter_block).
  const bool p_blocks = coll == Collective::alltoall || coll == Collective::reduce_scatter_block ||
                        coll == Collective::scatter || coll == Collective::alltoallv;
  std::vector<std::vector<std::byte>> in(np), out(np);
  std::vector<std::size_t> vcounts, vdispls;
  std::vector<std::vector<std::size_t>> scounts(np), sdispls(np), rcounts(np), rdispls(np);
  if (coll == Collective::allgatherv) {
    vcounts = uneven_counts(p, c.count, 17);
    vdispls.resize(np);
    std::size_t off = 0;
    for (std::size_t i = 0; i < np; ++i) {
      vdispls[i] = off;
      off += vcounts[i] + 1;  // a gap between blocks, which must stay untouched
    }
  }
  // alltoallv: rank i sends cnt(i, j) elements to j.
  auto cnt = [&](int i, int j) -> std::size_t {
    return ((static_cast<std::uint32_t>(i * 31 + j * 17)) % 4u == 0)
               ? 0
               : c.count + static_cast<std::size_t>((i + j) % 3);
  };
  for (int r = 0; r < p; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    std::size_t in_elems = p_blocks ? c.count * np : c.count;
    if (coll == Collective::allgatherv) in_elems = vcounts[ur];
    if (coll == Collective::alltoallv) {
      in_elems = 0;
      for (int j = 0; j < p; ++j) {
        scounts[ur].push_back(cnt(r, j));
        sdispls[ur].push_back(in_elems);
        in_elems += cnt(r, j);
      }
      std::size_t roff = 0;
      for (int j = 0; j < p; ++j) {
        rcounts[ur].push_back(cnt(j, r));
        rdispls[ur].push_back(roff);
        roff += cnt(j, r);
      }
    }
    in[ur].resize(in_elems * es);
    if (c.op >= kUserOpBase) {
      fill_matrices(reinterpret_cast<std::uint32_t*>(in[ur].data()), in_elems, r);
    } else {
      fill_pattern(in[ur].data(), in_elems, c.dt, r, static_cast<std::uint32_t>(c.count));
    }
  }
  // Expected outputs and output buffer sizes.
  std::vector<std::vector<std::byte>> expect(np);
  const std::byte kPoison{0xA5};
  for (int r = 0; r < p; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    switch (coll) {
      case Collective::bcast:
        expect[ur] = in[static_cast<std::size_t>(c.root)];
        out[ur] = r == c.root ? in[ur] : std::vector<std::byte>(n, kPoison);
        break;
      case Collective::reduce:
        out[ur].assign(n, kPoison);
        expect[ur] = r == c.root ? serial_reduce(in, 0, np, op, c.count) : out[ur];
        break;
      case Collective::allreduce:
        if (c.separate_input) {
          out[ur].assign(in[ur].size(), kPoison);
        } else {
          out[ur] = in[ur];
        }
        expect[ur] = serial_reduce(in, 0, np, op, c.count);
        break;
      case Collective::scan:
        out[ur] = in[ur];
        expect[ur] = serial_reduce(in, 0, ur + 1, op, c.count);
        break;
      case Collective::exscan:
        out[ur] = in[ur];
        expect[ur] = r == 0 ? in[0] : serial_reduce(in, 0, ur, op, c.count);
        break;
      case Collective::reduce_scatter_block: {
        std::vector<std::vector<std::byte>> blocks(np);
        for (std::size_t j = 0; j < np; ++j)
          blocks[j].assign(in[j].begin() + static_cast<std::ptrdiff_t>(ur * n),
                           in[j].begin() + static_cast<std::ptrdiff_t>((ur + 1) * n));
        expect[ur] = serial_reduce(blocks, 0, np, op, c.count);
        out[ur].assign(n, kPoison);
        break;
      }
      case Collective::gather:
        out[ur].assign(r == c.root ? n * np : 0, kPoison);
        if (r == c.root)
          for (std::size_t j = 0; j < np; ++j)
            expect[ur].insert(expect[ur].end(), in[j].begin(), in[j].end());
        break;
      case Collective::scatter: {
        const auto& src = in[static_cast<std::size_t>(c.root)];
        expect[ur].assign(src.begin() + static_cast<std::ptrdiff_t>(ur * n),
                          src.begin() + static_cast<std::ptrdiff_t>((ur + 1) * n));
        out[ur].assign(n, kPoison);
        break;
      }
      case Collective::allgather:
        out[ur].assign(n * np, kPoison);
        std::memcpy(out[ur].data() + ur * n, in[ur].data(), n);  // contract: own block in place
        for (std::size_t j = 0; j < np; ++j)
          expect[ur].insert(expect[ur].end(), in[j].begin(), in[j].end());
        break;
      case Collective::allgatherv: {
        const std::size_t extent = vdispls.empty() ? 0 : (vdispls.back() + vcounts.back() + 1) * es;
        out[ur].assign(extent, kPoison);
        if (!in[ur].empty())
          std::memcpy(out[ur].data() + vdispls[ur] * es, in[ur].data(), in[ur].size());
        expect[ur].assign(extent, kPoison);
        for (std::size_t j = 0; j < np; ++j)
          if (!in[j].empty())
            std::memcpy(expect[ur].data() + vdispls[j] * es, in[j].data(), in[j].size());
        break;
      }
      case Collective::alltoall:
        out[ur].assign(n * np, kPoison);
        for (std::size_t j = 0; j < np; ++j)
          expect[ur].insert(expect[ur].end(), in[j].begin() + static_cast<std::ptrdiff_t>(ur * n),
                            in[j].begin() + static_cast<std::ptrdiff_t>((ur + 1) * n));
        break;
      case Collective::alltoallv: {
        for (std::size_t j = 0; j < np; ++j) {
          const std::size_t off = sdispls[j][ur] * es;
          const std::size_t len = scounts[j][ur] * es;
          expect[ur].insert(expect[ur].end(), in[j].begin() + static_cast<std::ptrdiff_t>(off),
                            in[j].begin() + static_cast<std::ptrdiff_t>(off + len));
        }
        out[ur].assign(expect[ur].size(), kPoison);
        break;
      }
      case Collective::barrier:
      case Collective::count_:
        break;
    }
  }
  const std::vector<std::vector<std::byte>> in_before = c.separate_input ? in : decltype(in){};
  sim::World world(p, c.model);
  world.set_clear_fan_in(c.clear_fan_in);
  std::vector<CollArgs> args(np);
  try {
    world.run([&](Comm& comm) {
      const auto ur = static_cast<std::size_t>(comm.rank());
      CollArgs& a = args[ur];
      a.coll = coll;
      a.count = c.count;
      a.elem_size = es;
      a.op = op;
      a.root = c.root;
      a.packets = c.packets;
      if (c.op >= kUserOpBase) {
        // The test's user operator multiplies 2x2 matrices of uint32 quadruples: one element
        // is a whole matrix, so that algorithms that split buffers on element boundaries
        // (args.elem_size) never cut a matrix in two.
        a.count = c.count / 4;
        a.elem_size = es * 4;
      }
      a.recvbuf = out[ur].empty() ? nullptr : out[ur].data();
      a.sendbuf = in[ur].empty() ? nullptr : in[ur].data();
      if (coll == Collective::allreduce || coll == Collective::scan || coll == Collective::exscan ||
          coll == Collective::bcast)
        a.sendbuf = a.recvbuf;
      if (coll == Collective::allgather) a.sendbuf = out[ur].data() + ur * n;
      if (coll == Collective::allgatherv) {
        a.counts = vcounts.data();
        a.displs = vdispls.data();
        a.count = vcounts[ur];
        a.sendbuf = out[ur].data() + vdispls[ur] * es;
      }
      if (coll == Collective::alltoallv) {
        a.scounts = scounts[ur].data();
        a.sdispls = sdispls[ur].data();
        a.counts = rcounts[ur].data();
        a.displs = rdispls[ur].data();
      }
      if (coll == Collective::allreduce && c.separate_input)
        a.sendbuf = in[ur].empty() ? nullptr : in[ur].data();
      return run_collective(comm, a, c.alg);
    });
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << describe(c) << ": threw " << e.what();
  }
  if (c.separate_input) {  // the input is read, never written
    for (std::size_t r = 0; r < np; ++r)
      if (in[r] != in_before[r])
        return ::testing::AssertionFailure()
               << describe(c) << ": rank " << r << " sendbuf was modified";
  }
  for (std::size_t r = 0; r < np; ++r) {
    if (coll == Collective::reduce && static_cast<int>(r) != c.root) continue;
    if (out[r] != expect[r]) {
      std::size_t first = 0;
      while (first < out[r].size() && first < expect[r].size() && out[r][first] == expect[r][first])
        ++first;
      return ::testing::AssertionFailure() << describe(c) << ": rank " << r
                                           << " output differs from the serial reference at byte "
                                           << first << " (of " << expect[r].size() << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

/// Modelled time, message and round counts of one phantom or real run (sum / double): the
/// library's run_for_cost (collectives/sim_cost.hpp), which Placement uses too.
using fabcoll::run_for_cost;

}  // namespace fabcoll::testing
