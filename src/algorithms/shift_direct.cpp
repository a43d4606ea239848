// Circular q-shift, direct. Grama et al. ch. 4 (003_…, "Cirkulär skiftning": processor i sends
// to processor (i + q) mod p), Table 4.1 row "Circular shift":
//   T(m, p) = t_s + t_w m = α + βm                 m = bytes per rank
// Preconditions: none (any p, any q; q mod p = 0 is a local copy). One message per rank: every
// send port and every receive port carries exactly one message.
//
//   q = 2, p = 5:  0→2  1→3  2→4  3→0  4→1
//   out at rank i = in at rank i - q
//   not a public collective (no registry entry): a building block, tested on the sim directly
#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

Task<> shift_direct(Channel& ch, ConstBytes in, MutableBytes out, int q) {
  const Ring ring{ch.size()};
  const int i = ch.rank();
  if (ring.mod(q) == 0) {
    ch.copy(out, in);
    co_return;
  }
  Transfer t_out = ch.send(ring.mod(i + q), in);
  Transfer t_in = ch.recv(ring.mod(i - q), out);
  co_await t_out;
  co_await t_in;
}

}  // namespace fabcoll::algorithms
