// The collectives layer: one entry per collective. Validate the call, pick an algorithm
// (override or the least predicted cost under the model), and run it as a Task on a fresh
// Channel. Works on any transport: the sim world awaits these tasks in virtual time, the
// CollRequest below drives them in real time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "engine/communicator.hpp"
#include "engine/progress.hpp"
#include "engine/task.hpp"

namespace fabcoll {

/// Re-reads the FABCOLL_<COLLECTIVE>_ALGORITHM / _PACKET variables. They are read when a
/// context or communicator is made (and on first use), not on every call: a program that
/// changes them later calls this (fabcoll-calibrate does, between forced algorithms).
void refresh_overrides();

/// The algorithm the selector picks for args on comm (throws Error on a bad override).
const Algorithm& select_algorithm(const Comm& comm, const CollArgs& args);
/// How alg would run args on comm: its packet count (1 for non-pipelined algorithms) and the
/// segment of the communicator's link (Comm::link) that its messages fall in, whose α and β it
/// is costed and run with. Without a protocol break: the model everywhere and the optimal k.
/// With one: tuning::segment_k (a pipelined algorithm's packets costed with the segment that
/// holds their size; whole messages with the segment that holds the algorithm's mean message).
/// A forced packet count (args.packets, FABCOLL_<COLLECTIVE>_PACKET) is kept, and its packets'
/// size picks the segment.
struct SegmentChoice {
  std::size_t packets = 1;
  bool above = false;  // the link's upper segment (messages of break_bytes and more)
  // The model it is costed and run with: the segment's, or for a whole-message algorithm
  // whose messages lie on both sides of the break, α and β mixed (tuning::mixed_segments).
  CostModel m;
  double alpha_share = -1;  // mixed: the share of its latencies above the break (else -1)
};
SegmentChoice choose_segment(const Comm& comm, const Algorithm& alg, const CollArgs& args);
/// Predicted seconds of alg for args on comm (with the packet count and segment it would use).
double predicted_cost(const Comm& comm, const Algorithm& alg, const CollArgs& args);
/// Packet count alg uses for args (1 for non-pipelined algorithms).
std::size_t packet_count(const Comm& comm, const Algorithm& alg, const CollArgs& args);

/// Runs one collective to completion as a coroutine. alg == nullptr: selected. args must be
/// validated (see validate()); the task copies args into its frame.
Task<> run_collective(Comm& comm, CollArgs args, const Algorithm* alg = nullptr);

/// Checks the arguments of a collective on this rank and normalises in-place forms (copies
/// the input into recvbuf where the algorithm contract wants it). Throws Error.
void validate(const Comm& comm, CollArgs& args);

/// Splits comm like MPI_Comm_split; nullptr for color == FC_UNDEFINED. Collective.
Task<std::unique_ptr<Comm>> comm_split(Comm& comm, int color, int key);

/// A running collective driven by the rank's Progress (real-time transports).
class CollRequest {
 public:
  CollRequest(Comm& comm, Progress& progress, Task<> task);
  CollRequest(const CollRequest&) = delete;
  CollRequest& operator=(const CollRequest&) = delete;
  ~CollRequest() = default;
  /// One progress pass; true when finished (rethrows the collective's error).
  bool test();
  /// Drives progress until finished or the deadline passes (Errc::timeout naming the peers
  /// still awaited). The communicator turns broken on any error.
  void wait(double timeout_seconds);

 private:
  void finish();
  Comm* comm_;
  Progress* progress_;
  Task<> task_;
};

/// run_blocking(run_collective(comm, args)) with one coroutine frame less (the blocking
/// calls of the C API). args must be validated; it is changed (the packet count, the input's
/// place).
void run_collective_blocking(Comm& comm, Progress& progress, CollArgs& args);

/// Blocking helper: start, then wait with FABCOLL_TIMEOUT.
void run_blocking(Comm& comm, Progress& progress, Task<> task);

}  // namespace fabcoll
