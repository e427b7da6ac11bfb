/* The tests' side of the stand-in loader (lose_shim.c), which rig loads as RIG_VULKAN_LIBRARY: test_loss
 * and test_calls reach the switches and counters it exports through the same handle rig opens. */
#ifndef RIG_VK_SHIM_H
#define RIG_VK_SHIM_H

/* The stand-in's exported function `name`, or NULL, with the reason on stderr, where RIG_VULKAN_LIBRARY is
 * unset, does not load, or is not the stand-in (for a cmocka group setup to fail on). */
void *vk_shim_symbol(const char *name);

#endif
