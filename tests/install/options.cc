// The option structs brace-initialized as the docs write them, compiled with the header_check
// target's strict flags: a member without a default initializer would make -Wextra
// (-Wmissing-field-initializers) fail a user's -Werror build here.
#if __has_include("simdex/base85.h")
#include "simdex/base85.h"

simdex::base85::decode_options a85_options() {
  return {.var = simdex::base85::variant::a85, .adobe = true};
}
simdex::base85::encode_options z85_options() { return {.var = simdex::base85::variant::z85}; }
#endif
#if __has_include("simdex/btree.h")
#include "simdex/btree.h"

simdex::btree_options small_pages() { return {.pages = simdex::page_size::small}; }
#endif
#if __has_include("simdex/kv.h")
#include "simdex/kv.h"

simdex::kv::options fsync_options() { return {simdex::kv::sync_mode::fsync}; }
simdex::kv::options read_only_options() { return {.read_only = true}; }
#endif
