// The rows, first match wins (docs/mapped.md says what each verdict means):
//  - Vulkan first, before any query: registering host memory through Vulkan's external-memory import has
//    crashed the kernel (an oops, on AMD GPUs). No environment opts in: a hazard to the machine is not the
//    caller's to accept.
//  - CUDA and HIP read the integrated attribute. An integrated GPU shares system memory, so registration
//    gains nothing and the probe would only load the memory fabric. A failed query: CUDA is refused as
//    Device_kind_unknown (not guessed); HIP's backend counts a failed query as integrated, and we keep its
//    answer (Integrated_gpu) so that callers that matched on it before see the same thing. Neither is
//    cacheable: the query may succeed next time.
//  - Refinement of the seed (issue 3): a discrete device that reads pageable memory through the host's
//    page tables (Grace Hopper: PageableMemoryAccessUsesHostPageTables) copies from the mapping as it is;
//    registering would only pin pages. Not_needed, with that reason. A failed read of that attribute
//    falls back to the seed's answer (the self-test), since the self-test measures rather than guesses.
//  - Metal: unified memory. CPU devices (memory devices, the host, native CPU backends, CPU OpenCL, any
//    device of kind CPU): the device is the host. Not_needed.
//  - GPU OpenCL and every other name: no measurement shows the capability there. Refused Not_measured.
#include "mapped/static_table.h"

#include <string>

namespace rig::mapped {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool same(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

std::optional<Verdict> registering_gpu(bool hip, std::string_view framework, const FactQuery &fact) {
  std::string fw(framework);
  int integrated = fact ? fact(RIG_FACT_INTEGRATED) : -1;
  if (integrated == 1)
    return Verdict::refused(RIG_REFUSAL_INTEGRATED_GPU,
                            fw + " reports an integrated device: it shares system memory, registration gains nothing");
  if (integrated != 0) {
    if (hip)
      return Verdict::refused(RIG_REFUSAL_INTEGRATED_GPU,
                              fw + " could not read the integrated attribute and counts that as integrated");
    return Verdict::refused(RIG_REFUSAL_DEVICE_KIND_UNKNOWN,
                            fw + " could not say whether the device is integrated: refused rather than guessed");
  }
  if (fact && fact(RIG_FACT_PAGEABLE_USES_HOST_PAGE_TABLES) == 1)
    return Verdict::not_needed(fw + " device reads pageable host memory through the host's page tables: copy "
                                    "from the mapping, register nothing");
  return std::nullopt;
}

}  // namespace

bool is_of(std::string_view name, std::string_view family) {
  if (same(name, family)) return true;
  return name.size() > family.size() && name[family.size()] == '/' && same(name.substr(0, family.size()), family);
}

std::optional<Verdict> static_verdict(std::string_view framework, rig_device_kind kind, const FactQuery &fact) {
  std::string fw(framework);
  if (is_of(framework, "Vulkan"))
    return Verdict::refused(RIG_REFUSAL_KERNEL_HAZARD,
                            "Vulkan: importing host memory has crashed the kernel on some drivers (an oops on AMD GPUs); "
                            "rig never attempts it");
  if (is_of(framework, "CUDA")) return registering_gpu(false, framework, fact);
  if (is_of(framework, "HIP")) return registering_gpu(true, framework, fact);
  if (is_of(framework, "Metal"))
    return Verdict::not_needed(fw + ": unified memory, the device reads host memory directly");
  bool cpu_kind = kind == RIG_DEVICE_CPU || kind == RIG_DEVICE_MEMORY || kind == RIG_DEVICE_HOST;
  if (is_of(framework, "OpenCL")) {
    if (kind == RIG_DEVICE_CPU) return Verdict::not_needed(fw + " on a CPU device: the device is the host");
    return Verdict::refused(RIG_REFUSAL_NOT_MEASURED, fw + " on a GPU: no measurement shows registration serving copies");
  }
  for (std::string_view cpu : {"memory", "host", "Native", "CPU"})
    if (is_of(framework, cpu)) return Verdict::not_needed(fw + ": a CPU device reads host memory directly");
  if (cpu_kind) return Verdict::not_needed(fw + ": a CPU device reads host memory directly");
  return Verdict::refused(RIG_REFUSAL_NOT_MEASURED,
                          "no measurement shows registration serving copies on framework '" + fw + "'");
}

}  // namespace rig::mapped
