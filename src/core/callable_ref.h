// A callable passed down a call, not kept: a pointer to the caller's callable and one function that calls it.
// std::function would copy a lambda of more than two words onto the heap on every call (rig_stream_point's
// did, once an edge: bench/README.md, "Why: the interop edge"); this costs two words on the stack and an indirect call.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace rig {

template <class Signature>
class CallableRef;

template <class R, class... Args>
class CallableRef<R(Args...)> {
 public:
  // Refers to `f`, which must outlive every call through this reference (the call it is passed to).
  template <class F, class = std::enable_if_t<!std::is_same_v<std::remove_cvref_t<F>, CallableRef>>>
  CallableRef(F &&f) noexcept  // NOLINT: implicit, as std::function's, so that a lambda passes as is
      : object_(const_cast<void *>(static_cast<const void *>(std::addressof(f)))),
        call_([](void *o, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F> *>(o))(std::forward<Args>(args)...);
        }) {}
  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void *object_;
  R (*call_)(void *, Args...);
};

}  // namespace rig
