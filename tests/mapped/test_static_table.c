/* The static table row by row (rig_static_verdict_for with a counting fact query), and the same rows on
 * devices (rig_static_verdict over the registering double): Vulkan is refused before any query and nothing
 * is ever registered or read on a refused or decided device. */
#include <rig_mapped.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "registering_double.h"

typedef struct facts {
  int integrated, pageable;
  unsigned calls;
} facts;

static int ask(void *user, rig_device_fact fact) {
  facts *f = user;
  f->calls++;
  return fact == RIG_FACT_INTEGRATED ? f->integrated : f->pageable;
}

/* Checks the row's answer: want_kind 0 means "self-test required" (no verdict). */
static void row(const char *framework, rig_device_kind kind, int integrated, int pageable, rig_verdict_kind want_kind,
                rig_refusal want_refusal, unsigned want_calls) {
  facts f = {integrated, pageable, 0};
  rig_verdict v = (rig_verdict)(uintptr_t)1;
  assert_int_equal(rig_static_verdict_for(framework, kind, ask, &f, &v), RIG_OK);
  if (f.calls != want_calls) fail_msg("%s: %u queries, want %u", framework, f.calls, want_calls);
  if (want_kind == 0) {
    if (v) fail_msg("%s: want self-test required", framework);
    return;
  }
  if (!v) fail_msg("%s: want a decided verdict, got self-test required", framework);
  rig_verdict_kind k;
  rig_refusal r;
  int c;
  const char *text;
  assert_int_equal(rig_verdict_get_kind(v, &k), RIG_OK);
  assert_int_equal(rig_verdict_refusal(v, &r), RIG_OK);
  assert_int_equal(rig_verdict_cacheable(v, &c), RIG_OK);
  assert_int_equal(rig_verdict_to_string(v, &text), RIG_OK);
  if (k != want_kind || r != want_refusal)
    fail_msg("%s (integrated %d): want %s/%s, got %s", framework, integrated, rig_verdict_kind_name(want_kind),
             rig_refusal_name(want_refusal), text);
  assert_int_equal(c, 0); /* no static verdict is cacheable */
  const char *reason;
  assert_int_equal(rig_verdict_reason(v, &reason), RIG_OK);
  assert_true(strlen(reason) > 0);
  double reg = -1, stg = -1;
  assert_int_equal(rig_verdict_speeds(v, &reg, &stg), RIG_OK);
  assert_true(reg == 0 && stg == 0);
  assert_int_equal(rig_verdict_release(v), RIG_OK);
}

static void vulkan_is_refused_before_any_query(void **state) {
  (void)state;
  row("Vulkan", RIG_DEVICE_GPU, 0, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_KERNEL_HAZARD, 0);
  row("Vulkan", RIG_DEVICE_CPU, 0, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_KERNEL_HAZARD, 0); /* lavapipe too */
  row("Vulkan/SPIR-V", RIG_DEVICE_GPU, 0, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_KERNEL_HAZARD, 0);
  row("vulkan", RIG_DEVICE_GPU, 0, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_KERNEL_HAZARD, 0);
}

static void cuda_rows(void **state) {
  (void)state;
  row("CUDA", RIG_DEVICE_GPU, 0, 0, 0, 0, 2); /* discrete: self-test */
  row("CUDA/PTX", RIG_DEVICE_GPU, 0, 0, 0, 0, 2);
  row("CUDA", RIG_DEVICE_GPU, 1, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_INTEGRATED_GPU, 1);
  row("CUDA", RIG_DEVICE_GPU, -1, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_DEVICE_KIND_UNKNOWN, 1);
  row("CUDA/PTX", RIG_DEVICE_GPU, -1, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_DEVICE_KIND_UNKNOWN, 1);
  /* refinement: reads pageable memory through the host's page tables (Grace Hopper) */
  row("CUDA", RIG_DEVICE_GPU, 0, 1, RIG_VERDICT_NOT_NEEDED, RIG_REFUSAL_NONE, 2);
  row("CUDA", RIG_DEVICE_GPU, 0, -1, 0, 0, 2); /* unknown: the self-test measures */
}

static void hip_rows(void **state) {
  (void)state;
  row("HIP", RIG_DEVICE_GPU, 0, 0, 0, 0, 2);
  row("HIP/gfx1100", RIG_DEVICE_GPU, 0, 0, 0, 0, 2);
  row("HIP", RIG_DEVICE_GPU, 1, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_INTEGRATED_GPU, 1);
  /* a failed query counts as integrated on HIP */
  row("HIP", RIG_DEVICE_GPU, -1, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_INTEGRATED_GPU, 1);
  row("HIP", RIG_DEVICE_GPU, 0, 1, RIG_VERDICT_NOT_NEEDED, RIG_REFUSAL_NONE, 2);
}

static void other_rows(void **state) {
  (void)state;
  row("Metal", RIG_DEVICE_GPU, 0, 0, RIG_VERDICT_NOT_NEEDED, RIG_REFUSAL_NONE, 0);
  row("OpenCL", RIG_DEVICE_CPU, 0, 0, RIG_VERDICT_NOT_NEEDED, RIG_REFUSAL_NONE, 0);
  row("OpenCL", RIG_DEVICE_GPU, 0, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_NOT_MEASURED, 0);
  row("OpenCL/Intel", RIG_DEVICE_GPU, 0, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_NOT_MEASURED, 0);
  row("memory", RIG_DEVICE_MEMORY, 0, 0, RIG_VERDICT_NOT_NEEDED, RIG_REFUSAL_NONE, 0);
  row("host", RIG_DEVICE_HOST, 0, 0, RIG_VERDICT_NOT_NEEDED, RIG_REFUSAL_NONE, 0);
  row("Native", RIG_DEVICE_GPU, 0, 0, RIG_VERDICT_NOT_NEEDED, RIG_REFUSAL_NONE, 0);
  row("SomeCPUBackend", RIG_DEVICE_CPU, 0, 0, RIG_VERDICT_NOT_NEEDED, RIG_REFUSAL_NONE, 0);
  row("test", RIG_DEVICE_GPU, 0, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_NOT_MEASURED, 0);
  row("Interpreter", RIG_DEVICE_GPU, 0, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_NOT_MEASURED, 0);
  /* a name that only starts like a listed one is not a family variant */
  row("CUDAX", RIG_DEVICE_GPU, 0, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_NOT_MEASURED, 0);
  row("Vulkanish", RIG_DEVICE_GPU, 0, 0, RIG_VERDICT_REFUSED, RIG_REFUSAL_NOT_MEASURED, 0);
}

static void without_fact_query_every_fact_fails(void **state) {
  (void)state;
  rig_verdict v;
  rig_refusal r;
  assert_int_equal(rig_static_verdict_for("CUDA", RIG_DEVICE_GPU, NULL, NULL, &v), RIG_OK);
  assert_int_equal(rig_verdict_refusal(v, &r), RIG_OK);
  assert_int_equal(r, RIG_REFUSAL_DEVICE_KIND_UNKNOWN);
  rig_verdict_release(v);
}

static void bad_input(void **state) {
  (void)state;
  rig_verdict v;
  assert_int_equal(rig_static_verdict_for(NULL, RIG_DEVICE_GPU, NULL, NULL, &v), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_static_verdict_for("", RIG_DEVICE_GPU, NULL, NULL, &v), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_static_verdict_for("CUDA", RIG_DEVICE_GPU, NULL, NULL, NULL), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_static_verdict_for("CUDA", (rig_device_kind)42, NULL, NULL, &v), RIG_INVALID_ARGUMENT);
  assert_int_equal(rig_static_verdict(NULL, &v), RIG_INVALID_HANDLE);
  assert_int_equal(rig_static_verdict((rig_device)(uintptr_t)0x777, &v), RIG_INVALID_HANDLE);
  assert_true(strlen(rig_last_error()) > 0);
}

/* A device's static verdict: its driver is asked exactly what the row asks. */
static rig_verdict device_row(const char *framework, rig_device_kind kind, int integrated, int pageable,
                              unsigned want_queries, rig_device *out) {
  rd_config c = {framework, kind, integrated, pageable, 1, 1};
  rig_device d;
  assert_int_equal(rd_open(&c, &d), RIG_OK);
  rig_verdict v = (rig_verdict)(uintptr_t)1;
  assert_int_equal(rig_static_verdict(d, &v), RIG_OK);
  rd_counts n = rd_get_counts(d);
  if (n.queries != want_queries) fail_msg("%s: %u queries, want %u", framework, n.queries, want_queries);
  assert_int_equal(n.registers, 0);
  *out = d;
  return v;
}

static void device_rows(void **state) {
  (void)state;
  rig_device d;
  rig_refusal r;
  rig_verdict_kind k;
  rig_verdict v = device_row("Vulkan", RIG_DEVICE_GPU, 0, 0, 0, &d);
  assert_int_equal(rig_verdict_refusal(v, &r), RIG_OK);
  assert_int_equal(r, RIG_REFUSAL_KERNEL_HAZARD);
  rig_verdict_release(v);
  rig_device_release(d);
  assert_null(device_row("CUDA", RIG_DEVICE_GPU, 0, 0, 2, &d));
  rig_device_release(d);
  v = device_row("CUDA", RIG_DEVICE_GPU, -1, 0, 1, &d);
  assert_int_equal(rig_verdict_refusal(v, &r), RIG_OK);
  assert_int_equal(r, RIG_REFUSAL_DEVICE_KIND_UNKNOWN);
  rig_verdict_release(v);
  rig_device_release(d);
  v = device_row("HIP", RIG_DEVICE_GPU, -1, 0, 1, &d);
  assert_int_equal(rig_verdict_refusal(v, &r), RIG_OK);
  assert_int_equal(r, RIG_REFUSAL_INTEGRATED_GPU);
  rig_verdict_release(v);
  rig_device_release(d);
  v = device_row("CUDA", RIG_DEVICE_GPU, 0, 1, 2, &d);
  assert_int_equal(rig_verdict_get_kind(v, &k), RIG_OK);
  assert_int_equal(k, RIG_VERDICT_NOT_NEEDED);
  rig_verdict_release(v);
  rig_device_release(d);
}

/* Memory devices and the host: Not_needed. */
static void memory_and_host_are_not_needed(void **state) {
  (void)state;
  rig_device m, h;
  rig_verdict v;
  rig_verdict_kind k;
  assert_int_equal(rig_memory_device("M", &m), RIG_OK);
  assert_int_equal(rig_static_verdict(m, &v), RIG_OK);
  assert_non_null(v);
  assert_int_equal(rig_verdict_get_kind(v, &k), RIG_OK);
  assert_int_equal(k, RIG_VERDICT_NOT_NEEDED);
  rig_verdict_release(v);
  assert_int_equal(rig_host(&h), RIG_OK);
  assert_int_equal(rig_static_verdict(h, &v), RIG_OK);
  assert_int_equal(rig_verdict_get_kind(v, &k), RIG_OK);
  assert_int_equal(k, RIG_VERDICT_NOT_NEEDED);
  rig_verdict_release(v);
  rig_device_release(m);
}

/* On a statically decided device rig_probe reads neither map nor reference (both PROT_NONE here) and no
 * path registers anything on a refused device (Vulkan with a driver that could register). */
static void decided_devices_are_never_probed_or_registered(void **state) {
  (void)state;
  size_t len = 1 << 20;
  char *none = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(none != MAP_FAILED);
  rd_config c = {"Vulkan", RIG_DEVICE_GPU, 0, 0, 1, 1};
  rig_device vk, m;
  assert_int_equal(rd_open(&c, &vk), RIG_OK);
  assert_int_equal(rig_memory_device("M", &m), RIG_OK);
  rig_verdict v;
  rig_verdict_kind k;
  rig_refusal r;
  assert_int_equal(rig_probe(vk, none, none, len, NULL, &v), RIG_OK);
  assert_int_equal(rig_verdict_refusal(v, &r), RIG_OK);
  assert_int_equal(r, RIG_REFUSAL_KERNEL_HAZARD);
  rig_verdict_release(v);
  assert_int_equal(rig_probe(m, none, none, len, NULL, &v), RIG_OK);
  assert_int_equal(rig_verdict_get_kind(v, &k), RIG_OK);
  assert_int_equal(k, RIG_VERDICT_NOT_NEEDED);
  rig_verdict_release(v);

  rig_probe_ops ops;
  assert_int_equal(rig_probe_ops_open(vk, len, &ops), RIG_UNSUPPORTED);
  assert_non_null(strstr(rig_last_error(), "Kernel_hazard"));
  assert_int_equal(rig_probe_ops_open(m, len, &ops), RIG_UNSUPPORTED);
  char *page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_int_equal(rig_host_register(vk, page, len, RIG_ACCESS_READ), RIG_UNSUPPORTED);
  assert_int_equal(rig_host_register(m, page, len, RIG_ACCESS_READ), RIG_UNSUPPORTED);
  int reg = -1;
  assert_int_equal(rig_host_is_registered(page, len, &reg), RIG_OK);
  assert_int_equal(reg, 0);
  rd_counts n = rd_get_counts(vk);
  assert_int_equal(n.queries, 0);
  assert_int_equal(n.registers, 0);
  assert_int_equal(n.device_allocs, 0);
  assert_int_equal(n.uploads, 0);
  rig_device_release(vk);
  rig_device_release(m);
  munmap(none, len);
  munmap(page, len);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(vulkan_is_refused_before_any_query),
      cmocka_unit_test(cuda_rows),
      cmocka_unit_test(hip_rows),
      cmocka_unit_test(other_rows),
      cmocka_unit_test(without_fact_query_every_fact_fails),
      cmocka_unit_test(bad_input),
      cmocka_unit_test(device_rows),
      cmocka_unit_test(memory_and_host_are_not_needed),
      cmocka_unit_test(decided_devices_are_never_probed_or_registered),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
