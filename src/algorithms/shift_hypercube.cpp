// Circular q-shift as a product of power-of-two shifts. Grama et al. ch. 4 (003_…, "Cirkulär
// skiftning på hyperkub": q is read in binary and a 2^b-shift is made for every 1 bit, e.g.
// q = 5 = 101b is a 4-shift followed by a 1-shift; on a hypercube with the ring in reflected
// Gray code order a 2^b-shift takes at most two hops, bound (t_s + t_w m)(2 log p - 1)):
//   here, with direct links: T(m, p, q) = popcount(q mod p)(α + βm)      m = bytes per rank
// Preconditions: none (any p, any q). It is the shift for networks where only power-of-two
// distances are cheap; with a fully connected network shift_direct does it in one message.
//
//   q = 5, p = 8:  step 1: i → i+4     step 2: i → i+1
//   after the steps for bits b of q the data has moved Σ 2^b = q ranks
//   not a public collective (no registry entry): tested on the sim directly
#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

Task<> shift_hypercube(Channel& ch, ConstBytes in, MutableBytes out, int q) {
  const Ring ring{ch.size()};
  const int i = ch.rank();
  const int shift = ring.mod(q);
  ch.copy(out, in);
  if (shift == 0) co_return;
  const MutableBytes tmp = ch.scratch(out.size());
  int b = 0;
  while ((shift >> (b + 1)) != 0) ++b;  // the highest 1 bit first, as in the text's example
  for (; b >= 0; --b) {
    if (((shift >> b) & 1) == 0) continue;
    const int dist = 1 << b;
    Transfer t_out = ch.send(ring.mod(i + dist), out, static_cast<std::uint32_t>(b));
    Transfer t_in = ch.recv(ring.mod(i - dist), tmp, static_cast<std::uint32_t>(b));
    co_await t_out;
    co_await t_in;
    ch.copy(out, tmp);
  }
}

}  // namespace fabcoll::algorithms
