/* Compute on Vulkan whose result depends on order: SPIR-V launches (compiled from shaders/ at build time),
 * copies and fills on two Vulkan devices and host kernels on a memory device, all over the same memory
 * with no event or fence in the program. Every element is checked against a model run on the host, and
 * the chain runs many rounds, several times. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vk_common.h"

static const uint32_t affine_spv[] =
#include "affine.spv.inc"
    ;
static const uint32_t mix_spv[] =
#include "mix.spv.inc"
    ;

enum { N = 3000, ROUNDS = 40, REPEATS = 5, BLOCK = 64 };

typedef struct affine_scalars {
  uint32_t a, b, n;
} affine_scalars;
typedef struct mix_scalars {
  uint32_t k, n;
} mix_scalars;

static uint32_t grid_for(uint32_t n, uint32_t block) { return (n + block - 1) / block; }

/* The memory device's step: x[i] = rotl(x[i], 7) + round, a map that does not commute with the others. */
static void rotate_add(void *user, const rig_span *slots, size_t n) {
  (void)n;
  uint32_t round = *(const uint32_t *)user;
  uint32_t *x = (uint32_t *)slots[0].data;
  for (size_t i = 0; i < slots[0].length / 4; ++i) x[i] = ((x[i] << 7) | (x[i] >> 25)) + round;
}

static void expect_words(rig_buffer b, const uint32_t *want, size_t n, const char *what, int repeat) {
  uint32_t *got = malloc(n * 4);
  assert_non_null(got);
  OK(rig_buffer_read_into(b, 0, got, n * 4));
  for (size_t i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      uint32_t g = got[i];
      free(got);
      fail_msg("%s, repeat %d: element %zu is 0x%08x, want 0x%08x", what, repeat, i, g, want[i]);
    }
  free(got);
}

/* Per round: A (Vulkan) x = 3x + r+1 in place; B (Vulkan, a second device) copies x into its own device
 * memory d, mixes d with y, and copies d back over x; M (a memory device) rotates x and adds r. Each step
 * reads what the previous device wrote (rule 3) and writes what the previous one read (rule 4). */
static void a_chain_over_two_vulkan_devices_and_a_memory_device_matches_the_model(void **state) {
  (void)state;
  for (int repeat = 0; repeat < REPEATS; ++repeat) {
    rig_device a, b, m;
    if (!vk_open(&a)) return;
    if (!vk_open(&b)) return;
    OK(rig_memory_device("M", &m));
    rig_module affine = vk_module(a, affine_spv, sizeof affine_spv);
    rig_module mix = vk_module(b, mix_spv, sizeof mix_spv);

    rig_buffer x = vk_buffer(a, N * 4, RIG_MEMORY_PINNED); /* host-visible: M borrows it */
    rig_buffer d = vk_buffer(b, N * 4, RIG_MEMORY_DEVICE);
    rig_buffer y = vk_buffer(b, N * 4, RIG_MEMORY_DEVICE);
    rig_buffer xb = rt_borrow(b, x), xm = rt_borrow(m, x);

    uint32_t *model_x = malloc(N * 4), *model_y = malloc(N * 4), *tmp = malloc(N * 4);
    assert_non_null(model_x);
    assert_non_null(model_y);
    assert_non_null(tmp);
    for (uint32_t i = 0; i < N; ++i) model_x[i] = i * 2654435761u, model_y[i] = i ^ 0xa5a5a5a5u;
    OK(rig_buffer_write_from(x, 0, model_x, N * 4));
    OK(rig_buffer_write_from(y, 0, model_y, N * 4));

    for (uint32_t r = 0; r < ROUNDS; ++r) {
      affine_scalars as = {3, r + 1, N};
      rig_access rw = RIG_ACCESS_READ_WRITE;
      vk_launch(a, affine, "main", &x, &rw, 1, &as, sizeof as, grid_for(N, BLOCK), BLOCK, NULL, 0);
      for (uint32_t i = 0; i < N; ++i) model_x[i] = model_x[i] * 3 + r + 1;

      /* B: one submission of three parts, in order: copy x->d, mix(y, d) into d... */
      {
        uint32_t launch_slots[2] = {2, 1}; /* binding 0 = y (read), binding 1 = d (read-write) */
        rig_part parts[3];
        memset(parts, 0, sizeof parts);
        for (int i = 0; i < 3; ++i) parts[i].size = sizeof parts[i];
        parts[0].kind = RIG_PART_COPY, parts[0].src_slot = 0, parts[0].dst_slot = 1, parts[0].length = RIG_WHOLE;
        parts[1].kind = RIG_PART_LAUNCH, parts[1].module = mix, parts[1].function = "main";
        parts[1].grid[0] = grid_for(N, 64), parts[1].grid[1] = 1, parts[1].grid[2] = 1;
        parts[1].block[0] = parts[1].block[1] = parts[1].block[2] = 1;
        parts[1].slots = launch_slots, parts[1].slot_count = 2;
        parts[2].kind = RIG_PART_COPY, parts[2].src_slot = 1, parts[2].dst_slot = 0, parts[2].length = RIG_WHOLE;
        rig_access access[3] = {RIG_ACCESS_READ_WRITE, RIG_ACCESS_READ_WRITE, RIG_ACCESS_READ};
        rig_submission sub;
        rig_run run;
        OK(rig_submission_make(b, parts, 3, access, 3, &sub));
        OK(rig_run_take(sub, &run));
        OK(rig_run_set_buffer(run, 0, xb));
        OK(rig_run_set_buffer(run, 1, d));
        OK(rig_run_set_buffer(run, 2, y));
        mix_scalars ms = {r * 7 + 1, N};
        OK(rig_run_set_scalars(run, &ms, sizeof ms));
        OK(rig_submit(run, NULL, 0, NULL));
        OK(rig_run_release(run));
        OK(rig_submission_release(sub));
        /* d = x; d = (d ^ y) + i*k; x = d.  (mix reads binding 0 = y, writes binding 1 = d) */
        for (uint32_t i = 0; i < N; ++i) model_x[i] = (model_x[i] ^ model_y[i]) + i * ms.k;
      }

      rig_access w = RIG_ACCESS_READ_WRITE;
      rt_kernel(m, rotate_add, &r, &xm, &w, 1, NULL, 0);
      for (uint32_t i = 0; i < N; ++i) model_x[i] = ((model_x[i] << 7) | (model_x[i] >> 25)) + r;
    }
    /* Now y changes too: B copies x into y after everything above (rule 3 on x). */
    rt_copy(b, xb, y);
    memcpy(tmp, model_x, N * 4);
    expect_words(x, model_x, N, "x after the chain", repeat);
    expect_words(y, tmp, N, "y after the final copy", repeat);

    free(model_x), free(model_y), free(tmp);
    OK(rig_buffer_release(xb));
    OK(rig_buffer_release(xm));
    OK(rig_buffer_release(x));
    OK(rig_buffer_release(d));
    OK(rig_buffer_release(y));
    OK(rig_module_release(affine));
    OK(rig_module_release(mix));
    OK(rig_device_release(a));
    OK(rig_device_release(b));
    OK(rig_device_release(m));
  }
}

/* Launch details: scalars as push constants, block as the workgroup size (specialization constant 0),
 * bounds from the scalars: elements past n are untouched. */
static void a_launch_takes_scalars_and_block_and_touches_only_its_range(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  rig_module affine = vk_module(a, affine_spv, sizeof affine_spv);
  enum { M = 1000 };
  uint32_t init[M], want[M];
  for (uint32_t i = 0; i < M; ++i) init[i] = i, want[i] = i;
  rig_buffer x = vk_buffer(a, sizeof init, RIG_MEMORY_DEVICE);
  OK(rig_buffer_write_from(x, 0, init, sizeof init));
  const uint32_t blocks[] = {1, 32, 64, 128};
  for (size_t t = 0; t < sizeof blocks / sizeof blocks[0]; ++t) {
    uint32_t n = 777 - (uint32_t)t * 100;
    affine_scalars s = {5 + (uint32_t)t, 11 * (uint32_t)t + 1, n};
    rig_access rw = RIG_ACCESS_READ_WRITE;
    vk_launch(a, affine, "main", &x, &rw, 1, &s, sizeof s, grid_for(n, blocks[t]), blocks[t], NULL, 0);
    for (uint32_t i = 0; i < n; ++i) want[i] = want[i] * s.a + s.b;
  }
  expect_words(x, want, M, "affine with several blocks", 0);
  OK(rig_buffer_release(x));
  OK(rig_module_release(affine));
  OK(rig_device_release(a));
}

/* A launch over views at offsets off the device's storage-buffer alignment (4, 8, 12 bytes into the
 * buffer; lavapipe aligns to 16, NVIDIA to 16 or more) works on exactly the view's bytes. */
static void a_launch_over_unaligned_views_touches_exactly_the_view(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  rig_module affine = vk_module(a, affine_spv, sizeof affine_spv);
  enum { M = 256 };
  uint32_t init[M], want[M];
  for (uint32_t i = 0; i < M; ++i) init[i] = want[i] = i * 7;
  rig_buffer x = vk_buffer(a, sizeof init, RIG_MEMORY_DEVICE);
  OK(rig_buffer_write_from(x, 0, init, sizeof init));
  for (uint32_t first = 1; first <= 3; ++first) {
    const uint32_t count = 50 + first;
    rig_buffer v;
    OK(rig_buffer_view(x, first * 4 * 17, count * 4, &v)); /* word 17*first: byte offset not a multiple of 16 */
    affine_scalars s = {2, first, count};
    rig_access rw = RIG_ACCESS_READ_WRITE;
    vk_launch(a, affine, "main", &v, &rw, 1, &s, sizeof s, grid_for(count, 64), 64, NULL, 0);
    for (uint32_t i = 0; i < count; ++i) want[first * 17 + i] = want[first * 17 + i] * 2 + first;
    OK(rig_buffer_release(v));
  }
  expect_words(x, want, M, "affine over unaligned views", 0);
  OK(rig_buffer_release(x));
  OK(rig_module_release(affine));
  OK(rig_device_release(a));
}

/* Fills and copies at every small offset and length (vkCmdFillBuffer wants 4-byte alignment; the driver
 * handles the rest), through views of device memory, checked byte by byte against a model. */
static void fills_and_copies_at_any_offset_and_length_match_the_model(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  enum { L = 64 };
  uint8_t model[L], got[L], src_model[L];
  rig_buffer x = vk_buffer(a, L, RIG_MEMORY_DEVICE), s = vk_buffer(a, L, RIG_MEMORY_DEVICE);
  for (int i = 0; i < L; ++i) model[i] = (uint8_t)(200 + i), src_model[i] = (uint8_t)i;
  OK(rig_buffer_write_from(x, 0, model, L));
  OK(rig_buffer_write_from(s, 0, src_model, L));
  uint8_t byte = 1;
  for (size_t off = 0; off < 9; ++off)
    for (size_t len = 0; len + off <= 21; ++len, ++byte) {
      rig_buffer v;
      OK(rig_buffer_view(x, off + 20, len, &v));
      rt_fill(a, v, byte);
      memset(model + off + 20, byte, len);
      OK(rig_buffer_release(v));
      /* and a copy from an unaligned source offset to an unaligned destination offset */
      rig_buffer vs, vd;
      OK(rig_buffer_view(s, (off * 3) % 11, len, &vs));
      OK(rig_buffer_view(x, (off * 5) % 13, len, &vd));
      rt_copy(a, vs, vd);
      memcpy(model + (off * 5) % 13, src_model + (off * 3) % 11, len);
      OK(rig_buffer_release(vs));
      OK(rig_buffer_release(vd));
    }
  OK(rig_buffer_read_into(x, 0, got, L));
  for (int i = 0; i < L; ++i)
    if (got[i] != model[i]) fail_msg("byte %d is %u, want %u", i, got[i], model[i]);
  OK(rig_buffer_release(x));
  OK(rig_buffer_release(s));
  OK(rig_device_release(a));
}

/* A copy between two overlapping views of one allocation gives memmove's result in both directions. */
static void an_overlapping_copy_between_views_is_a_memmove(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  enum { L = 256 };
  uint8_t model[L], got[L];
  for (int i = 0; i < L; ++i) model[i] = (uint8_t)(i * 7);
  rig_buffer x = vk_buffer(a, L, RIG_MEMORY_DEVICE);
  OK(rig_buffer_write_from(x, 0, model, L));
  const size_t cases[][3] = {{0, 5, 100}, {37, 3, 150}, {10, 11, 200}, {64, 0, 64}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    rig_buffer vs, vd;
    OK(rig_buffer_view(x, cases[c][0], cases[c][2], &vs));
    OK(rig_buffer_view(x, cases[c][1], cases[c][2], &vd));
    rig_point p = 0;
    rig_status st = rt_try_copy(a, vs, vd, NULL, 0, &p);
    if (st == RIG_INVALID_ARGUMENT) {
      /* The engine may refuse overlapping slots outright; then nothing ran and the model stays. */
      fprintf(stderr, "note: overlapping copy refused by the engine: %s\n", rig_last_error());
    } else {
      OK(st);
      memmove(model + cases[c][1], model + cases[c][0], cases[c][2]);
    }
    OK(rig_buffer_release(vs));
    OK(rig_buffer_release(vd));
  }
  OK(rig_buffer_read_into(x, 0, got, L));
  for (int i = 0; i < L; ++i)
    if (got[i] != model[i]) fail_msg("byte %d is %u, want %u", i, got[i], model[i]);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

/* Host reads and writes of device memory go through the staging buffer in 4 MiB chunks: a buffer of
 * several chunks plus an odd tail, written and read at odd offsets, round-trips every byte. */
static void staged_host_reads_and_writes_round_trip_every_byte(void **state) {
  (void)state;
  rig_device a;
  if (!vk_open(&a)) return;
  const size_t n = (9u << 20) + 3;
  uint8_t *in = malloc(n), *out = malloc(n);
  assert_non_null(in);
  assert_non_null(out);
  for (size_t i = 0; i < n; ++i) in[i] = (uint8_t)(i * 131 + (i >> 13));
  rig_buffer x = vk_buffer(a, n, RIG_MEMORY_DEVICE);
  OK(rig_buffer_write_from(x, 0, in, n));
  OK(rig_buffer_write_from(x, 5, in + 1000, 4097)); /* an odd range at an odd offset */
  memmove(in + 5, in + 1000, 4097); /* the model: x[5 + j] = the old in[1000 + j] */
  OK(rig_buffer_read_into(x, 0, out, n));
  for (size_t i = 0; i < n; ++i)
    if (out[i] != in[i]) fail_msg("byte %zu is %u, want %u", i, out[i], in[i]);
  memset(out, 0, n);
  OK(rig_buffer_read_into(x, (4u << 20) - 7, out, 4099)); /* across a chunk boundary of the source */
  for (size_t i = 0; i < 4099; ++i)
    if (out[i] != in[(4u << 20) - 7 + i]) fail_msg("ranged read byte %zu differs", i);
  free(in), free(out);
  OK(rig_buffer_release(x));
  OK(rig_device_release(a));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(a_chain_over_two_vulkan_devices_and_a_memory_device_matches_the_model),
      cmocka_unit_test(a_launch_takes_scalars_and_block_and_touches_only_its_range),
      cmocka_unit_test(a_launch_over_unaligned_views_touches_exactly_the_view),
      cmocka_unit_test(fills_and_copies_at_any_offset_and_length_match_the_model),
      cmocka_unit_test(an_overlapping_copy_between_views_is_a_memmove),
      cmocka_unit_test(staged_host_reads_and_writes_round_trip_every_byte),
  };
  return cmocka_run_group_tests(tests, NULL, vk_validation_teardown);
}
