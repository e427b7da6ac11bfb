// The engine opens devices (src/core/registry.h), with no C face between: by name through the driver of
// the name's prefix, the memory driver registered like the GPU drivers; the host made by the memory
// driver; names a driver lists kept for the process. Statuses for names that open nothing.
#include <cstdio>
#include <cstring>
#include <string>

#include "core/device.h"
#include "core/error.h"
#include "core/registry.h"

namespace {

int failures = 0;
void expect(bool ok, const char *what) {
  if (ok) return;
  std::fprintf(stderr, "FAILED: %s (last error: %s)\n", what, rig::last_error());
  ++failures;
}

void memory_devices_open_by_name_through_the_registry() {
  bool listed = false;
  for (rig::Driver *d : rig::drivers()) listed |= std::strcmp(d->prefix(), "memory") == 0;
  expect(listed, "the memory driver is in the registry's driver list");
  rig::Device *a = nullptr, *again = nullptr;
  expect(rig::open_device("memory:A", &a) == RIG_OK && a, "memory:A opens");
  expect(rig::open_device("memory:A", &again) == RIG_OK && again && again != a, "a name opens a new device each time");
  if (!a || !again) return;
  expect(a->kind() == RIG_DEVICE_MEMORY && a->info().name == "A" && a->info().framework == "memory",
         "memory:A is the memory device A");
  expect(a->index() != 0 && again->index() != a->index() && rig::device_at(a->index()) == a,
         "each device gets its own index, found by device_at");
}

void the_host_is_made_by_the_memory_driver() {
  rig::Device &host = rig::host_device();
  expect(host.is_host() && host.index() == 0 && host.info().framework == "host", "the host is index 0");
  expect(&rig::host_device() == &host, "the host is made once");
  expect(rig::device_at(0) == nullptr, "no point names the host");
}

void names_that_open_nothing_are_refused() {
  rig::Device *d = nullptr;
  expect(rig::open_device("cuda", &d) == RIG_INVALID_ARGUMENT && std::strstr(rig::last_error(), "cuda:0"),
         "a name without DRIVER: is refused, saying the form");
  expect(rig::open_device("nosuch:0", &d) == RIG_NOT_FOUND, "a prefix no driver has is not found");
  expect(rig::open_device("memory:", &d) == RIG_INVALID_ARGUMENT, "an empty memory device name is refused");
  expect(rig::open_device("memory:" + std::string(256, 'x'), &d) == RIG_INVALID_ARGUMENT,
         "a memory device name over 255 bytes is refused");
  expect(d == nullptr, "a refused open writes no device");
}

void listed_names_are_kept() {
  auto first = rig::device_names(), second = rig::device_names();
  expect(first == second, "the same names, as the same pointers, each time");
  for (const char *n : first) expect(std::strncmp(n, "memory:", 7) != 0, "memory devices are not listed");
}

}  // namespace

int main() {
  memory_devices_open_by_name_through_the_registry();
  the_host_is_made_by_the_memory_driver();
  names_that_open_nothing_are_refused();
  listed_names_are_kept();
  std::printf("%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
