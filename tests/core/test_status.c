/* rig_status_name names every status of rig.h and no other (core/status.h's one list makes the names and
 * the messages of failures that set none). The names are written out here, independently of that list. */
#include <string.h>

#include "rigtest.h"

static void every_status_has_its_name(void **state) {
  (void)state;
  static const struct {
    rig_status status;
    const char *name;
  } all[] = {{RIG_OK, "RIG_OK"},
             {RIG_INVALID_ARGUMENT, "RIG_INVALID_ARGUMENT"},
             {RIG_INVALID_HANDLE, "RIG_INVALID_HANDLE"},
             {RIG_UNSUPPORTED, "RIG_UNSUPPORTED"},
             {RIG_UNMAPPABLE, "RIG_UNMAPPABLE"},
             {RIG_OUT_OF_MEMORY, "RIG_OUT_OF_MEMORY"},
             {RIG_LOST, "RIG_LOST"},
             {RIG_TIMEOUT, "RIG_TIMEOUT"},
             {RIG_INTERRUPTED, "RIG_INTERRUPTED"},
             {RIG_DRIVER, "RIG_DRIVER"},
             {RIG_NOT_FOUND, "RIG_NOT_FOUND"},
             {RIG_BUSY, "RIG_BUSY"}};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) assert_string_equal(rig_status_name(all[i].status), all[i].name);
}

static void other_values_are_unknown(void **state) {
  (void)state;
  const int others[] = {-1, 12, 100, RIG_STATUS_MAX_ENUM};
  for (size_t i = 0; i < sizeof others / sizeof others[0]; ++i)
    assert_string_equal(rig_status_name((rig_status)others[i]), "RIG_UNKNOWN_STATUS");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(every_status_has_its_name),
                                     cmocka_unit_test(other_values_are_unknown)};
  return cmocka_run_group_tests_name("status names", tests, NULL, NULL);
}
