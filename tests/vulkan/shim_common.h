/* What every stand-in for libvulkan.so.1 in these tests shares (lose_shim.c, semfd_shim.c): the real loader
 * it forwards to, and the swap of a real entry point for the shim's own. Header-only: each shim is one
 * shared library of its own. */
#ifndef RIG_VK_SHIM_COMMON_H
#define RIG_VK_SHIM_COMMON_H

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* The real loader's vkGetInstanceProcAddr (RIG_VKSHIM_REAL, default libvulkan.so.1), or NULL. */
static PFN_vkGetInstanceProcAddr shim_real_gipa(void) {
  static void *lib;
  static PFN_vkGetInstanceProcAddr gipa;
  if (!lib) {
    const char *real = getenv("RIG_VKSHIM_REAL");
    lib = dlopen(real && *real ? real : "libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return NULL;
    gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
  }
  return gipa;
}

/* The real instance-level entry point `name`, or `self` (the shim's vkGetInstanceProcAddr) for that one. */
static PFN_vkVoidFunction shim_instance_entry(VkInstance instance, const char *name, PFN_vkVoidFunction self) {
  PFN_vkGetInstanceProcAddr gipa = shim_real_gipa();
  if (!gipa) return NULL;
  if (strcmp(name, "vkGetInstanceProcAddr") == 0) return self;
  return gipa(instance, name);
}

/* In a GetProcAddr with `name` asked and the real entry point `f` found: where `name` is `fn`, keeps `f` in
 * `real` and answers `shim` instead. */
#define SHIM_SWAP(fn, real, shim) \
  if (strcmp(name, #fn) == 0) return real = (PFN_##fn)f, (PFN_vkVoidFunction)shim

#endif
