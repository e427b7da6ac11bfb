/* The loader's ordering on the test driver, whose queue runs only when stepped: a consumer of tensor 0
 * follows the copy of the chunk that holds tensor 0 and nothing else (rule 3), so it runs while the later
 * chunks' copies are still held, though every tensor is a part of one device allocation. Observed in the
 * driver's log, not by timing. A slice is ordered the same way: by its own stamps. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_driver.h"
#include "weights.h"

static void sum_bytes(void *user, const rig_span *slots, size_t count) {
  (void)count;
  unsigned long long *sum = user;
  const unsigned char *p = slots[0].data;
  for (size_t i = 0; i < slots[0].length; ++i) *sum += p[i];
}

/* The consumer: a host kernel on u adding up the bytes of `b` into *sum, submitted with no waits of its
 * own, so that what it waits for is what rig orders it after. *s and *r are the caller's to release. */
static void submit_sum(rig_device u, rig_buffer b, unsigned long long *sum, rig_submission *s, rig_run *r) {
  rig_part part;
  memset(&part, 0, sizeof part);
  part.size = sizeof part;
  part.kind = RIG_PART_HOST_KERNEL;
  part.fn = sum_bytes;
  part.user = sum;
  rig_access access = RIG_ACCESS_READ;
  assert_int_equal(rig_submission_make(u, &part, 1, &access, 1, s), RIG_OK);
  assert_int_equal(rig_run_take(*s, r), RIG_OK);
  assert_int_equal(rig_run_set_buffer(*r, 0, b), RIG_OK);
  assert_int_equal(rig_submit(*r, NULL, 0, NULL), RIG_OK);
}

static void a_consumer_of_tensor_0_runs_while_later_chunks_are_held(void **state) {
  (void)state;
  const size_t lengths[] = {64 << 10, 256 << 10, 256 << 10, 128 << 10};
  const char *path = tw_path("weights");
  tw_safetensors_u8(path, lengths, 4);
  rig_device t, u;
  assert_int_equal(tdrv_open("T", &t), RIG_OK);
  assert_int_equal(tdrv_open("U", &u), RIG_OK);
  tdrv_set_hold(t, 1); /* T's copies are handed over and held until something commits and steps them */
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load_options o = tw_options(RIG_LOAD_PATH_AUTO, 64 << 10, 1);
  /* A kept pool with a chunk for each chunk of the file: no staging reuse and no release of staging at the
   * end of the load, so the load waits for nothing of T (releasing memory waits for its uses, rule 6). */
  rig_load_pool pool;
  assert_int_equal(rig_load_pool_create(t, 16 << 20, 64 << 10, &pool), RIG_OK);
  o.pools = &pool;
  o.pool_count = 1;
  rig_load_placement p = tw_placement(&t, 1, RIG_LOAD_RULE_EACH, NULL);
  tdrv_log_clear();
  rig_load load;
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
  assert_int_equal(rig_load_wait(load), RIG_OK);
  uint64_t copies = 0;
  rig_device_submitted(t, &copies);

  assert_int_equal(copies, 11); /* 1 + 4 + 4 + 2 chunks of 64 KiB, one copy each */
  assert_int_equal(tdrv_queued(t), 11);
  assert_int_equal(tdrv_log_find("run T", 0), -1);

  /* The consumer: a host kernel on U over tensor 0 borrowed from T. */
  rig_buffer t0, t0_on_u;
  assert_int_equal(rig_load_buffer(load, 0, 0, &t0), RIG_OK);
  assert_int_equal(rig_buffer_borrow(u, t0, &t0_on_u), RIG_OK);
  unsigned long long sum = 0, want = 0;
  rig_load_tensor info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  rig_load_tensor_get(f, 0, &info);
  for (uint64_t i = 0; i < info.length; ++i) want += tw_byte(info.offset + i);
  rig_submission s;
  rig_run r;
  submit_sum(u, t0_on_u, &sum, &s, &r);
  /* It waits in U's queue for T:1, the copy of the chunk holding tensor 0, and for nothing later. */
  assert_true(tdrv_log_find("hand_over U 1 [T:1]", 0) >= 0);

  assert_int_equal(tdrv_step(t, 1), 1); /* T runs the first chunk's copy only */
  assert_int_equal(tdrv_step(u, 1), 1); /* the consumer runs */
  int consumer = tdrv_log_find("run U 1", 0);
  assert_true(consumer >= 0);
  assert_int_equal(tdrv_log_find("run T 2", 0), -1); /* every later chunk is still held */
  assert_int_equal(tdrv_queued(t), 10);
  assert_int_equal(sum, want);

  /* Then the rest lands and every tensor equals the file. */
  tdrv_run_all();
  assert_true(tdrv_log_find("run T 11", 0) > consumer);
  const unsigned char *previous = NULL;
  uint64_t previous_length = 0;
  for (size_t i = 0; i < 4; ++i) {
    rig_buffer b;
    assert_int_equal(rig_load_buffer(load, i, 0, &b), RIG_OK);
    rig_load_tensor_get(f, i, &info);
    assert_true(tw_same_as_file(b, path, info.offset, info.length));
    /* The tensors are parts of one arena (load/arenas.h), one after another at 256-byte-aligned starts
     * (the test driver's memory is the host's, so the addresses are seen), each with stamps of its own:
     * the order above is theirs. */
    void *at = NULL;
    assert_int_equal(rig_buffer_export(b, &at), RIG_OK);
    if (previous) assert_ptr_equal(at, previous + (previous_length + 255) / 256 * 256);
    previous = at;
    previous_length = info.length;
    rig_buffer_release(b);
  }
  rig_run_release(r);
  rig_submission_release(s);
  rig_buffer_release(t0_on_u);
  rig_buffer_release(t0);
  rig_load_release(load);
  assert_int_equal(rig_load_pool_release(pool), RIG_OK);
  rig_load_file_release(f);
  rig_device_release(u);
  rig_device_release(t);
  unlink(path);
}

/* Slices have stamps of their own, as tensors do: tensor a.w split by columns over T and V (each part 4 runs
 * of 16 KiB gathered into one chunk), b.w by rows. A consumer of T's columns of a.w waits for T's first copy
 * only: not for T's copy of b.w's rows, nor for anything of V, all still held. */
static void a_consumer_of_one_devices_slice_waits_for_that_slices_copy_only(void **state) {
  (void)state;
  const char *path = tw_path("slices");
  const char *json = "{\"a.w\":{\"dtype\":\"U8\",\"shape\":[4,32768],\"data_offsets\":[0,131072]},"
                     "\"b.w\":{\"dtype\":\"U8\",\"shape\":[4,32768],\"data_offsets\":[131072,262144]}}";
  tw_safetensors_json(path, json, strlen(json), 262144);
  rig_device d[2], u;
  assert_int_equal(tdrv_open("T", &d[0]), RIG_OK);
  assert_int_equal(tdrv_open("V", &d[1]), RIG_OK);
  assert_int_equal(tdrv_open("U", &u), RIG_OK);
  tdrv_set_hold(d[0], 1);
  tdrv_set_hold(d[1], 1);
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load_options o = tw_options(RIG_LOAD_PATH_AUTO, 64 << 10, 1);
  rig_load_pool pools[2]; /* kept pools: the load waits for nothing of T or V (as above) */
  for (int i = 0; i < 2; ++i) assert_int_equal(rig_load_pool_create(d[i], 16 << 20, 64 << 10, &pools[i]), RIG_OK);
  o.pools = pools;
  o.pool_count = 2;
  rig_load_split splits[] = {{"a.w", 1}, {"b.w", 0}};
  rig_load_placement p = tw_placement(d, 2, RIG_LOAD_RULE_EACH, NULL);
  p.splits = splits;
  p.split_count = 2;
  tdrv_log_clear();
  rig_load load;
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK);
  assert_int_equal(rig_load_wait(load), RIG_OK);
  assert_int_equal(tdrv_queued(d[0]), 2); /* a.w's columns, b.w's rows: one 64 KiB chunk each */
  assert_int_equal(tdrv_queued(d[1]), 2);

  rig_buffer a0, a0_on_u;
  assert_int_equal(rig_load_buffer(load, 0, 0, &a0), RIG_OK);
  assert_int_equal(rig_buffer_borrow(u, a0, &a0_on_u), RIG_OK);
  rig_load_tensor info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  rig_load_tensor_get(f, 0, &info);
  unsigned long long sum = 0, want = 0;
  for (uint64_t r = 0; r < 4; ++r)
    for (uint64_t c = 0; c < 16384; ++c) want += tw_byte(info.offset + r * 32768 + c);
  rig_submission s;
  rig_run r;
  submit_sum(u, a0_on_u, &sum, &s, &r);
  assert_true(tdrv_log_find("hand_over U 1 [T:1]", 0) >= 0); /* T's slice copy, nothing later, nothing of V */

  assert_int_equal(tdrv_step(d[0], 1), 1);
  assert_int_equal(tdrv_step(u, 1), 1);
  assert_true(tdrv_log_find("run U 1", 0) >= 0);
  assert_int_equal(tdrv_queued(d[0]), 1); /* b.w's rows on T: still held */
  assert_int_equal(tdrv_queued(d[1]), 2); /* every copy of V: still held */
  assert_int_equal(sum, want);
  tdrv_run_all();
  rig_run_release(r);
  rig_submission_release(s);
  rig_buffer_release(a0_on_u);
  rig_buffer_release(a0);
  rig_load_release(load);
  for (int i = 0; i < 2; ++i) assert_int_equal(rig_load_pool_release(pools[i]), RIG_OK);
  rig_load_file_release(f);
  rig_device_release(u);
  rig_device_release(d[1]);
  rig_device_release(d[0]);
  unlink(path);
}

static void a_device_refused_registration_gets_staged_and_direct_is_refused(void **state) {
  (void)state;
  const size_t lengths[] = {4096};
  const char *path = tw_path("weights");
  tw_safetensors_u8(path, lengths, 1);
  rig_device t;
  tdrv_open("T", &t);
  rig_load_file f;
  rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f);
  rig_load_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o; /* every option rig's default */
  rig_load_placement p = tw_placement(&t, 1, RIG_LOAD_RULE_EACH, NULL);
  rig_load load;
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_OK); /* auto: staged */
  assert_int_equal(rig_load_wait(load), RIG_OK);
  rig_load_stats st = tw_stats(load);
  assert_int_equal(st.path, RIG_LOAD_PATH_STAGED);
  assert_non_null(strstr(st.why, "Refused"));
  rig_load_release(load);
  o.path = RIG_LOAD_PATH_DIRECT;
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_UNSUPPORTED);
  o.path = RIG_LOAD_PATH_REGISTERED;
  assert_int_equal(rig_load_start(f, NULL, 0, &p, &o, &load), RIG_UNSUPPORTED);
  rig_load_file_release(f);
  tdrv_run_all();
  rig_device_release(t);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_consumer_of_tensor_0_runs_while_later_chunks_are_held),
      cmocka_unit_test(a_consumer_of_one_devices_slice_waits_for_that_slices_copy_only),
      cmocka_unit_test(a_device_refused_registration_gets_staged_and_direct_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
