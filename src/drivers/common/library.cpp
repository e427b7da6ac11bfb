#include "drivers/common/library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace rig::common {

Library open_library(const char *env_var, const char *default_file, const char *what) {
  Library l;
  const char *env = env_var ? std::getenv(env_var) : nullptr;
  l.file = env && *env ? env : default_file;
  l.handle = dlopen(l.file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!l.handle) {
    const char *e = dlerror();
    l.why = std::string("cannot load ") + what + " " + l.file + ": " + (e ? e : "unknown dlopen error");
  }
  return l;
}

void *find_symbol(const Library &library, const char *symbol) {
  if (!library.handle) return nullptr;
  return dlsym(library.handle, symbol);
}

}  // namespace rig::common
