// The α-β-γ cost model of the reference texts (LAWN 29 §2, Sanders et al. §13): a message of
// n bytes costs α + βn, combining n bytes costs γn. Times in seconds, β and γ per byte.
//
// One refinement the texts do not make: `overhead` is the sender's own time per message (LogP's
// o), apart from the latency α that a receiver sees. The texts take a send to occupy the sender
// for the whole α, so that is the default (overhead < 0: o = α) and every formula reads as in
// the text. Only algorithms whose cost turns on it (a root posting p − 1 sends at once: the
// naive broadcast) use it. Calibration measures it (a burst of small sends, per send).
#pragma once

#include <string_view>

namespace fabcoll {

struct CostModel {
  double alpha = 5e-6;    // start-up latency (s)
  double beta = 2.5e-10;  // time per byte (s/B)
  double gamma = 1e-10;   // time per byte combined (s/B)
  double overhead = -1;   // sender's time per message (s); < 0: not measured, o = α
  /// Messages of at least this many bytes are moved by their receiver (shm's single-copy CMA
  /// read from the sender's buffer), so a sender of several at once pays only o for each and
  /// the receivers copy at the same time. 0: the texts' model, the sender moves every byte.
  double pull_bytes = 0;

  [[nodiscard]] double send_overhead() const { return overhead >= 0 ? overhead : alpha; }
};

/// The built-in defaults per link class ("shm", or "ofi/<provider>" for the fabric), used
/// without a tuning file; measured once on the development machine (calibrate to replace).
/// shm: a small send costs its sender about 0.1 us (a ring write), a tenth of α; on the fabric
/// the sender's share is not known until calibrated (o = α, the texts' model).
/// oversubscribed (more ranks on the node than cores): shm α = 3 us, o = 0.2 us. Each message
/// hop then waits for the receiver to be scheduled: the dissemination barrier took 6.2 us for
/// its 2 rounds at p = 4 on 2 cores, and calibrate measured α = 2.6 us, o = 0.2 us there.
inline CostModel builtin_model(std::string_view link_class, bool oversubscribed = false) {
  if (link_class.starts_with("ofi")) return CostModel{10e-6, 4e-10, 1e-10};
  if (oversubscribed) return CostModel{3e-6, 1.5e-10, 1e-10, 2e-7};
  return CostModel{1e-6, 1.5e-10, 1e-10, 1e-7};
}

}  // namespace fabcoll
