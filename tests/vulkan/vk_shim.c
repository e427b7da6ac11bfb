#include "vk_shim.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

void *vk_shim_symbol(const char *name) {
  const char *path = getenv("RIG_VULKAN_LIBRARY");
  void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL; /* the same handle rig opens */
  void *f = h ? dlsym(h, name) : NULL;
  if (!f)
    fprintf(stderr, "this test needs RIG_VULKAN_LIBRARY=lose_shim (%s): %s\n", name,
            !path ? "unset" : h ? "not exported" : dlerror());
  return f;
}
