/* What both keeper tests (test_keep.c on memory devices, test_keep_gpu.c on the fake libcuda and lavapipe)
 * need: where a tensor's bytes lie in the checkpoint they serve, and the child process a test runs, which
 * must not outlive it. */
#ifndef RIG_TEST_KEEP_H
#define RIG_TEST_KEEP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Tensor i's offset in the file (its data start after the 8-byte length and the JSON header). */
uint64_t kt_offset(const char *path, size_t i);

/* The child of the running test (-1: none): killed by the teardown should the test fail before it does. */
extern pid_t kt_child;
/* The teardown: kills and reaps kt_child where there is one; returns 0, as a cmocka teardown that never fails. */
int kt_kill_child(void **state);

/* One byte read from fd, retried when a signal cuts in; 0 at the end of the file (the writer died). */
char kt_read_byte(int fd);

#endif
