#include "engine/communicator.hpp"

#include <cstdlib>
#include <new>
#include <utility>

namespace fabcoll {

Comm::Comm(Transport& transport, Executor& executor, int rank, int size,
           std::vector<int> world_ranks, std::uint32_t cid, CostModel model, CidCounter* cids)
    : transport_(&transport),
      executor_(&executor),
      rank_(rank),
      size_(size),
      map_(std::move(world_ranks)),
      cid_(cid),
      link_(LinkModel::uniform(model)),
      cids_(cids) {}

Comm::~Comm() {
  for (const Free& f : free_) std::free(f.p);
}

void Comm::mark_broken(const std::string& why) {
  if (!broken_) {
    broken_ = true;
    broken_reason_ = why;
  }
}

std::byte* Comm::acquire_scratch(std::size_t bytes, std::size_t& capacity) {
  for (std::size_t i = 0; i < free_.size(); ++i) {
    if (free_[i].capacity >= bytes) {
      const Free f = free_[i];
      free_[i] = free_.back();
      free_.pop_back();
      capacity = f.capacity;
      return f.p;
    }
  }
  capacity = bytes < 64 ? 64 : bytes;
  void* p = std::malloc(capacity);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<std::byte*>(p);
}

void Comm::release_scratch(std::byte* p, std::size_t capacity) {
  // Keep a bounded number of buffers; the largest are the most useful to keep.
  constexpr std::size_t kKeep = 16;
  if (free_.size() < kKeep) {
    free_.push_back({p, capacity});
    return;
  }
  std::size_t smallest = 0;
  for (std::size_t i = 1; i < free_.size(); ++i)
    if (free_[i].capacity < free_[smallest].capacity) smallest = i;
  if (free_[smallest].capacity < capacity) {
    std::swap(free_[smallest].p, p);
    std::swap(free_[smallest].capacity, capacity);
  }
  std::free(p);
}

}  // namespace fabcoll
