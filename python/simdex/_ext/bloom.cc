// Bindings for simdex::bloom: the native Filter, batch hashing, sizing and Parquet I/O.
// The Pythonic BloomFilter lives in simdex/bloom.py.
#include "simdex/bloom.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <system_error>

#include "bind.h"

namespace simdex::py {

namespace {

using namespace simdex::bloom;
using hashes_in = array_in<std::uint64_t>;

nb::bytes as_bytes(const void* p, std::size_t n) {
  return nb::bytes(static_cast<const char*>(p), n);
}

template <class T, class Fn>
nb::object hash_array(array_in<T> v, Fn fn) {
  std::uint64_t* out;
  auto arr = new_array<std::uint64_t>(v.shape(0), &out);
  maybe_without_gil(v.shape(0) * sizeof(T), [&] { fn(v.data(), v.shape(0), out); });
  return nb::cast(arr);
}

nb::dict chunk_dict(const column_chunk_info& c, const footer_info& info) {
  nb::dict d;
  d["row_group"] = c.row_group;
  d["column"] = c.column;
  d["path"] = c.path;
  d["physical_type"] = physical_type_name(c.type);
  d["type_length"] = c.type_length;
  d["num_values"] = c.num_values;
  d["bloom_filter_offset"] = c.bloom_offset;
  d["bloom_filter_length"] = c.bloom_length;
  d["null_count"] = c.null_count;
  d["min"] = c.has_min ? nb::object(as_bytes(c.min_value.data(), c.min_value.size())) : nb::none();
  d["max"] = c.has_max ? nb::object(as_bytes(c.max_value.data(), c.max_value.size())) : nb::none();
  d["encrypted"] = c.encrypted;
  const auto col = static_cast<std::size_t>(c.column);
  d["logical_type"] = col < info.columns.size() ? info.columns[col].logical : std::string();
  return d;
}

nb::dict footer_dict(const footer_info& info) {
  nb::list chunks, columns;
  for (const auto& c : info.chunks) chunks.append(chunk_dict(c, info));
  for (const auto& c : info.columns) {
    nb::dict d;
    d["path"] = c.path;
    d["physical_type"] = physical_type_name(c.type);
    d["type_length"] = c.type_length;
    d["logical_type"] = c.logical;
    columns.append(d);
  }
  nb::dict d;
  d["num_rows"] = info.num_rows;
  d["num_row_groups"] = info.num_row_groups;
  d["encrypted"] = info.encrypted;
  d["columns"] = columns;
  d["chunks"] = chunks;
  return d;
}

// Which chunks a Python caller asked for: only those with a filter, in the given columns and
// row groups (empty: all).
struct chunk_request {
  std::vector<std::string> columns;
  std::vector<int> row_groups;
  bool with_filter_only = true;
  static bool keep(const column_chunk_info& c, const void* ctx) {
    const auto& q = *static_cast<const chunk_request*>(ctx);
    if (q.with_filter_only && c.bloom_offset < 0) return false;
    if (!q.columns.empty() &&
        std::find(q.columns.begin(), q.columns.end(), c.path) == q.columns.end())
      return false;
    return q.row_groups.empty() ||
           std::find(q.row_groups.begin(), q.row_groups.end(), c.row_group) != q.row_groups.end();
  }
};

struct py_parquet_file {
  chunk_request request;
  std::unique_ptr<parquet_file> file;
};

// Columns of page_headers' rows, in this order.
constexpr const char* kPageFields =
    "kind, body, compressed, uncompressed, values, encoding, def_encoding, nulls, level_bytes, "
    "def_bytes, values_compressed";

page_header header_of(std::uint32_t values, std::int32_t encoding, std::int32_t def_encoding,
                      std::uint32_t nulls = 0) {
  page_header h;
  h.values = values;
  h.encoding = encoding;
  h.def_encoding = def_encoding;
  h.nulls = nulls;
  return h;
}

void bind_pages(nb::module_& b) {
  b.def(
      "page_headers",
      [](array_in<std::uint8_t> chunk, std::uint64_t num_values) {
        std::vector<page_header> hs;
        {
          nb::gil_scoped_release rel;
          hs = parse_page_headers(chunk.data(), chunk.shape(0), num_values);
        }
        constexpr std::size_t kCols = 11;
        std::int64_t* out;
        auto arr = new_array<std::int64_t>(hs.size() * kCols, &out);
        for (const page_header& h : hs) {
          const std::int64_t row[kCols] = {h.kind,
                                           static_cast<std::int64_t>(h.body),
                                           h.compressed,
                                           h.uncompressed,
                                           h.values,
                                           h.encoding,
                                           h.def_encoding,
                                           h.nulls,
                                           h.level_bytes,
                                           h.def_bytes,
                                           h.values_compressed};
          out = std::copy_n(row, kCols, out);
        }
        return arr;
      },
      nb::arg("chunk"), nb::arg("num_values"),
      (std::string("A column chunk's page headers until its data pages hold num_values values: "
                   "a flat int64 array of rows (") +
       kPageFields + "); ValueError naming the byte for a malformed chunk.")
          .c_str());

  nb::class_<page_matcher>(b, "PageMatcher",
                           "Which rows of a flat BYTE_ARRAY column chunk equal one of a few keys, "
                           "fed its decompressed pages in order.")
      .def(
          "__init__",
          [](page_matcher* self, array_in<std::uint8_t> key_data,
             array_in<std::int64_t> key_offsets, int max_definition_level) {
            if (key_offsets.shape(0) < 1) throw nb::value_error("key_offsets needs k + 1 entries");
            new (self) page_matcher(key_data.data(), key_data.shape(0), key_offsets.data(),
                                    key_offsets.shape(0) - 1, max_definition_level);
          },
          nb::arg("key_data"), nb::arg("key_offsets"), nb::arg("max_definition_level"))
      .def(
          "dictionary",
          [](page_matcher& m, std::uint32_t values, std::int32_t encoding,
             array_in<std::uint8_t> data) {
            nb::gil_scoped_release rel;
            m.dictionary(header_of(values, encoding, 0), data.data(), data.shape(0));
          },
          nb::arg("values"), nb::arg("encoding"), nb::arg("data"))
      .def_prop_ro("dictionary_holds_key", &page_matcher::dictionary_holds_key)
      .def(
          "data_page_v1",
          [](page_matcher& m, std::uint32_t values, std::int32_t encoding,
             std::int32_t def_encoding, array_in<std::uint8_t> data) {
            nb::gil_scoped_release rel;
            m.data_page_v1(header_of(values, encoding, def_encoding), data.data(), data.shape(0));
          },
          nb::arg("values"), nb::arg("encoding"), nb::arg("def_encoding"), nb::arg("data"))
      .def(
          "data_page_v2",
          [](page_matcher& m, std::uint32_t values, std::uint32_t nulls, std::int32_t encoding,
             array_in<std::uint8_t> levels, array_in<std::uint8_t> data) {
            nb::gil_scoped_release rel;
            m.data_page_v2(header_of(values, encoding, kEncodingRle, nulls), levels.data(),
                           levels.shape(0), data.data(), data.shape(0));
          },
          nb::arg("values"), nb::arg("nulls"), nb::arg("encoding"), nb::arg("levels"),
          nb::arg("data"))
      .def("skip", &page_matcher::skip, nb::arg("rows"))
      .def(
          "result",
          [](const page_matcher& m) {
            const std::vector<std::int32_t>& r = m.rows();
            std::int32_t* out;
            auto arr = new_array<std::int32_t>(r.size(), &out);
            std::copy(r.begin(), r.end(), out);
            return nb::make_tuple(arr, m.hits());
          },
          "(rows, hits): per row the index of the key it equals or -1, and how many rows do.");
}

// One filter used from several threads. Probes and inserts run without the GIL, so nothing else
// orders them: two inserts lost each other's bits (a wrong "absent" later), and a fold freed the
// bitset under a probe. Probes share a filter; inserts and the calls that rewrite or replace the
// bitset have it alone. A filter maps to one of 64 locks by address (filters that share one only
// wait for each other); a call over many filters takes their locks in address order. A guard is
// taken after the GIL is released, or with it held but around no Python call, so no thread ever
// waits for the GIL while it holds one.
std::shared_mutex& stripe(const filter* f) {
  static std::shared_mutex locks[64];
  return locks[(reinterpret_cast<std::uintptr_t>(f) * 0x9E3779B97F4A7C15ull) >> 58];
}

class filter_guard {
 public:
  filter_guard(std::initializer_list<const filter*> shared, const filter* alone = nullptr) {
    lock(shared.begin(), shared.end(), alone);
  }
  explicit filter_guard(const std::vector<const filter*>& shared, const filter* alone = nullptr) {
    lock(shared.data(), shared.data() + shared.size(), alone);
  }
  ~filter_guard() {
    while (end_ != begin_) {
      --end_;
      end_->alone ? end_->m->unlock() : end_->m->unlock_shared();
    }
  }
  filter_guard(const filter_guard&) = delete;
  filter_guard& operator=(const filter_guard&) = delete;

 private:
  struct entry {
    std::shared_mutex* m;
    bool alone;
  };
  void lock(const filter* const* first, const filter* const* last, const filter* alone) {
    // A probe or an insert (one or two filters) allocates nothing; many filters use the heap.
    const std::size_t n = static_cast<std::size_t>(last - first) + (alone != nullptr);
    if (n > small_.size()) big_.resize(n);
    begin_ = n > small_.size() ? big_.data() : small_.data();
    end_ = begin_;
    if (alone) *end_++ = {&stripe(alone), true};
    for (; first != last; ++first) *end_++ = {&stripe(*first), false};
    std::stable_sort(begin_, end_, [](const entry& a, const entry& b) { return a.m < b.m; });
    // One entry per lock; the exclusive one (first of its run) wins.
    end_ = std::unique(begin_, end_, [](const entry& a, const entry& b) { return a.m == b.m; });
    for (entry* e = begin_; e != end_; ++e) e->alone ? e->m->lock() : e->m->lock_shared();
  }
  std::array<entry, 3> small_;
  std::vector<entry> big_;
  entry* begin_;
  entry* end_;
};

// A member of filter bound with the filter held alone (it rewrites the bitset) or shared (it
// reads it), with the member's own parameter types.
template <class R, class... A, bool NE>
auto alone(R (filter::*m)(A...) noexcept(NE)) {
  return [m](filter& f, A... a) {
    filter_guard g({}, &f);
    return (f.*m)(a...);
  };
}
template <class R, class... A, bool NE>
auto shared(R (filter::*m)(A...) const noexcept(NE)) {
  return [m](const filter& f, A... a) {
    filter_guard g({&f});
    return (f.*m)(a...);
  };
}

}  // namespace

void bind_bloom(nb::module_& m) {
  auto b = m.def_submodule("bloom", "Parquet split-block bloom filter (native core)");

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const parse_error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const std::system_error& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    }
  });

  nb::class_<filter>(b, "Filter", "A split-block bloom filter over a 64-byte-aligned bitset.")
      .def(nb::init<std::size_t>(), nb::arg("num_bytes"),
           "Empty filter of num_bytes (a power of two in [32, 128 MiB]).")
      .def_static(
          "with_blocks", [](std::uint64_t z) { return filter::with_blocks(z); }, nb::arg("blocks"))
      .def_static(
          "for_ndv",
          [](std::uint64_t ndv, double fpp, const std::string& s) {
            if (s != "arrow" && s != "model")
              throw nb::value_error("sizing must be 'arrow' or 'model'");
            return filter::for_ndv(ndv, fpp, s == "arrow" ? sizing::arrow : sizing::model);
          },
          nb::arg("ndv"), nb::arg("fpp"), nb::arg("sizing") = "arrow")
      .def_static(
          "from_bitset",
          [](nb::bytes data) { return filter::from_bitset(data.c_str(), data.size()); },
          nb::arg("bitset"), "Filter over a copy of a raw bitset (little-endian u32 words).")
      .def_static(
          "parse", [](nb::bytes data) { return parse(data.c_str(), data.size()); }, nb::arg("data"),
          "Filter from a Thrift BloomFilterHeader followed by its bitset.")
      .def_prop_ro("num_blocks", &filter::num_blocks)
      .def_prop_ro("num_bytes", &filter::size_bytes)
      .def("bitset",
           [](const filter& f) {
             std::string copy;
             {
               filter_guard g({&f}, {});
               copy.assign(reinterpret_cast<const char*>(f.words()), f.size_bytes());
             }
             return nb::bytes(copy.data(), copy.size());
           })
      .def("serialize",
           [](const filter& f) {
             std::vector<std::uint8_t> v;
             {
               filter_guard g({&f}, {});
               v = serialize(f);
             }
             return as_bytes(v.data(), v.size());
           })
      .def(
          "insert_hash",
          [](filter& f, std::uint64_t h) {
            filter_guard g({}, &f);
            f.insert(h);
          },
          nb::arg("hash"))
      .def(
          "check_hash",
          [](const filter& f, std::uint64_t h) {
            filter_guard g({&f}, {});
            return f.check(h);
          },
          nb::arg("hash"))
      .def(
          "insert_hashes",
          [](filter& f, hashes_in h) {
            nb::gil_scoped_release rel;
            filter_guard g({}, &f);
            f.insert({h.data(), h.shape(0)});
          },
          nb::arg("hashes"))
      .def(
          "check_hashes",
          [](const filter& f, hashes_in h) {
            bool* out;
            auto arr = new_array<bool>(h.shape(0), &out);
            {
              nb::gil_scoped_release rel;
              filter_guard g({&f}, {});
              f.check({h.data(), h.shape(0)}, reinterpret_cast<std::uint8_t*>(out));
            }
            return arr;
          },
          nb::arg("hashes"), "numpy bool array: may each hash be present.")
      .def(
          "check_hashes_bits",
          [](const filter& f, hashes_in h) {
            std::uint64_t* out;
            auto arr = new_array<std::uint64_t>((h.shape(0) + 63) / 64, &out);
            {
              nb::gil_scoped_release rel;
              filter_guard g({&f}, {});
              f.check_bits({h.data(), h.shape(0)}, out);
            }
            return arr;
          },
          nb::arg("hashes"), "Bitmap (uint64 words, LSB first) of check results.")
      .def(
          "merge",
          [](filter& f, const filter& other) {
            filter_guard g({&other}, &f);
            f.merge(other);
          },
          nb::arg("other"))
      .def("fold", alone(&filter::fold), nb::arg("k"))
      .def("fold_to_fpp", alone(&filter::fold_to_fpp), nb::arg("target_fpp"))
      .def("fill", shared(&filter::fill))
      .def("popcount", shared(&filter::popcount))
      .def("estimated_fpp", shared(&filter::estimated_fpp))
      .def("copy",
           [](const filter& f) {
             filter_guard g({&f}, {});
             return filter(f);
           })
      .def("__eq__", [](const filter& a, const filter& c) {
        filter_guard g({&a, &c}, {});
        return a == c;
      });

  b.def(
      "check_filters",
      [](const std::vector<const filter*>& fs, std::uint64_t h) {
        bool* out;
        auto arr = new_array<bool>(fs.size(), &out);
        filter_guard g(fs, {});
        std::vector<filter_view> views;
        for (const filter* f : fs) views.push_back(f->view());
        check_filters(views, h, reinterpret_cast<std::uint8_t*>(out));
        return arr;
      },
      nb::arg("filters"), nb::arg("hash"), "One hash against many filters (row-group skipping).");
  b.def(
      "check_filters_many",
      [](const std::vector<const filter*>& fs, hashes_in h) {
        bool* out;
        auto arr = new_array<bool>(fs.size() * h.shape(0), &out);
        nb::gil_scoped_release rel;
        filter_guard g(fs, {});
        std::vector<filter_view> views;
        for (const filter* f : fs) views.push_back(f->view());
        check_filters(views, {h.data(), h.shape(0)}, reinterpret_cast<std::uint8_t*>(out));
        return arr;
      },
      nb::arg("filters"), nb::arg("hashes"),
      "Many hashes against many filters, filter by filter: a flat bool array, filter-major.");

  b.def("hash_int32", [](array_in<std::int32_t> v) { return hash_array(v, hash_int32s); });
  b.def("hash_int64", [](array_in<std::int64_t> v) { return hash_array(v, hash_int64s); });
  b.def("hash_float", [](array_in<float> v) { return hash_array(v, hash_floats); });
  b.def("hash_double", [](array_in<double> v) { return hash_array(v, hash_doubles); });
  b.def(
      "hash_fixed",
      [](nb::ndarray<const std::uint8_t, nb::ndim<2>, nb::c_contig, nb::device::cpu> v) {
        std::uint64_t* out;
        auto arr = new_array<std::uint64_t>(v.shape(0), &out);
        hash_fixed(v.data(), v.shape(1), v.shape(0), out);
        return arr;
      },
      nb::arg("values"), "XXH64 of each row of a 2-D uint8 array (FIXED_LEN_BYTE_ARRAY, INT96).");
  b.def(
      "hash_bytes", [](nb::bytes v) { return hash_bytes(v.c_str(), v.size()); }, nb::arg("value"));
  b.def(
      "hash_bytes_list",
      [](const std::vector<nb::bytes>& vs) {
        std::uint64_t* out;
        auto arr = new_array<std::uint64_t>(vs.size(), &out);
        for (std::size_t i = 0; i < vs.size(); ++i)
          out[i] = hash_bytes(vs[i].c_str(), vs[i].size());
        return arr;
      },
      nb::arg("values"));
  b.def("hash_bool", &hash_bool, nb::arg("value"));
  b.def(
      "hash_offsets",
      [](array_in<std::uint8_t> data,
         nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu> offsets) {
        const std::size_t n = offsets.shape(0) ? offsets.shape(0) - 1 : 0;
        const std::int64_t* o = offsets.data();
        for (std::size_t i = 0; i < n; ++i)
          if (o[i] < 0 || o[i] > o[i + 1] || static_cast<std::uint64_t>(o[i + 1]) > data.shape(0))
            throw nb::value_error("offsets out of order or past the data");
        std::uint64_t* out;
        auto arr = new_array<std::uint64_t>(n, &out);
        {
          nb::gil_scoped_release rel;
          for (std::size_t i = 0; i < n; ++i)
            out[i] = hash_bytes(data.data() + o[i], static_cast<std::size_t>(o[i + 1] - o[i]));
        }
        return arr;
      },
      nb::arg("data"), nb::arg("offsets"),
      "XXH64 of value i = data[offsets[i]:offsets[i+1]] (an Arrow binary array's buffers).");

  b.def(
      "data_page_v1_values",
      [](std::uint32_t values, std::int32_t def_encoding, int max_definition_level,
         array_in<std::uint8_t> data) {
        const v1_values v = data_page_v1_values(header_of(values, kEncodingPlain, def_encoding),
                                                max_definition_level, data.data(), data.shape(0));
        return nb::make_tuple(v.offset, v.nonnull);
      },
      nb::arg("values"), nb::arg("def_encoding"), nb::arg("max_definition_level"), nb::arg("data"),
      "(offset, nonnull) of a decompressed V1 data page: where its values start, past the "
      "definition levels, and how many rows have one.");
  b.def(
      "hash_byte_array_values",
      [](std::int32_t encoding, array_in<std::uint8_t> data, std::size_t count) {
        std::uint64_t* out;
        auto arr = new_array<std::uint64_t>(count, &out);
        {
          nb::gil_scoped_release rel;
          hash_byte_array_values(encoding, data.data(), data.shape(0), count, out);
        }
        return arr;
      },
      nb::arg("encoding"), nb::arg("data"), nb::arg("count"),
      "XXH64 of each of a data page's `count` BYTE_ARRAY values (PLAIN, DELTA_LENGTH_BYTE_ARRAY "
      "or DELTA_BYTE_ARRAY); ValueError naming the byte when they do not fit.");
  b.def(
      "count_distinct_hashes",
      [](hashes_in h) {
        nb::gil_scoped_release rel;
        return count_distinct_hashes(h.data(), h.shape(0));
      },
      nb::arg("hashes"), "How many distinct values an array of hashes holds.");

  b.def(
      "match_fixed",
      [](array_in<std::uint8_t> values, std::size_t width, array_in<std::uint8_t> keys) {
        if (width == 0 || values.shape(0) % width || keys.shape(0) % width)
          throw nb::value_error("values and keys must be whole numbers of `width` bytes");
        const std::size_t n = values.shape(0) / width;
        std::uint8_t* out;
        auto arr = new_array<std::uint8_t>(n, &out);
        std::size_t hits;
        {
          nb::gil_scoped_release rel;
          hits = match_fixed(values.data(), width, n, keys.data(), keys.shape(0) / width, out);
        }
        return nb::make_tuple(arr, hits);
      },
      nb::arg("values"), nb::arg("width"), nb::arg("keys"),
      "(mask, hits): mask[i] = 1 where value i (`width` bytes, compared as bits) is a key.");
  b.def(
      "match_binary",
      [](array_in<std::uint8_t> data, array_in<std::uint8_t> offsets, std::size_t offset_width,
         array_in<std::uint8_t> key_data, array_in<std::int64_t> key_offsets) {
        if ((offset_width != 4 && offset_width != 8) || offsets.shape(0) % offset_width ||
            offsets.shape(0) < offset_width || key_offsets.shape(0) < 1)
          throw nb::value_error("offsets must hold n + 1 entries of 4 or 8 bytes");
        if (reinterpret_cast<std::uintptr_t>(offsets.data()) % offset_width)
          throw nb::value_error("offsets must be aligned to their width");
        const std::size_t n = offsets.shape(0) / offset_width - 1;
        std::uint8_t* out;
        auto arr = new_array<std::uint8_t>(n, &out);
        std::size_t hits;
        {
          nb::gil_scoped_release rel;
          hits = match_binary(data.data(), data.shape(0), offsets.data(), offset_width, n,
                              key_data.data(), key_data.shape(0), key_offsets.data(),
                              key_offsets.shape(0) - 1, out);
        }
        return nb::make_tuple(arr, hits);
      },
      nb::arg("data"), nb::arg("offsets"), nb::arg("offset_width"), nb::arg("key_data"),
      nb::arg("key_offsets"),
      "(mask, hits) for byte strings in Arrow's layout (offsets of 4 or 8 bytes, n + 1 of them).");

  bind_pages(b);

  b.def("arrow_num_bytes", &arrow_num_bytes, nb::arg("ndv"), nb::arg("fpp"));
  b.def("model_num_bytes", &model_num_bytes, nb::arg("ndv"), nb::arg("fpp"));
  b.def("model_fpp", &model_fpp, nb::arg("ndv"), nb::arg("num_bytes"));
  b.def("model_bits_per_value", &model_bits_per_value, nb::arg("fpp"));

  b.def(
      "read_footer", [](nb::handle path) { return footer_dict(read_footer(fs_path(path))); },
      nb::arg("path"));

  nb::class_<py_parquet_file>(b, "ParquetFile",
                              "An open Parquet file: the chunks asked for, filters read on demand.")
      .def(
          "__init__",
          [](py_parquet_file* self, nb::handle path_arg,
             std::optional<std::vector<std::string>> columns,
             std::optional<std::vector<int>> row_groups, bool with_filter_only) {
            const std::string path = fs_path(path_arg);
            auto* p = new (self) py_parquet_file();
            p->request.columns = columns.value_or(std::vector<std::string>{});
            p->request.row_groups = row_groups.value_or(std::vector<int>{});
            p->request.with_filter_only = with_filter_only;
            nb::gil_scoped_release rel;  // footer reads of many files run in parallel threads
            p->file = std::make_unique<parquet_file>(path, &chunk_request::keep, &p->request);
          },
          nb::arg("path"), nb::arg("columns") = nb::none(), nb::arg("row_groups") = nb::none(),
          nb::arg("with_filter_only") = true)
      .def("footer", [](const py_parquet_file& f) { return footer_dict(f.file->footer()); })
      .def(
          "read_filter",
          [](const py_parquet_file& f, std::size_t i) {
            const auto& chunks = f.file->footer().chunks;
            if (i >= chunks.size()) throw nb::index_error("chunk index out of range");
            nb::gil_scoped_release rel;
            return f.file->read_filter(chunks[i]);
          },
          nb::arg("index"), "The filter of chunk `index` of footer()['chunks'].")
      .def(
          "locate_filter",
          [](const py_parquet_file& f, std::size_t i) {
            const auto& chunks = f.file->footer().chunks;
            if (i >= chunks.size()) throw nb::index_error("chunk index out of range");
            auto r = f.file->locate_filter(chunks[i]);
            return nb::make_tuple(r.offset, r.size);
          },
          nb::arg("index"), "(offset, size) of chunk `index`'s bitset, its header checked.")
      .def(
          "probe",
          [](const py_parquet_file& f, const std::vector<std::size_t>& indices, hashes_in h) {
            const auto& chunks = f.file->footer().chunks;
            std::vector<const column_chunk_info*> sel;
            for (std::size_t i : indices) {
              if (i >= chunks.size()) throw nb::index_error("chunk index out of range");
              sel.push_back(&chunks[i]);
            }
            std::uint8_t* out;
            auto arr = new_array<std::uint8_t>(sel.size() * h.shape(0), &out);
            std::vector<std::string> errors;
            parquet_file::probe_stats st;
            {
              nb::gil_scoped_release rel;
              st = f.file->probe(sel, {h.data(), h.shape(0)}, out, errors);
            }
            nb::list errs;
            for (auto& e : errors) errs.append(e);
            return nb::make_tuple(arr, errs, st.reads, st.bytes);
          },
          nb::arg("indices"), nb::arg("hashes"),
          "Probe the filters of chunks `indices` with `hashes`, reading only the blocks needed: "
          "(uint8 array len(indices) * len(hashes), per-chunk error texts, reads, bytes read).")
      .def_prop_ro("footer_offset",
                   [](const py_parquet_file& f) { return f.file->footer_offset(); })
      .def_prop_ro("footer_length",
                   [](const py_parquet_file& f) { return f.file->footer_length(); })
      .def_prop_ro("file_size", [](const py_parquet_file& f) { return f.file->file_size(); });

  b.def(
      "set_bloom_locations",
      [](nb::bytes footer,
         const std::vector<std::tuple<int, int, std::int64_t, std::int32_t>>& locs) {
        std::vector<bloom_location> l;
        for (auto& [rg, col, off, len] : locs) l.push_back({rg, col, off, len});
        auto v = set_bloom_locations(footer.c_str(), footer.size(), l);
        return as_bytes(v.data(), v.size());
      },
      nb::arg("footer"), nb::arg("locations"),
      "The FileMetaData with bloom_filter_offset/length set for (row_group, column, offset, "
      "length) entries; every other byte copied through.");
}

}  // namespace simdex::py
