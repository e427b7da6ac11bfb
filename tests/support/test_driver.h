/* The test driver: a device over host memory whose queue runs only when the test steps it or a wait
 * sleeps, logging every driver call, with switches for the ways a real driver misbehaves. Memory devices
 * run inline and so hide a missing wait; on this driver a missing wait leaves work unrun and a test sees it.
 * Built only for the tests (tests/support), linked with the engine's static archive. */
#ifndef RIG_TEST_DRIVER_H
#define RIG_TEST_DRIVER_H

#include <rig.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens a test-driver device called `name` (framework "test"). */
rig_status tdrv_open(const char *name, rig_device *out);
/* 1: handed-over work is held until committed (as Vulkan holds an open command buffer). */
void tdrv_set_hold(rig_device d, int hold);
/* Commits by itself every k values (0: never) while holding. */
void tdrv_set_commit_every(rig_device d, unsigned k);
/* At most `room` entries queued; a full queue makes hand_over run the world until there is room. 0: no limit. */
void tdrv_set_room(rig_device d, unsigned room);
/* Bindings longer than `bytes` cannot be taken (0: no limit): check_work refuses them, and so does
 * hand_over, which loses the device, as a real driver would. Set before the runs are made. */
void tdrv_set_binding_limit(rig_device d, size_t bytes);
/* 1: hand_over blocks (holding the device's turn) until set back to 0. */
void tdrv_set_block_hand_over(rig_device d, int block);
/* The work of `value` faults when it runs: the device is lost. 0: none. */
void tdrv_set_fault_at(rig_device d, uint64_t value);
/* The work of `value` never completes (a hang). 0: none. */
void tdrv_set_stall_at(rig_device d, uint64_t value);
/* A hang of more than `ns` in a wait loses the device (the driver's bound). 0: no bound. */
void tdrv_set_hang_bound_ns(rig_device d, uint64_t ns);
/* The driver reports a fault of the device now (as a fault seen on another thread). runs_on 1: its queue
 * still runs afterwards when stepped, as work already on a GPU or a memory device's running kernel may
 * complete after the fault; the engine must count none of it as reached. */
void tdrv_lose(rig_device d, const char *why, int runs_on);
/* The next host wait on the device returns RIG_INTERRUPTED. */
void tdrv_interrupt_next_wait(rig_device d);
/* Runs up to n runnable entries of the device in order; returns how many ran. */
unsigned tdrv_step(rig_device d, unsigned n);
/* Runs every device's runnable entries until none can run; returns how many ran. */
unsigned tdrv_run_all(void);
/* Entries handed over and not yet run. */
unsigned tdrv_queued(rig_device d);
/* 1 while hand_over is blocked in it (tdrv_set_block_hand_over). */
int tdrv_in_hand_over(rig_device d);

/* The log of driver calls: "hand_over A 3 [B:2]", "commit A", "run A 3", "wait A 3", "fault A 3". */
void tdrv_log_clear(void);
unsigned tdrv_log_count(void);
/* Line i (copied into buf). */
void tdrv_log_line(unsigned i, char *buf, size_t size);
/* Index of the first line containing `text` at or after `from`, or -1. */
int tdrv_log_find(const char *text, unsigned from);

#ifdef __cplusplus
}
#endif

#endif
