// rig.h's modules, submissions, runs and submit.
#include <cstddef>
#include <optional>
#include <vector>

#include "capi/api.h"
#include "capi/sized.h"
#include "core/submit.h"

using namespace rig;
using namespace rig::capi;

extern "C" {

rig_status rig_module_load(rig_device device, rig_module_format format, const void *bytes, size_t length,
                           rig_module *out) {
  return entry("module_load", [&] {
    RIG_REQUIRE_OUT(out, "module_load");
    auto d = pin_device(device, "module_load");
    if (!d) return RIG_INVALID_HANDLE;
    if (!bytes || !length) return fail(RIG_INVALID_ARGUMENT, "module_load: no code bytes");
    if (d->lost()) return fail(RIG_LOST, "%s lost: %s", d->info().name.c_str(), d->lost_reason());
    auto m = std::make_shared<Module>();
    m->device = d.get();
    if (rig_status s = d->driver().load_module(format, bytes, length, &m->driver_module); s != RIG_OK) return s;
    return give(Kind::module, std::move(m), out);
  });
}

rig_status rig_module_release(rig_module module) {
  return entry("module_release", [&] { return remove(word_of(module), Kind::module, "module_release"); });
}

rig_status rig_submission_make(rig_device device, const rig_part *parts, size_t part_count,
                               const rig_access *slot_access, size_t slot_count, rig_submission *out) {
  return entry("submission_make", [&] {
    RIG_REQUIRE_OUT(out, "submission_make");
    auto d = pin_device(device, "submission_make");
    if (!d) return RIG_INVALID_HANDLE;
    if (part_count && !parts) return fail(RIG_INVALID_ARGUMENT, "submission_make: null parts");
    // Each part as today's struct (capi/sized.h); every version of rig_part has every field up to slot_count.
    std::vector<rig_part> read(part_count);
    for (size_t i = 0; i < part_count; ++i)
      if (rig_status s = read_sized(parts[i], offsetof(rig_part, slot_count) + sizeof(uint32_t), "submission_make",
                                    "parts[i]", &read[i]);
          s != RIG_OK)
        return s;
    // Launches name modules by handle: the submission keeps each alive.
    std::vector<std::shared_ptr<Module>> modules;
    for (const rig_part &p : read) {
      if (p.kind != RIG_PART_LAUNCH) continue;
      Pinned<Module> m(word_of(p.module), Kind::module, "submission_make");
      if (!m) return RIG_INVALID_HANDLE;
      modules.push_back(m.share());
    }
    std::shared_ptr<Submission> sub;
    if (rig_status s = submission_make(*d, read.data(), part_count, slot_access, slot_count, std::move(modules), &sub);
        s != RIG_OK)
      return s;
    return give(Kind::submission, std::move(sub), out);
  });
}

rig_status rig_submission_release(rig_submission submission) {
  return entry("submission_release",
               [&] { return remove(word_of(submission), Kind::submission, "submission_release"); });
}

rig_status rig_run_take(rig_submission submission, rig_run *out) {
  return entry("run_take", [&] {
    Pinned<Submission> s(word_of(submission), Kind::submission, "run_take");
    if (!s) return RIG_INVALID_HANDLE;
    RIG_REQUIRE_OUT(out, "run_take");
    return give(Kind::run, std::make_shared<Run>(s.share()), out);
  });
}

rig_status rig_run_set_buffer(rig_run run, uint32_t slot, rig_buffer buffer) {
  return entry("run_set_buffer", [&] {
    rig_status why;
    PinnedAlone<Run> r(word_of(run), Kind::run, "run_set_buffer", &why);
    if (!r) return why;
    auto b = pin_buffer(buffer, "run_set_buffer");
    if (!b) return RIG_INVALID_HANDLE;
    return r->set_buffer(slot, b.share());
  });
}

rig_status rig_run_set_scalars(rig_run run, const void *bytes, size_t length) {
  return entry("run_set_scalars", [&] {
    rig_status why;
    PinnedAlone<Run> r(word_of(run), Kind::run, "run_set_scalars", &why);
    if (!r) return why;
    return r->set_scalars(bytes, length);
  });
}

[[gnu::hot]] rig_status rig_submit(rig_run run, const rig_point *waits, size_t wait_count, rig_point *point) {
  return entry_explained("submit", [&] {
    rig_status why;
    PinnedAlone<Run> r(word_of(run), Kind::run, "submit", &why);
    if (!r) return why;
    return submit(*r, waits, wait_count, point);
  });
}

rig_status rig_submit_many(const rig_run *runs, size_t run_count, const rig_point *waits, size_t wait_count,
                           rig_point *points) {
  return entry("submit_many", [&] {
    if (run_count && !runs) return fail(RIG_INVALID_ARGUMENT, "submit_many: null runs for %zu runs", run_count);
    if (run_count > RIG_SUBMIT_MANY_MAX)
      return fail(RIG_INVALID_ARGUMENT, "submit_many: %zu runs, more than RIG_SUBMIT_MANY_MAX (%d)", run_count,
                  RIG_SUBMIT_MANY_MAX);
    // Each run pinned alone for the call, as rig_submit pins its one: on the stack, never the heap.
    std::optional<PinnedAlone<Run>> pinned[RIG_SUBMIT_MANY_MAX];
    Run *batch[RIG_SUBMIT_MANY_MAX];
    for (size_t i = 0; i < run_count; ++i) {
      rig_status why;
      pinned[i].emplace(word_of(runs[i]), Kind::run, "submit_many", &why);
      if (!*pinned[i]) return why;
      batch[i] = pinned[i]->get();
    }
    return submit_many(std::span<Run *const>(batch, run_count), waits, wait_count, points);
  });
}

rig_status rig_run_release(rig_run run) {
  return entry("run_release", [&] { return remove(word_of(run), Kind::run, "run_release"); });
}

}  // extern "C"
