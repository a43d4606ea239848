#include "engine/transfer.hpp"

#include "engine/datatype.hpp"
#include "engine/frame_pool.hpp"

namespace fabcoll {

void* PostedOp::operator new(std::size_t bytes) { return pool_allocate(bytes); }
void PostedOp::operator delete(void* p, std::size_t bytes) noexcept { pool_free(p, bytes); }

void RecvFold::apply(std::size_t offset, const std::byte* data, std::size_t len) const {
  const std::size_t es = op->elem_size();
  std::byte* o = out + offset;
  const std::byte* oth = other + offset;
  if (o == oth) {  // in place: the native direction of each side
    if (received_left) {
      op->combine_left(data, o, elements_in(len, es));
    } else {
      op->combine_right(o, data, elements_in(len, es));
    }
    return;
  }
  // Out of place.
  if (received_left) {
    op->combine_to(data, oth, o, elements_in(len, es));
  } else {
    op->combine_to(oth, data, o, elements_in(len, es));
  }
}

void RecvFold::apply_landed(std::size_t offset, std::size_t len) const {
  const std::size_t es = op->elem_size();
  std::byte* o = out + offset;
  const std::byte* oth = other + offset;
  if (received_left) {
    op->combine_right(o, oth, elements_in(len, es));  // out = recv ⊕ other, recv in out
  } else {
    op->combine_left(oth, o, elements_in(len, es));  // out = other ⊕ recv
  }
}

void Transfer::release() noexcept {
  if (op_ == nullptr) return;
  if (!op_->finished() && op_->transport != nullptr) {
    op_->waiter = nullptr;
    op_->transport->cancel(op_);
    if (op_->orphaned) {
      op_ = nullptr;
      return;
    }
  }
  delete op_;
  op_ = nullptr;
}

}  // namespace fabcoll
