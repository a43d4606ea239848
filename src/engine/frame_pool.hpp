// Per-thread free lists for coroutine frames and transfer records, so that a collective in
// steady state makes no heap allocation: frames are recycled by size class. Memory freed on a
// thread returns to that thread's lists (each rank's coroutines live on one thread).
#pragma once

#include <cstddef>

namespace fabcoll {

void* pool_allocate(std::size_t bytes);
void pool_free(void* p, std::size_t bytes) noexcept;
/// Heap allocations the pool made on this thread (for the steady-state zero-allocation test).
std::size_t pool_heap_allocations() noexcept;

}  // namespace fabcoll
