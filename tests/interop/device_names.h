/* The device names the interop examples take on their command lines (nccl_step.c, ipc_pair.c): BACKEND:N,
 * as rig_device_open names a driver's device. One parser, so that both refuse the same mistakes in the same
 * words before anything opens (exit status 2: a usage error, never a skip). Header-only: ipc_pair links
 * nothing but librig. */
#ifndef RIG_TEST_DEVICE_NAMES_H
#define RIG_TEST_DEVICE_NAMES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct device_name {
  const char *text; /* "cuda:1", as given */
  char backend[16]; /* "cuda" */
  int ordinal;      /* 1 */
} device_name;

/* 1 with *out filled where `text` is BACKEND:N (BACKEND lower-case letters, N a decimal number below
 * 65536); else 0, with "PROGRAM: ..." saying what is wrong on stderr. */
static inline int device_name_parse(const char *program, const char *text, device_name *out) {
  size_t n = strspn(text, "abcdefghijklmnopqrstuvwxyz");
  const char *digits = text + n + 1;
  char *end = NULL;
  long ordinal = n && text[n] == ':' && *digits >= '0' && *digits <= '9' ? strtol(digits, &end, 10) : -1;
  if (ordinal < 0 || *end || ordinal > 65535 || n >= sizeof out->backend) {
    fprintf(stderr, "%s: \"%s\" is not a device name (BACKEND:N, as cuda:0)\n", program, text);
    return 0;
  }
  out->text = text;
  memcpy(out->backend, text, n);
  out->backend[n] = 0;
  out->ordinal = (int)ordinal;
  return 1;
}

/* 1 where each of texts[0..count) parses into out[i], all of one backend (`backend`, or the first's where
 * null) and, with `distinct`, no two naming one device; else 0 with the reason on stderr. */
static inline int device_names_parse(const char *program, char *const *texts, int count, const char *backend,
                                     int distinct, device_name *out) {
  for (int i = 0; i < count; ++i) {
    if (!device_name_parse(program, texts[i], &out[i])) return 0;
    const char *want = backend ? backend : out[0].backend;
    if (strcmp(out[i].backend, want) != 0) {
      fprintf(stderr, "%s: %s is not a %s device (every device here is of one backend)\n", program, texts[i], want);
      return 0;
    }
    for (int j = 0; distinct && j < i; ++j)
      if (out[j].ordinal == out[i].ordinal) {
        fprintf(stderr, "%s: %s is named twice (one rank per device)\n", program, texts[i]);
        return 0;
      }
  }
  return 1;
}

#endif
