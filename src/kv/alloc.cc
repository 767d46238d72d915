// Free space of the arena: the writer's allocator (exact-size bins, merged lazily) and the
// extent map that rebuilds free space when a file is opened (merged eagerly).
#include <algorithm>
#include <bit>
#include <new>

#include "internal.h"

namespace simdex::kv::detail {

// ---- the writer's allocator ---------------------------------------------------------------------

void allocator::put(std::uint32_t off, std::uint32_t units) {
  if (units < kBins) {
    bins_[units].push_back(off);
    nonempty_[units / 64] |= std::uint64_t{1} << (units % 64);
  } else {
    large_.insert({units, off});
  }
  ++extents_;  // after what may run out of memory
}

std::uint32_t allocator::pop_bin(std::uint32_t b) {
  std::vector<std::uint32_t>& v = bins_[b];
  const std::uint32_t off = v.back();
  v.pop_back();
  if (v.empty()) nonempty_[b / 64] &= ~(std::uint64_t{1} << (b % 64));
  --extents_;
  return off;
}

// Smallest bin at or above `units` that holds an extent, or 0.
std::uint32_t allocator::fitting_bin(std::uint32_t units) const {
  for (std::uint32_t w = units / 64; w < kBins / 64; ++w) {
    std::uint64_t m = nonempty_[w];
    if (w == units / 64) m &= ~std::uint64_t{0} << (units % 64);
    if (m) return w * 64 + static_cast<std::uint32_t>(std::countr_zero(m));
  }
  return 0;
}

bool allocator::take_free(std::uint32_t units, std::uint32_t& off) {
  const std::uint32_t bin = units < kBins ? fitting_bin(units) : 0;
  auto it = large_.end();
  std::uint32_t have;
  if (bin) {
    have = bin;
    off = bins_[bin].back();
  } else {
    it = large_.lower_bound({units, 0});
    if (it == large_.end()) return false;
    have = it->first;
    off = it->second;
  }
  // The rest first: out of memory there, the extent is still where it was.
  if (have > units) {
    put(off + units, have - units);  // part of the logged take, not a give of its own
    free_units += have - units;
  }
  if (bin) {
    pop_bin(bin);
  } else {
    large_.erase(it);
    --extents_;
  }
  free_units -= have;
  return true;
}

std::uint32_t allocator::take(std::uint32_t units, std::uint64_t limit) {
  // Room for its log entry, and for the give that may undo it, first: out of memory after the
  // take, the extent was lost.
  if (logging) reserve_log(2);
  reserve_more(spill_, room_ + 1);
  if (!spill_.empty()) unspill();
  std::uint32_t off;
  bool got = take_free(units, off);
  // Nothing fits: merging neighbours may make room. Only when enough has changed since the last
  // merge (it costs a sort of every extent), so its cost stays a constant per operation.
  if (!got && free_units >= units && 2 * changes_ >= extents_) {
    coalesce();
    got = take_free(units, off);
  }
  if (!got) {
    if (hwm + units > limit) return 0;
    off = static_cast<std::uint32_t>(hwm);
    hwm += units;
  }
  ++changes_;
  if (logging) log.push_back({off, units, kLogTake});
  ++room_;
  return off;
}

void allocator::give(std::uint32_t off, std::uint32_t units) {
  if (logging) reserve_more(log, 1);  // without room kept: may run out of memory, unchanged
  const bool tail = off + std::uint64_t{units} == hwm;
  if (!tail) {
    try {
      put(off, units);
    } catch (const std::bad_alloc&) {
      if (spill_.size() == spill_.capacity()) throw;  // no room kept: nothing changed
      spill_.push_back(std::uint64_t{off} << 32 | units);
      ++extents_;
    }
  }
  if (logging) log.push_back({off, units, kLogGive});
  if (room_) --room_;
  ++changes_;
  if (tail)
    hwm = off;  // the tail goes back to the bump pointer
  else
    free_units += units;
}

// Memory is back (take()'s reservations got some): the spilled extents go to their bins, where a
// give would have put them, so what is reused next is what it would have been.
void allocator::unspill() noexcept {
  try {
    for (; !spill_.empty(); spill_.pop_back()) {
      put(static_cast<std::uint32_t>(spill_.back() >> 32),
          static_cast<std::uint32_t>(spill_.back()));
      --extents_;  // counted when spilled; put() counted it again
    }
  } catch (const std::bad_alloc&) {  // still out: the rest wait for the next take
  }
}

void allocator::forget_room() noexcept {
  room_ = 0;
  if (spill_.empty()) std::vector<std::uint64_t>().swap(spill_);  // a large transaction's room
}

// Every extent as (offset << 32 | units), sorted by offset, neighbours merged, then the bins
// refilled: one sort of plain integers (a std::map node per extent made merging cost a third of
// the time of commit-every-100 inserts, which merge every few commits).
void allocator::coalesce() {
  std::vector<std::uint64_t> all;
  all.reserve(extents_);
  each([&](std::uint32_t off, std::uint32_t units) {
    all.push_back(std::uint64_t{off} << 32 | units);
  });
  std::sort(all.begin(), all.end());
  std::size_t m = 0;
  for (const std::uint64_t e : all) {
    const std::uint64_t off = e >> 32, units = e & 0xffffffffu;
    if (m && (all[m - 1] >> 32) + (all[m - 1] & 0xffffffffu) == off)
      all[m - 1] += units;  // a merged extent stays under 2^32 units: offsets are 32-bit
    else
      all[m++] = e;
  }
  all.resize(m);
  refill(all, hwm);
}

void allocator::assign(const std::map<std::uint32_t, std::uint32_t>& free, std::uint64_t mark) {
  std::vector<std::uint64_t> all;
  all.reserve(free.size());
  for (const auto& [off, units] : free) all.push_back(std::uint64_t{off} << 32 | units);
  refill(all, mark);
}

void allocator::refill(const std::vector<std::uint64_t>& sorted, std::uint64_t mark) {
  // Built aside, then swapped in: running out of memory midway leaves this one as it was.
  allocator a;
  a.hwm = mark;
  for (auto it = sorted.rbegin(); it != sorted.rend(); ++it) {
    const auto off = static_cast<std::uint32_t>(*it >> 32);
    const auto units = static_cast<std::uint32_t>(*it);
    if (off + std::uint64_t{units} == a.hwm) {
      a.hwm = off;  // a free tail is part of the bump region
      continue;
    }
    a.free_units += units;
    a.put(off, units);
  }
  for (std::uint32_t b = 0; b < kBins; ++b) bins_[b].swap(a.bins_[b]);
  std::copy(std::begin(a.nonempty_), std::end(a.nonempty_), nonempty_);
  large_.swap(a.large_);
  spill_.clear();  // merged into the bins (each() listed them)
  extents_ = a.extents_;
  free_units = a.free_units;
  changes_ = 0;
  hwm = a.hwm;
}

// ---- rebuilding free space at open
// ----------------------------------------------------------------

bool extent_map::carve(std::uint32_t off, std::uint32_t units) {
  if (off >= hwm) {
    // The writer keeps free extents above its last allocation when it does not merge them;
    // here they were already part of the bump region.
    if (off > hwm) give(static_cast<std::uint32_t>(hwm), static_cast<std::uint32_t>(off - hwm));
    hwm = off + std::uint64_t{units};
    return true;
  }
  auto it = by_off.upper_bound(off);
  if (it == by_off.begin()) return false;
  --it;
  const std::uint32_t eo = it->first, eu = it->second;
  if (std::uint64_t{off} + units > std::uint64_t{eo} + eu) return false;
  by_off.erase(it);
  if (off > eo) give(eo, off - eo);
  if (off + units < eo + eu) give(off + units, eo + eu - off - units);
  return true;
}

bool extent_map::overlaps(std::uint32_t off, std::uint32_t units) const {
  const auto nx = by_off.lower_bound(off);
  if (nx != by_off.end() && nx->first < off + std::uint64_t{units}) return true;
  return nx != by_off.begin() && std::prev(nx)->first + std::uint64_t{std::prev(nx)->second} > off;
}

void extent_map::give(std::uint32_t off, std::uint32_t units) {
  auto next = by_off.lower_bound(off);
  if (next != by_off.end() && off + units == next->first) {
    units += next->second;
    next = by_off.erase(next);
  }
  if (next != by_off.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      off = prev->first;
      units += prev->second;
      by_off.erase(prev);
    }
  }
  if (off + std::uint64_t{units} == hwm) {
    hwm = off;
    return;
  }
  by_off.emplace(off, units);
}

}  // namespace simdex::kv::detail
