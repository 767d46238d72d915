// base85: encode and decode throughput in GiB/s of binary data, per variant, ISA level and
// size, beside memcpy of the same binary bytes, libzmq's Z85 codec and the base85-simd crate,
// all in one run with interleaved repetitions. Inputs are random; small sizes cycle through a
// pool of distinct buffers; every output is checked once against scalar before timing.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base85/kernels.h"
#include "common/harness.h"
#include "peer_base85_simd.h"
#if SIMDEX_BENCH_HAVE_ZMQ
#include <zmq.h>
#endif

using namespace simdex;
using namespace simdex::bench;
namespace b85 = simdex::base85;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr std::size_t kWrap = 76;  // a85_decode_wrapped: chars per line

struct corpus {
  std::size_t n = 0;
  std::vector<std::vector<std::uint8_t>> bin;  // pool of random inputs of n bytes
  std::vector<std::string> text;               // their encodings (one variant)
};

corpus make_corpus(std::size_t n, b85::variant v, std::uint64_t seed) {
  corpus c;
  c.n = n;
  // Small sizes cycle through distinct inputs; from 256 KiB on one input, as the peers use.
  std::size_t pool = std::max<std::size_t>(1, std::min<std::size_t>(256, (256u << 10) / n));
  rng r(seed);
  b85::encode_options o;
  o.var = v;
  for (std::size_t p = 0; p < pool; ++p) {
    std::vector<std::uint8_t> b(n);
    for (auto& x : b) x = static_cast<std::uint8_t>(r.next());
    std::string t(b85::encoded_size(n, o), '\0');
    t.resize(b85::encode(b, std::span(t.data(), t.size()), o).written);
    c.bin.push_back(std::move(b));
    c.text.push_back(std::move(t));
  }
  return c;
}

// Seconds per sample the calibration aims at.
double target_seconds(const options& o) { return o.quick() ? 0.004 : 0.02; }

// GiB/s of `call(i)` over calls i = 0..iters-1, with iters calibrated once from a first call.
template <class Call>
std::function<double()> throughput(std::size_t n, double target, Call call) {
  auto iters = std::make_shared<std::uint64_t>(0);
  return [=]() mutable {
    if (*iters == 0) {
      std::uint64_t t0 = now_ns();
      call(0);
      double t = static_cast<double>(now_ns() - t0) * 1e-9;
      *iters = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(target / std::max(t, 1e-9)));
    }
    std::uint64_t t0 = now_ns();
    for (std::uint64_t i = 0; i < *iters; ++i) call(i);
    clobber_memory();
    double secs = static_cast<double>(now_ns() - t0) * 1e-9;
    return static_cast<double>(n) * static_cast<double>(*iters) / secs / kGiB;
  };
}

std::size_t encode_with(const b85::kernels* k, const b85::encode_options& o,
                        const std::vector<std::uint8_t>& in, char* out) {
  b85::encoder e(o, k);
  std::size_t w = e.update(in.data(), in.size(), out);
  return w + e.finish(out + w);
}

std::size_t decode_with(const b85::kernels* k, const b85::decode_options& o, const std::string& in,
                        std::uint8_t* out) {
  b85::decoder d(o, k);
  b85::result r = d.update(in.data(), in.size(), out);
  b85::result f = d.finish(out + r.written);
  if (!r.ok() || !f.ok()) std::abort();
  return r.written + f.written;
}

}  // namespace

int main(int argc, char** argv) {
  session s(parse_options(argc, argv, "base85"));
  const options& opt = s.opts();
  std::vector<std::size_t> sizes = {64, 4096, 1u << 20, 64u << 20};
  if (opt.full())
    sizes = {64, 256, 1024, 4096, 16384, 65536, 262144, 1u << 20, 4u << 20, 16u << 20, 64u << 20};
  const double target = target_seconds(opt);

  std::string why;
  auto peer = base85_peer::rust_peer::start(base85_peer::find_program(), why);
  if (!peer) s.note(why);
#if SIMDEX_BENCH_HAVE_ZMQ
  int zmaj = 0, zmin = 0, zpatch = 0;
  zmq_version(&zmaj, &zmin, &zpatch);
  const std::string zmq_ver =
      std::to_string(zmaj) + "." + std::to_string(zmin) + "." + std::to_string(zpatch);
#else
  s.note("libzmq not found at build time: its Z85 codec is not in this run");
#endif
  s.note(
      "GiB/s counted on the binary side (bytes encoded or bytes decoded); simdex contenders "
      "write into preallocated buffers, except 'simdex alloc' (the active level), which "
      "allocates its output per call as base85-simd must (its API has no caller-provided "
      "buffer; from 32 MiB each allocation is a fresh mapping, so page faults): the summary "
      "compares those two; memcpy copies the same number of binary bytes");
  s.note("inputs: uniformly random bytes; a85 therefore rarely meets 'z' groups");

  const b85::variant variants[] = {b85::variant::b85, b85::variant::z85, b85::variant::a85};
  int planned = 0;
  for (auto v : variants)
    for (const char* op : {"encode", "decode"})
      if (opt.wants(std::string(b85::variant_name(v)) + "_" + op))
        planned += static_cast<int>(sizes.size());
  if (opt.wants("a85_decode_wrapped")) planned += static_cast<int>(sizes.size());
  s.plan(planned);
  s.note(
      "a85_decode_wrapped: the same a85 text with a line break after every 76 chars, beside "
      "the unwrapped text at the same level (same run, interleaved)");

  const auto& tables = b85::kernel_tables();
  for (std::size_t n : sizes) {
    std::vector<char> text_out(b85::encoded_size(n, {}) + 64);
    std::vector<std::uint8_t> bin_out(n + 64), copy_src(n), copy_dst(n);
    for (auto v : variants) {
      const std::string vname = b85::variant_name(v);
      if (!opt.wants(vname + "_encode") && !opt.wants(vname + "_decode") &&
          !opt.wants(vname + "_decode_wrapped"))
        continue;
      const std::uint64_t seed = 1000 + n;
      corpus c = make_corpus(n, v, seed);
      const std::size_t pool = c.bin.size();
      b85::encode_options eo;
      eo.var = v;
      const b85::decode_options dopt = b85::default_decode_options(v);
      // Check every level against scalar once before timing.
      for (int l = 0; l < kIsaCount; ++l)
        if (const b85::kernels* k = dispatch::exact(tables, static_cast<isa>(l))) {
          std::size_t w = encode_with(k, eo, c.bin[0], text_out.data());
          if (std::string(text_out.data(), w) != c.text[0])
            return std::fprintf(stderr, "encode mismatch\n"), 1;
          if (decode_with(k, dopt, c.text[0], bin_out.data()) != n ||
              std::memcmp(bin_out.data(), c.bin[0].data(), n) != 0)
            return std::fprintf(stderr, "decode mismatch\n"), 1;
        }

      for (bool enc : {true, false}) {
        const std::string workload = vname + (enc ? "_encode" : "_decode");
        if (!opt.wants(workload)) continue;
        std::vector<contender> cs;
        for (int l = 0; l < kIsaCount; ++l) {
          const b85::kernels* k = dispatch::exact(tables, static_cast<isa>(l));
          if (!k) continue;
          const char* name = isa_name(static_cast<isa>(l));
          if (enc)
            cs.push_back({name, name, throughput(n, target, [&, k](std::uint64_t i) {
                            do_not_optimize(encode_with(k, eo, c.bin[i % pool], text_out.data()));
                          })});
          else
            cs.push_back({name, name, throughput(n, target, [&, k](std::uint64_t i) {
                            do_not_optimize(decode_with(k, dopt, c.text[i % pool], bin_out.data()));
                          })});
        }
        cs.push_back({"memcpy", "libc", throughput(n, target, [&](std::uint64_t) {
                        std::memcpy(copy_dst.data(), copy_src.data(), n);
                        do_not_optimize(copy_dst.data());
                      })});
        std::string reference = "scalar";
#if SIMDEX_BENCH_HAVE_ZMQ
        if (v == b85::variant::z85) {
          reference = "libzmq";
          if (enc)
            cs.push_back({"libzmq", zmq_ver, throughput(n, target, [&](std::uint64_t i) {
                            do_not_optimize(
                                zmq_z85_encode(text_out.data(), c.bin[i % pool].data(), n));
                          })});
          else
            cs.push_back({"libzmq", zmq_ver, throughput(n, target, [&](std::uint64_t i) {
                            do_not_optimize(
                                zmq_z85_decode(bin_out.data(), c.text[i % pool].c_str()));
                          })});
        }
#endif
        if (v == b85::variant::b85 && peer) {
          // base85-simd's API allocates its output per call (at 64 MiB mostly page faults): the
          // same at the active level is the like-for-like contender the headline compares.
          const b85::kernels* k = &b85::active_kernels();
          if (enc)
            cs.push_back({"simdex alloc", isa_name(active_isa()),
                          throughput(n, target, [&, k](std::uint64_t i) {
                            std::unique_ptr<char[]> out(new char[b85::encoded_size(n, eo)]);
                            do_not_optimize(encode_with(k, eo, c.bin[i % pool], out.get()));
                            do_not_optimize(out.get());
                          })});
          else
            cs.push_back({"simdex alloc", isa_name(active_isa()),
                          throughput(n, target, [&, k](std::uint64_t i) {
                            std::unique_ptr<std::uint8_t[]> out(new std::uint8_t[n]);
                            do_not_optimize(decode_with(k, dopt, c.text[i % pool], out.get()));
                            do_not_optimize(out.get());
                          })});
          reference = "base85-simd";
          auto iters = std::make_shared<std::uint64_t>(0);
          const char* op = enc ? "encode" : "decode";
          cs.push_back({"base85-simd", "0.1.0", [&, iters, op, n, seed]() {
                          if (*iters == 0) {
                            double t = peer->run(op, n, 1, seed) * 1e-9;
                            *iters = std::max<std::uint64_t>(
                                1, static_cast<std::uint64_t>(target / std::max(t, 1e-9)));
                          }
                          double ns = peer->run(op, n, *iters, seed);
                          return ns <= 0 ? 0.0
                                         : static_cast<double>(n) * static_cast<double>(*iters) /
                                               (ns * 1e-9) / kGiB;
                        }});
        }
        s.group(workload, {{"variant", vname}, {"bytes", static_cast<std::int64_t>(n)}}, "GiB/s",
                better::higher, cs, reference);
      }
      if (v == b85::variant::a85 && opt.wants("a85_decode_wrapped")) {
        // Wrapped text decodes through the line or compaction path around the same kernel.
        std::vector<std::string> wrapped;
        for (const std::string& t : c.text) {
          std::string w;
          for (std::size_t i = 0; i < t.size(); i += kWrap) w.append(t, i, kWrap).push_back('\n');
          wrapped.push_back(std::move(w));
        }
        std::vector<contender> cs;
        for (int l = 0; l < kIsaCount; ++l) {
          const b85::kernels* k = dispatch::exact(tables, static_cast<isa>(l));
          if (!k) continue;
          const std::string name = isa_name(static_cast<isa>(l));
          cs.push_back({name, name, throughput(n, target, [&, k](std::uint64_t i) {
                          do_not_optimize(decode_with(k, dopt, wrapped[i % pool], bin_out.data()));
                        })});
          cs.push_back({name + " unwrapped", name, throughput(n, target, [&, k](std::uint64_t i) {
                          do_not_optimize(decode_with(k, dopt, c.text[i % pool], bin_out.data()));
                        })});
        }
        s.group("a85_decode_wrapped",
                {{"variant", vname},
                 {"bytes", static_cast<std::int64_t>(n)},
                 {"wrap", static_cast<std::int64_t>(kWrap)}},
                "GiB/s", better::higher, cs, "scalar");
      }
    }
  }
  s.write();
}
