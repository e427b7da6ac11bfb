// Loading a driver's library at run time, shared by every driver that dlopens one (CUDA, HIP, Vulkan): the
// file an environment variable names (how the tests load their doubles) or the driver's usual soname, its
// entry points resolved into a table, and the table kept once per process. No SDK header is needed: each
// driver declares the entry points it calls.
#pragma once

#include <rig.h>

#include <string>

#include "core/error.h"

namespace rig::common {

// An opened driver library: never closed (the driver's objects, threads and queued work must outlive every
// rig device and may be touched during static destruction).
struct Library {
  void *handle = nullptr;
  std::string file;  // what was opened: the environment's choice or the default
  std::string why;   // why it did not open or lacks something, when handle is null
};

// Opens getenv(env_var) if set and non-empty, else `default_file`, RTLD_NOW | RTLD_LOCAL (the driver's
// symbols never leak into the program's namespace, so a program that links its own copy is not affected).
// `what` names the driver in the reason ("the HIP runtime"). On failure handle is null and why says which
// file and dlerror's words.
Library open_library(const char *env_var, const char *default_file, const char *what);

// The address of `symbol` in the library, or null.
void *find_symbol(const Library &library, const char *symbol);

// Resolves `symbol` into `field` (a function pointer of the entry point's type). Returns false when the
// library lacks it.
template <class F>
bool resolve(const Library &library, const char *symbol, F *&field) {
  field = reinterpret_cast<F *>(find_symbol(library, symbol));
  return field != nullptr;
}

// Resolves a family's required and optional entry points, remembering the first required one missing. A
// field already filled (by a fallback symbol, say) is kept.
struct Resolver {
  const Library &library;
  const char *missing = nullptr;
  template <class F>
  void required(const char *symbol, F *&field) {
    if (!field && !resolve(library, symbol, field) && !missing) missing = symbol;
  }
  template <class F>
  void optional(const char *symbol, F *&field) {
    if (!field) resolve(library, symbol, field);
  }
};

// What a driver's loader made of its library: the table, or why there is none.
template <class Api>
struct Loaded {
  Api api;
  bool ok = false;
  std::string why;  // the reason it is not ok, repeated on every later call
};

// For a family's X-macro list of entry points (field, symbol, return, parameters): resolves each into
// `api.field` through a Resolver named `entry`.
#define RIG_RESOLVE_REQUIRED(field, symbol, ret, params) entry.required(symbol, api.field);
#define RIG_RESOLVE_OPTIONAL(field, symbol, ret, params) entry.optional(symbol, api.field);

// Opens the library (open_library), resolves its entry points with `resolve_all`, then runs `init` (the
// library's own start-up call, and whatever the driver fills from the table), which answers false with the
// reason in `why`. The Loaded says ok, or why not ("the CUDA driver libcuda.so.1 lacks cuInit").
template <class Api>
Loaded<Api> load_library(const char *env_var, const char *default_file, const char *what,
                         void (*resolve_all)(Resolver &entry, Api &api), bool (*init)(Api &api, std::string *why)) {
  Loaded<Api> l;
  Library lib = open_library(env_var, default_file, what);
  if (!lib.handle) {
    l.why = lib.why;
    return l;
  }
  Resolver entry{lib};
  resolve_all(entry, l.api);
  if (entry.missing)
    l.why = std::string(what) + " " + lib.file + " lacks " + entry.missing;
  else
    l.ok = init(l.api, &l.why);
  return l;
}

// The table `load` made, loaded once per process (thread-safe: a function-local static) and never
// unloaded; null with RIG_NOT_FOUND and the load's reason set by rig::fail where it failed.
template <class Api, Loaded<Api> (*load)()>
const Api *load_once() {
  static const Loaded<Api> loaded = load();
  if (!loaded.ok) {
    fail(RIG_NOT_FOUND, "%s", loaded.why.c_str());
    return nullptr;
  }
  return &loaded.api;
}

}  // namespace rig::common
