/* The loader through a stream driver, CUDA or HIP (built once per backend: tests/load/meson.build), on the
 * backend's fake (RIG_CUDA_LIBRARY, RIG_HIP_LIBRARY), through the HIP shim, or on a real GPU.
 *
 * On every backend: the staged path delivers the file's bytes; two GPUs get their copies device to device; a
 * load through a kept staging pool takes its tensors from the device's reuse pool
 * (src/drivers/stream/reuse_pool.cpp: plain device memory the device keeps at its frees; a later load
 * reuses it with no new allocation, it has no IPC handle, the other GPU's kernels reach it through a borrow,
 * what the pools keep goes back where an allocation of any device on the GPU runs out, with no wait for a
 * device's stream, and when the device is released). The allocations are counted by the fakes' calls and
 * device bytes (and by the counting interposer over a real driver); the cases that need a fake's switch (a
 * memory limit) say SKIP elsewhere (a real GPU, the shim).
 *
 * On the fake libcuda only: the registered path, a registration serving wrong bytes caught by the probe
 * (the load is refused) and, where a cached Usable verdict let it through, by verification; a kept
 * registration (HIP's registrations are tests/hip/test_hip_mapped.c's, its false successes included).
 *
 * Skipped (exit 77, with the reason) where device 0 does not open; failed instead under RIG_REQUIRE=<backend>. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu_test.h"
#include "native.h"
#include "weights.h"

#include <rig_interop.h>

static rig_device gpu[2]; /* gpu[1] null where the backend has one GPU */
static const char *path;
static char last_why[1024]; /* the message of the last load that failed in rig_load_wait */
static const size_t lengths[] = {100000, 300000, 4096, 700000};
#define COUNT 4
/* The device memory of a load of the file: one arena, every tensor a part of it at a 256-byte-aligned
 * start (load/arenas.h). */
static long long arena_bytes(void) {
  size_t end = 0;
  for (size_t i = 0; i < COUNT; ++i) end = (end + 255) / 256 * 256 + lengths[i];
  return (long long)end;
}

static rig_load_options options(rig_load_path p, int verify) {
  rig_load_options o = tw_options(p, 128 << 10, 2);
  o.window_bytes = 256 << 10;
  o.verify = verify;
  return o;
}

static rig_status load_on(rig_device *devices, size_t n, rig_load_options o, rig_load_file f, rig_load *out) {
  rig_load_placement p = tw_placement(devices, n, RIG_LOAD_RULE_EACH, NULL);
  rig_status s = rig_load_start(f, NULL, 0, &p, &o, out);
  if (s != RIG_OK) {
    snprintf(last_why, sizeof last_why, "%s", rig_last_error());
    return s;
  }
  s = rig_load_wait(*out);
  if (s != RIG_OK) {
    snprintf(last_why, sizeof last_why, "%s", rig_last_error());
    rig_load_release(*out);
  }
  return s;
}

static int all_equal(rig_load load, rig_load_file f, size_t device) {
  for (size_t i = 0; i < COUNT; ++i)
    if (!tw_tensor_as_file(load, f, path, i, device)) return 0;
  return 1;
}

/* The staged path delivers every byte, verified chunk by chunk. On a fake, AUTO is asked (the probe's verdict
 * on the fake's registration picks staged: the fakes make staging the slower) and the registrations are
 * counted; on a real GPU the path is asked for by name. */
static void staged_copies_through_pinned_chunks_equal_the_file(void **state) {
  (void)state;
  int counted = gt_fake();
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load load;
  long long registers = counted ? gt_query("registers") : 0, unregisters = counted ? gt_query("unregisters") : 0;
  rig_load_options o = options(RIG_LOAD_PATH_STAGED, 1);
  assert_int_equal(load_on(gpu, 1, counted ? options(RIG_LOAD_PATH_AUTO, 1) : o, f, &load), RIG_OK);
  rig_load_stats st = tw_stats(load);
  assert_int_equal(st.path, RIG_LOAD_PATH_STAGED);
  /* the staging is ordinary memory registered in pieces of a quarter of the pool, the first before the
   * load starts and the others behind it (src/load/pool.cpp): not once a chunk, not once as a whole; each
   * piece is unregistered once the load is done with it */
  assert_true(st.staging_bytes >= 2 * (128 << 10));
  assert_true(all_equal(load, f, 0));
  rig_load_release(load); /* joins the pool's growth: every piece is made and released by now */
  long long pieces = counted ? gt_query("registers") - registers : 0;
  /* the pool's 9 chunks of 128 KiB in pieces of 2 (a quarter, rounded down): 2 (the first, and the one
   * behind that a load ending early still makes) to 5, where once a chunk would be 9. Not bounded by
   * staging_bytes: read when the load ended, it may count only the first piece. */
  if (counted) assert_in_range(pieces, 2, 5);
  if (counted) assert_int_equal(gt_query("unregisters"), unregisters + pieces);
  rig_load_file_release(f);
}

/* The fake's allocation and registration counts, taken before a case's load and compared after its release. */
typedef struct {
  long long live, registers, unregisters, calls;
} fake_counts;
static fake_counts fake_counts_now(void) {
  fake_counts c = {gt_query("live_allocations"), gt_query("registers"), gt_query("unregisters"),
                   gt_query("register_calls")};
  return c;
}

/* Where the driver refuses to register the staging (src/load/pool.cpp), a staged load falls back to the
 * device's own pinned buffers: every byte still arrives, and once released nothing is left behind (device
 * memory, pinned memory, registrations). */
static void staging_the_driver_refuses_to_register_falls_back_and_leaves_nothing(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load load = NULL;
  fake_counts before = fake_counts_now();
  gt_set("register_refuse", 2); /* CUDA_ERROR_OUT_OF_MEMORY, hipErrorOutOfMemory */
  rig_status s = load_on(gpu, 1, options(RIG_LOAD_PATH_STAGED, 1), f, &load);
  gt_set("register_refuse", 0);
  if (s != RIG_OK) fail_msg("the load: %s: %s", rig_status_name(s), last_why);
  assert_true(gt_query("register_calls") > before.calls); /* asked, and refused: */
  assert_int_equal(gt_query("registers"), before.registers);
  assert_true(all_equal(load, f, 0));
  rig_load_release(load);
  assert_int_equal(gt_query("live_allocations"), before.live);
  assert_int_equal(gt_query("registers") - gt_query("unregisters"), before.registers - before.unregisters);
  rig_load_file_release(f);
}

/* Where the driver registers the staging's first piece and refuses the pieces behind it (out of pinnable
 * memory half way), the load goes on through the chunks it has: every byte arrives, the staging it used is
 * under the pool it asked for, and once released nothing is left behind. */
static void staging_refused_behind_its_first_piece_still_delivers_every_byte(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load load = NULL;
  fake_counts before = fake_counts_now();
  gt_set("register_refuse_after", 1);
  rig_status s = load_on(gpu, 1, options(RIG_LOAD_PATH_STAGED, 1), f, &load);
  if (s != RIG_OK) {
    gt_set("register_refuse_after", 0);
    fail_msg("the load: %s: %s", rig_status_name(s), last_why);
  }
  assert_true(all_equal(load, f, 0));
  rig_load_stats st = tw_stats(load);
  size_t file_chunks = 0;
  for (size_t i = 0; i < COUNT; ++i) file_chunks += lengths[i];
  file_chunks = (file_chunks + (128 << 10) - 1) / (128 << 10);
  assert_true(st.staging_bytes < file_chunks * (128 << 10)); /* the pool it asked for: a chunk per chunk */
  rig_load_release(load);                                     /* joins the pool's growth */
  gt_set("register_refuse_after", 0);
  assert_int_equal(gt_query("registers"), before.registers + 1);
  assert_true(gt_query("register_calls") - before.calls >= 2); /* the piece behind was asked for, and refused */
  assert_int_equal(gt_query("unregisters"), before.unregisters + 1);
  assert_int_equal(gt_query("live_allocations"), before.live);
  rig_load_file_release(f);
}

static void a_registration_serving_wrong_bytes_is_refused_by_the_probe(void **state) {
  (void)state;
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  gt_set("register_wrong_bytes", 1);
  rig_load load = NULL;
  assert_int_equal(load_on(&gpu[1], 1, options(RIG_LOAD_PATH_REGISTERED, 0), f, &load), RIG_UNSUPPORTED);
  assert_non_null(strstr(rig_last_error(), "Wrong_bytes"));
  /* cacheable: asked again, the answer comes from the cache without registering */
  long long before = gt_query("registers");
  assert_int_equal(load_on(&gpu[1], 1, options(RIG_LOAD_PATH_REGISTERED, 0), f, &load), RIG_UNSUPPORTED);
  assert_non_null(strstr(rig_last_error(), "cached"));
  assert_int_equal(gt_query("registers"), before);
  gt_set("register_wrong_bytes", 0);
  rig_load_file_release(f);
}

static void registered_windows_equal_the_file_and_verify_catches_wrong_bytes(void **state) {
  (void)state;
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load load;
  long long before = gt_query("registers");
  assert_int_equal(load_on(gpu, 1, options(RIG_LOAD_PATH_REGISTERED, 1), f, &load), RIG_OK);
  rig_load_stats st = tw_stats(load);
  assert_int_equal(st.path, RIG_LOAD_PATH_REGISTERED);
  assert_true(gt_query("registers") > before + 1); /* the probe's windows and the load's */
  assert_true(all_equal(load, f, 0));
  rig_load_release(load);
  /* The verdict is cached as Usable; now the driver serves wrong bytes from registrations. */
  gt_set("register_wrong_bytes", 1);
  assert_int_equal(load_on(gpu, 1, options(RIG_LOAD_PATH_REGISTERED, 0), f, &load), RIG_OK);
  assert_false(all_equal(load, f, 0)); /* what verification is for */
  rig_load_release(load);
  assert_int_equal(load_on(gpu, 1, options(RIG_LOAD_PATH_REGISTERED, 1), f, &load), RIG_DRIVER);
  assert_non_null(strstr(last_why, "verify"));
  gt_set("register_wrong_bytes", 0);
  rig_load_file_release(f);
}

/* A 4-shard checkpoint: two tensors a shard, each shard over the probe's 128 KiB. Returns its index. */
static const char *write_checkpoint(void) {
  static char index[600];
  const char *dir = tw_path("ckpt");
  char shard[700], json[512], map[2048];
  mkdir(dir, 0755);
  size_t at = (size_t)snprintf(map, sizeof map, "{\"weight_map\":{");
  for (int k = 0; k < 4; ++k) {
    snprintf(json, sizeof json,
             "{\"s%d.a\":{\"dtype\":\"U8\",\"shape\":[100000],\"data_offsets\":[0,100000]},"
             "\"s%d.b\":{\"dtype\":\"U8\",\"shape\":[300000],\"data_offsets\":[100000,400000]}}", k, k);
    snprintf(shard, sizeof shard, "%s/model-%05d-of-00004.safetensors", dir, k + 1);
    tw_safetensors_json(shard, json, strlen(json), 400000);
    at += (size_t)snprintf(map + at, sizeof map - at, "%s\"s%d.a\":\"model-%05d-of-00004.safetensors\",\"s%d.b\":\"model-%05d-of-00004.safetensors\"",
                           k ? "," : "", k, k + 1, k, k + 1);
  }
  snprintf(map + at, sizeof map - at, "}}");
  snprintf(index, sizeof index, "%s/model.safetensors.index.json", dir);
  FILE *f = fopen(index, "w");
  assert_non_null(f);
  fputs(map, f);
  fclose(f);
  return index;
}

/* Every tensor of a checkpoint's load equals its bytes in its shard's file. */
static int all_equal_to_shards(rig_load load, rig_load_file f) {
  size_t n;
  rig_load_tensor_count(f, &n);
  for (size_t i = 0; i < n; ++i) {
    rig_load_tensor t;
    memset(&t, 0, sizeof t);
    t.size = sizeof t;
    const char *shard;
    rig_buffer b;
    if (rig_load_tensor_get(f, i, &t) || rig_load_shard_get(f, t.shard, &shard, NULL) ||
        rig_load_buffer(load, i, 0, &b))
      return 0;
    int same = tw_same_as_file(b, shard, t.offset, t.length);
    rig_buffer_release(b);
    if (!same) return 0;
  }
  return 1;
}

/* A 4-shard checkpoint on the GPU paths: staged, registered windows (verified against each shard), and a
 * registration kept for every shard, which later loads copy from with nothing registered per load. */
static void a_sharded_checkpoint_loads_on_every_gpu_path_equal_to_its_shards(void **state) {
  (void)state;
  rig_load_file f;
  const char *index = write_checkpoint();
  assert_int_equal(rig_load_open(index, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load load;
  rig_load_path paths[] = {RIG_LOAD_PATH_STAGED, RIG_LOAD_PATH_REGISTERED};
  for (int k = 0; k < 2; ++k) {
    assert_int_equal(load_on(gpu, 1, options(paths[k], 1), f, &load), RIG_OK);
    rig_load_stats st = tw_stats(load);
    assert_int_equal(st.path, paths[k]);
    assert_int_equal(st.bytes_total, 4 * 400000);
    assert_true(all_equal_to_shards(load, f));
    rig_load_release(load);
  }
  long long before = gt_query("registers");
  assert_int_equal(rig_load_file_keep_registered(f, gpu[0]), RIG_OK);
  long long kept = gt_query("registers");
  assert_true(kept >= before + 4); /* each shard registered once */
  for (int round = 0; round < 2; ++round) {
    assert_int_equal(load_on(gpu, 1, options(RIG_LOAD_PATH_AUTO, round), f, &load), RIG_OK);
    rig_load_stats st = tw_stats(load);
    assert_int_equal(st.path, RIG_LOAD_PATH_REGISTERED);
    assert_non_null(strstr(st.why, "kept"));
    assert_true(all_equal_to_shards(load, f));
    rig_load_release(load);
  }
  assert_int_equal(gt_query("registers"), kept);
  rig_load_file_release(f);
  char shard[700];
  snprintf(shard, sizeof shard, "%s", index);
  for (int k = 0; k < 4; ++k) {
    snprintf(strrchr(shard, '/'), sizeof shard - (size_t)(strrchr(shard, '/') - shard), "/model-%05d-of-00004.safetensors", k + 1);
    unlink(shard);
  }
  unlink(index);
  *strrchr(shard, '/') = 0;
  rmdir(shard);
}

/* A file cut while the registered path's windows are copied: the fake driver reads the registered mapping
 * as the device would, past the file's new end; the load answers RIG_INVALID_ARGUMENT naming the file and
 * the process gets no SIGBUS (a real GPU reads its pinned pages by DMA: docs/load.md). The progress callback
 * cuts the file after the first window. */
static void cut_on_progress(void *user, uint64_t done, uint64_t total) {
  (void)done;
  (void)total;
  const char **cut = user;
  if (*cut && truncate(*cut, 150000) == 0) *cut = NULL;
}
static void a_file_cut_under_the_registered_path_fails_the_load_never_with_a_signal(void **state) {
  (void)state;
  const char *shrinking = tw_path("shrinking");
  tw_safetensors_u8(shrinking, lengths, COUNT);
  for (int round = 0; round < 3; ++round) {
    if (round) tw_safetensors_u8(shrinking, lengths, COUNT);
    rig_load_file f;
    assert_int_equal(rig_load_open(shrinking, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
    const char *cut = shrinking;
    rig_load_options o = options(RIG_LOAD_PATH_REGISTERED, 0);
    o.progress = cut_on_progress;
    o.progress_user = &cut;
    rig_load load;
    assert_int_equal(load_on(gpu, 1, o, f, &load), RIG_INVALID_ARGUMENT);
    assert_null(cut); /* the cut was made */
    if (!strstr(last_why, shrinking)) fail_msg("'%s' does not name %s", last_why, shrinking);
    rig_load_file_release(f);
  }
  unlink(shrinking);
}

/* A registration kept across loads: registered once (one more driver registration, then none per load),
 * every later load copies from it, and it goes with the file (the driver unregisters it then). */
static void check_export(rig_load load, int pooled);

/* ... and the file kept says the program loads it again: its loads take their tensors from the device's
 * reuse pool (a reload's copies land in memory written before, with no free and no new allocation). */
static void a_kept_registration_serves_every_reload_without_registering(void **state) {
  (void)state;
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  long long registers = gt_query("registers"), unregisters = gt_query("unregisters");
  assert_int_equal(rig_load_file_keep_registered(f, gpu[0]), RIG_OK);
  long long kept = gt_query("registers");
  assert_true(kept > registers);                                   /* the probe's windows and the file */
  assert_int_equal(rig_load_file_keep_registered(f, gpu[0]), RIG_OK); /* a second call does nothing */
  assert_int_equal(gt_query("registers"), kept);
  for (int round = 0; round < 3; ++round) {
    rig_load load;
    assert_int_equal(load_on(gpu, 1, options(round == 2 ? RIG_LOAD_PATH_REGISTERED : RIG_LOAD_PATH_AUTO, round == 1), f,
                             &load), RIG_OK);
    rig_load_stats st = tw_stats(load);
    assert_int_equal(st.path, RIG_LOAD_PATH_REGISTERED);
    assert_non_null(strstr(st.why, "kept"));
    assert_true(all_equal(load, f, 0));
    check_export(load, 1); /* in the reuse pool */
    rig_load_release(load);
  }
  assert_int_equal(gt_query("registers"), kept); /* nothing registered per load */
  /* the staged path is still there when asked for */
  rig_load load;
  assert_int_equal(load_on(gpu, 1, options(RIG_LOAD_PATH_STAGED, 0), f, &load), RIG_OK);
  assert_true(all_equal(load, f, 0));
  rig_load_release(load);
  long long before_release = gt_query("unregisters");
  assert_int_equal(rig_load_file_release(f), RIG_OK);
  assert_true(gt_query("unregisters") > before_release); /* the kept registration went with the file */
  assert_int_equal(gt_query("registers") - registers, gt_query("unregisters") - unregisters);
  /* bad input: a dead handle, and a device that cannot keep a registration */
  assert_int_equal(rig_load_file_keep_registered(f, gpu[0]), RIG_INVALID_HANDLE);
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_device memory;
  assert_int_equal(rig_memory_device("keep", &memory), RIG_OK);
  assert_int_equal(rig_load_file_keep_registered(f, memory), RIG_UNSUPPORTED);
  assert_non_null(strstr(rig_last_error(), "Usable"));
  rig_device_release(memory);
  rig_load_file_release(f);
}

/* A load through a staging pool the caller keeps (it loads again) takes its tensors from the device's reuse
 * pool (src/drivers/stream/reuse_pool.cpp): a later load takes the memory of the tensors released before
 * it back from the pool, with no new device memory; such a tensor has no IPC handle and says why; what the
 * pool keeps goes back to the driver when a plain allocation would otherwise run out, and when the device
 * is released; a load with no kept pool, or a device with RIG_REUSE_POOL=0, gives memory that goes back at
 * its free. */
/* A staging pool of four 128 KiB chunks the test keeps for `device`. */
static rig_load_pool kept_pool(rig_device device) {
  rig_load_pool pool = NULL;
  assert_int_equal(rig_load_pool_create(device, 4 * (128 << 10), 128 << 10, &pool), RIG_OK);
  return pool;
}

static rig_load_options through(rig_load_pool *pool) {
  rig_load_options o = options(RIG_LOAD_PATH_STAGED, 0);
  o.pools = pool;
  o.pool_count = 1;
  return o;
}

/* Whether plain device memory of gpu[0] has an IPC handle: not on the fake HIP runtime, which has no IPC
 * calls (every buffer's export answers RIG_UNSUPPORTED there, a pooled tensor's for that reason first). */
static int has_ipc(void) {
  int yes = 0;
  assert_int_equal(rig_interop_supported(gpu[0], NULL, RIG_INTEROP_IPC_MEMORY, &yes), RIG_OK);
  return yes;
}

/* Tensor 0 of `load` exported: plain memory has its handle where the backend has IPC; a pooled tensor never
 * does, and where plain memory would, rig says the reuse pool is why. */
static void check_export(rig_load load, int pooled) {
  int ipc = has_ipc();  /* asked first: rig_last_error() is the export's below */
  rig_buffer b;
  rig_ipc_handle h;
  assert_int_equal(rig_load_buffer(load, 0, 0, &b), RIG_OK);
  rig_status s = rig_buffer_export_ipc(b, &h);
  if (pooled || !ipc) {
    assert_int_equal(s, RIG_UNSUPPORTED);
    if (ipc) assert_non_null(strstr(rig_last_error(), "reuse pool"));
  } else {
    if (s != RIG_OK) fail_msg("plain memory's export: %s: %s", rig_status_name(s), rig_last_error());
  }
  rig_buffer_release(b);
}

/* Runs on every backend and library; the allocations counted where the fake or the counting interposer is
 * loaded (gt_query answers -1 for both counts elsewhere), the device's bytes on a fake. */
static void a_later_load_reuses_the_memory_of_the_tensors_released_before_it(void **state) {
  (void)state;
  int fake = gt_fake();
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load load;
  rig_load_pool pool = kept_pool(gpu[0]);
  /* no kept pool: plain memory, which has its IPC handle where the backend has IPC */
  assert_int_equal(load_on(gpu, 1, options(RIG_LOAD_PATH_STAGED, 0), f, &load), RIG_OK);
  check_export(load, 0);
  rig_load_release(load);

  long long allocations = gt_query("calls:mem_alloc");
  assert_int_equal(load_on(gpu, 1, through(&pool), f, &load), RIG_OK);
  if (allocations >= 0) assert_true(gt_query("calls:mem_alloc") - allocations <= 1); /* the arena, or a kept one */
  assert_true(all_equal(load, f, 0));
  check_export(load, 1);
  long long bytes = gt_query("device_bytes");
  rig_load_release(load);
  if (fake) assert_int_equal(gt_query("device_bytes"), bytes); /* the released tensors' memory, kept */

  allocations = gt_query("calls:mem_alloc");
  long long frees = gt_query("calls:mem_free");
  assert_int_equal(load_on(gpu, 1, through(&pool), f, &load), RIG_OK);
  if (allocations >= 0) {
    assert_int_equal(gt_query("calls:mem_alloc"), allocations); /* the kept arena, no new memory */
    assert_int_equal(gt_query("calls:mem_free"), frees);
  }
  if (fake) assert_int_equal(gt_query("device_bytes"), bytes);
  assert_true(all_equal(load, f, 0));
  check_export(load, 1);
  rig_load_release(load);
  rig_load_pool_release(pool);
  rig_load_file_release(f);
}

/* Loads through a kept pool on gpu[0] and releases it: the pool then keeps every tensor's memory (the
 * device's bytes in use do not drop at the release). Answers those bytes less the arena's (the fake's
 * counts): what stays in use once the GPU's pools give back what they keep is at most that. */
static long long keep_a_load_in_the_pool(rig_load_file f) {
  rig_load load;
  rig_load_pool pool = kept_pool(gpu[0]);
  assert_int_equal(load_on(gpu, 1, through(&pool), f, &load), RIG_OK);
  long long loaded = gt_query("device_bytes");
  rig_load_release(load);
  rig_load_pool_release(pool);
  assert_int_equal(gt_query("device_bytes"), loaded);
  return loaded - arena_bytes();
}

/* A plain buffer of 600000 bytes on `device`, made while the fake allows only 4 KiB more device memory than
 * is in use: RIG_OK only where rig's pools on the GPU give back what they keep. The limit is lifted again
 * before this returns. */
static rig_status create_past_the_limit(rig_device device, rig_buffer *out) {
  gt_set("device_memory_limit", gt_query("device_bytes") + 4096);
  rig_status s = rig_buffer_create(device, 600000, RIG_MEMORY_DEVICE, out);
  gt_set("device_memory_limit", 0);
  return s;
}

/* A plain buffer that fits only once the pool gives back what it keeps (the fake's memory limit). */
static void a_plain_allocation_that_runs_out_takes_back_what_the_pool_keeps(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  long long before = keep_a_load_in_the_pool(f);
  rig_buffer big;
  rig_status s = create_past_the_limit(gpu[0], &big);
  if (s != RIG_OK) fail_msg("the plain allocation: %s: %s", rig_status_name(s), rig_last_error());
  assert_true(gt_query("device_bytes") <= before + 600000); /* gpu[0]'s pool gave its memory back */
  rig_buffer_release(big);
  rig_load_file_release(f);
}

/* A device released gives back what its pool keeps; a tensor that outlives its device goes back at its
 * free. */
static void a_released_device_gives_back_what_its_pool_keeps(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load load;
  rig_device extra;
  assert_int_equal(rig_device_open(gt_name(0), &extra), RIG_OK);
  long long before = gt_query("device_bytes");
  rig_device on_extra[1] = {extra};
  rig_load_pool extra_pool = kept_pool(extra);
  assert_int_equal(load_on(on_extra, 1, through(&extra_pool), f, &load), RIG_OK);
  rig_buffer outliving;
  assert_int_equal(rig_load_buffer(load, 3, 0, &outliving), RIG_OK);
  rig_load_release(load);
  /* tensor 3 holds the arena all four are parts of: none of it is the pool's yet */
  assert_int_equal(gt_query("device_bytes"), before + arena_bytes());
  assert_int_equal(load_on(on_extra, 1, through(&extra_pool), f, &load), RIG_OK);
  assert_int_equal(gt_query("device_bytes"), before + 2 * arena_bytes()); /* a second arena: none kept */
  rig_load_pool_release(extra_pool);
  rig_load_release(load);
  assert_int_equal(gt_query("device_bytes"), before + 2 * arena_bytes()); /* the second load's arena, kept */
  assert_int_equal(rig_device_release(extra), RIG_OK);
  assert_int_equal(gt_query("device_bytes"), before + arena_bytes()); /* given back; tensor 3's in use */
  rig_buffer_release(outliving);
  assert_int_equal(gt_query("device_bytes"), before); /* at its free, not kept */
  rig_load_file_release(f);
}

/* A device opened with RIG_REUSE_POOL=0 (docs/environment.md) keeps nothing: a load through a kept staging
 * pool gives plain memory, with its IPC handle where the backend has IPC, every byte still the file's, and
 * the tensors' memory goes back to the driver at their release. The variable is read once, at the device's
 * first such load. */
static void a_device_without_a_reuse_pool_gives_memory_back_at_its_free(void **state) {
  (void)state;
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load load;
  rig_device other;
  assert_int_equal(rig_device_open(gt_name(0), &other), RIG_OK);
  rig_device one[1] = {other};
  rig_load_pool other_pool = kept_pool(other);
  setenv("RIG_REUSE_POOL", "0", 1);
  rig_status s = load_on(one, 1, through(&other_pool), f, &load);
  unsetenv("RIG_REUSE_POOL");
  if (s != RIG_OK) fail_msg("the load: %s: %s", rig_status_name(s), last_why);
  rig_load_pool_release(other_pool);
  assert_true(all_equal(load, f, 0));
  check_export(load, 0); /* plain device memory has its handle where the backend has IPC */
  long long frees = gt_query("calls:mem_free");
  rig_load_release(load);
  if (frees >= 0) assert_int_equal(gt_query("calls:mem_free") - frees, 1); /* the arena, not kept */
  rig_device_release(other);
  rig_load_file_release(f);
}

/* gpu[1], or a skip where the backend has one GPU (a failure under RIG_REQUIRE=<backend>2). */
/* A load's tensors are parts of arenas of at most arena_bytes (load/arenas.h): one allocation for the
 * whole file by default, one a tensor with 1, and tensors grouped in file order under a limit between; every
 * byte the file's either way, and every allocation given back once the load and its tensors are released. */
static void tensors_share_allocations_up_to_arena_bytes(void **state) {
  (void)state;
  GT_FAKE_ONLY(); /* counts the fake's allocations */
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  const struct {
    size_t limit;
    long long allocations;
  } cases[] = {{0, 1}, {1, COUNT}, {404224, 2} /* tensors 0-2 at 0, 100096, 400128 fill it; 3 alone */};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    long long before = gt_query("live_allocations");
    rig_load_options o = options(RIG_LOAD_PATH_STAGED, 0);
    o.arena_bytes = cases[c].limit;
    rig_load load;
    assert_int_equal(load_on(gpu, 1, o, f, &load), RIG_OK);
    assert_int_equal(gt_query("live_allocations") - before, cases[c].allocations);
    assert_true(all_equal(load, f, 0));
    rig_buffer kept;
    assert_int_equal(rig_load_buffer(load, 2, 0, &kept), RIG_OK);
    assert_int_equal(rig_load_release(load), RIG_OK);
    /* tensor 2 holds its arena alone now: with the default, the whole file's */
    assert_int_equal(gt_query("live_allocations") - before, 1);
    assert_int_equal(rig_buffer_release(kept), RIG_OK); /* waits for its uses, then frees (rule 6) */
    assert_int_equal(gt_query("live_allocations"), before);
  }
  assert_int_equal(rig_load_file_release(f), RIG_OK);
}

/* An arena past 2 MiB is allocated in whole 2 MiB pages (load/arenas.h: CUDA's IPC open of a ragged one
 * cost another process milliseconds), and one under it at its tensors' size: the device's bytes in use
 * while the load holds them, every byte still the file's. */
static void an_arena_past_a_large_page_is_allocated_in_whole_pages(void **state) {
  (void)state;
  GT_FAKE_ONLY(); /* counts the fake's device bytes */
  const size_t big[] = {1 << 20, (1 << 20) + 4096, 3}; /* 2 MiB + 4 KiB + 3 bytes at 256-byte starts */
  char file[512];
  snprintf(file, sizeof file, "%s", tw_path("pages"));
  tw_safetensors_u8(file, big, 3);
  rig_load_file f;
  assert_int_equal(rig_load_open(file, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  const struct {
    size_t limit;
    long long bytes;
  } cases[] = {{0, 4 << 20}, {(1 << 20) + 256, (2 << 20) + 4096 + 3} /* three arenas under 2 MiB, unpadded */};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    rig_load_options o = options(RIG_LOAD_PATH_STAGED, 0);
    o.arena_bytes = cases[c].limit;
    long long before = gt_query("device_bytes");
    rig_load load;
    assert_int_equal(load_on(gpu, 1, o, f, &load), RIG_OK);
    for (size_t i = 0; i < 3; ++i) assert_true(tw_tensor_as_file(load, f, file, i, 0));
    assert_int_equal(gt_query("device_bytes") - before, cases[c].bytes);
    assert_int_equal(rig_load_release(load), RIG_OK);
  }
  assert_int_equal(rig_load_file_release(f), RIG_OK);
  unlink(file);
}

static void need_two_gpus(void) {
  if (gpu[1]) return;
  char two[32];
  snprintf(two, sizeof two, "%s2", gt()->prefix);
  if (rt_required(two)) fail_msg("RIG_REQUIRE names %s but there is one GPU", two);
  fprintf(stderr, "SKIP: needs two %s GPUs\n", gt()->framework);
  skip();
}

static void two_gpus_get_each_tensor_with_one_read_and_a_peer_copy(void **state) {
  (void)state;
  need_two_gpus();
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load load;
  assert_int_equal(load_on(gpu, 2, options(RIG_LOAD_PATH_STAGED, 0), f, &load), RIG_OK);
  rig_load_stats st = tw_stats(load);
  assert_int_equal(st.bytes_read, st.bytes_total);
  assert_int_equal(st.bytes_copied, 2 * st.bytes_total);
  assert_true(all_equal(load, f, 0));
  assert_true(all_equal(load, f, 1));
  rig_load_release(load);
  rig_load_file_release(f);
}

/* A kernel of the other GPU reads a loaded tensor of the reuse pool through a borrow (the pool's memory is
 * plain device memory: the borrow's peer access reaches it). */
static void a_kernel_of_the_other_gpu_reads_a_loaded_tensor_through_a_borrow(void **state) {
  (void)state;
  need_two_gpus();
  int fake = gt_fake();
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  rig_load load;
  rig_load_pool pool = kept_pool(gpu[0]);
  assert_int_equal(load_on(gpu, 1, through(&pool), f, &load), RIG_OK);
  rig_buffer t;
  assert_int_equal(rig_load_buffer(load, 0, 0, &t), RIG_OK);
  enum { N = 100000 / 4 };
  static uint32_t in[N], got[N];
  assert_int_equal(rig_buffer_read_into(t, 0, in, sizeof in), RIG_OK);
  rig_buffer on1, out;
  assert_int_equal(rig_buffer_borrow(gpu[1], t, &on1), RIG_OK);
  assert_int_equal(rig_buffer_create(gpu[1], sizeof got, RIG_MEMORY_DEVICE, &out), RIG_OK);
  rig_module m = gt_kernels(gpu[1]);
  rig_point p = gt_step(gpu[1], m, "rig_add_u32", on1, out, N, 5);
  assert_int_equal(rig_wait_point(p, UINT64_MAX), RIG_OK);
  if (fake) assert_int_equal(gt_query("sticky1"), 0); /* no illegal address on gpu[1] */
  assert_int_equal(rig_buffer_read_into(out, 0, got, sizeof got), RIG_OK);
  for (size_t i = 0; i < N; ++i)
    if (got[i] != in[i] + 5) fail_msg("element %zu: %u, not %u", i, got[i], in[i] + 5);
  rig_module_release(m);
  rig_buffer_release(out);
  rig_buffer_release(on1);
  rig_buffer_release(t);
  rig_load_release(load);
  rig_load_pool_release(pool);
  rig_load_file_release(f);
}

/* Each device opened on a GPU has a pool of its own: an allocation of another device on the same GPU that
 * runs out of memory takes back what the first device's pool keeps, for a plain buffer and for a loaded
 * tensor alike. */
static void another_device_of_the_gpu_takes_back_what_a_pool_keeps(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  long long before = keep_a_load_in_the_pool(f);

  rig_device second;
  assert_int_equal(rig_device_open(gt_name(0), &second), RIG_OK);
  rig_buffer big;
  rig_status s = create_past_the_limit(second, &big);
  if (s != RIG_OK) fail_msg("the other device's plain allocation: %s: %s", rig_status_name(s), rig_last_error());
  assert_true(gt_query("device_bytes") <= before + 600000); /* gpu[0]'s pool gave it back */
  rig_buffer_release(big);

  /* The same for a tensor of a load on the second device (its own pool has nothing to give). */
  keep_a_load_in_the_pool(f);
  rig_load load;
  rig_load_pool second_pool = kept_pool(second);
  gt_set("device_memory_limit", gt_query("device_bytes") + 4096);
  rig_device on_second[1] = {second};
  s = load_on(on_second, 1, through(&second_pool), f, &load);
  gt_set("device_memory_limit", 0);
  if (s != RIG_OK) fail_msg("the other device's load: %s: %s", rig_status_name(s), last_why);
  assert_true(all_equal(load, f, 0));
  rig_load_release(load);
  rig_load_pool_release(second_pool);
  assert_int_equal(rig_device_release(second), RIG_OK);
  rig_load_file_release(f);
}

/* Taking back what a pool keeps waits for nothing (every block's uses were reached before its free), never
 * for the device's stream, which may wait on work the program has yet to start: here a point imported from a native stream held shut by a host word
 * the test writes only once the allocation that ran out of memory has returned (waiting for the device's
 * stream there would hang for good). */
static void an_allocation_takes_back_what_the_pool_keeps_while_the_stream_waits_on_the_program(void **state) {
  (void)state;
  GT_FAKE_ONLY();
  const native_api *api = native();
  assert_non_null(api);
  rig_load_file f;
  assert_int_equal(rig_load_open(path, RIG_LOAD_FORMAT_AUTO, &f), RIG_OK);
  long long before = keep_a_load_in_the_pool(f);
  rig_load_file_release(f);

  assert_int_equal(api->use_gpu(0), 0);
  void *s = NULL, *host = NULL, *event = NULL;
  uint64_t word = 0;
  assert_int_equal(api->stream_create(&s), 0);
  assert_int_equal(api->host_alloc(&host, &word, 64), 0);
  memset(host, 0, 64);
  assert_int_equal(api->wait_word(s, word, 1), 0);
  assert_int_equal(api->event_create(&event), 0);
  assert_int_equal(api->event_record(event, s), 0);
  rig_point held = 0;
  assert_int_equal(rig_point_import_event(gpu[0], event, &held), RIG_OK); /* gpu[0]'s stream waits on it */
  assert_int_equal(rig_wait_point(held, 1000000), RIG_TIMEOUT);

  rig_buffer big;
  rig_status st = create_past_the_limit(gpu[0], &big);
  __atomic_store_n((uint64_t *)host, 1, __ATOMIC_RELEASE);
  if (st != RIG_OK) fail_msg("the plain allocation: %s: %s", rig_status_name(st), rig_last_error());
  assert_true(gt_query("device_bytes") <= before + 600000);
  assert_int_equal(rig_wait_point(held, UINT64_MAX), RIG_OK);
  rig_buffer_release(big);
  api->event_destroy(event);
  api->stream_destroy(s);
}

int main(void) {
  if (!gt_available()) return 77;
  if (rig_device_open(gt_name(0), &gpu[0]) != RIG_OK) {
    fprintf(stderr, "%s did not open: %s\n", gt_name(0), rig_last_error());
    return 1;
  }
  if (rig_device_open(gt_name(1), &gpu[1]) != RIG_OK) gpu[1] = NULL; /* the cases that need it say SKIP */
  /* The probe times registered uploads against staged ones: make staging clearly slower on the fake. */
  if (gt_fake()) gt_set("pinned_upload_ns_per_kib", 2000);
  path = tw_path(gt()->prefix);
  tw_safetensors_u8(path, lengths, COUNT);
  const struct CMUnitTest every_backend[] = {
      cmocka_unit_test(staged_copies_through_pinned_chunks_equal_the_file),
      cmocka_unit_test(staging_the_driver_refuses_to_register_falls_back_and_leaves_nothing),
      cmocka_unit_test(staging_refused_behind_its_first_piece_still_delivers_every_byte),
      cmocka_unit_test(two_gpus_get_each_tensor_with_one_read_and_a_peer_copy),
      cmocka_unit_test(tensors_share_allocations_up_to_arena_bytes),
      cmocka_unit_test(an_arena_past_a_large_page_is_allocated_in_whole_pages),
      cmocka_unit_test(a_later_load_reuses_the_memory_of_the_tensors_released_before_it),
      cmocka_unit_test(a_plain_allocation_that_runs_out_takes_back_what_the_pool_keeps),
      cmocka_unit_test(a_released_device_gives_back_what_its_pool_keeps),
      cmocka_unit_test(a_device_without_a_reuse_pool_gives_memory_back_at_its_free),
      cmocka_unit_test(a_kernel_of_the_other_gpu_reads_a_loaded_tensor_through_a_borrow),
      cmocka_unit_test(another_device_of_the_gpu_takes_back_what_a_pool_keeps),
      cmocka_unit_test(an_allocation_takes_back_what_the_pool_keeps_while_the_stream_waits_on_the_program),
  };
  /* The fake libcuda's registrations (register_wrong_bytes: the device sees other bytes than the host's). */
  const struct CMUnitTest cuda_registrations[] = {
      cmocka_unit_test(a_registration_serving_wrong_bytes_is_refused_by_the_probe),
      cmocka_unit_test(registered_windows_equal_the_file_and_verify_catches_wrong_bytes),
      cmocka_unit_test(a_file_cut_under_the_registered_path_fails_the_load_never_with_a_signal),
      cmocka_unit_test(a_kept_registration_serves_every_reload_without_registering),
      cmocka_unit_test(a_sharded_checkpoint_loads_on_every_gpu_path_equal_to_its_shards),
  };
  int failed = cmocka_run_group_tests_name("every backend", every_backend, NULL, NULL);
  if (strcmp(gt()->prefix, "cuda") == 0 && gt_fake())
    failed += cmocka_run_group_tests_name("the fake libcuda's registrations", cuda_registrations, NULL, NULL);
  rig_device_release(gpu[0]);
  if (gpu[1]) rig_device_release(gpu[1]);
  unlink(path);
  return failed;
}
