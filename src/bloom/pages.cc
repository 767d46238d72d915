// A flat BYTE_ARRAY column chunk matched against a few keys in its pages: page headers parsed,
// definition levels and dictionary indices decoded (RLE / bit-packed hybrid), PLAIN values
// compared where they lie. Nothing is trusted: every length is checked against the bytes given.
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "simdex/bloom.h"
#include "tag_set.h"
#include "thrift.h"

namespace simdex::bloom {

namespace {

using thrift::reader;

// The i32 fields of a struct whose ids are below N (others skipped); `flag` gets field 7's
// bool (DataPageHeaderV2.is_compressed), the only bool read.
template <std::size_t N>
void read_ints(reader& r, std::int64_t (&out)[N], bool* flag) {
  int last = 0;
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.id > 0 && static_cast<std::size_t>(f.id) < N && f.type == thrift::kI32)
      out[f.id] = r.i32();
    else if (flag && f.id == 7 && (f.type == thrift::kTrue || f.type == thrift::kFalse))
      *flag = f.type == thrift::kTrue;
    else
      r.skip(f.type, 1);
  }
}

std::uint32_t count_field(const reader& r, std::int64_t v, const char* what) {
  if (v < 0 || v > INT32_MAX) r.fail(std::string("page header: ") + what + " missing or negative");
  return static_cast<std::uint32_t>(v);
}

page_header parse_one(reader& r) {
  std::int64_t top[4] = {-1, -1, -1, -1};  // type, uncompressed, compressed
  std::int64_t v1[4] = {-1, -1, -1, -1}, dict[3] = {-1, -1, -1},
               v2[7] = {-1, -1, -1, -1, -1, -1, -1};
  bool compressed = true, have_v1 = false, have_dict = false, have_v2 = false;
  int last = 0;
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.id >= 1 && f.id <= 3 && f.type == thrift::kI32) {
      top[f.id] = r.i32();
    } else if (f.id == 5 && f.type == thrift::kStruct) {
      read_ints(r, v1, nullptr);
      have_v1 = true;
    } else if (f.id == 7 && f.type == thrift::kStruct) {
      read_ints(r, dict, nullptr);
      have_dict = true;
    } else if (f.id == 8 && f.type == thrift::kStruct) {
      read_ints(r, v2, &compressed);
      have_v2 = true;
    } else {
      r.skip(f.type);
    }
  }
  page_header h;
  h.kind = static_cast<std::int32_t>(top[1]);
  h.uncompressed = count_field(r, top[2], "uncompressed_page_size");
  h.compressed = count_field(r, top[3], "compressed_page_size");
  if (top[1] == kPageData) {
    if (!have_v1) r.fail("data page without its data_page_header");
    h.values = count_field(r, v1[1], "num_values");
    h.encoding = static_cast<std::int32_t>(v1[2]);
    if (v1[3] >= 0) h.def_encoding = static_cast<std::int32_t>(v1[3]);
  } else if (top[1] == kPageDictionary) {
    if (!have_dict) r.fail("dictionary page without its dictionary_page_header");
    h.values = count_field(r, dict[1], "num_values");
    h.encoding = dict[2] < 0 ? kEncodingPlain : static_cast<std::int32_t>(dict[2]);
  } else if (top[1] == kPageDataV2) {
    if (!have_v2) r.fail("data page v2 without its data_page_header_v2");
    h.values = count_field(r, v2[1], "num_values");
    h.nulls = count_field(r, v2[2], "num_nulls");
    h.encoding = static_cast<std::int32_t>(v2[4]);
    h.def_bytes = count_field(r, v2[5], "definition_levels_byte_length");
    const std::uint32_t rep = count_field(r, v2[6], "repetition_levels_byte_length");
    if (std::uint64_t{h.def_bytes} + rep > h.compressed || h.def_bytes + rep > h.uncompressed)
      r.fail("page header: levels larger than the page");
    if (h.nulls > h.values) r.fail("page header: more nulls than values");
    h.level_bytes = h.def_bytes + rep;
    h.values_compressed = compressed;
  } else if (top[1] < 0) {
    r.fail("page header without its type");
  }
  return h;
}

// Reads the RLE / bit-packed hybrid (Parquet's RLE encoding) of values `width` bits wide.
class hybrid {
 public:
  hybrid(const std::uint8_t* p, std::size_t n, unsigned width) : p_(p), n_(n), w_(width) {
    if (width > 32) fail("bit width above 32");
  }
  // Calls run(value, count) for runs and each(value) for bit-packed values until `want` values
  // have come; throws when the bytes end first.
  template <class Run, class Each>
  void read(std::size_t want, Run run, Each each) {
    const std::uint64_t mask = w_ == 0 ? 0 : (~std::uint64_t{0} >> (64 - w_));
    while (want) {
      const std::uint64_t h = varint();
      if (h & 1) {
        // Groups of 8 values; the last group's padding may be cut short by a writer.
        const std::uint64_t groups = h >> 1;
        if (groups == 0) fail("empty bit-packed run");
        const std::size_t take =
            groups >= (want + 7) / 8 ? want : static_cast<std::size_t>(groups * 8);
        if ((take * w_ + 7) / 8 > n_ - at_) fail("bit-packed run runs past the end");
        for (std::size_t i = 0; i < take; ++i) each(static_cast<std::uint32_t>(bits(i) & mask));
        if (w_ != 0)  // width 0 takes no bytes: every value is 0
          at_ = groups <= (n_ - at_) / w_ ? at_ + static_cast<std::size_t>(groups * w_) : n_;
        want -= take;
      } else {
        const std::uint64_t count = h >> 1;
        if (count == 0) fail("empty RLE run");
        const unsigned bytes = (w_ + 7) / 8;
        if (n_ - at_ < bytes) fail("RLE run value cut off");
        std::uint32_t v = 0;
        for (unsigned b = 0; b < bytes; ++b) v |= std::uint32_t{p_[at_ + b]} << (8 * b);
        at_ += bytes;
        if (v & ~mask) fail("RLE run value wider than its bit width");
        const std::size_t take = count < want ? static_cast<std::size_t>(count) : want;
        run(v, take);
        want -= take;
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw parse_error("RLE/bit-packed data: " + what, at_);
  }
  std::uint64_t varint() {
    return thrift::read_varint(p_, n_, at_, 0, "RLE/bit-packed run header");
  }
  // Value i of the bit-packed group starting at at_ (an 8-byte window, zero past the end).
  std::uint64_t bits(std::size_t i) const {
    const std::size_t bit = i * w_, byte = at_ + bit / 8;
    std::uint64_t x = 0;
    if (n_ - byte >= 8)
      std::memcpy(&x, p_ + byte, 8);
    else
      std::memcpy(&x, p_ + byte, n_ - byte);
    return x >> (bit % 8);
  }

  const std::uint8_t* p_;
  std::size_t n_, at_ = 0;
  unsigned w_;
};

// Definition levels (max 1) of `rows` rows: how many are non-null, each row's level into
// `defined` when given.
std::size_t decode_levels(const std::uint8_t* p, std::size_t size, std::size_t rows,
                          std::vector<std::uint8_t>* defined) {
  if (defined) defined->assign(rows, 0);
  std::size_t i = 0, count = 0;
  hybrid(p, size, 1)
      .read(
          rows,
          [&](std::uint32_t v, std::size_t c) {
            if (defined) std::memset(defined->data() + i, v != 0, c);
            count += v ? c : 0;
            i += c;
          },
          [&](std::uint32_t v) {
            if (defined) (*defined)[i] = static_cast<std::uint8_t>(v);
            count += v;
            ++i;
          });
  return count;
}

v1_values split_v1(const page_header& h, int max_def, const std::uint8_t* data, std::size_t size,
                   std::vector<std::uint8_t>* defined) {
  if (!max_def) return {0, h.values};
  if (h.def_encoding != kEncodingRle)
    throw parse_error("definition levels encoded " + std::to_string(h.def_encoding), 0);
  if (size < 4) throw parse_error("definition levels: length cut off", 0);
  std::uint32_t len;
  std::memcpy(&len, data, 4);
  if (len > size - 4) throw parse_error("definition levels run past the page", 0);
  return {4 + std::size_t{len}, decode_levels(data + 4, len, h.values, defined)};
}

// DELTA_BINARY_PACKED integers at p[0, n), read one at a time: a few bytes of zero-width
// miniblocks can claim billions of values, so nothing is allocated per value. The constructor
// checks the header (its total must be `count`) and walks the blocks to where they end, checking
// that each fits, without decoding them; next() then cannot run past. Sums wrap, as the spec
// allows writers to rely on. Errors name the byte at base + offset.
class delta_ints {
 public:
  delta_ints(const std::uint8_t* p, std::size_t n, std::size_t count, std::size_t base)
      : p_(p), n_(n), base_(base) {
    const std::uint64_t block = varint(at_), minis = varint(at_), total = varint(at_);
    v_ = zigzag(at_);
    if (block == 0 || block % 128 || block > (1u << 20) || minis == 0 || block % minis ||
        (block / minis) % 32)
      fail("block of " + std::to_string(block) + " values in " + std::to_string(minis) +
               " miniblocks",
           at_);
    if (total != count)
      fail("holds " + std::to_string(total) + " values, the page " + std::to_string(count), at_);
    minis_ = static_cast<std::size_t>(minis);
    per_mini_ = static_cast<std::size_t>(block / minis);
    m_ = minis_;
    j_ = per_mini_;
    body_ = end_ = at_;
    for (std::size_t left = count ? count - 1 : 0; left;) {
      zigzag(end_);
      if (n_ - end_ < minis_) fail("miniblock bit widths cut off", end_);
      const std::uint8_t* widths = p_ + end_;
      end_ += minis_;
      for (std::size_t m = 0; m < minis_ && left; ++m) {
        if (widths[m] > 64) fail("bit width " + std::to_string(widths[m]), end_);
        const std::size_t bytes = per_mini_ * widths[m] / 8;
        if (n_ - end_ < bytes) fail("miniblock runs past the page", end_);
        end_ += bytes;
        left -= std::min(left, per_mini_);
      }
    }
  }
  // Bytes the values take.
  std::size_t size() const { return end_; }
  // The next value; at most `count` calls.
  std::int64_t next() {
    if (first_) {
      first_ = false;
      return static_cast<std::int64_t>(v_);
    }
    if (j_ == per_mini_) {  // the next miniblock, in the next block after the last one
      std::size_t at = body_ + per_mini_ * w_ / 8;
      if (++m_ >= minis_) {
        min_delta_ = zigzag(at);
        widths_ = p_ + at;
        at += minis_;
        m_ = 0;
      }
      w_ = widths_[m_];
      body_ = at;
      j_ = 0;
    }
    std::uint64_t d = 0;
    for (unsigned got = 0; got < w_;) {  // w_ bits from bit j_ * w_, LSB first
      const std::size_t bit = j_ * w_ + got;
      const unsigned take = std::min(w_ - got, 8 - static_cast<unsigned>(bit % 8));
      const std::uint64_t b = p_[body_ + bit / 8] >> (bit % 8) & ((1u << take) - 1);
      d |= b << got;
      got += take;
    }
    ++j_;
    v_ += min_delta_ + d;
    return static_cast<std::int64_t>(v_);
  }

 private:
  [[noreturn]] void fail(const std::string& what, std::size_t at) const {
    throw parse_error("DELTA_BINARY_PACKED: " + what, base_ + at);
  }
  std::uint64_t varint(std::size_t& at) const {
    return thrift::read_varint(p_, n_, at, base_, "DELTA_BINARY_PACKED header");
  }
  std::uint64_t zigzag(std::size_t& at) const {
    const std::uint64_t z = varint(at);
    return (z >> 1) ^ (~(z & 1) + 1);
  }

  const std::uint8_t* p_;
  std::size_t n_, base_, at_ = 0, end_ = 0;
  std::size_t minis_ = 0, per_mini_ = 0;
  std::size_t m_ = 0, j_ = 0, body_ = 0;  // miniblock in its block, value in it, its bytes
  const std::uint8_t* widths_ = nullptr;  // of the current block's miniblocks
  unsigned w_ = 0;
  std::uint64_t v_ = 0, min_delta_ = 0;
  bool first_ = true;
};

// Each of the `count` BYTE_ARRAY values of a page's value bytes p[0, n) in `encoding` (PLAIN,
// DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY) to f(index, bytes, length, shared), `shared`
// being how many leading bytes the value shares with the previous one (DELTA_BYTE_ARRAY's
// prefix; 0 otherwise). A DELTA_BYTE_ARRAY value is as long as its prefix, and zero-width prefix
// lengths make every value the page's size for about a byte of page each: f must spend on a
// value no more than its suffix plus a constant, or a small page costs time quadratic in its size.
template <class F>
void for_each_byte_array(std::int32_t encoding, const std::uint8_t* p, std::size_t n,
                         std::size_t count, F f) {
  if (encoding == kEncodingPlain) {
    std::size_t at = 0;
    for (std::size_t i = 0; i < count; ++i) {
      if (n - at < 4) throw parse_error("PLAIN BYTE_ARRAY: length prefix cut off", at);
      std::uint32_t len;
      std::memcpy(&len, p + at, 4);
      if (len > n - at - 4) throw parse_error("PLAIN BYTE_ARRAY: value runs past the page", at);
      f(i, p + at + 4, std::size_t{len}, std::size_t{0});
      at += 4 + std::size_t{len};
    }
    return;
  }
  std::optional<delta_ints> prefix;
  std::size_t at = 0;
  if (encoding == kEncodingDeltaByteArray) {
    prefix.emplace(p, n, count, 0);
    at = prefix->size();
  } else if (encoding != kEncodingDeltaLengthByteArray) {
    throw parse_error("data page encoding " + std::to_string(encoding) + " is not read here", 0);
  }
  delta_ints len(p + at, n - at, count, at);
  at += len.size();
  // DELTA_BYTE_ARRAY: the previous value, whose prefix the next one shares. Truncating it to a
  // prefix costs nothing and appending costs the suffix, so this rebuild is linear in the page.
  std::string value;
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t l = len.next();
    if (l < 0 || static_cast<std::uint64_t>(l) > n - at)
      throw parse_error("DELTA_LENGTH_BYTE_ARRAY: value runs past the page", at);
    const auto size = static_cast<std::size_t>(l);
    if (!prefix) {
      f(i, p + at, size, std::size_t{0});
    } else {
      const std::int64_t shared = prefix->next();
      if (shared < 0 || static_cast<std::uint64_t>(shared) > value.size())
        throw parse_error("DELTA_BYTE_ARRAY: prefix longer than the previous value", at);
      value.resize(static_cast<std::size_t>(shared));
      value.append(reinterpret_cast<const char*>(p + at), size);
      f(i, reinterpret_cast<const std::uint8_t*>(value.data()), value.size(),
        static_cast<std::size_t>(shared));
    }
    at += size;
  }
}

// XXH64 of values that share a prefix with the one before (for_each_byte_array's `shared`), at
// a cost per value of its suffix plus kStride bytes, however long the shared prefix: the hash's
// state is kept every kStride bytes of the current value, and a value resumes from the last such
// checkpoint inside the prefix it shares. Values shorter than two strides are hashed whole, and
// a value equal to the one before costs nothing.
class prefix_hasher {
 public:
  std::uint64_t operator()(const std::uint8_t* v, std::size_t len, std::size_t shared) {
    if (have_last_ && shared == len && len == last_len_) return last_;  // the previous value
    have_last_ = true;
    last_len_ = len;
    // Checkpoints past the shared bytes describe the previous value only.
    valid_ = std::min(valid_, shared / kStride);
    if (len < 2 * kStride) return last_ = hash_bytes(v, len);  // no dearer than resuming
    if (states_.empty()) {
      states_.emplace_back();
      XXH64_reset(&states_[0], 0);
    }
    // states_[k] holds the state after the value's first k * kStride bytes; states_[0] is fresh.
    for (std::size_t k = valid_; (k + 1) * kStride <= len; ++k) {
      if (states_.size() == k + 1)
        states_.push_back(states_[k]);
      else
        states_[k + 1] = states_[k];
      XXH64_update(&states_[k + 1], v + k * kStride, kStride);
      valid_ = k + 1;
    }
    XXH64_state_t tail = states_[valid_];
    XXH64_update(&tail, v + valid_ * kStride, len - valid_ * kStride);
    return last_ = XXH64_digest(&tail);
  }

 private:
  static constexpr std::size_t kStride = 256;  // a multiple of XXH64's 32-byte stripe
  std::vector<XXH64_state_t> states_;
  std::size_t valid_ = 0;  // states_[1..valid_] hold the current value's checkpoints
  bool have_last_ = false;
  std::size_t last_len_ = 0;
  std::uint64_t last_ = 0;
};

}  // namespace

std::vector<page_header> parse_page_headers(const void* chunk, std::size_t size,
                                            std::uint64_t num_values) {
  const auto* p = static_cast<const std::uint8_t*>(chunk);
  std::vector<page_header> out;
  std::uint64_t seen = 0;
  std::size_t at = 0;
  while (seen < num_values) {
    if (at >= size) throw parse_error("column chunk ends before its values add up", at);
    reader r(p + at, size - at, at);
    page_header h = parse_one(r);
    h.body = at + r.pos();
    if (h.compressed > size - h.body) throw parse_error("page runs past the column chunk", at);
    if (h.kind == kPageData || h.kind == kPageDataV2) seen += h.values;
    at = static_cast<std::size_t>(h.body) + h.compressed;
    out.push_back(h);
  }
  if (seen != num_values) throw parse_error("the pages hold more values than the chunk", at);
  return out;
}

struct page_matcher::state {
  std::vector<std::uint8_t> key_data;
  std::vector<std::int64_t> key_offsets;
  detail::byte_key_set keys;
  int max_def;
  bool have_dict = false, dict_hit = false;
  std::vector<std::int32_t> dict;  // key index per dictionary entry, -1 none
  std::vector<std::int32_t> rows;
  std::vector<std::uint8_t> defined;
  std::size_t hits = 0;

  state(const std::uint8_t* data, std::size_t bytes, const std::int64_t* offsets, std::size_t k,
        int def)
      : key_data(data, data + bytes),
        key_offsets(offsets, offsets + k + 1),
        keys(key_data.data(), key_offsets.data(), k),
        max_def(def) {}

  std::int32_t find(const std::uint8_t* v, std::size_t len) const { return keys.find(v, len); }
  // A data page's `n` rows, `nonnull` of them with values (their levels in `defined` unless all
  // are non-null), appended to rows.
  void values(std::int32_t encoding, const std::uint8_t* p, std::size_t size, std::size_t n,
              std::size_t nonnull) {
    // A PLAIN value takes 4 bytes (its length) at least: a header claiming more values than
    // the page can hold had us fill 4 bytes a row (8 GiB at its maximum) before the decode
    // failed.
    if (encoding == kEncodingPlain && nonnull > size / 4)
      throw parse_error("the page claims " + std::to_string(nonnull) + " PLAIN values in " +
                            std::to_string(size) + " bytes",
                        0);
    const std::size_t base = rows.size();
    rows.resize(base + n, -1);
    std::int32_t* out = rows.data() + base;
    std::vector<std::int32_t> got;  // per non-null value, when some rows are null
    const bool dense = nonnull == n;
    if (!dense) got.resize(nonnull);
    std::int32_t* dst = dense ? out : got.data();
    if (encoding == kEncodingRleDictionary || encoding == kEncodingPlainDictionary) {
      if (!have_dict) throw parse_error("dictionary-encoded page without a dictionary page", 0);
      if (nonnull && size == 0) throw parse_error("dictionary indices: bit width missing", 0);
      std::size_t i = 0;
      const std::size_t d = dict.size();
      auto look = [&](std::uint32_t v) {
        if (v >= d)
          throw parse_error("dictionary index " + std::to_string(v) + " past the dictionary", 0);
        return dict[v];
      };
      if (nonnull)
        hybrid(p + 1, size - 1, p[0])
            .read(
                nonnull,
                [&](std::uint32_t v, std::size_t c) {
                  const std::int32_t k = look(v);
                  for (std::size_t j = 0; j < c; ++j) dst[i++] = k;
                },
                [&](std::uint32_t v) { dst[i++] = look(v); });
    } else {
      for_each_byte_array(encoding, p, size, nonnull,
                          [&](std::size_t i, const std::uint8_t* v, std::size_t len, std::size_t) {
                            dst[i] = find(v, len);
                          });
    }
    if (!dense)
      for (std::size_t r = 0, v = 0; r < n; ++r)
        if (defined[r]) out[r] = got[v++];
    for (std::size_t r = 0; r < n; ++r) hits += out[r] >= 0;
  }
};

page_matcher::page_matcher(const std::uint8_t* key_data, std::size_t key_bytes,
                           const std::int64_t* key_offsets, std::size_t k, int max_def) {
  if (max_def < 0 || max_def > 1)
    throw std::invalid_argument("page_matcher: definition levels of 0 or 1 only");
  if (k >= (std::size_t{1} << 31)) throw std::invalid_argument("page_matcher: too many keys");
  for (std::size_t j = 0; j < k; ++j)
    if (key_offsets[j] < 0 || key_offsets[j] > key_offsets[j + 1] ||
        static_cast<std::uint64_t>(key_offsets[j + 1]) > key_bytes)
      throw std::invalid_argument("page_matcher: key offsets out of order or past the data");
  s_ = std::make_unique<state>(key_data, key_bytes, key_offsets, k, max_def);
}

page_matcher::~page_matcher() = default;

void page_matcher::dictionary(const page_header& h, const std::uint8_t* data, std::size_t size) {
  if (s_->have_dict) throw parse_error("a second dictionary page", 0);
  if (h.encoding != kEncodingPlain && h.encoding != kEncodingPlainDictionary)
    throw parse_error("dictionary page encoding " + std::to_string(h.encoding), 0);
  if (h.values > size / 4)  // each PLAIN value takes at least its 4-byte length
    throw parse_error("dictionary page: more values than its bytes can hold", 0);
  s_->dict.assign(h.values, -1);
  for_each_byte_array(kEncodingPlain, data, size, h.values,
                      [&](std::size_t i, const std::uint8_t* v, std::size_t len, std::size_t) {
                        s_->dict[i] = s_->find(v, len);
                        s_->dict_hit |= s_->dict[i] >= 0;
                      });
  s_->have_dict = true;
}

bool page_matcher::dictionary_holds_key() const noexcept { return s_->dict_hit; }

void page_matcher::data_page_v1(const page_header& h, const std::uint8_t* data, std::size_t size) {
  const v1_values v = split_v1(h, s_->max_def, data, size, &s_->defined);
  s_->values(h.encoding, data + v.offset, size - v.offset, h.values, v.nonnull);
}

void page_matcher::data_page_v2(const page_header& h, const std::uint8_t* levels,
                                std::size_t level_size, const std::uint8_t* values,
                                std::size_t value_size) {
  std::size_t nonnull = h.values - h.nulls;
  if (h.nulls) {
    if (!s_->max_def) throw parse_error("nulls in a column without definition levels", 0);
    if (decode_levels(levels, level_size, h.values, &s_->defined) != nonnull)
      throw parse_error("definition levels disagree with num_nulls", 0);
  }
  s_->values(h.encoding, values, value_size, h.values, nonnull);
}

void page_matcher::skip(std::uint32_t rows) { s_->rows.resize(s_->rows.size() + rows, -1); }

const std::vector<std::int32_t>& page_matcher::rows() const noexcept { return s_->rows; }

std::size_t page_matcher::hits() const noexcept { return s_->hits; }

v1_values data_page_v1_values(const page_header& h, int max_definition_level, const void* data,
                              std::size_t size) {
  return split_v1(h, max_definition_level, static_cast<const std::uint8_t*>(data), size, nullptr);
}

void hash_byte_array_values(std::int32_t encoding, const void* data, std::size_t size,
                            std::size_t count, std::uint64_t* out) {
  prefix_hasher hash;
  for_each_byte_array(encoding, static_cast<const std::uint8_t*>(data), size, count,
                      [&](std::size_t i, const std::uint8_t* v, std::size_t len,
                          std::size_t shared) { out[i] = hash(v, len, shared); });
}

}  // namespace simdex::bloom
