#include "mapped/verdict.h"

#include <utility>

namespace rig::mapped {

const char *kind_name(int kind) {
  switch (kind) {
    case RIG_VERDICT_USABLE: return "Usable";
    case RIG_VERDICT_NOT_NEEDED: return "Not_needed";
    case RIG_VERDICT_REFUSED: return "Refused";
    case RIG_VERDICT_TOO_SLOW: return "Too_slow";
    case RIG_VERDICT_INCONCLUSIVE: return "Inconclusive";
    case RIG_VERDICT_STILL_REGISTERED: return "Still_registered";
  }
  return "unknown";
}

const char *refusal_name(int refusal) {
  switch (refusal) {
    case RIG_REFUSAL_NONE: return "None";
    case RIG_REFUSAL_INTEGRATED_GPU: return "Integrated_gpu";
    case RIG_REFUSAL_DEVICE_KIND_UNKNOWN: return "Device_kind_unknown";
    case RIG_REFUSAL_KERNEL_HAZARD: return "Kernel_hazard";
    case RIG_REFUSAL_NOT_MEASURED: return "Not_measured";
    case RIG_REFUSAL_WRONG_BYTES: return "Wrong_bytes";
  }
  return "unknown";
}

std::string Verdict::to_string() const {
  std::string s = kind_name(kind);
  if (kind == RIG_VERDICT_REFUSED) {
    s += " (";
    s += refusal_name(refusal);
    s += ")";
  }
  if (!reason.empty()) {
    s += ": ";
    s += reason;
  }
  return s;
}

namespace {
Verdict make(rig_verdict_kind kind, rig_refusal refusal, std::string reason, double reg = 0, double stg = 0) {
  Verdict v;
  v.kind = kind;
  v.refusal = refusal;
  v.reason = std::move(reason);
  v.registered_bps = reg;
  v.staged_bps = stg;
  return v;
}
}  // namespace

Verdict Verdict::usable(std::string reason, double reg, double stg) {
  return make(RIG_VERDICT_USABLE, RIG_REFUSAL_NONE, std::move(reason), reg, stg);
}
Verdict Verdict::too_slow(std::string reason, double reg, double stg) {
  return make(RIG_VERDICT_TOO_SLOW, RIG_REFUSAL_NONE, std::move(reason), reg, stg);
}
Verdict Verdict::not_needed(std::string reason) {
  return make(RIG_VERDICT_NOT_NEEDED, RIG_REFUSAL_NONE, std::move(reason));
}
Verdict Verdict::refused(rig_refusal refusal, std::string reason) {
  return make(RIG_VERDICT_REFUSED, refusal, std::move(reason));
}
Verdict Verdict::inconclusive(std::string reason) {
  return make(RIG_VERDICT_INCONCLUSIVE, RIG_REFUSAL_NONE, std::move(reason));
}
Verdict Verdict::still_registered(std::string reason) {
  return make(RIG_VERDICT_STILL_REGISTERED, RIG_REFUSAL_NONE, std::move(reason));
}

}  // namespace rig::mapped
