// Memory group, streaming: stride, AoS vs SoA, mmap vs read, mapped writes, page faults and
// mlock. Every figure counts bytes (or items) the kernel really touched: reads return a checksum
// compared with the data, writes leave a pattern checked word by word, and working sets beyond
// the last-level cache are held to the same run's memcpy.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "lab/files.h"
#include "memory_util.h"

namespace simdex::lab_bench {
namespace {

using bench::better;
using namespace mem;

// --- 1: stride access --------------------------------------------------------------------------

// Out of line so `stride` stays a run-time value, and neither vectorized nor versioned: GCC
// otherwise adds a vector loop for stride 1 (its unit-stride version) and the first stride's
// time, the ratios' denominator, came from other instructions than the rest. One scalar loop
// for every stride (objdump shows one add per item).
#if defined(__clang__)
[[gnu::noinline]] std::uint64_t strided_sum(const std::uint32_t* a, std::size_t n,
                                            std::size_t stride) {
  std::uint64_t s = 0;
#pragma clang loop vectorize(disable) interleave(disable) unroll(disable)
  for (std::size_t i = 0; i < n; i += stride) s += a[i];
  return s;
}
#else
[[gnu::noinline, gnu::optimize("no-tree-vectorize", "no-version-loops-for-strides",
                               "no-unroll-loops")]] std::uint64_t
strided_sum(const std::uint32_t* a, std::size_t n, std::size_t stride) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < n; i += stride) s += a[i];
  return s;
}
#endif

void stride(trial& t) {
  const std::size_t bytes =
      std::max(4 * lab::last_level_bytes(), t.quick() ? 128 * MiB : 1024 * MiB);
  const std::size_t n = bytes / 4;
  page_buffer buf(bytes, page_size::small);
  auto* a = reinterpret_cast<std::uint32_t*>(buf.data());
  lab::rng r(1);
  for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<std::uint32_t>(r.next());
  curve c("stride",
          "Stride: 4-byte items read every `stride` bytes of a " + size_label(bytes) + " array",
          "stride (bytes)", "ns per item read", true, true);
  series line{"4 KiB pages", {}};
  memcpy_limit limit(bytes);
  bool all_ok = true;
  double first = 0, at16 = 0, at64 = 0, worst = 0;
  std::string worst_text;
  for (std::size_t st : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
    std::size_t items = (n + st - 1) / st;
    std::uint64_t sum = 0;
    bench::params p = {{"stride_bytes", static_cast<std::int64_t>(4 * st)}};
    auto s = t.sample(
        {{"strided sum", [&] { return items / time_ns([&] { sum = strided_sum(a, n, st); }); }},
         limit.contender()});
    t.record("items", p, "strided sum", "Gitems/s", better::higher, s[0]);
    t.record("memcpy", p, "memcpy (limit)", "GiB/s", better::higher, s[1]);
    // The items credited are the items summed: the same sum, gathered backwards.
    std::uint64_t want = 0;
    for (std::size_t i = (items - 1) * st + 1; i-- > 0;)
      if (i % st == 0) want += a[i];
    all_ok &= want == sum;
    double ns_item = 1 / s[0].median;
    line.points.push_back({4.0 * st, ns_item, 1 / s[0].max, 1 / s[0].min});
    // Lines pulled from memory: all of them up to 64-byte strides, one per item beyond.
    double lines = st * 4 <= lab::kLine ? bytes / double(lab::kLine) : double(items);
    double g = gib_s(lines * lab::kLine, items * ns_item);
    if (g / s[1].median > worst) {
      worst = g / s[1].median;
      lab::check k =
          lab::below_memcpy(format("lines pulled at a %.0f-byte stride", 4.0 * st), g, s[1].max);
      worst_text = k.detail;
      t.set("worst_fail", k.status == lab::check_status::fail);
    }
    if (st == 1) first = ns_item;
    if (st == 16) at16 = ns_item;
    if (st == 64) at64 = ns_item;
  }
  c.lines = {line};
  c.markers = {{64, "cache line"}, {4096, "page"}};
  t.plot(c);
  t.add(lab::holds("work_done", all_ok,
                   "every stride's sum equals the sum of exactly the items credited",
                   "a strided sum differs from the items credited"));
  // The stride closest to its memcpy decides (each stride is held to the memcpy sampled with it).
  t.add({"below_memcpy",
         t.get("worst_fail") != 0 ? lab::check_status::fail : lab::check_status::pass, worst_text});
  t.figure(at16 / first, "ns per item at 64-byte stride / at 4-byte stride");
  t.set({{"r16", at16 / first}, {"r64", at64 / first}, {"first", first}});
}

verdict stride_verdict(const trial& t) {
  std::string why = format(
                        "an item costs %.2f ns read sequentially, %.1fx that at a 64-byte stride "
                        "(one item per line) and %.1fx at 256 bytes",
                        t.get("first"), t.get("r16"), t.get("r64")) +
                    " (study: 3.5x and 10x)";
  return by_threshold(t.get("r16"), 3, 1.5, why);
}

const registration kStride("stride", stride, stride_verdict);

// --- 4: AoS vs SoA -------------------------------------------------------------------------------

struct particle {
  double x, y, z, vx, vy, vz, m, q;  // 64 bytes: one line per particle
};

[[gnu::noinline]] double aos_two(const particle* p, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += p[i].x * p[i].m;
  return s;
}
[[gnu::noinline]] double soa_two(const double* x, const double* m, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += x[i] * m[i];
  return s;
}
[[gnu::noinline]] double aos_all(const particle* p, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i)
    s += p[i].x + p[i].y + p[i].z + p[i].vx + p[i].vy + p[i].vz + p[i].m + p[i].q;
  return s;
}
[[gnu::noinline]] double soa_all(const std::vector<const double*>& f, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i)
    s += f[0][i] + f[1][i] + f[2][i] + f[3][i] + f[4][i] + f[5][i] + f[6][i] + f[7][i];
  return s;
}

void aos_soa(trial& t) {
  // Two fields of each array (16 bytes a particle) must still be 4x the last-level cache.
  const std::size_t bytes =
      std::max(16 * lab::last_level_bytes(), t.quick() ? 512 * MiB : 1024 * MiB);
  const std::size_t n = bytes / sizeof(particle);
  page_buffer aos_buf(bytes, page_size::small), soa_buf(bytes, page_size::small);
  auto* p = reinterpret_cast<particle*>(aos_buf.data());
  auto* soa = reinterpret_cast<double*>(soa_buf.data());
  std::vector<const double*> field(8);
  for (int f = 0; f < 8; ++f) field[f] = soa + f * n;
  lab::rng r(4);
  for (std::size_t i = 0; i < n; ++i) {
    double* v = &p[i].x;
    for (int f = 0; f < 8; ++f) soa[f * n + i] = v[f] = static_cast<double>(r.below(1000)) / 8;
  }
  double sums[4] = {0, 0, 0, 0};
  auto per_ns = [&](int k, auto f) { return n / time_ns([&] { sums[k] = f(); }); };
  memcpy_limit limit(4 * lab::last_level_bytes());
  bench::params params = {{"particles", static_cast<std::int64_t>(n)}};
  std::vector<trial::contender> cs = {
      {"AoS, 2 of 8 fields", [&] { return per_ns(0, [&] { return aos_two(p, n); }); }},
      {"SoA, 2 of 8 fields",
       [&] { return per_ns(1, [&] { return soa_two(field[0], field[6], n); }); }},
      {"AoS, all 8 fields", [&] { return per_ns(2, [&] { return aos_all(p, n); }); }},
      {"SoA, all 8 fields", [&] { return per_ns(3, [&] { return soa_all(field, n); }); }},
      limit.contender()};
  auto s = t.sample(cs);
  for (int i = 0; i < 4; ++i)
    t.record("items", params, cs[i].first, "Gitems/s", better::higher, s[i]);
  t.record("memcpy", params, cs[4].first, "GiB/s", better::higher, s[4]);
  // Same additions in the same order: the layouts must give bit-identical sums.
  bool ok = sums[0] == sums[1] && sums[2] == sums[3] && sums[0] != 0;
  t.add(lab::holds("work_done", ok, "AoS and SoA sums are identical for both field sets",
                   "AoS and SoA sums differ: a kernel skipped particles"));
  // AoS pulls every line; SoA pulls 16 of 64 bytes per particle for two fields.
  double per_gib = double(1 << 30) / 1e9;  // Gitems/s x bytes -> GiB/s
  t.add(
      lab::below_memcpy("AoS, 2 fields (64 B per particle)", s[0].median * 64 / per_gib, s[4].max));
  t.add(
      lab::below_memcpy("SoA, 2 fields (16 B per particle)", s[1].median * 16 / per_gib, s[4].max));
  t.figure(s[1].median / s[0].median, "SoA / AoS throughput, 2 of 8 fields");
  t.set({{"sparse", s[1].median / s[0].median}, {"dense", s[3].median / s[2].median}});
}

verdict aos_soa_verdict(const trial& t) {
  std::string why = format(
      "using 2 of 8 fields, SoA runs %.2fx AoS; using all 8, %.2fx (study: 1.42x "
      "and 0.99x)",
      t.get("sparse"), t.get("dense"));
  bool sparse = t.get("sparse") >= 1.3, dense = t.get("dense") > 0.7 && t.get("dense") < 1.4;
  if (sparse && dense)
    return {verdict_kind::confirmed,
            why + ": SoA wins when a loop uses few fields, layout matters little when it uses all"};
  if (!sparse) return {verdict_kind::contradicted, why};
  return {verdict_kind::inconclusive, why + ": the dense case differs too"};
}

const registration kAosSoa("aos_soa", aos_soa, aos_soa_verdict);

// --- files for 13 and 25 -------------------------------------------------------------------

// A temporary file of `bytes` (a multiple of 1 MiB), each MiB filled with the word pattern of
// its index as seed, left in the page cache. Its name is removed as soon as it is created: the
// file lives while the descriptor is open, so a killed run leaves nothing behind.
class scratch_file {
 public:
  explicit scratch_file(std::size_t bytes) : bytes_(bytes) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "simdex-lab-XXXXXX").string();
    fd_ = mkstemp(tmpl.data());
    if (fd_ < 0)
      throw std::runtime_error("cannot create a file in " + tmpl + ": " + std::strerror(errno));
    unlink(tmpl.c_str());
    path_ = tmpl + " (unlinked)";
    std::vector<std::uint64_t> chunk(MiB / 8);
    for (std::size_t off = 0; off < bytes; off += MiB) {
      lab::fill_words(chunk.data(), MiB, off / MiB + 1);
      sum_ += lab::sum_words(chunk.data(), MiB);
      if (pwrite(fd_, chunk.data(), MiB, static_cast<off_t>(off)) != static_cast<ssize_t>(MiB))
        throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
    }
  }
  ~scratch_file() { close(fd_); }
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
  int fd() const { return fd_; }
  std::size_t bytes() const { return bytes_; }
  std::uint64_t sum() const { return sum_; }  // sum_words over the whole file

 private:
  int fd_ = -1;
  std::size_t bytes_;
  std::uint64_t sum_ = 0;
  std::string path_;
};

void* map_file(const scratch_file& f, int prot, int flags) {
  void* p = mmap(nullptr, f.bytes(), prot, flags, f.fd(), 0);
  if (p == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
  return p;
}

lab::check checksum_check(const std::string& what, std::uint64_t got, std::uint64_t want,
                          std::size_t credited) {
  bool ok = got == want;
  return {"bytes_touched", ok ? lab::check_status::pass : lab::check_status::fail,
          what + (ok ? format(": checksum of all %.0f credited bytes matches the file",
                              double(credited))
                     : format(": checksum differs from the file's: the loop did not read all %.0f "
                              "bytes it is credited with",
                              double(credited)))};
}

// --- 13: mmap vs read / pread ----------------------------------------------------------------

// The study's mmap loop: one byte read per 4 KiB page, while the whole range is credited.
std::uint64_t one_byte_per_page(const std::byte* m, std::size_t bytes) {
  std::uint64_t s = 0;
  for (std::size_t off = 0; off < bytes; off += 4096) s += static_cast<std::uint8_t>(m[off]);
  return s;
}

void mmap_read(trial& t) {
  const std::size_t bytes =
      std::max(4 * lab::last_level_bytes(), t.quick() ? 128 * MiB : 1024 * MiB);
  scratch_file f(bytes);
  constexpr std::size_t kChunk = MiB, kRandom = 64 * KiB;
  std::vector<std::uint64_t> buf(kChunk / 8);
  std::vector<std::size_t> order(bytes / kRandom);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i * kRandom;
  lab::rng r(13);
  for (std::size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[r.below(i + 1)]);
  auto* kept = static_cast<const std::byte*>(map_file(f, PROT_READ, MAP_PRIVATE | MAP_POPULATE));
  std::uint64_t s_read = 0, s_pread = 0, s_fresh = 0, s_kept = 0, s_study = 0;
  auto rate = [&](auto body) { return gib_s(double(bytes), time_ns(body)); };
  auto sample_read = [&] {
    return rate([&] {
      s_read = 0;
      for (std::size_t off = 0; off < bytes; off += kChunk) {
        if (pread(f.fd(), buf.data(), kChunk, static_cast<off_t>(off)) !=
            static_cast<ssize_t>(kChunk))
          throw std::runtime_error("short read");
        s_read += lab::sum_words(buf.data(), kChunk);
      }
    });
  };
  auto sample_pread = [&] {
    return rate([&] {
      s_pread = 0;
      for (std::size_t off : order) {
        if (pread(f.fd(), buf.data(), kRandom, static_cast<off_t>(off)) !=
            static_cast<ssize_t>(kRandom))
          throw std::runtime_error("short pread");
        s_pread += lab::sum_words(buf.data(), kRandom);
      }
    });
  };
  auto fresh_map = [&](std::uint64_t& sum) {
    auto* m = static_cast<const std::byte*>(map_file(f, PROT_READ, MAP_PRIVATE));
    double g = rate([&] { sum = lab::sum_words(m, bytes); });
    munmap(const_cast<std::byte*>(m), bytes);
    return g;
  };
  memcpy_limit limit(bytes);
  auto s =
      t.measure("bandwidth", {{"bytes", static_cast<std::int64_t>(bytes)}}, "GiB/s", better::higher,
                {{"read(), 1 MiB chunks", sample_read},
                 {"pread(), random 64 KiB chunks", sample_pread},
                 {"mmap, fresh mapping (faults included)", [&] { return fresh_map(s_fresh); }},
                 {"mmap, populated mapping",
                  [&] { return rate([&] { s_kept = lab::sum_words(kept, bytes); }); }},
                 {"the study's loop: mmap, 1 byte per page read, all credited",
                  [&] { return rate([&] { s_study = one_byte_per_page(kept, bytes); }); }},
                 limit.contender()},
                "read(), 1 MiB chunks");
  const char* names[] = {"read()", "pread()", "mmap, fresh", "mmap, populated"};
  std::uint64_t sums[] = {s_read, s_pread, s_fresh, s_kept};
  for (int i = 0; i < 4; ++i) {
    t.add(checksum_check(names[i], sums[i], f.sum(), bytes));
    t.add(lab::below_memcpy(names[i], s[i].median, s[5].max));
  }
  lab::check study = checksum_check("the study's mmap loop", s_study, f.sum(), bytes);
  lab::check study_limit = lab::below_memcpy("the study's mmap loop", s[4].median, s[5].max);
  t.note(study.detail + "; " + study_limit.detail);
  std::uint64_t sink = 0;
  auto rs = t.count("mmap, fresh mapping, one scan", [&] { fresh_map(sink); });
  if (const lab::reading* pf = lab::find(rs, "page-faults"); pf && pf->available)
    t.note(
        format("a fresh mapping's scan took %.0f page faults for %.0f pages (the kernel maps "
               "several pages per fault)",
               pf->value, double(bytes / 4096)));
  munmap(const_cast<std::byte*>(kept), bytes);
  t.figure(s[3].median / s[0].median, "populated mmap / read() bandwidth");
  t.set({{"read", s[0].median},
         {"pread", s[1].median},
         {"fresh", s[2].median},
         {"kept", s[3].median},
         {"study", s[4].median},
         {"study_ok", study.status == lab::check_status::pass}});
}

verdict mmap_read_verdict(const trial& t) {
  std::string why =
      format(
          "counting every byte, a populated mapping scans at %.1f GiB/s, %.2fx read() "
          "(%.1f GiB/s)",
          t.get("kept"), t.get("kept") / t.get("read"), t.get("read")) +
      format("; a fresh mapping, page faults included, %.1f GiB/s; random pread %.1f GiB/s",
             t.get("fresh"), t.get("pread")) +
      format(". The study's loop credits %.0f GiB/s here and ", t.get("study")) +
      (t.get("study_ok") != 0 ? "passes the byte check"
                              : "fails the byte check: it reads 1 byte in 4096");
  if (t.get("kept") / t.get("read") < 10)
    return {verdict_kind::contradicted,
            why + "; mmap is no 100x path, its 676 GiB/s counted bytes never read"};
  return {verdict_kind::confirmed, why};
}

const registration kMmapRead("mmap_read", mmap_read, mmap_read_verdict);

// --- 25: mmap private vs shared writes ------------------------------------------------------

void mmap_write(trial& t) {
  const std::size_t bytes =
      std::max(4 * lab::last_level_bytes(), t.quick() ? 128 * MiB : 512 * MiB);
  scratch_file f(bytes);
  auto* rewrite = static_cast<std::byte*>(map_file(f, PROT_READ | PROT_WRITE, MAP_PRIVATE));
  lab::fill_words(rewrite, bytes, 99);  // every page now a private copy
  std::uint64_t seed = 100;
  enum kind { private_first, private_again, shared, shared_sync };
  std::vector<lab::check> written(4);
  std::vector<bool> checked(4, false);
  lab::check persisted{"persisted", lab::check_status::fail, "the msync contender never ran"};
  auto write = [&](kind k) {
    std::byte* m =
        k == private_again
            ? rewrite
            : static_cast<std::byte*>(map_file(f, PROT_READ | PROT_WRITE,
                                               k == private_first ? MAP_PRIVATE : MAP_SHARED));
    std::uint64_t sd = ++seed;
    double ns = time_ns([&] {
      lab::fill_words(m, bytes, sd);
      if (k == shared_sync) msync(m, bytes, MS_SYNC);
    });
    if (!checked[k]) written[k] = lab::bytes_written(m, bytes, sd);
    if (k != private_again) munmap(m, bytes);
    // Unmapped, so the msync'ed pages can be dropped and the file read back from storage.
    if (!checked[k] && k == shared_sync) persisted = lab::persisted(f.fd(), bytes, sd);
    checked[k] = true;
    return gib_s(double(bytes), ns);
  };
  memcpy_limit limit(4 * lab::last_level_bytes());
  auto s = t.measure(
      "bandwidth", {{"bytes", static_cast<std::int64_t>(bytes)}}, "GiB/s", better::higher,
      {{"private, first write (copy-on-write faults)", [&] { return write(private_first); }},
       {"private, rewrite", [&] { return write(private_again); }},
       {"shared, no msync", [&] { return write(shared); }},
       {"shared, msync(MS_SYNC)", [&] { return write(shared_sync); }},
       limit.contender()},
      "private, rewrite");
  const char* names[] = {"private, first write", "private, rewrite", "shared", "shared + msync"};
  for (int k = 0; k < 4; ++k) {
    written[k].detail = std::string(names[k]) + ": " + written[k].detail;
    t.add(written[k]);
    t.add(lab::below_memcpy(names[k], s[k].median, s[4].max));
  }
  t.add(persisted);
  auto rs = t.count("private, first write", [&] { write(private_first); });
  t.add(lab::faults_per_page("private first write", lab::find(rs, "page-faults"),
                             double(bytes / 4096)));
  munmap(rewrite, bytes);
  t.figure(s[1].median / s[0].median, "private rewrite / private first write");
  t.set({{"first", s[0].median},
         {"again", s[1].median},
         {"shared", s[2].median},
         {"sync", s[3].median}});
}

verdict mmap_write_verdict(const trial& t) {
  std::string why =
      format("private first write %.2f GiB/s, rewrite %.2f GiB/s (%.1fx), ", t.get("first"),
             t.get("again"), t.get("again") / t.get("first")) +
      format("shared %.2f GiB/s, with msync %.2f GiB/s (study: 7.27, 48.5, 26.2, 11.9)",
             t.get("shared"), t.get("sync"));
  bool cow = t.get("first") <= 0.5 * t.get("again");
  bool sync = t.get("sync") <= 0.8 * t.get("shared");
  if (cow && sync)
    return {verdict_kind::confirmed,
            why + ": first-touch copy-on-write and msync each cost a large factor"};
  if (!cow && !sync) return {verdict_kind::contradicted, why};
  return {verdict_kind::inconclusive,
          why + (cow ? ": msync cost no more than the write" : ": the first write cost little")};
}

const registration kMmapWrite("mmap_write", mmap_write, mmap_write_verdict);

// --- 31: page faults and mlock -----------------------------------------------------------------

// The study's page-touch loop: one word written per 4 KiB page, the whole buffer credited.
void one_word_per_page(std::byte* p, std::size_t bytes, std::uint64_t seed) {
  for (std::size_t off = 0; off < bytes; off += 4096)
    reinterpret_cast<std::uint64_t*>(p + off)[0] = lab::pattern_word(seed, off / 8);
}

void page_faults(trial& t) {
  const std::size_t bytes =
      std::max(4 * lab::last_level_bytes(), t.quick() ? 128 * MiB : 512 * MiB);
  const double pages = double(bytes / 4096);
  rlimit rl{};
  getrlimit(RLIMIT_MEMLOCK, &rl);
  std::string limit_text = rl.rlim_cur == RLIM_INFINITY
                               ? std::string("unlimited")
                               : size_label(static_cast<std::size_t>(rl.rlim_cur));
  page_buffer pre(bytes, page_size::small), locked(bytes, page_size::small);
  std::memset(pre.data(), 1, bytes);
  int lock_err = mlock(locked.data(), bytes) == 0 ? 0 : errno;
  std::uint64_t seed = 300;
  std::vector<lab::check> written(3);
  std::vector<bool> checked(3, false);
  bool study_ok = true;
  auto write = [&](int k, page_buffer* keep) {
    page_buffer fresh;
    page_buffer* b = keep;
    if (!b) {
      fresh = page_buffer(bytes, page_size::small);
      b = &fresh;
    }
    std::uint64_t sd = ++seed;
    double ns = time_ns([&] {
      if (k == 3)
        one_word_per_page(b->data(), bytes, sd);
      else
        lab::fill_words(b->data(), bytes, sd);
    });
    if (k == 3) {
      study_ok = lab::bytes_written(b->data(), bytes, sd).status == lab::check_status::pass;
    } else if (!checked[k]) {
      checked[k] = true;
      written[k] = lab::bytes_written(b->data(), bytes, sd);
    }
    return gib_s(double(bytes), ns);
  };
  memcpy_limit limit(4 * lab::last_level_bytes());
  std::vector<trial::contender> cs = {{"first touch", [&] { return write(0, nullptr); }},
                                      {"prefaulted", [&] { return write(1, &pre); }}};
  if (!lock_err) cs.push_back({"mlock'ed", [&] { return write(2, &locked); }});
  cs.push_back({"the study's loop: 1 word per page of resident memory, all credited",
                [&] { return write(3, &pre); }});
  cs.push_back(limit.contender());
  auto s = t.measure("bandwidth", {{"bytes", static_cast<std::int64_t>(bytes)}}, "GiB/s",
                     better::higher, cs, "prefaulted");
  const double copy = s.back().max;
  const char* names[] = {"first touch", "prefaulted", "mlock'ed"};
  for (int k = 0; k < (lock_err ? 2 : 3); ++k) {
    written[k].detail = std::string(names[k]) + ": " + written[k].detail;
    t.add(written[k]);
    t.add(lab::below_memcpy(names[k], s[k].median, copy));
  }
  double study_gib = s[lock_err ? 2 : 3].median;
  t.note(format("the study's loop credits %.1f GiB/s and ", study_gib) +
         (study_ok ? "passes" : "fails") + " the written-bytes check (1 word in 512 written)");
  // mlock: whether it worked, and under which limit; when the whole buffer cannot be locked,
  // the largest lockable size is compared with a prefaulted buffer of the same size.
  double locked_ratio = 0;
  if (!lock_err) {
    t.add(
        {"mlock", lab::check_status::pass,
         "mlock of " + size_label(bytes) + " worked (RLIMIT_MEMLOCK " + limit_text +
             (geteuid() == 0 ? "; running as root, whose CAP_IPC_LOCK ignores the limit)" : ")")});
    locked_ratio = s[2].median / s[1].median;
  } else {
    std::size_t small =
        rl.rlim_cur == RLIM_INFINITY ? 0 : (rl.rlim_cur / 2) / (2 * MiB) * (2 * MiB);
    std::string detail = "mlock of " + size_label(bytes) + " failed: " + std::strerror(lock_err) +
                         " (RLIMIT_MEMLOCK " + limit_text + ")";
    if (small >= 2 * MiB) {
      page_buffer pre_small(small, page_size::small), locked_small(small, page_size::small);
      std::memset(pre_small.data(), 1, small);
      bool ok = mlock(locked_small.data(), small) == 0;
      if (ok) {
        auto fill = [&](page_buffer& b) {
          return gib_s(double(small), time_ns([&] { lab::fill_words(b.data(), small, ++seed); }));
        };
        auto s2 = t.measure("bandwidth_locked", {{"bytes", static_cast<std::int64_t>(small)}},
                            "GiB/s", better::higher,
                            {{"prefaulted", [&] { return fill(pre_small); }},
                             {"mlock'ed", [&] { return fill(locked_small); }}},
                            "prefaulted");
        locked_ratio = s2[1].median / s2[0].median;
        detail += "; measured at " + size_label(small) + " instead, where it worked";
      }
    }
    t.add({"mlock", lab::check_status::warn, detail});
  }
  auto rs = t.count("first touch", [&] { write(0, nullptr); });
  t.add(lab::faults_per_page("first touch", lab::find(rs, "page-faults"), pages));
  double ns_per_fault =
      (bytes / (s[0].median * (1 << 30)) - bytes / (s[1].median * (1 << 30))) * 1e9 / pages;
  t.figure(ns_per_fault, "extra ns per 4 KiB page on first touch");
  t.set({{"per_fault", ns_per_fault},
         {"first", s[0].median},
         {"pre", s[1].median},
         {"locked_ratio", locked_ratio},
         {"study", study_gib}});
}

verdict page_faults_verdict(const trial& t) {
  std::string why = format(
      "writing every byte, first touch runs at %.2f GiB/s against %.2f "
      "prefaulted (%.0f ns per page fault)",
      t.get("first"), t.get("pre"), t.get("per_fault"));
  double r = t.get("locked_ratio");
  if (r == 0)
    return {verdict_kind::inconclusive,
            why + "; mlock could not be measured (see the mlock check)"};
  why += format(
      "; locked memory runs %.2fx prefaulted memory (study: 3.9x, from its page-touch loop "
      "crediting bytes it never wrote; that loop credits %.0f GiB/s here)",
      r, t.get("study"));
  if (r > 0.8 && r < 1.25) return {verdict_kind::contradicted, why};
  if (r >= 2) return {verdict_kind::confirmed, why};
  return {verdict_kind::inconclusive, why};
}

const registration kPageFaults("page_faults", page_faults, page_faults_verdict);

}  // namespace
}  // namespace simdex::lab_bench
