#include "engine/transfer.hpp"

#include "engine/frame_pool.hpp"

namespace fabcoll {

void* PostedOp::operator new(std::size_t bytes) { return pool_allocate(bytes); }
void PostedOp::operator delete(void* p, std::size_t bytes) noexcept { pool_free(p, bytes); }

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
