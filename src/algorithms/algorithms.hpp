// Declarations of the algorithm registry entries and of the algorithm coroutines that other
// algorithms compose (e.g. all-reduce Version 1 = reduce + broadcast). One section per family;
// each family's files are owned by one person at a time.
#pragma once

#include "algorithms/registry.hpp"
#include "tuning/lawn29.hpp"

namespace fabcoll::algorithms {

/// The packet count in [k0/2, 2k0 + 2] (at most 4096 of them around k0, none above q.n) at
/// which cost_k(q, k) is least, the first of equals: a formula's optimum k0 is not an integer,
/// ⌈n/k⌉ makes nearby counts differ slightly, and a max() in the cost can move the optimum.
double best_k_near(const CostQuery& q, double k0, double (*cost_k)(const CostQuery&, double));

// ---- broadcast and reduce (registry_bcast_reduce.cpp) ----------------------------------------
extern const Algorithm kBcastBinomial;
Task<> bcast_binomial(Channel& ch, MutableBytes buf, int root);
extern const Algorithm kReduceBinomial;
extern const Algorithm kReduceNaive;
/// Binomial-tree reduce of `in` (every rank, never modified) into `out` (valid at root only;
/// may alias `in` there). Keeps rank order for non-commutative operators.
Task<> reduce_binomial(Channel& ch, ConstBytes in, MutableBytes out, const ReduceOp& op, int root);
/// A reduce's last step for a non-commutative ⊗ with root ≠ 0: `from` (which folded in rank
/// order) sends `result` to `root`, which receives it into `out` (step 1); others do nothing.
Task<> forward_reduced(Channel& ch, int from, int root, ConstBytes result, MutableBytes out);
/// A reduce's output: recvbuf's bytes, empty where recvbuf is null (ranks other than the root).
MutableBytes reduce_out(const CollArgs& a);
extern const Algorithm kBcastPipelinedBinaryTree;
extern const Algorithm kBcastLinearPipeline;
/// Pipelined broadcasts of `buf` cut into k packets of whole elements (elem_size bytes each).
Task<> bcast_pipelined_binary_tree(Channel& ch, MutableBytes buf, std::size_t elem_size,
                                   std::size_t k, int root);
Task<> bcast_linear_pipeline(Channel& ch, MutableBytes buf, std::size_t elem_size, std::size_t k,
                             int root);
/// d(p), p ≥ 3: the steps of the pipelined reduce's fill, 2L − 3 for p < 1.5·2^L, else 2L − 2
/// (L = ⌊log p⌋): what the pipelined binary-tree broadcast, its mirror, took beyond 2 per
/// packet while it sent to its left child first (until the thirtieth session).
double pipelined_tree_fill(int p);
/// d(p), p ≥ 3: the steps of the pipelined binary-tree broadcast's exact time beyond 2 per
/// packet, (2k + d)(α + βs), each node sending to its heavier child first (the top of
/// bcast_pipelined_binary_tree.cpp).
double pipelined_bcast_fill(int p);
extern const Algorithm kReducePipelinedBinaryTree;
/// Pipelined in-order binary-tree reduce (k packets of whole elements of elem_size bytes, the
/// unit a buffer may be split at: CollArgs::elem_size, not op.elem_size()); `out` valid at root
/// only and may alias `in` there. Keeps rank order for non-commutative operators.
Task<> reduce_pipelined_binary_tree(Channel& ch, ConstBytes in, MutableBytes out,
                                    const ReduceOp& op, std::size_t elem_size, std::size_t k,
                                    int root);
extern const Algorithm kBcastScatterAllgather;
Task<> bcast_scatter_allgather(Channel& ch, MutableBytes buf, std::size_t elem_size, int root);
extern const Algorithm kReduceRabenseifner;
Task<> reduce_rabenseifner(Channel& ch, ConstBytes in, MutableBytes out, const ReduceOp& op,
                           std::size_t elem_size, int root);
extern const Algorithm kReduceHybrid;
/// halvings: how many of the d steps halve (-1: Theorem 1's d − k under the model).
Task<> reduce_hybrid(Channel& ch, ConstBytes in, MutableBytes out, const ReduceOp& op,
                     std::size_t elem_size, int root, int halvings = -1);
extern const Algorithm kBcastNaive;
/// Sanders et al. §13.1's naive broadcast: the root sends buf to every other rank itself.
Task<> bcast_naive(Channel& ch, MutableBytes buf, int root);
extern const Algorithm kBcastTwoTree;
Task<> bcast_two_tree(Channel& ch, MutableBytes buf, std::size_t elem_size, std::size_t k,
                      int root);

// ---- all-reduce, scan, exscan (registry_allreduce_scan.cpp) ----------------------------------
extern const Algorithm kAllreduceRecursiveDoubling;
Task<> allreduce_recursive_doubling(Channel& ch, MutableBytes buf, std::size_t elem_size,
                                    const ReduceOp& op, ConstBytes input);
extern const Algorithm kAllreduceRabenseifner;
extern const Algorithm kAllreduceHybrid;
/// LAWN 29 Fig. 4 with a given strategy S (bit j = S_j, tuning/lawn29.hpp); fold_halves picks
/// the non-power-of-two fold. Buffers split on elem_size boundaries. input: this rank's data
/// when it is not already in buf (empty or buf itself: in place); it is read, never written,
/// and the first exchange combines from it straight into buf (no copy into buf first).
Task<> allreduce_hybrid_strategy(Channel& ch, MutableBytes buf, std::size_t elem_size,
                                 const ReduceOp& op, std::uint32_t strategy, bool fold_halves,
                                 ConstBytes input = {});
/// strategy: the strategy vector to run (-1: Theorem 1's under the model).
Task<> allreduce_hybrid(Channel& ch, MutableBytes buf, std::size_t elem_size, const ReduceOp& op,
                        ConstBytes input = {}, long strategy = -1);
Task<> allreduce_rabenseifner(Channel& ch, MutableBytes buf, std::size_t elem_size,
                              const ReduceOp& op, ConstBytes input = {});
// Written shares (Algorithm::written_share) that several algorithms have in common.
/// The binomial broadcast's: the critical path is ⌈log p⌉ steps; the root's own sends move
/// its input, every other step what its sender received. The longest path leaves the root by
/// the i-th of its sends whose subtree then needs ⌈log p⌉ − i more steps; the share is the most
/// such steps, over ⌈log p⌉ (sim: exact).
double binomial_written(const CostQuery& q);
/// The binomial reduce's: of its d = ⌈log p⌉ steps into the root only the first moves input
/// (every later sender has combined), (d − 1)/d, except when the root's largest subtree is a
/// single rank (p = 2^(d−1) + 1): that rank's input then arrives in the last step, on the
/// root's one port after the combined data, (d − 2)/d (sim: exact; not the broadcast's
/// mirror image: at p = 6 the broadcast's longest written path is 1 of 3 steps, the reduce's 2).
double binomial_reduce_written_share(int p);
double binomial_reduce_written(const CostQuery& q);
/// The strategy the hybrids (LAWN 29 Version 4, all-reduce and reduce: `gathers`) run:
/// Theorem 1's under the model they are costed and run with (α and β raised by the written and
/// exchange shares of that very strategy, Algorithm::costed): a fixed point, taken after three
/// rounds from the strategy under q.m. The fold is whole; `returns`: the result goes back to
/// the surplus rank. alg: the hybrid itself, whose written data crossing CPUs under a
/// placement (q.m.placement, Placement::written_across) depends on the strategy.
tuning::Strategy hybrid_run_strategy(const Algorithm& alg, const CostQuery& q, bool returns,
                                     bool gathers);
/// tuning::hybrid_written_share and hybrid_exchange_share of that strategy.
double hybrid_strategy_written_share(const Algorithm& alg, const CostQuery& q, bool returns,
                                     bool gathers);
double hybrid_strategy_exchange_share(const Algorithm& alg, const CostQuery& q, bool returns,
                                      bool gathers);
/// tuning::hybrid_mean_message of that strategy (Algorithm::message_bytes): the messages it
/// sends, which decide whether ω applies (CostModel::written_from), where Corollary 4's
/// derivatives under the raw model would count the strategy Theorem 1 picks without ω and χ.
double hybrid_strategy_message_bytes(const Algorithm& alg, const CostQuery& q, bool returns,
                                     bool gathers);
/// Every step an exchange (rings, pairwise and index all-to-alls, dissemination): 1 for p > 1.
inline double exchange_all(const CostQuery& q) { return q.p < 2 ? 0.0 : 1.0; }
/// This rank's own block of `bytes` in the caller's send buffer (all-gather, all-gatherv:
/// CollArgs), empty where there is none: what their first send of it reads, so that a peer's
/// single-copy read finds lines this rank did not just write.
inline ConstBytes own_block_of(const CollArgs& a, std::size_t bytes) {
  return bytes_of(a.sendbuf, a.sendbuf == nullptr ? 0 : bytes);
}
/// A ring's p − 1 steps (all-gather, reduce-scatter): only the first moves input, (p − 2)/(p − 1).
inline double ring_written_share(const CostQuery& q) {
  return q.p < 3 ? 0.0 : (q.p - 2.0) / (q.p - 1.0);
}
/// Every byte it sends was first copied (packed, rotated) or combined by its sender: 1.
inline double written_all(const CostQuery& q) { return q.p < 2 ? 0.0 : 1.0; }
extern const Algorithm kScanHypercube;
extern const Algorithm kExscanHypercube;
/// Sanders et al. §13.3 hypercube prefix: inclusive (scan) or exclusive (exscan) in place.
Task<> prefix_hypercube(Channel& ch, MutableBytes buf, const ReduceOp& op, bool exclusive);
extern const Algorithm kAllreduceRing;
/// input: as allreduce_hybrid_strategy's (empty or buf: in place; else read, never written).
Task<> allreduce_ring(Channel& ch, MutableBytes buf, std::size_t elem_size, const ReduceOp& op,
                      ConstBytes input = {});
extern const Algorithm kAllreduceReduceBcast;
Task<> allreduce_reduce_bcast(Channel& ch, MutableBytes buf, const ReduceOp& op,
                              ConstBytes input = {});
extern const Algorithm kScanInorderTree;
extern const Algorithm kExscanInorderTree;
/// Sanders et al. Fig. 13.8 pipelined in-order tree prefix (k packets), inclusive or exclusive.
Task<> prefix_inorder_tree(Channel& ch, MutableBytes buf, std::size_t elem_size, const ReduceOp& op,
                           std::size_t k, bool exclusive);
double prefix_inorder_tree_cost(const CostQuery& q);
double prefix_inorder_tree_optimal_k(const CostQuery& q);
extern const Algorithm kAllreduceTwoTree;
/// Two-tree all-reduce (H9): pipelined reduce up the two trees (k packets), then bcast_two_tree.
Task<> allreduce_two_tree(Channel& ch, MutableBytes buf, std::size_t elem_size, const ReduceOp& op,
                          std::size_t k);

// ---- barrier, gather, scatter, all-gather(v) (registry_gather_barrier.cpp) -------------------
extern const Algorithm kBarrierDissemination;
extern const Algorithm kBarrierButterfly;
extern const Algorithm kBarrierBinomial;
extern const Algorithm kBarrierTournament;
extern const Algorithm kBarrierLinear;
Task<> barrier_dissemination(Channel& ch);
Task<> barrier_butterfly(Channel& ch);
Task<> barrier_binomial(Channel& ch);
Task<> barrier_tournament(Channel& ch);
Task<> barrier_linear(Channel& ch);
extern const Algorithm kGatherBinomial;
extern const Algorithm kGatherLinear;
extern const Algorithm kScatterBinomial;
extern const Algorithm kScatterLinear;
/// Gather of equal blocks: `block` (every rank) into `all` (root only: p blocks in rank order;
/// `block` may be the root's own block inside `all`).
Task<> gather_binomial(Channel& ch, ConstBytes block, MutableBytes all, int root);
Task<> gather_linear(Channel& ch, ConstBytes block, MutableBytes all, int root);
/// Scatter of equal blocks: `all` (root only: p blocks in rank order) into `block` (every rank;
/// may be the root's own block inside `all`).
Task<> scatter_binomial(Channel& ch, ConstBytes all, MutableBytes block, int root);
Task<> scatter_linear(Channel& ch, ConstBytes all, MutableBytes block, int root);
extern const Algorithm kAllgatherRing;
extern const Algorithm kAllgatherRecursiveDoubling;
extern const Algorithm kAllgatherBruck;
/// All-gather of equal blocks of n bytes: `all` holds p blocks in rank order, this rank's own
/// block already in place on entry, every block on exit.
/// own: this rank's block where the caller has it apart from `all` (the user's send buffer),
/// else empty. The first send of the own block reads it there: a peer reading our block
/// single-copy (CMA) then reads lines we have not just written (measured: a 64 KiB read of
/// freshly written lines took 36 us, of the untouched send buffer 6 us). The same for all four
/// all-gathers (Bruck's and the 2-D mesh's since the thirty-fourth session).
Task<> allgather_ring(Channel& ch, MutableBytes all, std::size_t n, ConstBytes own = {});
Task<> allgather_recursive_doubling(Channel& ch, MutableBytes all, std::size_t n,
                                    ConstBytes own = {});
Task<> allgather_bruck(Channel& ch, MutableBytes all, std::size_t n, ConstBytes own = {});
extern const Algorithm kAllgatherMesh2d;
Task<> allgather_mesh2d(Channel& ch, MutableBytes all, std::size_t n, ConstBytes own = {});
extern const Algorithm kAllgathervRing;
extern const Algorithm kAllgathervBruck;
/// All-gatherv: block b is counts[b] elements of elem_size bytes at element offset displs[b] of
/// `buf` (which starts at recvbuf); this rank's own block already in place on entry. own: as
/// the all-gathers' (the caller's send buffer, the first send of the own block reads it there).
Task<> allgatherv_ring(Channel& ch, MutableBytes buf, const std::size_t* counts,
                       const std::size_t* displs, std::size_t elem_size, ConstBytes own = {});
Task<> allgatherv_bruck(Channel& ch, MutableBytes buf, const std::size_t* counts,
                        const std::size_t* displs, std::size_t elem_size, ConstBytes own = {});
/// The bytes an all-gatherv's recvbuf spans: max over blocks of (displs + counts) elements.
std::size_t allgatherv_extent(int p, const std::size_t* counts, const std::size_t* displs,
                              std::size_t elem_size);

// ---- all-to-all(v), reduce-scatter, circular shift (registry_alltoall.cpp) -------------------
// Uniform all-to-all: send holds p blocks of `block` bytes (block j for rank j), recv gets p
// blocks (block j from rank j); send and recv are distinct.
extern const Algorithm kAlltoallOneFactor;
extern const Algorithm kAlltoallPairwiseXor;
extern const Algorithm kAlltoallCircular;
extern const Algorithm kAlltoallHypercube;
extern const Algorithm kAlltoallBruck;
Task<> alltoall_one_factor(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block);
Task<> alltoall_pairwise_xor(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block);
Task<> alltoall_circular(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block);
Task<> alltoall_hypercube(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block);
Task<> alltoall_bruck(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block);
extern const Algorithm kAlltoallPostAll;
Task<> alltoall_post_all(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block);
extern const Algorithm kAlltoallGrid;
Task<> alltoall_grid(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block);
extern const Algorithm kAlltoallGridNd;
/// Grid all-to-all on k_1 × … × k_d = p (dims[0] varies fastest in the rank; empty for p = 1).
Task<> alltoall_grid_nd(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block,
                        std::vector<int> dims);
/// The sides (non-increasing) of the grid minimising Σ (k_i-1)(α + βnp/k_i) for n-byte blocks.
std::vector<int> alltoall_grid_nd_dims(int p, double n, const CostModel& m);
/// Σ (k_i-1)(α + βnp/k_i) for the given sides.
double alltoall_grid_nd_cost(std::span<const int> dims, int p, double n, const CostModel& m);
// alltoallv: counts and displacements in elements of elem_size bytes (MPI's layout).
extern const Algorithm kAlltoallvDirect;
Task<> alltoallv_direct(Channel& ch, const void* sendbuf, void* recvbuf, std::size_t elem_size,
                        const std::size_t* scounts, const std::size_t* sdispls,
                        const std::size_t* rcounts, const std::size_t* rdispls);
extern const Algorithm kAlltoallvTwoPhase;
Task<> alltoallv_two_phase(Channel& ch, const void* sendbuf, void* recvbuf, std::size_t elem_size,
                           const std::size_t* scounts, const std::size_t* sdispls,
                           const std::size_t* rcounts, const std::size_t* rdispls);
// Reduce-scatter (block): send holds p blocks of `block` bytes and is never written; recv gets
// this rank's block summed over all ranks in rank order. recv may alias block 0 of send.
extern const Algorithm kReduceScatterRecursiveHalving;
extern const Algorithm kReduceScatterPairwise;
extern const Algorithm kReduceScatterRing;
extern const Algorithm kReduceScatterRecursiveDoubling;
Task<> reduce_scatter_recursive_halving(Channel& ch, ConstBytes send, MutableBytes recv,
                                        std::size_t block, const ReduceOp& op);
Task<> reduce_scatter_pairwise(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block,
                               const ReduceOp& op);
Task<> reduce_scatter_ring(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block,
                           const ReduceOp& op);
Task<> reduce_scatter_recursive_doubling(Channel& ch, ConstBytes send, MutableBytes recv,
                                         std::size_t block, const ReduceOp& op);
// Circular q-shift (not a public collective, no registry entry): out at rank i = in at rank
// i - q (mod p); in and out are distinct, of equal size on every rank.
Task<> shift_direct(Channel& ch, ConstBytes in, MutableBytes out, int q);
Task<> shift_hypercube(Channel& ch, ConstBytes in, MutableBytes out, int q);

}  // namespace fabcoll::algorithms
