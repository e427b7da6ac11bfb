// A verdict of mapped registration as a value: what rig_verdict handles hold. Immutable once made, so a
// handle's strings stay valid while it lives.
#pragma once

#include <rig_mapped.h>

#include <string>

namespace rig::mapped {

struct Verdict {
  rig_verdict_kind kind = RIG_VERDICT_INCONCLUSIVE;
  rig_refusal refusal = RIG_REFUSAL_NONE;
  std::string reason;
  // Best-of-7 speeds in bytes per second; 0 where the self-test timed nothing.
  double registered_bps = 0;
  double staged_bps = 0;

  // Only what the self-test established about the machine outlives the moment (seed: cacheable).
  bool cacheable() const {
    return kind == RIG_VERDICT_USABLE || (kind == RIG_VERDICT_REFUSED && refusal == RIG_REFUSAL_WRONG_BYTES);
  }
  // "Refused (Wrong_bytes): window 1 differs ...", "Usable: registered ..."
  std::string to_string() const;

  static Verdict usable(std::string reason, double registered_bps, double staged_bps);
  static Verdict too_slow(std::string reason, double registered_bps, double staged_bps);
  static Verdict not_needed(std::string reason);
  static Verdict refused(rig_refusal refusal, std::string reason);
  static Verdict inconclusive(std::string reason);
  static Verdict still_registered(std::string reason);
};

// Names of the values; "unknown" for any other int (callers may pass what C lets them).
const char *kind_name(int kind);
const char *refusal_name(int refusal);

}  // namespace rig::mapped
