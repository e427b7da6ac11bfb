#include "probe_double.h"

#include <stdlib.h>
#include <string.h>

void pd_init(pd *d, size_t device_length) {
  memset(d, 0, sizeof *d);
  d->device = malloc(device_length);
  d->device_length = device_length;
  d->clock_ns = 1000000000ull;
  d->registered_ns = 1000000;
  d->staged_ns = 2000000;
}

void pd_fini(pd *d) {
  for (size_t i = 0; i < d->allocation_count; ++i) free(d->allocations[i]);
  free(d->device);
  d->device = NULL;
}

/* The switches: the status op's call number n must fail with, or RIG_OK. */
static rig_status injected(pd *d, enum pd_op op) {
  unsigned n = ++d->calls[op];
  rig_status s = d->fail_status[op] ? d->fail_status[op] : RIG_DRIVER;
  if (d->fail_always[op]) return s;
  if (d->fail_at[op] && n == d->fail_at[op]) return s;
  if (n <= d->fail_times[op]) return RIG_DRIVER;
  return RIG_OK;
}

static int inside(const pd_range *r, const void *p) {
  const char *c = p;
  return c >= r->base && c < r->base + r->length;
}

static rig_status do_register(void *user, void *host, size_t length) {
  pd *d = user;
  rig_status s = injected(d, PD_REGISTER);
  if (s != RIG_OK) return s;
  if (d->registered_count == 8 || d->ever_count == 16) return RIG_OUT_OF_MEMORY;
  pd_range r = {host, length};
  for (int i = 0; i < 2; ++i)
    if (!d->window_base[i]) {
      d->window_base[i] = host;
      break;
    }
  d->registered[d->registered_count++] = r;
  d->ever[d->ever_count++] = r;
  return RIG_OK;
}

static rig_status do_unregister(void *user, void *host, size_t length) {
  pd *d = user;
  (void)length;
  for (int i = 0; i < 2; ++i)
    if (d->window_base[i] == host) d->window_tries[i]++;
  rig_status s = injected(d, PD_UNREGISTER);
  if (s != RIG_OK) return s;
  if (host == d->stuck_base) return RIG_DRIVER;
  for (size_t i = 0; i < d->registered_count; ++i)
    if (d->registered[i].base == host) {
      d->registered[i] = d->registered[--d->registered_count];
      return RIG_OK;
    }
  return RIG_INVALID_ARGUMENT; /* not registered: a probe bug the tests see as a wrong count */
}

static rig_status do_alloc(void *user, size_t length, void **host) {
  pd *d = user;
  rig_status s = injected(d, PD_ALLOC);
  if (s != RIG_OK) return s;
  if (d->allocation_count == 8) return RIG_OUT_OF_MEMORY;
  void *p = malloc(length);
  if (!p) return RIG_OUT_OF_MEMORY;
  if (d->alloc_fill_from) memcpy(p, d->alloc_fill_from, length);
  d->allocations[d->allocation_count++] = p;
  *host = p;
  return RIG_OK;
}

static rig_status do_free(void *user, void *host, size_t length) {
  pd *d = user;
  (void)length;
  rig_status s = injected(d, PD_FREE);
  if (s != RIG_OK) return s;
  for (size_t i = 0; i < d->allocation_count; ++i)
    if (d->allocations[i] == host) {
      free(host);
      d->allocations[i] = d->allocations[--d->allocation_count];
      return RIG_OK;
    }
  return RIG_INVALID_ARGUMENT;
}

static rig_status do_round_trip(void *user, const void *host, void *into, size_t length) {
  pd *d = user;
  rig_status s = injected(d, PD_ROUND_TRIP);
  if (s != RIG_OK) return s;
  if (length > d->device_length) return RIG_INVALID_ARGUMENT;
  if (d->change_map_at) {
    *d->change_map_at ^= 0x5a;
    d->change_map_at = NULL;
  }
  memcpy(d->device, host, length);
  if (d->wrong_bytes) d->device[length / 3] ^= 1;
  int lazy = d->lazy_round_trip || (d->lazy_first_round_trip && d->calls[PD_ROUND_TRIP] == 1);
  if (!lazy) memcpy(into, d->device, length);
  return RIG_OK;
}

static rig_status do_upload(void *user, const void *host, size_t length) {
  pd *d = user;
  rig_status s = injected(d, PD_UPLOAD);
  if (s != RIG_OK) return s;
  if (length > d->device_length) return RIG_INVALID_ARGUMENT;
  memcpy(d->device, host, length);
  int registered = 0;
  for (size_t i = 0; i < d->registered_count; ++i)
    if (inside(&d->registered[i], host)) registered = 1;
  if (!d->frozen_clock) d->clock_ns += registered ? d->registered_ns : d->staged_ns;
  return RIG_OK;
}

static uint64_t do_now(void *user) { return ((pd *)user)->clock_ns; }

rig_probe_ops pd_ops(pd *d) {
  rig_probe_ops o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.user = d;
  o.register_host = do_register;
  o.unregister_host = do_unregister;
  o.alloc_host = do_alloc;
  o.free_host = do_free;
  o.round_trip = do_round_trip;
  o.upload = do_upload;
  o.now_ns = do_now;
  return o;
}
