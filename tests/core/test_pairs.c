/* The README's program ("Ten lines of C") over every ordered pair of the devices present: two memory
 * devices, cuda:0 and cuda:1, hip:0 and hip:1, vulkan:0 (the fakes and lavapipe in CI). A copies a borrowed
 * host string into x (its RIG_MEMORY_DEVICE memory), B copies a borrow of x into y, the host reads y. The
 * host string lies at an odd offset beside a neighbour on the same page, both borrowed by A. Each cell
 * prints `hello, world` or the refusal (RIG_UNMAPPABLE and why), never an empty line, and answers exactly
 * what README.md's table says: the table's rows are checked to be the README's (argv[1]) word for word.
 * A backend absent here is left out of the matrix with the reason, or fails the test where RIG_REQUIRE
 * names it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rigtest.h"

/* README.md's table, row by row: the cells below are what these rows say. */
static const char *const kTable[] = {
    "| memory device | yes | yes | yes | no |",
    "| CUDA or HIP GPU | yes | yes | its own, its peers' (same framework) | its own, its peers' (same framework) |",
    "| Vulkan GPU | yes, where it offers `VK_EXT_external_memory_host` (not file mappings; `RIG_VULKAN_HOST_IMPORT=0` "
    "turns it off) | yes, the same way | its own (same VkDevice) | its own (same VkDevice) |",
};

typedef struct dev {
  const char *name;      /* "memory:A", "cuda:0", ... */
  const char *framework; /* "memory", "CUDA", "HIP", "Vulkan" */
  rig_device device;
} dev;

/* The table's host-memory column for a string at an odd offset beside a neighbour: every kind, Vulkan where
 * it imports host memory (offered, and not RIG_VULKAN_HOST_IMPORT=0). */
static int vulkan_imports;
static int borrows_host(const dev *b) { return strcmp(b->framework, "Vulkan") != 0 || vulkan_imports; }

/* The table's RIG_MEMORY_DEVICE column and its memory-device column: what B borrows of A's x. */
static int borrows_device_memory_of(const dev *b, const dev *a) {
  int a_memory = strcmp(a->framework, "memory") == 0;
  if (strcmp(b->framework, "memory") == 0) return a_memory;
  if (strcmp(b->framework, "Vulkan") == 0) return a_memory && vulkan_imports;  /* another VkDevice's: no */
  return a_memory || strcmp(a->framework, b->framework) == 0;  /* CUDA or HIP: a memory device's, a peer's */
}

/* Whether a Vulkan device imports host memory, as the table's clauses say: refused only where it does not
 * offer the extension or RIG_VULKAN_HOST_IMPORT=0 turns it off (any other refusal is a wrong cell). */
static int imports_host_memory(rig_device d) {
  char *byte = malloc(1);
  assert_non_null(byte);
  rig_buffer w, out;
  OK(rig_buffer_wrap(byte, 1, RIG_ACCESS_READ_WRITE, NULL, NULL, &w));
  rig_status s = rig_buffer_borrow(d, w, &out);
  int off = s == RIG_UNMAPPABLE && (strstr(rig_last_error(), "does not offer VK_EXT_external_memory_host") ||
                                    strstr(rig_last_error(), "RIG_VULKAN_HOST_IMPORT=0"));
  if (off) printf("(vulkan:0 imports no host memory: %s)\n", rig_last_error());
  if (s == RIG_OK) OK(rig_buffer_release(out));
  OK(rig_buffer_release(w));
  free(byte);
  return !off;
}

static rig_status copy(rig_device d, rig_buffer src, rig_buffer dst) {
  rig_part p = {.size = sizeof p, .kind = RIG_PART_COPY, .src_slot = 0, .dst_slot = 1, .length = RIG_WHOLE};
  rig_access a[2] = {RIG_ACCESS_READ, RIG_ACCESS_WRITE};
  rig_submission s;
  rig_run r;
  rig_status e;
  if ((e = rig_submission_make(d, &p, 1, a, 2, &s))) return e;
  if ((e = rig_run_take(s, &r))) {
    rig_submission_release(s);
    return e;
  }
  if (!(e = rig_run_set_buffer(r, 0, src)) && !(e = rig_run_set_buffer(r, 1, dst))) e = rig_submit(r, NULL, 0, NULL);
  rig_run_release(r);
  rig_submission_release(s);
  return e;
}

/* The host strings: page-aligned storage, the neighbour at offset 1 and the program's string at 15. */
static _Alignas(4096) char page[4096];

/* The program on A and B, its line (what it prints) in out. Every buffer made is released. */
static rig_status program(rig_device a, rig_device b, char *out, size_t n) {
  char *neighbour = page + 1, *text = page + 15;
  memcpy(neighbour, "a neighbour", 12);
  memcpy(text, "hello, world", 12);
  rig_buffer bufs[7] = {0};
  rig_buffer *w_n = &bufs[0], *src = &bufs[1], *x = &bufs[2], *y = &bufs[3], *n_a = &bufs[4], *s_a = &bufs[5],
             *x_b = &bufs[6];
  rig_status e = RIG_OK;
  char got[13] = {0};
  do {
#define TRY(call)                                                          \
  if ((e = (call))) {                                                      \
    snprintf(out, n, "%s: %s", rig_status_name(e), rig_last_error());     \
    break;                                                                 \
  }
    TRY(rig_buffer_wrap(neighbour, 12, RIG_ACCESS_READ, NULL, NULL, w_n));
    TRY(rig_buffer_wrap(text, 12, RIG_ACCESS_READ, NULL, NULL, src));
    TRY(rig_buffer_create(a, 12, RIG_MEMORY_DEVICE, x));
    TRY(rig_buffer_create(b, 12, RIG_MEMORY_DEVICE, y));
    TRY(rig_buffer_borrow(a, *w_n, n_a));  /* the neighbour, borrowed first: the page is its */
    TRY(rig_buffer_borrow(a, *src, s_a));
    TRY(copy(a, *s_a, *x));
    TRY(rig_buffer_borrow(b, *x, x_b));
    TRY(copy(b, *x_b, *y));
    TRY(rig_buffer_read_into(*y, 0, got, 12));
    snprintf(out, n, "%s", got);
  } while (0);
  for (int i = 6; i >= 0; --i)
    if (bufs[i]) OK(rig_buffer_release(bufs[i]));
  return e;
}

static int readme_has_the_table(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("cannot read %s", path);
  static char text[1 << 20];
  size_t got = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[got] = 0;
  for (size_t i = 0; i < sizeof kTable / sizeof kTable[0]; ++i)
    if (!strstr(text, kTable[i])) fail_msg("README.md's table has no row\n  %s\n(this test's cells follow it)", kTable[i]);
  return 1;
}

static const char *readme_path;

static void every_pair_prints_hello_world_or_the_refusal_the_readme_table_names(void **state) {
  (void)state;
  readme_has_the_table(readme_path);
  static const char *names[] = {"memory:A", "memory:B", "cuda:0", "cuda:1", "hip:0", "hip:1", "vulkan:0"};
  static const char *backends[] = {NULL, NULL, "cuda", "cuda", "hip", "hip", "vulkan"};
  dev devs[7];
  size_t count = 0;
  for (size_t i = 0; i < 7; ++i) {
    rig_device d;
    rig_status s = strncmp(names[i], "memory:", 7) == 0 ? rig_memory_device(names[i] + 7, &d)
                                                         : rig_device_open(names[i], &d);
    if (s != RIG_OK) {
      if (backends[i] && rt_required(backends[i]))
        fail_msg("RIG_REQUIRE names %s, but %s does not open: %s", backends[i], names[i], rig_last_error());
      printf("(%s left out: %s)\n", names[i], rig_last_error());
      continue;
    }
    rig_device_info info = {sizeof info};
    OK(rig_device_get_info(d, &info));
    static char frameworks[7][32];
    snprintf(frameworks[i], sizeof frameworks[i], "%s", backends[i] ? info.framework : "memory");
    devs[count++] = (dev){names[i], frameworks[i], d};
    if (strcmp(frameworks[i], "Vulkan") == 0) vulkan_imports = imports_host_memory(d);
  }
  int wrong = 0;
  for (size_t i = 0; i < count; ++i)
    for (size_t j = 0; j < count; ++j) {
      if (i == j) continue;
      const dev *a = &devs[i], *b = &devs[j];
      int want = borrows_host(a) && borrows_device_memory_of(b, a);
      char line[1024] = {0};
      rig_status s = program(a->device, b->device, line, sizeof line);
      int ok = want ? s == RIG_OK && strcmp(line, "hello, world") == 0 : s == RIG_UNMAPPABLE;
      printf("%-8s -> %-8s  %s%s\n", a->name, b->name, line, ok ? "" : "   <- not what README.md's table says");
      if (!line[0]) fail_msg("%s -> %s printed an empty line", a->name, b->name);
      wrong += !ok;
    }
  for (size_t i = 0; i < count; ++i) OK(rig_device_release(devs[i].device));
  if (wrong) fail_msg("%d cell(s) differ from README.md's table", wrong);
}

int main(int argc, char **argv) {
  readme_path = argc > 1 ? argv[1] : "README.md";
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_pair_prints_hello_world_or_the_refusal_the_readme_table_names),
  };
  return rt_finish(cmocka_run_group_tests_name("pairs", tests, NULL, NULL));
}
