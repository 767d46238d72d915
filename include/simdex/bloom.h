// Parquet split-block bloom filter (SBBF): bit-exact with the Parquet spec (XXH64 seed 0 over
// PLAIN bytes, 32-byte blocks of 8 u32 words, SALT masks, multiply-shift block index), with
// SIMD single and bulk probes chosen at run time, sizing, folding and Parquet I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "simdex/cpu.h"
#include "simdex/memory.h"

namespace simdex::bloom {

inline constexpr std::size_t kBlockBytes = 32;
inline constexpr std::size_t kMinBytes = 32;                      // one block
inline constexpr std::size_t kMaxBytes = std::size_t{128} << 20;  // what Arrow/parquet-java read
inline constexpr std::uint64_t kMaxBlocks = (std::uint64_t{1} << 31) - 1;  // spec: z < 2^31
inline constexpr std::uint32_t kSalt[8] = {0x47b6137bu, 0x44974d91u, 0x8824ad5bu, 0xa2b7289du,
                                           0x705495c7u, 0x2df1424bu, 0x9efc4947u, 0x5c6bfb31u};

// ---- hashing: XXH64 seed 0 of the value's Parquet PLAIN encoding ------------------------------

std::uint64_t hash_int32(std::int32_t v) noexcept;  // 4 LE bytes (also DATE, INT8/16, DECIMAL<=9)
std::uint64_t hash_int64(std::int64_t v) noexcept;  // 8 LE bytes
std::uint64_t hash_float(float v) noexcept;         // IEEE bits: -0.0 and +0.0 differ
std::uint64_t hash_double(double v) noexcept;
std::uint64_t hash_int96(const std::uint8_t bytes[12]) noexcept;
std::uint64_t hash_bytes(const void* data, std::size_t n) noexcept;  // BYTE_ARRAY (no length
                                                                     // prefix) and FLBA
std::uint64_t hash_bool(bool v) noexcept;  // one byte 0x00 / 0x01 (arrow-rs, arrow-go)
// Batch hashing of fixed-width columns: out[i] = hash of value i.
void hash_int32s(const std::int32_t* v, std::size_t n, std::uint64_t* out);
void hash_int64s(const std::int64_t* v, std::size_t n, std::uint64_t* out);
void hash_floats(const float* v, std::size_t n, std::uint64_t* out);
void hash_doubles(const double* v, std::size_t n, std::uint64_t* out);
// n values of `width` bytes each, packed (FIXED_LEN_BYTE_ARRAY, INT96 with width 12).
void hash_fixed(const void* data, std::size_t width, std::size_t n, std::uint64_t* out);

// ---- matching: which of a column's values equal one of a few keys (dataset lookups) ----------

// out[i] = 1 when values[i] equals one of the k keys, else 0; returns how many matched. Values
// and keys are `width` bytes each (1, 2, 4 or 8), compared as bits: integers, dates, times,
// timestamps (not floats, whose -0.0 and NaN equality differ from their bits). O(n + k).
std::size_t match_fixed(const void* values, std::size_t width, std::size_t n, const void* keys,
                        std::size_t k, std::uint8_t* out);
// The same for byte strings in Arrow's layout: value i is data[offsets[i], offsets[i + 1]),
// offsets of `offset_width` 4 or 8 bytes (string / large_string); key j is
// key_data[key_offsets[j], key_offsets[j + 1]). Throws std::invalid_argument for offsets out of
// order or past their data.
std::size_t match_binary(const std::uint8_t* data, std::size_t data_bytes, const void* offsets,
                         std::size_t offset_width, std::size_t n, const std::uint8_t* key_data,
                         std::size_t key_bytes, const std::int64_t* key_offsets, std::size_t k,
                         std::uint8_t* out);

// ---- Parquet pages: a flat column chunk matched without decoding it into arrays ----------------

// One page of a column chunk, as its PageHeader (Thrift compact) says.
struct page_header {
  std::int32_t kind = 0;           // PageType: 0 DATA_PAGE, 1 INDEX, 2 DICTIONARY, 3 DATA_PAGE_V2
  std::uint64_t body = 0;          // where the page's bytes start in the chunk, past the header
  std::uint32_t compressed = 0;    // the page's bytes in the chunk
  std::uint32_t uncompressed = 0;  // ... once decompressed
  std::uint32_t values = 0;        // num_values: rows with nulls (data), entries (dictionary)
  std::int32_t encoding = 0;       // of the values
  std::int32_t def_encoding = 3;   // V1: of the definition levels (RLE unless deprecated)
  std::uint32_t nulls = 0;         // V2 only
  std::uint32_t level_bytes = 0;   // V2: repetition + definition level bytes, never compressed
  std::uint32_t def_bytes = 0;     // V2: of which definition levels (they come second)
  bool values_compressed = true;   // V2's is_compressed; true for every other page
};
inline constexpr std::int32_t kPageData = 0, kPageDictionary = 2, kPageDataV2 = 3;
inline constexpr std::int32_t kEncodingPlain = 0, kEncodingPlainDictionary = 2, kEncodingRle = 3,
                              kEncodingDeltaLengthByteArray = 6, kEncodingDeltaByteArray = 7,
                              kEncodingRleDictionary = 8;

// The page headers of a column chunk's bytes, in order, until the data pages' values add up to
// num_values. Throws parse_error (offset within the chunk) for a malformed header, one without
// its type, sizes or per-type header, a page that runs past the chunk, or values that do not add
// up.
std::vector<page_header> parse_page_headers(const void* chunk, std::size_t size,
                                            std::uint64_t num_values);

// A decompressed DATA_PAGE (V1) of a flat column: where its values start (past the 4-byte length
// and the RLE / bit-packed definition levels, when max_definition_level is 1) and how many of
// its h.values rows have one. parse_error when the levels do not fit.
struct v1_values {
  std::size_t offset, nonnull;
};
v1_values data_page_v1_values(const page_header& h, int max_definition_level, const void* data,
                              std::size_t size);
// XXH64 of each of the `count` BYTE_ARRAY values of a data page's value bytes in `encoding`
// (PLAIN, DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY) into out. Throws parse_error (offset
// within the bytes) when they hold fewer values or are malformed.
void hash_byte_array_values(std::int32_t encoding, const void* data, std::size_t size,
                            std::size_t count, std::uint64_t* out);

// Which rows of a flat BYTE_ARRAY column chunk (no repetition, definition levels 0 or 1) equal
// one of k keys, fed the chunk's pages in order, decompressed: what a dataset lookup does instead
// of decoding its key column. Dictionary-encoded pages look each row's index up in the
// dictionary's answers, so a page whose dictionary holds no key need not even be decompressed
// (skip). Keys are copied. Malformed pages throw parse_error (offset within the page's bytes).
class page_matcher {
 public:
  page_matcher(const std::uint8_t* key_data, std::size_t key_bytes, const std::int64_t* key_offsets,
               std::size_t k, int max_definition_level);
  ~page_matcher();
  page_matcher(const page_matcher&) = delete;
  page_matcher& operator=(const page_matcher&) = delete;

  // The dictionary page (h.values PLAIN values), decompressed.
  void dictionary(const page_header& h, const std::uint8_t* data, std::size_t size);
  // Whether some dictionary entry is a key (false before the dictionary page).
  bool dictionary_holds_key() const noexcept;
  // A DATA_PAGE's decompressed bytes (definition levels with their 4-byte length, then values).
  void data_page_v1(const page_header& h, const std::uint8_t* data, std::size_t size);
  // A DATA_PAGE_V2: its definition levels and its (decompressed) values.
  void data_page_v2(const page_header& h, const std::uint8_t* levels, std::size_t level_size,
                    const std::uint8_t* values, std::size_t value_size);
  // Rows known to hold no key (a dictionary-encoded page whose dictionary holds none).
  void skip(std::uint32_t rows);
  // Per row so far: the index of the key it equals (the first of equal keys), or -1.
  const std::vector<std::int32_t>& rows() const noexcept;
  std::size_t hits() const noexcept;

 private:
  struct state;
  std::unique_ptr<state> s_;
};

// ---- sizing ------------------------------------------------------------------------------------

// Arrow C++ / arrow-rs / DuckDB: m = -8 ndv / ln(1 - fpp^(1/8)) bits, then rounded up to a power
// of two and clamped to [32 B, 128 MiB]. Underestimates the real FPP of an SBBF.
std::size_t arrow_num_bytes(std::uint64_t ndv, double fpp);
// False-positive rate of an SBBF of `num_bytes` holding `ndv` distinct values (Putze et al.
// eq. 3: Poisson-distributed load per block); reproduces the spec's table. 1 for 0 bytes;
// std::invalid_argument for a negative or NaN size.
double model_fpp(std::uint64_t ndv, double num_bytes);
// Bits per distinct value the model needs for `fpp` (spec table: 1% -> 10.5).
double model_bits_per_value(double fpp);
// Smallest power-of-two size in [32 B, 128 MiB] whose model FPP is <= fpp (128 MiB if none).
std::size_t model_num_bytes(std::uint64_t ndv, double fpp);
// Distinct values among n XXH64 hashes (the ndv a filter is sized for; values whose 64-bit
// hashes collide count once, as they set the same bits).
std::size_t count_distinct_hashes(const std::uint64_t* hashes, std::size_t n);

enum class sizing { arrow, model };

// A view over a filter's bitset: z blocks of 8 u32 words, any z >= 1.
struct filter_view {
  const std::uint32_t* words;
  std::uint64_t blocks;
};

// ---- kernel family ----------------------------------------------------------------------------

// One level's kernels. Public because filter's probes call through it inline; the tables and
// the per-process choice are in src/bloom/kernels.h.
struct kernels {
  bool (*check)(const std::uint32_t* words, std::uint64_t blocks, std::uint64_t hash);
  void (*insert)(std::uint32_t* words, std::uint64_t blocks, std::uint64_t hash);
  void (*check_bulk)(const std::uint32_t* words, std::uint64_t blocks, const std::uint64_t* hashes,
                     std::size_t n, std::uint8_t* out);
  void (*check_bulk_bits)(const std::uint32_t* words, std::uint64_t blocks,
                          const std::uint64_t* hashes, std::size_t n, std::uint64_t* out);
  void (*insert_bulk)(std::uint32_t* words, std::uint64_t blocks, const std::uint64_t* hashes,
                      std::size_t n);
  void (*check_filters)(const filter_view* filters, std::size_t n, std::uint64_t hash,
                        std::uint8_t* out);
  // XXH64 of n packed 4- or 8-byte values (any alignment).
  void (*hash_u32s)(const void* v, std::size_t n, std::uint64_t* out);
  void (*hash_u64s)(const void* v, std::size_t n, std::uint64_t* out);
};

// ---- filter ------------------------------------------------------------------------------------

// A split-block bloom filter over a 64-byte-aligned bitset. Copyable; moved-from is empty.
class filter {
 public:
  filter() = default;
  // Power-of-two num_bytes in [32 B, 128 MiB] (what Arrow readers accept); throws
  // std::invalid_argument otherwise. Huge pages are asked for sizes of 2 MiB and more unless
  // `pages` says small.
  explicit filter(std::size_t num_bytes, page_size pages = page_size::huge);
  static filter for_ndv(std::uint64_t ndv, double fpp, sizing s = sizing::arrow);
  // Any z >= 1 blocks (readers must accept what other writers produced).
  static filter with_blocks(std::uint64_t blocks, page_size pages = page_size::huge);
  // Copies a bitset of little-endian u32 words; its size must be a non-zero multiple of 32
  // with at most kMaxBlocks blocks (throws std::invalid_argument naming the size).
  static filter from_bitset(const void* data, std::size_t size);

  filter(const filter& other);
  filter& operator=(const filter& other);
  filter(filter&& other) noexcept;
  filter& operator=(filter&& other) noexcept;

  std::uint64_t num_blocks() const noexcept { return blocks_; }
  std::size_t size_bytes() const noexcept {
    return static_cast<std::size_t>(blocks_) * kBlockBytes;
  }
  const std::uint32_t* words() const noexcept { return words_; }
  std::uint32_t* words() noexcept { return words_; }
  std::span<const std::byte> bitset() const noexcept {
    return {reinterpret_cast<const std::byte*>(words_), size_bytes()};
  }
  filter_view view() const noexcept { return {words_, blocks_}; }
  bool empty() const noexcept { return blocks_ == 0; }
  // Bytes of the bitset backed by 2 MiB pages (reads /proc/self/smaps: for reporting only).
  std::size_t huge_page_bytes() const;

  // The kernels are looked up once, at construction; the single-key check is kept in the
  // object itself so a probe is one indirect call with no table load in front of it.
  void insert(std::uint64_t hash) noexcept { k_->insert(words_, blocks_, hash); }
  bool check(std::uint64_t hash) const noexcept { return check_(words_, blocks_, hash); }
  // Bulk: one filter, many keys, many misses in flight. Inserts apply in order.
  void insert(std::span<const std::uint64_t> hashes) noexcept {
    k_->insert_bulk(words_, blocks_, hashes.data(), hashes.size());
  }
  void check(std::span<const std::uint64_t> hashes, std::uint8_t* out) const noexcept {  // 0/1
    k_->check_bulk(words_, blocks_, hashes.data(), hashes.size(), out);
  }
  // Bit i of out[i / 64] (LSB first); out holds (n + 63) / 64 words, the last one zero-padded.
  void check_bits(std::span<const std::uint64_t> hashes, std::uint64_t* out) const noexcept {
    k_->check_bulk_bits(words_, blocks_, hashes.data(), hashes.size(), out);
  }

  // Union; throws std::invalid_argument unless both have the same number of blocks.
  void merge(const filter& other);
  void clear() noexcept;

  std::uint64_t popcount() const noexcept;
  double fill() const noexcept;  // set bits / all bits
  // Probability that a hash never inserted checks true: the mean over blocks of the product of
  // the eight words' fill (exact for uniform hashes, given this bitset).
  double estimated_fpp() const noexcept;
  // ORs groups of 2^k adjacent blocks while the estimated FPP stays <= target and the block
  // count stays a whole number >= 1 (valid for any z divisible by 2^k). Returns k (0 for an
  // empty filter); std::invalid_argument for a NaN target.
  int fold_to_fpp(double target_fpp);
  // One fold by 2^k; throws std::invalid_argument if 2^k does not divide num_blocks().
  void fold(int k);

  bool operator==(const filter& other) const noexcept;

 private:
  void allocate(std::uint64_t blocks, page_size pages);
  std::uint64_t blocks_ = 0;
  std::uint32_t* words_ = nullptr;
  std::shared_ptr<void> storage_;       // page_buffer or aligned heap block
  const page_buffer* pages_ = nullptr;  // set when storage_ is a page_buffer
  // What an empty filter runs (src/bloom/kernels.h: kEmptyKernels), so probing one is safe.
  static const kernels* empty_kernels() noexcept;
  const kernels* k_ = empty_kernels();
  static bool check_nothing(const std::uint32_t*, std::uint64_t, std::uint64_t) noexcept {
    return false;
  }
  bool (*check_)(const std::uint32_t*, std::uint64_t, std::uint64_t) = check_nothing;
};

// One hash against many filters (row-group skipping): out[i] = filters[i] may hold it.
void check_filters(std::span<const filter_view> filters, std::uint64_t hash, std::uint8_t* out);
// Many hashes against many filters, filter by filter: out[i * hashes.size() + j] = filters[i]
// may hold hashes[j]. The same answers as a check_filters call per hash, but each filter's
// probes go to different blocks, so filters packed at a power-of-two stride (where one hash
// lands in one L1 set in every filter) cost no more than filters allocated one by one.
void check_filters(std::span<const filter_view> filters, std::span<const std::uint64_t> hashes,
                   std::uint8_t* out);

// The spec's loop (early exit), the golden reference every kernel is tested against.
namespace spec {
bool check(const std::uint32_t* words, std::uint64_t blocks, std::uint64_t hash) noexcept;
void insert(std::uint32_t* words, std::uint64_t blocks, std::uint64_t hash) noexcept;
}  // namespace spec

inline std::uint64_t block_index(std::uint64_t hash, std::uint64_t blocks) noexcept {
  return ((hash >> 32) * blocks) >> 32;
}

// ---- Parquet I/O -------------------------------------------------------------------------------

// A malformed header, bitset or footer: what is wrong and at which byte offset. what() is
// "message (at byte N)"; message() is the text alone, for callers that add context.
class parse_error : public std::runtime_error {
 public:
  parse_error(const std::string& what, std::uint64_t offset);
  std::uint64_t offset() const noexcept { return offset_; }
  const std::string& message() const noexcept { return message_; }

 private:
  std::uint64_t offset_;
  std::string message_;
};

// Thrift-compact BloomFilterHeader (numBytes, BLOCK, XXHASH, UNCOMPRESSED) followed by the bitset.
std::vector<std::uint8_t> serialize(const filter& f);
// Parses header + bitset from data[0, size). `consumed` (optional) gets the bytes used. Throws
// parse_error for truncation, a numBytes that is not a positive multiple of 32 or exceeds the
// data, and any algorithm, hash or compression other than BLOCK / XXHASH / UNCOMPRESSED.
filter parse(const void* data, std::size_t size, std::size_t* consumed = nullptr);

enum class physical_type : int {
  boolean = 0,
  int32 = 1,
  int64 = 2,
  int96 = 3,
  float_ = 4,
  double_ = 5,
  byte_array = 6,
  fixed_len_byte_array = 7,
  unknown = -1
};
const char* physical_type_name(physical_type t) noexcept;

// A leaf of the schema: what a value of the column means, which decides the bytes hashed.
// `logical` is the LogicalType annotation (or the legacy ConvertedType mapped onto it) in a
// compact text form: "" (none), "STRING", "ENUM", "JSON", "BSON", "UUID", "FLOAT16", "DATE",
// "INTERVAL", "DECIMAL(precision,scale)", "TIME(MILLIS|MICROS|NANOS,UTC|LOCAL)",
// "TIMESTAMP(MILLIS|MICROS|NANOS,UTC|LOCAL)", "INT(bits,SIGNED|UNSIGNED)", or "OTHER".
struct column_schema {
  std::string path;  // dotted
  physical_type type = physical_type::unknown;
  int type_length = 0;
  std::string logical;
};

// Where a column chunk's filter lives, from the footer.
struct column_chunk_info {
  int row_group = 0;
  int column = 0;
  std::string path;  // dotted path_in_schema
  physical_type type = physical_type::unknown;
  int type_length = 0;  // FIXED_LEN_BYTE_ARRAY width from the schema
  std::int64_t num_values = 0;
  std::int64_t bloom_offset = -1;  // -1: no filter
  std::int32_t bloom_length = -1;  // -1: not recorded
  // Statistics.null_count (-1: absent) and min_value / max_value (PLAIN bytes; BYTE_ARRAY
  // without its length prefix). Only the fields written in the column's sort order are taken;
  // the legacy min / max (fields 1, 2) had an ill-defined order and are ignored.
  std::int64_t null_count = -1;
  bool has_min = false, has_max = false;
  std::string min_value, max_value;
  bool encrypted = false;  // crypto_metadata or encrypted_column_metadata present
};

// Whether a chunk's filter may be asked at all: not on a BOOLEAN column, where parquet-java
// writes a filter with no value in it (its writer hashes no booleans and its reader never asks
// such a filter), so it would answer "absent" for values the chunk holds. probe() and
// read_filters() treat such a chunk as one without a filter.
inline bool usable_filter(const column_chunk_info& c) noexcept {
  return c.type != physical_type::boolean;
}

struct footer_info {
  std::int64_t num_rows = 0;
  int num_row_groups = 0;
  bool encrypted = false;                 // a plaintext footer with an encryption_algorithm
  std::vector<column_schema> columns;     // schema leaves, in column order
  std::vector<column_chunk_info> chunks;  // row-group major (those the selector kept)
};

// Which column chunks a reader keeps (nullptr: all). Chunks left out cost no memory.
using chunk_selector = bool (*)(const column_chunk_info& c, const void* ctx);

// What the chunk table may take, per byte of footer (plus a fixed 1 MiB): a footer that claims
// more column chunks than real writers could put in its bytes is refused with parse_error
// rather than allowed to make us allocate far more than the file holds. (A real chunk without
// statistics takes ~150 footer bytes and ~400 of memory with its schema; 2 refused pyarrow's
// files of about 10,000 columns.)
inline constexpr std::size_t kChunkBytesPerFooterByte = 8;

// Parses the Thrift-compact FileMetaData in data[0, size) (the footer without length/magic).
footer_info parse_file_metadata(const void* data, std::size_t size, chunk_selector keep = nullptr,
                                const void* ctx = nullptr);
// Reads a whole Parquet file's tail: checks "PAR1", reads the footer (encrypted "PARE" files
// are refused). Throws parse_error or std::system_error (I/O; also for a path that is not a
// regular file: FIFOs and devices are refused before any read, so nothing blocks).
footer_info read_footer(const std::string& path);

// An open Parquet file: the footer (chunks kept by the selector) and filters read one at a time,
// each straight into its own storage (peak memory is the filters asked for plus the footer).
class parquet_file {
 public:
  explicit parquet_file(const std::string& path, chunk_selector keep = nullptr,
                        const void* ctx = nullptr);
  ~parquet_file();
  parquet_file(const parquet_file&) = delete;
  parquet_file& operator=(const parquet_file&) = delete;

  const footer_info& footer() const noexcept { return footer_; }
  std::uint64_t file_size() const noexcept { return size_; }
  // Where the FileMetaData starts and how long it is (it ends 8 bytes before the file does).
  std::uint64_t footer_offset() const noexcept { return footer_offset_; }
  std::uint32_t footer_length() const noexcept { return footer_length_; }
  const std::string& path() const noexcept { return path_; }
  // Where the chunk's bitset lies, after reading and checking its filter header (the chunk must
  // have bloom_offset >= 0). parse_error messages name the file, row group and column.
  struct bitset_range {
    std::uint64_t offset, size;
  };
  bitset_range locate_filter(const column_chunk_info& c) const;
  // The chunk's filter: locate_filter, then its bitset read into the filter's own storage.
  filter read_filter(const column_chunk_info& c) const;

  // Probes many chunks' filters with many hashes, reading per filter only the 32-byte blocks
  // the hashes select (runs of nearby blocks in one read), or the whole bitset where that costs
  // fewer reads. out[i * hashes.size() + j] = 1 when chunk i's filter may hold hash j. A chunk
  // whose filter cannot be read (no filter, a malformed header, a range outside the file) gets
  // 1 for every hash, never 0, and its error text in errors[i] (empty where it was fine); so
  // does a chunk whose filter is not to be used (usable_filter), with no error text.
  struct probe_stats {
    std::uint64_t reads = 0, bytes = 0;  // filter reads and bytes read (headers included)
  };
  probe_stats probe(std::span<const column_chunk_info* const> chunks,
                    std::span<const std::uint64_t> hashes, std::uint8_t* out,
                    std::vector<std::string>& errors) const;

  // Reads n bytes at offset (parse_error past the end; std::system_error for I/O).
  void read_at(std::uint64_t offset, void* out, std::size_t n) const;

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::uint64_t footer_offset_ = 0;
  std::uint32_t footer_length_ = 0;
  footer_info footer_;
};

// ---- adding filters to a file ------------------------------------------------------------------

struct bloom_location {
  int row_group = 0;
  int column = 0;
  std::int64_t offset = 0;  // bloom_filter_offset: where the header starts
  std::int32_t length = 0;  // bloom_filter_length: header + bitset
};
// The FileMetaData in footer[0, size) with bloom_filter_offset / bloom_filter_length set in the
// column chunks named by `locs` (replacing any there). Every other byte is copied as it was,
// fields this code does not know included; only the field headers that follow an inserted
// field are re-encoded (their delta base changed). No locations: the input, byte for byte.
// Throws parse_error for a malformed footer, a location naming no column chunk, and encrypted
// metadata (an encryption_algorithm, or a column chunk with crypto or encrypted metadata).
std::vector<std::uint8_t> set_bloom_locations(const void* footer, std::size_t size,
                                              std::span<const bloom_location> locs);

struct column_filter {
  column_chunk_info chunk;
  filter bloom;
};
// Every column chunk that has a filter it may use (usable_filter), loaded and validated.
std::vector<column_filter> read_filters(const std::string& path);

}  // namespace simdex::bloom
