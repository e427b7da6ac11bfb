/* What every subcommand of the rig command shares: its exit statuses, device names, sizes and the progress
 * line (JSON documents: json.h). Documented for users in docs/rig.1.scd (EXIT STATUS) and docs/cli-json.md. */
#ifndef RIG_TOOLS_CLI_H
#define RIG_TOOLS_CLI_H

#include <rig_mapped.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The exit statuses. A probe's status says its verdict, so a script can branch without parsing output. */
enum {
  RIG_EXIT_OK = 0,               /* done; for probe: Usable or Not_needed (use the mapping) */
  RIG_EXIT_ERROR = 1,            /* no answer: the file, the device or the system failed (stderr says) */
  RIG_EXIT_USAGE = 2,            /* bad command line */
  RIG_EXIT_REFUSED = 3,          /* probe: Refused (do not register on this device) */
  RIG_EXIT_TOO_SLOW = 4,         /* probe: Too_slow (right bytes, slower than staging) */
  RIG_EXIT_INCONCLUSIVE = 5,     /* probe: Inconclusive (no verdict this time; try again later) */
  RIG_EXIT_STILL_REGISTERED = 6  /* probe: Still_registered (never unmap the probed mapping) */
};

/* The exit status for a verdict kind. Pure. */
int rig_tool_exit_for(rig_verdict_kind kind);

/* Opens a device by the name `rig devices` prints: "memory:NAME" makes a memory device called NAME ("cpu"
 * the one called cpu, as Python names it), "host" is the host, anything else goes to rig_device_open
 * ("cuda:0"). Statuses as those calls; NULL or
 * an empty memory name is RIG_INVALID_ARGUMENT with rig_last_error set. May block opening a driver. */
rig_status rig_tool_open_device(const char *name, rig_device *out);

/* Parses a byte count with an optional K, M or G suffix (KiB, MiB, GiB). Returns 0 and sets *out, or -1
 * for anything else (a sign, junk, overflow). Pure. */
int rig_tool_parse_size(const char *s, uint64_t *out);

/* Reports a bad option of `rig COMMAND` (the char getopt_long returned: ':' for a missing value, '?' for
 * an unknown option) on stderr and returns RIG_EXIT_USAGE. Call right after getopt_long, with opterr = 0. */
int rig_tool_bad_option(const char *command, int c, char **argv);

/* The progress line: on a terminal (stderr), `rig_tool_progress` rewrites one line in place; elsewhere it
 * writes nothing, so logs and pipes stay clean. `rig_tool_progress_end` clears the line if one was written. */
void rig_tool_progress(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void rig_tool_progress_end(void);

#ifdef __cplusplus
}
#endif

#endif
