/* rig_testing.h: hooks for rig's own tests. Not installed and not in librig: the hooks are built into the
 * test-only archive rig_testing (tests/meson.build), which test binaries link with the engine's archive.
 * A program linked against the installed librig cannot reach them. */
#ifndef RIG_TESTING_H
#define RIG_TESTING_H

#include "rig.h"

#ifdef __cplusplus
extern "C" {
#endif

RIG_NULLABILITY_BEGIN

/* Loses a memory device as a driver fault would, with `why` (nullable: a default reason). From the loss
 * on, the device reaches no further value: waits for values it had not reached return RIG_LOST (see
 * rig_device_wait). RIG_UNSUPPORTED for the host and devices of other drivers. Waits for nothing. */
RIG_API rig_status rig_testing_lose_device(rig_device RIG_NONNULL device, const char *RIG_NULLABLE why);

RIG_NULLABILITY_END

#ifdef __cplusplus
}
#endif

#endif /* RIG_TESTING_H */
