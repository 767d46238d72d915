// The queues and locks the concurrency experiments compare: a single-producer ring, a bounded
// queue under one std::mutex, a bounded multi-producer multi-consumer ring (Vyukov's sequence
// numbers), a test-and-test-and-set spinlock and a ticket lock, and what a thread does while it
// waits. Batched calls move up to n items per synchronisation, which is what batching buys.
#pragma once

#include <immintrin.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace simdex::lab {

enum class backoff { spin, yield, hybrid };
inline const char* backoff_name(backoff b) {
  return b == backoff::spin ? "spin" : b == backoff::yield ? "yield" : "hybrid";
}

// Called each time a queue was full or empty: `spin` pauses, `yield` gives the CPU away,
// `hybrid` pauses a while and then yields (so a thread sharing its CPU lets the peer run).
class waiter {
 public:
  explicit waiter(backoff b) : kind_(b) {}
  void wait() {
    if (kind_ == backoff::yield || (kind_ == backoff::hybrid && fails_ >= kHybridSpins)) {
      std::this_thread::yield();
      ++yields_;
    } else {
      _mm_pause();
    }
    ++fails_;
  }
  void reset() { fails_ = 0; }
  std::uint64_t yields() const { return yields_; }

  static constexpr int kHybridSpins = 64;

 private:
  backoff kind_;
  int fails_ = 0;
  std::uint64_t yields_ = 0;
};

// One producer, one consumer. Indices only grow; each side keeps a copy of the other's index and
// rereads it only when the copy says full (or empty), so the shared lines move once per batch.
template <class T, std::memory_order Load = std::memory_order_acquire,
          std::memory_order Store = std::memory_order_release>
class spsc_ring {
 public:
  explicit spsc_ring(std::size_t capacity_pow2) : buf_(capacity_pow2), mask_(capacity_pow2 - 1) {}

  // Producer: up to n items, published with one store; returns how many fit.
  std::size_t push(const T* items, std::size_t n) {
    std::size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail - head_seen_ + n > buf_.size()) head_seen_ = head_.load(Load);
    std::size_t room = buf_.size() - (tail - head_seen_);
    if (n > room) n = room;
    for (std::size_t i = 0; i < n; ++i) buf_[(tail + i) & mask_] = items[i];
    if (n) tail_.store(tail + n, Store);
    return n;
  }
  // Consumer: up to n items, released with one store; returns how many there were.
  std::size_t pop(T* out, std::size_t n) {
    std::size_t head = head_.load(std::memory_order_relaxed);
    if (tail_seen_ - head < n) tail_seen_ = tail_.load(Load);
    std::size_t have = tail_seen_ - head;
    if (n > have) n = have;
    for (std::size_t i = 0; i < n; ++i) out[i] = buf_[(head + i) & mask_];
    if (n) head_.store(head + n, Store);
    return n;
  }
  bool push(const T& v) { return push(&v, 1) == 1; }
  bool pop(T& v) { return pop(&v, 1) == 1; }

 private:
  std::vector<T> buf_;
  std::size_t mask_;
  alignas(64) std::atomic<std::size_t> head_{0};  // consumer's
  std::size_t tail_seen_ = 0;                     // consumer's copy of tail_
  alignas(64) std::atomic<std::size_t> tail_{0};  // producer's
  std::size_t head_seen_ = 0;                     // producer's copy of head_
};

// A bounded ring under one std::mutex: any number of producers and consumers; a batch is one
// lock acquisition.
template <class T>
class mutex_queue {
 public:
  explicit mutex_queue(std::size_t capacity) : buf_(capacity) {}

  std::size_t push(const T* items, std::size_t n) {
    std::lock_guard<std::mutex> g(m_);
    std::size_t room = buf_.size() - count_;
    if (n > room) n = room;
    for (std::size_t i = 0; i < n; ++i) buf_[(first_ + count_ + i) % buf_.size()] = items[i];
    count_ += n;
    return n;
  }
  std::size_t pop(T* out, std::size_t n) {
    std::lock_guard<std::mutex> g(m_);
    if (n > count_) n = count_;
    for (std::size_t i = 0; i < n; ++i) out[i] = buf_[(first_ + i) % buf_.size()];
    first_ = (first_ + n) % buf_.size();
    count_ -= n;
    return n;
  }
  bool push(const T& v) { return push(&v, 1) == 1; }
  bool pop(T& v) { return pop(&v, 1) == 1; }

 private:
  std::mutex m_;
  std::vector<T> buf_;
  std::size_t first_ = 0, count_ = 0;
};

// Bounded multi-producer multi-consumer ring: each cell carries a sequence number that says
// whether it is free for the producer of this lap or full for its consumer; producers and
// consumers claim positions with a compare-and-swap on their own index.
template <class T>
class mpmc_ring {
 public:
  explicit mpmc_ring(std::size_t capacity_pow2)
      : cells_(new cell[capacity_pow2]), mask_(capacity_pow2 - 1) {
    for (std::size_t i = 0; i < capacity_pow2; ++i)
      cells_[i].seq.store(i, std::memory_order_relaxed);
  }
  ~mpmc_ring() { delete[] cells_; }
  mpmc_ring(const mpmc_ring&) = delete;
  mpmc_ring& operator=(const mpmc_ring&) = delete;

  bool push(const T& v) {
    std::size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      cell& c = cells_[pos & mask_];
      std::size_t seq = c.seq.load(std::memory_order_acquire);
      auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.value = v;
          c.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }
  bool pop(T& v) {
    std::size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      cell& c = cells_[pos & mask_];
      std::size_t seq = c.seq.load(std::memory_order_acquire);
      auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos + 1);
      if (diff == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          v = c.value;
          c.seq.store(pos + mask_ + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;  // empty
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }
  std::size_t push(const T* items, std::size_t n) {
    std::size_t i = 0;
    while (i < n && push(items[i])) ++i;
    return i;
  }
  std::size_t pop(T* out, std::size_t n) {
    std::size_t i = 0;
    while (i < n && pop(out[i])) ++i;
    return i;
  }

 private:
  struct cell {
    std::atomic<std::size_t> seq{0};
    T value{};
  };
  cell* cells_;
  std::size_t mask_;
  alignas(64) std::atomic<std::size_t> tail_{0};
  alignas(64) std::atomic<std::size_t> head_{0};
};

// Test-and-test-and-set: waiters read the line (shared) and try the exchange only when it looks
// free, pausing in between.
class tas_lock {
 public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire))
      while (locked_.load(std::memory_order_relaxed)) _mm_pause();
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

// First come, first served: a thread takes a ticket and waits until it is served.
class ticket_lock {
 public:
  void lock() {
    std::uint32_t mine = next_.fetch_add(1, std::memory_order_relaxed);
    while (serving_.load(std::memory_order_acquire) != mine) _mm_pause();
  }
  void unlock() {
    serving_.store(serving_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

 private:
  std::atomic<std::uint32_t> next_{0};
  std::atomic<std::uint32_t> serving_{0};
};

}  // namespace simdex::lab
