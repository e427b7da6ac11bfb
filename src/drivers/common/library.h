// Loading a GPU driver's library at run time, shared by the drivers that dlopen one (CUDA, HIP): the file an
// environment variable names (how the tests load their doubles) or the driver's usual soname, and its entry
// points resolved into a table. No SDK header is needed: each driver declares the entry points it calls.
#pragma once

#include <cstddef>
#include <string>

namespace rig::common {

// An opened driver library: never closed (the driver's objects, threads and queued work must outlive every
// rig device and may be touched during static destruction).
struct Library {
  void *handle = nullptr;
  std::string file;  // what was opened: the environment's choice or the default
  std::string why;   // why it did not open or lacks something, when handle is null
};

// Opens getenv(env_var) if set and non-empty, else `default_file`, RTLD_NOW | RTLD_LOCAL (the driver's
// symbols never leak into the program's namespace). `what` names the driver in the reason ("the HIP
// runtime"). On failure handle is null and why says which file and dlerror's words.
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

}  // namespace rig::common
