// The rig command's JSON documents over nlohmann-json (tools/json.h). Every entry catches what the
// library throws (out of memory): a C++ exception never reaches the commands' C code.
#include "json.h"

#include <nlohmann/json.hpp>

#include <new>
#include <string>
#include <utility>

struct rig_tool_json {
  nlohmann::ordered_json value;  // ordered: fields print in the order the command adds them
  bool failed = false;
};

namespace {

// Adds v to `to` (under key for an object, appended for an array); marks `to` failed if that throws.
template <class Value>
void add(rig_tool_json *to, const char *key, Value &&v) {
  if (!to || to->failed) return;
  try {
    if (key) to->value[key] = std::forward<Value>(v);
    else to->value.push_back(std::forward<Value>(v));
  } catch (...) {
    to->failed = true;
  }
}

rig_tool_json *make(nlohmann::ordered_json value) {
  try {
    return new rig_tool_json{std::move(value)};
  } catch (...) {
    return nullptr;
  }
}

}  // namespace

extern "C" {

rig_tool_json *rig_tool_json_object(void) { return make(nlohmann::ordered_json::object()); }
rig_tool_json *rig_tool_json_array(void) { return make(nlohmann::ordered_json::array()); }

void rig_tool_json_add_string(rig_tool_json *to, const char *key, const char *s) {
  if (!s) return add(to, key, nullptr);
  try {
    add(to, key, std::string(s));
  } catch (...) {  // the string's copy
    if (to) to->failed = true;
  }
}

void rig_tool_json_add_hex(rig_tool_json *to, const char *key, const void *bytes, size_t n) {
  static const char digits[] = "0123456789abcdef";
  try {
    std::string hex;
    hex.reserve(2 * n);
    for (size_t i = 0; i < n; ++i) {
      unsigned char c = static_cast<const unsigned char *>(bytes)[i];
      hex += digits[c >> 4];
      hex += digits[c & 15];
    }
    add(to, key, std::move(hex));
  } catch (...) {
    if (to) to->failed = true;
  }
}

void rig_tool_json_add_u64(rig_tool_json *to, const char *key, uint64_t v) { add(to, key, v); }
void rig_tool_json_add_i64(rig_tool_json *to, const char *key, int64_t v) { add(to, key, v); }
void rig_tool_json_add_double(rig_tool_json *to, const char *key, double v) { add(to, key, v); }
void rig_tool_json_add_bool(rig_tool_json *to, const char *key, int v) { add(to, key, v != 0); }

void rig_tool_json_add(rig_tool_json *to, const char *key, rig_tool_json *child) {
  if (!child) {
    if (to) to->failed = true;
    return;
  }
  if (child->failed && to) to->failed = true;
  add(to, key, std::move(child->value));
  delete child;
}

int rig_tool_json_print(rig_tool_json *doc, FILE *out) {
  if (!doc || doc->failed) {
    std::fputs("rig: out of memory while writing JSON\n", stderr);
    delete doc;
    return -1;
  }
  int r = 0;
  try {
    std::string text = doc->value.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    text += '\n';
    if (std::fwrite(text.data(), 1, text.size(), out) != text.size()) r = -1;
  } catch (...) {
    std::fputs("rig: out of memory while writing JSON\n", stderr);
    r = -1;
  }
  delete doc;
  return r;
}

void rig_tool_json_free(rig_tool_json *doc) { delete doc; }

}  // extern "C"
