/* Bad input, table-driven: every case gets its status and a message that says what, never a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rigtest.h"

static rig_device A, B, HOST;
static rig_buffer X, Y, RO, RO_ON_A, RELEASED_BUF, X_ON_B;
static rig_device RELEASED_DEV;
static rig_submission SUB, RELEASED_SUB;
static rig_run RUN;
static uint8_t ro_bytes[64];

static int setup(void **state) {
  (void)state;
  OK(rig_memory_device("A", &A));
  OK(rig_memory_device("B", &B));
  OK(rig_host(&HOST));
  X = rt_create(A, 64);
  Y = rt_create(A, 64);
  OK(rig_buffer_wrap(ro_bytes, 64, RIG_ACCESS_READ, NULL, NULL, &RO));
  RELEASED_BUF = rt_create(A, 8);
  OK(rig_buffer_release(RELEASED_BUF));
  OK(rig_memory_device("gone", &RELEASED_DEV));
  OK(rig_device_release(RELEASED_DEV));
  X_ON_B = rt_borrow(B, X);
  RO_ON_A = rt_borrow(A, RO);
  rig_part copy = {sizeof copy};
  copy.kind = RIG_PART_COPY;
  copy.src_slot = 0;
  copy.dst_slot = 1;
  copy.length = 32;
  rig_access acc[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  OK(rig_submission_make(A, &copy, 1, acc, 2, &SUB));
  OK(rig_submission_make(A, &copy, 1, acc, 2, &RELEASED_SUB));
  OK(rig_submission_release(RELEASED_SUB));
  OK(rig_run_take(SUB, &RUN));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  rig_run_release(RUN);
  rig_submission_release(SUB);
  rig_buffer_release(X_ON_B);
  rig_buffer_release(X);
  rig_buffer_release(Y);
  rig_buffer_release(RO_ON_A);
  rig_buffer_release(RO);
  rig_device_release(A);
  rig_device_release(B);
  return 0;
}

static rig_buffer out_b;
static rig_device out_d;
static rig_submission out_s;
static rig_run out_r;
static uint64_t out_u;
static size_t out_z;
static void *out_p;
static uint8_t bytes[128];
/* A case that releases handles after the bad call keeps the call's message here (each call starts fresh). */
static char kept[512];
static void keep(void) { snprintf(kept, sizeof kept, "%s", rig_last_error()); }

static rig_submission make_sub(rig_device d, rig_part_kind kind, uint32_t src, uint32_t dst, size_t off,
                               size_t len, rig_access a0, rig_access a1, size_t slots, size_t part_size) {
  rig_part p;
  memset(&p, 0, sizeof p);
  p.size = part_size;
  p.kind = kind;
  p.src_slot = src;
  p.dst_slot = dst;
  p.dst_offset = off;
  p.length = len;
  rig_access acc[2] = {a0, a1};
  rig_status s = rig_submission_make(d, &p, 1, acc, slots, &out_s);
  if (s == RIG_OK) rig_submission_release(out_s);
  return (rig_submission)(uintptr_t)s;
}
#define SUB_STATUS(...) ((rig_status)(uintptr_t)make_sub(__VA_ARGS__))

static rig_status forged(void) { return rig_buffer_length((rig_buffer)(uintptr_t)0x0200000500000007ull, &out_z); }
static rig_status wrong_kind(void) { return rig_buffer_length((rig_buffer)(void *)A, &out_z); }

static rig_status set_wrong_device(void) { return rig_run_set_buffer(RUN, 0, X_ON_B); }
static rig_status set_read_only_written(void) { return rig_run_set_buffer(RUN, 1, RO_ON_A); }
static rig_status set_slot_past(void) { return rig_run_set_buffer(RUN, 2, X); }
static rig_status submit_unset(void) {
  rig_run r;
  rig_status s = rig_run_take(SUB, &r);
  if (s == RIG_OK) s = rig_submit(r, NULL, 0, NULL);
  keep();
  rig_run_release(r);
  return s;
}
static rig_status submit_out_of_range(void) {
  rig_buffer small;
  rig_run r;
  rig_status s = rig_buffer_view(X, 0, 16, &small);
  if (s != RIG_OK) return RIG_OK;
  rig_run_take(SUB, &r);
  rig_run_set_buffer(r, 0, small);
  rig_run_set_buffer(r, 1, Y);
  s = rig_submit(r, NULL, 0, NULL); /* copies 32 bytes from a 16-byte view */
  keep();
  rig_run_release(r);
  rig_buffer_release(small);
  return s;
}
static rig_status submit_wait_past_submitted(void) {
  rig_run r;
  rig_run_take(SUB, &r);
  rig_run_set_buffer(r, 0, X);
  rig_run_set_buffer(r, 1, Y);
  rig_point w = rig_point_make(rig_point_device_index(rt_fill(B, X_ON_B, 0)), 1000);
  rig_status s = rig_submit(r, &w, 1, NULL);
  keep();
  rig_run_release(r);
  return s;
}
static rig_status submit_null_waits(void) {
  rig_run r;
  rig_run_take(SUB, &r);
  rig_run_set_buffer(r, 0, X);
  rig_run_set_buffer(r, 1, Y);
  rig_status s = rig_submit(r, NULL, 3, NULL);
  keep();
  rig_run_release(r);
  return s;
}

typedef struct bad_case {
  const char *what;
  rig_status want;
  rig_status (*call)(void);
} bad_case;

static rig_status c_null_device_create(void) { return rig_buffer_create(NULL, 8, RIG_MEMORY_DEVICE, &out_b); }
static rig_status c_released_device_create(void) { return rig_buffer_create(RELEASED_DEV, 8, RIG_MEMORY_DEVICE, &out_b); }
static rig_status c_released_buffer_length(void) { return rig_buffer_length(RELEASED_BUF, &out_z); }
static rig_status c_released_buffer_release(void) { return rig_buffer_release(RELEASED_BUF); }
static rig_status c_released_submission_take(void) { return rig_run_take(RELEASED_SUB, &out_r); }
static rig_status c_null_run_submit(void) { return rig_submit(NULL, NULL, 0, NULL); }
static rig_status c_null_out(void) { return rig_buffer_create(A, 8, RIG_MEMORY_DEVICE, NULL); }
static rig_status c_bad_memory_kind(void) { return rig_buffer_create(A, 8, (rig_memory)9, &out_b); }
static rig_status c_view_past_end(void) { return rig_buffer_view(X, 60, 8, &out_b); }
static rig_status c_view_overflow(void) { return rig_buffer_view(X, 8, SIZE_MAX - 4, &out_b); }
static rig_status c_read_past_end(void) { return rig_buffer_read_into(X, 0, bytes, 65); }
static rig_status c_read_overflow(void) { return rig_buffer_read_into(X, SIZE_MAX, bytes, 2); }
static rig_status c_write_null(void) { return rig_buffer_write_from(X, 0, NULL, 4); }
static rig_status c_write_read_only(void) { return rig_buffer_write_from(RO, 0, bytes, 4); }
static rig_status c_wrap_null(void) { return rig_buffer_wrap(NULL, 8, RIG_ACCESS_READ, NULL, NULL, &out_b); }
static rig_status c_wrap_wrapping(void) { return rig_buffer_wrap((void *)(uintptr_t)-16, 64, RIG_ACCESS_READ, NULL, NULL, &out_b); }
static rig_status c_wrap_bad_access(void) { return rig_buffer_wrap(bytes, 8, (rig_access)0, NULL, NULL, &out_b); }
static rig_status c_borrow_released(void) { return rig_buffer_borrow(B, RELEASED_BUF, &out_b); }
static rig_status c_wait_past(void) { return rig_device_wait(A, 1000000, 0); }
static rig_status c_wait_point_nowhere(void) { return rig_wait_point(rig_point_make(65000, 1), 0); }
static rig_status c_point_zero(void) { return rig_device_point(A, 0, &out_u); }
static rig_status c_name_empty(void) { return rig_memory_device("", &out_d); }
static rig_status c_open_no_colon(void) { return rig_device_open("cuda", &out_d); }
static rig_status c_open_no_driver(void) { return rig_device_open("nosuch:0", &out_d); }
static rig_status c_open_memory(void) { return rig_device_open("memory:A", &out_d); }
static rig_status c_info_small(void) {
  rig_device_info i = {4};
  return rig_device_get_info(A, &i);
}
static rig_status c_host_submission(void) { return rig_submission_make(HOST, NULL, 0, NULL, 0, &out_s); }
static rig_status c_part_bad_slot(void) { return SUB_STATUS(A, RIG_PART_COPY, 0, 5, 0, 8, RIG_ACCESS_READ, RIG_ACCESS_WRITE, 2, sizeof(rig_part)); }
static rig_status c_part_copy_into_read(void) { return SUB_STATUS(A, RIG_PART_COPY, 0, 1, 0, 8, RIG_ACCESS_READ, RIG_ACCESS_READ, 2, sizeof(rig_part)); }
static rig_status c_part_copy_from_write(void) { return SUB_STATUS(A, RIG_PART_COPY, 0, 1, 0, 8, RIG_ACCESS_WRITE, RIG_ACCESS_WRITE, 2, sizeof(rig_part)); }
static rig_status c_part_small_size(void) { return SUB_STATUS(A, RIG_PART_COPY, 0, 1, 0, 8, RIG_ACCESS_READ, RIG_ACCESS_WRITE, 2, 8); }
static rig_status c_part_bad_kind(void) { return SUB_STATUS(A, (rig_part_kind)77, 0, 1, 0, 8, RIG_ACCESS_READ, RIG_ACCESS_WRITE, 2, sizeof(rig_part)); }
static rig_status c_part_overflow(void) { return SUB_STATUS(A, RIG_PART_FILL, 0, 0, SIZE_MAX - 2, 8, RIG_ACCESS_WRITE, RIG_ACCESS_WRITE, 1, sizeof(rig_part)); }
static rig_status c_part_bad_access(void) { return SUB_STATUS(A, RIG_PART_FILL, 0, 0, 0, 8, (rig_access)8, RIG_ACCESS_WRITE, 1, sizeof(rig_part)); }
static rig_status c_launch_on_memory(void) {
  rig_part p = {sizeof p};
  p.kind = RIG_PART_LAUNCH;
  p.module = NULL;
  p.function = "k";
  return rig_submission_make(A, &p, 1, NULL, 0, &out_s);
}
static rig_status c_module_on_memory(void) {
  rig_module m;
  return rig_module_load(A, RIG_MODULE_PTX, "x", 1, &m);
}
static rig_status c_scalars_too_many(void) { return rig_run_set_scalars(RUN, bytes, 5000); }
static rig_status c_export_released(void) { return rig_buffer_export(RELEASED_BUF, &out_p); }
static rig_status c_list_null_names(void) { return rig_device_list(NULL, 4, &out_z); }

static const bad_case cases[] = {
    {"null device", RIG_INVALID_HANDLE, c_null_device_create},
    {"released device", RIG_INVALID_HANDLE, c_released_device_create},
    {"released buffer", RIG_INVALID_HANDLE, c_released_buffer_length},
    {"double release", RIG_INVALID_HANDLE, c_released_buffer_release},
    {"released submission", RIG_INVALID_HANDLE, c_released_submission_take},
    {"null run", RIG_INVALID_HANDLE, c_null_run_submit},
    {"forged handle", RIG_INVALID_HANDLE, forged},
    {"handle of another type", RIG_INVALID_HANDLE, wrong_kind},
    {"null output", RIG_INVALID_ARGUMENT, c_null_out},
    {"unknown memory kind", RIG_INVALID_ARGUMENT, c_bad_memory_kind},
    {"view past the end", RIG_INVALID_ARGUMENT, c_view_past_end},
    {"view overflowing", RIG_INVALID_ARGUMENT, c_view_overflow},
    {"read past the end", RIG_INVALID_ARGUMENT, c_read_past_end},
    {"read overflowing", RIG_INVALID_ARGUMENT, c_read_overflow},
    {"write from null", RIG_INVALID_ARGUMENT, c_write_null},
    {"write into read-only wrap", RIG_INVALID_ARGUMENT, c_write_read_only},
    {"wrap null", RIG_INVALID_ARGUMENT, c_wrap_null},
    {"wrap around the address space", RIG_INVALID_ARGUMENT, c_wrap_wrapping},
    {"wrap unknown access", RIG_INVALID_ARGUMENT, c_wrap_bad_access},
    {"borrow released", RIG_INVALID_HANDLE, c_borrow_released},
    {"wait past submitted", RIG_INVALID_ARGUMENT, c_wait_past},
    {"wait on a point of no device", RIG_NOT_FOUND, c_wait_point_nowhere},
    {"point 0", RIG_INVALID_ARGUMENT, c_point_zero},
    {"empty name", RIG_INVALID_ARGUMENT, c_name_empty},
    {"name without ordinal", RIG_INVALID_ARGUMENT, c_open_no_colon},
    {"no such driver", RIG_NOT_FOUND, c_open_no_driver},
    {"memory:NAME to device_open", RIG_INVALID_ARGUMENT, c_open_memory},
    {"info size too small", RIG_INVALID_ARGUMENT, c_info_small},
    {"submission on the host", RIG_UNSUPPORTED, c_host_submission},
    {"part slot past the slots", RIG_INVALID_ARGUMENT, c_part_bad_slot},
    {"copy into a read slot", RIG_INVALID_ARGUMENT, c_part_copy_into_read},
    {"copy from a write slot", RIG_INVALID_ARGUMENT, c_part_copy_from_write},
    {"part size unset", RIG_INVALID_ARGUMENT, c_part_small_size},
    {"unknown part kind", RIG_INVALID_ARGUMENT, c_part_bad_kind},
    {"part range overflowing", RIG_INVALID_ARGUMENT, c_part_overflow},
    {"unknown slot access", RIG_INVALID_ARGUMENT, c_part_bad_access},
    {"launch with no module", RIG_INVALID_HANDLE, c_launch_on_memory},
    {"module on a memory device", RIG_UNSUPPORTED, c_module_on_memory},
    {"too many scalars", RIG_INVALID_ARGUMENT, c_scalars_too_many},
    {"export released", RIG_INVALID_HANDLE, c_export_released},
    {"list with null names", RIG_INVALID_ARGUMENT, c_list_null_names},
    {"buffer of another device without a borrow", RIG_INVALID_ARGUMENT, set_wrong_device},
    {"read-only wrap in a written slot", RIG_INVALID_ARGUMENT, set_read_only_written},
    {"slot past the slots", RIG_INVALID_ARGUMENT, set_slot_past},
    {"submit with a slot unset", RIG_INVALID_ARGUMENT, submit_unset},
    {"copy out of a view's range", RIG_INVALID_ARGUMENT, submit_out_of_range},
    {"wait past submitted in submit", RIG_INVALID_ARGUMENT, submit_wait_past_submitted},
    {"null waits with a count", RIG_INVALID_ARGUMENT, submit_null_waits},
};

static void every_bad_input_gets_its_status_and_a_message(void **state) {
  (void)state;
  int failed = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    rig_status got = cases[i].call();
    const char *msg = kept[0] ? kept : rig_last_error();
    int ok = got == cases[i].want && msg[0] != '\0';
    printf("%-4s %-45s %-22s %s\n", ok ? "ok" : "FAIL", cases[i].what, rig_status_name(got), msg);
    failed += !ok;
    kept[0] = '\0';
  }
  assert_int_equal(failed, 0);
}

/* `rig devices` lists memory:NAME and `rig load --device memory:A` takes it, so a user tries
 * rig_device_open("memory:A") (Python: rig.open_device): the message must name the call that opens it,
 * not claim "memory:A" is not DRIVER:N. */
static void device_open_says_how_to_open_a_memory_device(void **state) {
  (void)state;
  rig_device d;
  assert_int_equal(rig_device_open("memory:A", &d), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "rig_memory_device"));
  assert_int_equal(rig_device_open("memory", &d), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "rig_memory_device"));
  assert_int_equal(rig_device_open("cuda", &d), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "cuda:0"));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(every_bad_input_gets_its_status_and_a_message),
                                     cmocka_unit_test(device_open_says_how_to_open_a_memory_device)};
  return cmocka_run_group_tests_name("bad input", tests, setup, teardown);
}
