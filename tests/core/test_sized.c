/* Structs the caller sizes (rig.h: "Structs that may grow start with a size field") are served at every
 * size: a program compiled against an older rig.h, whose rig_device_info ends sooner, gets the fields it has
 * and nothing written past its size; one compiled against a newer rig.h, whose struct is larger, gets ours
 * with the fields we do not know zeroed; a size below the size field itself is refused. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rigtest.h"

/* A caller's struct with room around it: sentinel bytes everywhere, so a byte written past the size shows. */
typedef struct {
  rig_device_info info;
  unsigned char newer[32]; /* what a later rig.h might add */
} grown_info;

static rig_device open_memory(void) {
  rig_device d;
  OK(rig_memory_device("sized", &d));
  return d;
}

static void an_older_callers_smaller_info_is_served(void **state) {
  (void)state;
  rig_device d = open_memory();
  /* An older rig_device_info: size, name, framework and model only. */
  grown_info g;
  memset(&g, 0xab, sizeof g);
  size_t older = offsetof(rig_device_info, kind);
  g.info.size = older;
  assert_int_equal(rig_device_get_info(d, &g.info), RIG_OK);
  assert_int_equal(g.info.size, older);
  assert_string_equal(g.info.name, "sized");
  assert_string_equal(g.info.framework, "memory");
  assert_non_null(g.info.model);
  const unsigned char *bytes = (const unsigned char *)&g;
  for (size_t i = older; i < sizeof g; ++i) assert_int_equal(bytes[i], 0xab); /* nothing past its size */
  OK(rig_device_release(d));
}

static void a_newer_callers_larger_info_is_accepted(void **state) {
  (void)state;
  rig_device d = open_memory();
  grown_info g;
  memset(&g, 0xab, sizeof g);
  g.info.size = sizeof g;
  assert_int_equal(rig_device_get_info(d, &g.info), RIG_OK);
  assert_int_equal(g.info.size, sizeof g);
  assert_string_equal(g.info.name, "sized");
  assert_int_equal(g.info.kind, RIG_DEVICE_MEMORY);
  assert_int_equal(g.info.lost, 0);
  for (size_t i = 0; i < sizeof g.newer; ++i) assert_int_equal(g.newer[i], 0); /* unknown fields: zero */
  OK(rig_device_release(d));
}

static void a_size_below_the_size_field_is_refused(void **state) {
  (void)state;
  rig_device d = open_memory();
  grown_info g;
  memset(&g, 0xab, sizeof g);
  g.info.size = sizeof(size_t) - 1;
  assert_int_equal(rig_device_get_info(d, &g.info), RIG_INVALID_ARGUMENT);
  assert_non_null(strstr(rig_last_error(), "info->size"));
  assert_int_equal(g.info.size, sizeof(size_t) - 1);
  const unsigned char *bytes = (const unsigned char *)&g;
  for (size_t i = sizeof(size_t); i < sizeof g; ++i) assert_int_equal(bytes[i], 0xab); /* nothing written */
  OK(rig_device_release(d));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(an_older_callers_smaller_info_is_served),
                                     cmocka_unit_test(a_newer_callers_larger_info_is_accepted),
                                     cmocka_unit_test(a_size_below_the_size_field_is_refused)};
  return cmocka_run_group_tests_name("sized structs", tests, NULL, NULL);
}
