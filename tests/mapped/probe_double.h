/* A double of the probe's ops, in C over host memory: a "device" buffer, a fake clock that uploads advance
 * (registered and staged uploads at costs the test sets), counters of every call, the ranges registered,
 * and switches for each way a backend misbehaves. */
#ifndef RIG_TESTS_MAPPED_PROBE_DOUBLE_H
#define RIG_TESTS_MAPPED_PROBE_DOUBLE_H

#include <rig_mapped.h>

#include <stddef.h>
#include <stdint.h>

enum pd_op { PD_REGISTER, PD_UNREGISTER, PD_ALLOC, PD_FREE, PD_ROUND_TRIP, PD_UPLOAD, PD_OPS };

typedef struct pd_range {
  const char *base;
  size_t length;
} pd_range;

typedef struct pd {
  /* the "device" */
  char *device;
  size_t device_length;
  /* fake clock: uploads from a registered range cost registered_ns, from alloc_host memory staged_ns */
  uint64_t clock_ns;
  uint64_t registered_ns, staged_ns;
  int frozen_clock; /* 1: uploads take no time (no valid duration) */
  /* switches */
  rig_status fail_status[PD_OPS]; /* returned by call number fail_at[op] (1-based) of op; 0: never */
  unsigned fail_at[PD_OPS];
  int fail_always[PD_OPS];        /* 1: every call of the op fails with fail_status (or RIG_DRIVER) */
  unsigned fail_times[PD_OPS];    /* the first n calls fail with RIG_DRIVER */
  int wrong_bytes;                /* round_trip returns the bytes with one flipped */
  int lazy_round_trip;            /* round_trip returns OK and writes nothing into `into` */
  int lazy_first_round_trip;      /* only the first round trip writes nothing */
  const char *alloc_fill_from;    /* alloc_host memory starts as a copy of these bytes (a recycled buffer) */
  const void *stuck_base;          /* unregister of the range at this base always fails */
  char *change_map_at;            /* round_trip flips this byte of the map first (the file changing) */
  /* counters and state */
  unsigned calls[PD_OPS];
  pd_range registered[8];
  size_t registered_count;        /* live registrations */
  pd_range ever[16];              /* every range ever registered */
  size_t ever_count;
  void *allocations[8];
  size_t allocation_count;        /* live allocations */
  unsigned window_tries[2];       /* unregister calls per window (by order of registration) */
  const char *window_base[2];
} pd;

/* A double with a device buffer of `device_length` bytes; registered uploads 1 ms, staged 2 ms. */
void pd_init(pd *d, size_t device_length);
void pd_fini(pd *d);
/* The ops table over d. */
rig_probe_ops pd_ops(pd *d);

#endif
