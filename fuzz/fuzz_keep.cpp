// libFuzzer harness: the keeper protocol's parser (keep/protocol.h) over arbitrary bytes, as either side
// reads them: a header, then its body as a request (the keeper's side) or as a reply (the client's).
#include <cstddef>
#include <cstdint>
#include <string>

#include "keep/protocol.h"

using namespace rig::keep;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Header h;
  std::string why;
  if (size < kHeaderBytes || parse_header(data, kHeaderBytes, kMaxReplyBody, &h, &why) != RIG_OK) return 0;
  const uint8_t *body = data + kHeaderBytes;
  size_t n = size - kHeaderBytes;
  if (h.length < n) n = h.length;  // the socket reads exactly the header's length
  Request q;
  if (parse_request(h, body, n, 7, 2, &q, &why) == RIG_OK) {
    // What the keeper then serves must exist: every index and the device inside what it has.
    if (q.device >= 2) __builtin_trap();
    for (uint32_t i : q.tensors)
      if (i >= 7) __builtin_trap();
    if (q.type == Type::attach && encode_attach(q.device, q.all ? nullptr : &q.tensors) != std::vector<uint8_t>(body, body + n))
      __builtin_trap();
  }
  // A reply that parsed says the same bytes again when written: nothing read past, nothing skipped.
  Table t;
  if (parse_table(body, n, &t, &why) == RIG_OK) {
    for (const TableTensor &x : t.tensors)
      if (x.shape.size() > RIG_LOAD_MAX_DIMS || x.name.empty()) __builtin_trap();
    if (encode_table(t) != std::vector<uint8_t>(body, body + n)) __builtin_trap();
  }
  TensorReply r;
  if (parse_tensor(body, n, &r, &why) == RIG_OK) {
    // A tensor's range in its region is a number the client can check against the region's length.
    if (r.offset + r.length < r.offset) __builtin_trap();
    if (encode_tensor(r) != std::vector<uint8_t>(body, body + n)) __builtin_trap();
  }
  rig_status s;
  std::string text;
  if (parse_error(body, n, &s, &text, &why) == RIG_OK && (s == RIG_OK || encode_error(s, text) != std::vector<uint8_t>(body, body + n)))
    __builtin_trap();
  return 0;
}
