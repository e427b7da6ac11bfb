// The hooks of rig_testing.h: built only into the tests' archive (tests/meson.build), never into librig, so
// that a production program cannot lose a device on purpose.
#include <rig_testing.h>

#include "capi/api.h"
#include "drivers/memory/memory_device.h"

using namespace rig;
using namespace rig::capi;

extern "C" rig_status rig_testing_lose_device(rig_device device, const char *why) {
  return entry("testing_lose_device", [&] {
    auto d = pin_device(device, "testing_lose_device");
    if (!d) return RIG_INVALID_HANDLE;
    if (d->is_host() || !dynamic_cast<MemoryDevice *>(&d->driver()))
      return fail(RIG_UNSUPPORTED, "testing_lose_device: %s is not a memory device", d->info().name.c_str());
    // As a driver fault would be, but decided outside the driver: the values reached so far stay reached.
    d->lose_now(why ? why : "lost by rig_testing_lose_device");
    return RIG_OK;
  });
}
