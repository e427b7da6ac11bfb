/* The rig command's JSON documents (docs/cli-json.md), built through nlohmann-json (tools/json.cpp) so
 * that no command writes braces, commas or escapes by hand. A command makes one object, adds its fields,
 * and prints it once. Strings are bytes: at print, each byte that is not part of valid UTF-8 becomes
 * U+FFFD (nlohmann-json's replace handler), so a file name of any bytes still gives valid JSON; the exact
 * bytes go beside it as hex (rig_tool_json_add_hex). Printed indented by two spaces, "key": value. None of
 * these calls blocks or takes a lock. */
#ifndef RIG_TOOLS_JSON_H
#define RIG_TOOLS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A JSON object or array being built. Out of memory while building marks it failed: the later calls
 * do nothing and rig_tool_json_print reports it. */
typedef struct rig_tool_json rig_tool_json;

/* A new, empty object or array; NULL when out of memory (every call below takes NULL and does nothing). */
rig_tool_json *rig_tool_json_object(void);
rig_tool_json *rig_tool_json_array(void);

/* Each adds one value: to an object under `key`, or appended to an array (key NULL). A NULL string is
 * the JSON null. */
void rig_tool_json_add_string(rig_tool_json *to, const char *key, const char *s);
/* `n` bytes as a string of lowercase hex digits: the exact bytes of a name, whatever they are. */
void rig_tool_json_add_hex(rig_tool_json *to, const char *key, const void *bytes, size_t n);
void rig_tool_json_add_u64(rig_tool_json *to, const char *key, uint64_t v);
void rig_tool_json_add_i64(rig_tool_json *to, const char *key, int64_t v);
void rig_tool_json_add_double(rig_tool_json *to, const char *key, double v);
void rig_tool_json_add_bool(rig_tool_json *to, const char *key, int v);
/* Adds `child` (an object or array made above) and takes it: the caller no longer frees or uses it. */
void rig_tool_json_add(rig_tool_json *to, const char *key, rig_tool_json *child);

/* Writes the document to `out` followed by a newline, and frees it. Returns 0, or -1 when the document
 * could not be built or written (out of memory, a write error; stderr says which). */
int rig_tool_json_print(rig_tool_json *doc, FILE *out);

/* Frees a document that is not printed. */
void rig_tool_json_free(rig_tool_json *doc);

#ifdef __cplusplus
}
#endif

#endif
