#include "engine/frame_pool.hpp"

#include <array>
#include <cstdlib>
#include <new>

namespace fabcoll {
namespace {

constexpr std::size_t kGranule = 64;
constexpr std::size_t kClasses = 64;  // pooled up to 4 KiB

struct FreeNode {
  FreeNode* next;
};

struct ThreadPool {
  std::array<FreeNode*, kClasses> heads{};
  std::size_t heap_allocations = 0;
  ~ThreadPool() {
    for (FreeNode*& head : heads) {
      while (head != nullptr) {
        FreeNode* next = head->next;
        std::free(head);
        head = next;
      }
    }
  }
};

ThreadPool& local_pool() {
  thread_local ThreadPool pool;
  return pool;
}

}  // namespace

void* pool_allocate(std::size_t bytes) {
  const std::size_t cls = (bytes + kGranule - 1) / kGranule;
  ThreadPool& pool = local_pool();
  if (cls < kClasses && pool.heads[cls] != nullptr) {
    FreeNode* node = pool.heads[cls];
    pool.heads[cls] = node->next;
    return node;
  }
  ++pool.heap_allocations;
  void* p = std::malloc(cls < kClasses ? cls * kGranule : bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void pool_free(void* p, std::size_t bytes) noexcept {
  const std::size_t cls = (bytes + kGranule - 1) / kGranule;
  if (cls >= kClasses) {
    std::free(p);
    return;
  }
  ThreadPool& pool = local_pool();
  auto* node = static_cast<FreeNode*>(p);
  node->next = pool.heads[cls];
  pool.heads[cls] = node;
}

std::size_t pool_heap_allocations() noexcept { return local_pool().heap_allocations; }

}  // namespace fabcoll
