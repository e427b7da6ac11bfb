#define _GNU_SOURCE
#include "gpu_test.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels_ptx.h"

#include "test_driver.h"

/* The cases each backend leaves out, and why (the suite's function names). */
#define FAKE_SWITCHES_NEEDED(name) {name, "needs a fake library's switches (the CUDA and HIP fakes have them)"}
/* What only the stream drivers' fakes can be told to do. */
#define NO_FAKE                                                                                             \
  FAKE_SWITCHES_NEEDED("test_a_failed_integrated_query_reads_as_the_family_counts_it"),                     \
  FAKE_SWITCHES_NEEDED("test_read_only_borrow_uses_the_read_only_flag_where_supported"),                    \
  FAKE_SWITCHES_NEEDED("test_refused_registration_is_unmappable_with_the_driver_error"),                    \
  FAKE_SWITCHES_NEEDED("test_peer_memory_is_refused_without_peer_access_and_borrowed_with_it")
/* Host memory a device reads in place, through no registration. */
#define NO_REGISTRATION(whose)                                                                              \
  {"test_borrow_of_page_aligned_host_memory_registers_it", whose " registers no host memory"},             \
  {"test_borrow_of_unaligned_host_memory_registers_its_page", whose " registers no host memory"},          \
  {"test_host_memory_registered_by_rig_host_register_is_not_borrowed", whose " registers no host memory"}, \
  {"test_two_devices_borrowing_one_wrap_share_its_registration", whose " registers no host memory"}

static const gt_unsupported stream_unsupported[] __attribute__((unused)) = {{NULL, NULL}};
/* Vulkan runs the suite's fill, add and chain step (tests/drivers/shaders); a delay needs a clock in the shader. */
#define NO_SPIRV_DELAY "no rig_delay in SPIR-V (GLSL has no clock to spin on without an extension): Vulkan's " \
                       "waits and timeouts are tested in tests/vulkan (test_commit.c, test_rules.c)"
static const gt_unsupported vulkan_unsupported[] __attribute__((unused)) = {
    NO_FAKE,
    /* Vulkan imports no host memory unless RIG_VULKAN_HOST_IMPORT=1, and registers none (a kernel hazard). */
    NO_REGISTRATION("Vulkan"),
    {"test_peer_memory_borrows_where_peer_access_exists",
     "rig borrows Vulkan memory only between devices of one VkDevice: no peers across GPUs"},
    {"test_a_consumer_waits_for_a_producer_in_its_queue", NO_SPIRV_DELAY},
    {"test_waits_time_out_and_are_interrupted_without_loss", NO_SPIRV_DELAY},
    {"test_a_failing_launch_loses_its_device_and_what_waits_on_it",
     "no faulting SPIR-V kernel and no fake to fail a launch: Vulkan's loss is tested in tests/vulkan/test_loss.c"},
    {"test_host_kernels_and_bad_launches_are_refused",
     "names kernels.ptx's kernels in one module; Vulkan's are one module each (tests/vulkan/test_validation.c "
     "checks its launches)"},
    {NULL, NULL}};
static const gt_unsupported host_unsupported[] __attribute__((unused)) = {
    NO_FAKE,
    NO_REGISTRATION("a device over host memory"),
    {"test_a_launch_submitted_after_its_scalars_are_set_again_sees_the_new_ones",
     "host kernels take no scalars: their arguments are the user pointer, fixed when the submission is made"},
    {"test_host_kernels_and_bad_launches_are_refused",
     "runs host kernels and loads no modules (the case checks a GPU refuses them; tests/core runs host kernels)"},
    {"test_bad_modules_are_refused_with_a_reason", "loads no modules: every module format is unsupported"},
    {"test_waits_time_out_and_are_interrupted_without_loss",
     "a slow host kernel has run by the time a wait looks (memory devices run work in rig_submit; the test "
     "driver runs its queue in the wait): tests/core times waits out on the test driver's stalls"},
    {"test_a_failing_launch_loses_its_device_and_what_waits_on_it",
     "a host kernel cannot fault: loss is tested on the test driver in tests/core (tdrv_lose, tdrv_set_fault_at)"},
    {NULL, NULL}};

#if defined(GT_DRIVER_CUDA)
static const gt_backend backend = {"cuda", "CUDA", "RIG_CUDA_LIBRARY", "the fake libcuda", "fakecuda_control",
                                   "fakecuda_query", RIG_MODULE_PTX, "cuModuleLoadDataEx",
                                   "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_NOT_SUPPORTED", 1,
                                   "CUDA_ERROR_", "RIG_CUDA_TIMELINE", 1, GT_OPEN_DRIVER, RIG_DEVICE_GPU, 0, stream_unsupported};
#elif defined(GT_DRIVER_HIP)
static const gt_backend backend = {"hip", "HIP", "RIG_HIP_LIBRARY", "the fake libamdhip64", "fakehip_control",
                                   "fakehip_query", RIG_MODULE_HIP_CODE_OBJECT, "hipModuleLoadData",
                                   "hipErrorLaunchFailure", "hipErrorNotSupported", 0,
                                   "hipError", "RIG_HIP_TIMELINE", 0, GT_OPEN_DRIVER, RIG_DEVICE_GPU, 0, stream_unsupported};
#elif defined(GT_DRIVER_VULKAN)
static const gt_backend backend = {"vulkan", "Vulkan", "RIG_VULKAN_LIBRARY", "no fake (lavapipe runs it)", "",
                                   "", RIG_MODULE_SPIRV, "vkCreateShaderModule", "", "", 0,
                                   "VK_ERROR_", "", 0, GT_OPEN_DRIVER, RIG_DEVICE_GPU, 0, vulkan_unsupported};
#elif defined(GT_DRIVER_MEMORY)
static const gt_backend backend = {"memory", "memory", "", "no fake", "", "", RIG_MODULE_PTX, "", "", "", 0, "", "", 0,
                                   GT_OPEN_MEMORY, RIG_DEVICE_MEMORY, 1, host_unsupported};
#elif defined(GT_DRIVER_TEST)
static const gt_backend backend = {"test", "test", "", "no fake", "", "", RIG_MODULE_PTX, "", "", "", 0, "", "", 0,
                                   GT_OPEN_TEST, RIG_DEVICE_GPU, 1, host_unsupported};
#else
#error "define GT_DRIVER_CUDA, GT_DRIVER_HIP, GT_DRIVER_VULKAN, GT_DRIVER_MEMORY or GT_DRIVER_TEST"
#endif

typedef int (*control_fn)(const char *name, long long value);
typedef long long (*query_fn)(const char *name);

const gt_backend *gt(void) { return &backend; }

const char *gt_unsupported_why(const char *name) {
  for (const gt_unsupported *u = backend.unsupported; u->name; ++u)
    if (strcmp(u->name, name) == 0) return u->why;
  return NULL;
}

void gt_leave_out_unsupported(struct CMUnitTest *tests, size_t *n) {
  size_t kept = 0;
  for (size_t i = 0; i < *n; ++i) {
    const char *why = gt_unsupported_why(tests[i].name);
    if (why)
      fprintf(stderr, "NOT RUN on %s: %s: %s\n", backend.prefix, tests[i].name, why);
    else
      tests[kept++] = tests[i];
  }
  *n = kept;
}

const char *gt_name(unsigned i) {
  static char names[8][16];
  if (i >= 8) fail_msg("gt_name(%u): at most 8 devices", i);
  snprintf(names[i], sizeof names[i], "%s:%u", backend.prefix, i);
  return names[i];
}

static rig_status open_device(const char *name, rig_device *out) {
  switch (backend.opener) {
    case GT_OPEN_MEMORY: return rig_memory_device(name, out);
    case GT_OPEN_TEST: return tdrv_open(name, out);
    default: return rig_device_open(name, out);
  }
}

int gt_available(void) {
  rig_device d = NULL;
  if (open_device(gt_name(0), &d) == RIG_OK) {
    rig_device_release(d);
    return 1;
  }
  if (rt_required(backend.prefix)) {
    fprintf(stderr, "FAIL: RIG_REQUIRE names %s but %s did not open: %s\n", backend.prefix, gt_name(0),
            rig_last_error());
    exit(1);
  }
  fprintf(stderr, "SKIP: no %s device: %s\n", backend.framework, rig_last_error());
  return 0;
}

int gt_open(const char *name, rig_device *out) {
  if (open_device(name, out) == RIG_OK) return 1;
  if (rt_required(backend.prefix))
    fail_msg("RIG_REQUIRE names %s but %s did not open: %s", backend.prefix, name, rig_last_error());
  fprintf(stderr, "SKIP: %s did not open: %s\n", name, rig_last_error());
  skip();
  return 0;
}

size_t gt_gpu_count(void) {
  if (backend.opener != GT_OPEN_DRIVER) return 2; /* any number, each opened by its name */
  const char *names[64];
  size_t count = 0, gpus = 0, n = strlen(backend.prefix);
  OK(rig_device_list(names, 64, &count));
  for (size_t i = 0; i < count && i < 64; ++i)
    if (strncmp(names[i], backend.prefix, n) == 0 && names[i][n] == ':') ++gpus;
  return gpus;
}

void *gt_symbol(const char *name) {
  const char *path = *backend.library_env ? getenv(backend.library_env) : NULL;
  if (!path || !*path || !*name) return NULL;
  /* The same file rig loaded: dlopen gives the already-loaded instance (its state is rig's). */
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  return lib ? dlsym(lib, name) : NULL;
}

int gt_fake(void) { return gt_symbol(backend.fake_control) != NULL; }

void gt_set(const char *name, long long value) {
  control_fn f = (control_fn)gt_symbol(backend.fake_control);
  if (!f) fail_msg("not on %s: cannot set %s", backend.fake_name, name);
  if (f(name, value) != 0) fail_msg("the fake has no switch %s", name);
}

long long gt_query(const char *name) {
  query_fn f = (query_fn)gt_symbol(backend.fake_query);
  /* Over a real driver, the counting interposer's calls: counters (tests/doubles/count_cuda). */
  if (!f) f = (query_fn)gt_symbol("rigcount_query");
  return f ? f(name) : -1;
}

const char *gt_error_prefix(void) {
  typedef const char *(*hip_error_name_fn)(int error);
  hip_error_name_fn name = (hip_error_name_fn)gt_symbol("hipGetErrorName");
  if (name && strncmp(name(1), "CUDA_ERROR_", 11) == 0) return "CUDA_ERROR_";
  return backend.error_prefix;
}

#if defined(GT_DRIVER_VULKAN)
/* Vulkan's kernels: tests/drivers/shaders, one SPIR-V module each (a GLSL shader has one entry point,
 * "main"). gt_kernels hands out the fill's module and keeps the others beside it, by that handle. */
static const uint32_t spirv_fill[] =
#include "rig_fill_u32.spv.inc"
    ;
static const uint32_t spirv_add[] =
#include "rig_add_u32.spv.inc"
    ;
static const uint32_t spirv_chain[] =
#include "rig_chain_step.spv.inc"
    ;
typedef struct vk_kernels {
  rig_module fill, add, chain;
} vk_kernels;
static vk_kernels vk_sets[64];

static rig_module load_spirv(rig_device d, const uint32_t *words, size_t bytes) {
  rig_module m = NULL;
  OK(rig_module_load(d, RIG_MODULE_SPIRV, words, bytes, &m));
  return m;
}

static vk_kernels *vk_set_of(rig_module fill) {
  for (size_t i = 0; i < sizeof vk_sets / sizeof *vk_sets; ++i)
    if (vk_sets[i].fill == fill) return &vk_sets[i];
  return NULL;
}
#endif

/* The module and entry point of kernels.ptx's `*function` where a backend keeps one module a kernel. */
static rig_module module_of(rig_module m, const char **function) {
#if defined(GT_DRIVER_VULKAN)
  vk_kernels *k = m ? vk_set_of(m) : NULL;
  rig_module found = NULL;
  if (k && strcmp(*function, "rig_fill_u32") == 0) found = k->fill;
  if (k && strcmp(*function, "rig_add_u32") == 0) found = k->add;
  if (k && strcmp(*function, "rig_chain_step") == 0) found = k->chain;
  if (found) {
    *function = "main";
    return found;
  }
#endif
  (void)function;
  return m;
}

rig_module gt_kernels(rig_device d) {
  if (backend.host_kernels) return NULL;
#if defined(GT_DRIVER_VULKAN)
  vk_kernels *k = vk_set_of(NULL);
  if (!k) fail_msg("more than %zu kernel sets at once", sizeof vk_sets / sizeof *vk_sets);
  k->add = load_spirv(d, spirv_add, sizeof spirv_add);
  k->chain = load_spirv(d, spirv_chain, sizeof spirv_chain);
  k->fill = load_spirv(d, spirv_fill, sizeof spirv_fill);
  return k->fill;
#endif
  rig_module m = NULL;
  /* Without the NUL: both drivers end a text image themselves (the loaders take no length). */
  OK(rig_module_load(d, backend.kernels, kernels_ptx, strlen(kernels_ptx), &m));
  return m;
}

void gt_release_kernels(rig_module m) {
#if defined(GT_DRIVER_VULKAN)
  vk_kernels *k = m ? vk_set_of(m) : NULL;
  if (k) {
    OK(rig_module_release(k->add));
    OK(rig_module_release(k->chain));
    memset(k, 0, sizeof *k);
  }
#endif
  if (m) OK(rig_module_release(m));
}

rig_run gt_launch_run(rig_device d, rig_module m, const char *function, const rig_buffer *buffers,
                      const rig_access *access, uint32_t slot_count, const uint32_t *slots, uint32_t launch_slots,
                      uint32_t grid) {
  rig_part part;
  memset(&part, 0, sizeof part);
  part.size = sizeof part;
  part.kind = RIG_PART_LAUNCH;
  part.module = module_of(m, &function);
  part.function = function;
  part.grid[0] = grid ? grid : 1;
  part.grid[1] = part.grid[2] = 1;
  part.block[0] = 256;
  part.block[1] = part.block[2] = 1;
  part.slots = slots;
  part.slot_count = launch_slots;
  rig_submission sub = NULL;
  rig_run run = NULL;
  OK(rig_submission_make(d, &part, 1, access, slot_count, &sub));
  OK(rig_run_take(sub, &run));
  OK(rig_submission_release(sub));
  for (uint32_t i = 0; i < slot_count; ++i) OK(rig_run_set_buffer(run, i, buffers[i]));
  return run;
}

/* ----- the kernels as host kernels (memory devices, the test driver) ------------------------------------ */

/* One launch's arguments, kept until its kernel has run: a ring far longer than any case's launches in
 * flight (the host kernel takes them through its user pointer, the only argument it has besides spans). */
typedef struct host_launch {
  const char *function;
  uint8_t scalars[16];
} host_launch;
static host_launch host_launches[1024];
static unsigned host_next;

static uint32_t scalar_u32(const host_launch *l, size_t i) {
  uint32_t v;
  memcpy(&v, l->scalars + 4 * i, 4);
  return v;
}

/* kernels.ptx's kernels over the spans (in, out for the element-wise ones; out for the fill). */
static void host_kernel_run(void *user, const rig_span *slots, size_t slot_count) {
  const host_launch *l = user;
  uint32_t n = scalar_u32(l, 0), k = scalar_u32(l, 1);
  if (strcmp(l->function, "rig_delay") == 0) {
    uint64_t ns;
    memcpy(&ns, l->scalars, 8);
    struct timespec t = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&t, NULL);
    return;
  }
  uint32_t *out = slots[slot_count - 1].data;
  if (strcmp(l->function, "rig_fill_u32") == 0) {
    for (uint32_t i = 0; i < n; ++i) out[i] = k;
    return;
  }
  const uint32_t *in = slots[0].data;
  int chain = strcmp(l->function, "rig_chain_step") == 0;
  for (uint32_t i = 0; i < n; ++i) out[i] = chain ? in[i] * 31u + k + i : in[i] + k;
}

static rig_point submit_host(rig_device d, const char *function, const rig_buffer *buffers, const rig_access *access,
                             uint32_t slot_count, const void *scalars, size_t scalar_length) {
  host_launch *l = &host_launches[host_next++ % (sizeof host_launches / sizeof *host_launches)];
  l->function = function;
  memset(l->scalars, 0, sizeof l->scalars);
  memcpy(l->scalars, scalars, scalar_length < sizeof l->scalars ? scalar_length : sizeof l->scalars);
  return rt_kernel(d, host_kernel_run, l, buffers, access, slot_count, NULL, 0);
}

static rig_point submit_launch(rig_device d, rig_module m, const char *function, const rig_buffer *buffers,
                               const rig_access *access, uint32_t slot_count, const uint32_t *slots,
                               uint32_t launch_slots, const void *scalars, size_t scalar_length, uint32_t grid) {
  if (backend.host_kernels) return submit_host(d, function, buffers, access, slot_count, scalars, scalar_length);
  rig_run run = gt_launch_run(d, m, function, buffers, access, slot_count, slots, launch_slots, grid);
  rig_point p = 0;
  OK(rig_run_set_scalars(run, scalars, scalar_length));
  OK(rig_submit(run, NULL, 0, &p));
  OK(rig_run_release(run));
  return p;
}
rig_point gt_step(rig_device d, rig_module m, const char *function, rig_buffer in, rig_buffer out, uint32_t n,
                  uint32_t k) {
  uint32_t scalars[2] = {n, k};
  uint32_t grid = (n + 255) / 256;
  if (in == out) {
    rig_access access[1] = {RIG_ACCESS_READ_WRITE};
    uint32_t slots[2] = {0, 0};
    return submit_launch(d, m, function, &in, access, 1, slots, 2, scalars, sizeof scalars, grid);
  }
  rig_buffer buffers[2] = {in, out};
  rig_access access[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  uint32_t slots[2] = {0, 1};
  return submit_launch(d, m, function, buffers, access, 2, slots, 2, scalars, sizeof scalars, grid);
}

rig_point gt_fill_u32(rig_device d, rig_module m, rig_buffer out, uint32_t n, uint32_t k) {
  uint32_t scalars[2] = {n, k};
  rig_access access[1] = {RIG_ACCESS_WRITE};
  uint32_t slots[1] = {0};
  return submit_launch(d, m, "rig_fill_u32", &out, access, 1, slots, 1, scalars, sizeof scalars, (n + 255) / 256);
}

rig_point gt_fault(rig_device d, rig_module m) {
  if (backend.host_kernels) fail_msg("%s: a host kernel cannot fault", backend.prefix);
  uint64_t nowhere = 0x10;
  return submit_launch(d, m, "rig_fault", NULL, NULL, 0, NULL, 0, &nowhere, sizeof nowhere, 1);
}

rig_point gt_delay(rig_device d, rig_module m, uint64_t ns) {
  return submit_launch(d, m, "rig_delay", NULL, NULL, 0, NULL, 0, &ns, sizeof ns, 1);
}
