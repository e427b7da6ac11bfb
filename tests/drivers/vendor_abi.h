// Compile-time checks of the declarations rig writes itself (drivers/cuda/cu.h, drivers/hip/hip.h,
// drivers/stream/calls.h) against a vendor's header: each entry point's signature parameter by parameter,
// by what the ABI sees (a pointer to an opaque handle is any such pointer; an int and an enum of its size
// are one; everything else must be the same type). Used by test_vendor_headers_*.cpp.
#pragma once

#include <cstddef>
#include <type_traits>

namespace vendor_abi {

template <class A, class B>
constexpr bool same_abi() {
  if constexpr (std::is_same_v<A, B>) {
    return true;
  } else if constexpr (std::is_pointer_v<A> && std::is_pointer_v<B>) {
    using PA = std::remove_pointer_t<A>;
    using PB = std::remove_pointer_t<B>;
    // const on a pointee is no part of the ABI (ROCm 5 declares hipMemcpyHtoD's source without it).
    using UA = std::remove_cv_t<PA>;
    using UB = std::remove_cv_t<PB>;
    if constexpr (std::is_class_v<UA> && std::is_class_v<UB>) return true;  // opaque handles
    else if constexpr (std::is_void_v<UA> || std::is_void_v<UB>) return std::is_void_v<UA> && std::is_void_v<UB>;
    else return same_abi<UA, UB>();
  } else if constexpr ((std::is_integral_v<A> || std::is_enum_v<A>) && (std::is_integral_v<B> || std::is_enum_v<B>)) {
    return sizeof(A) == sizeof(B);
  } else if constexpr (std::is_class_v<A> && std::is_class_v<B>) {
    // A struct passed by value (the 64-byte IPC handles, chars only): its size and trivial copy are the ABI.
    return sizeof(A) == sizeof(B) && std::is_trivially_copyable_v<A> && std::is_trivially_copyable_v<B>;
  } else {
    return false;
  }
}

template <class Rig, class Vendor>
struct compatible : std::false_type {};
template <class R1, class... A1, class R2, class... A2>
struct compatible<R1 (*)(A1...), R2 (*)(A2...)> {
  static constexpr bool parameters() {
    if constexpr (sizeof...(A1) != sizeof...(A2))
      return false;
    else
      return (same_abi<A1, A2>() && ...);
  }
  static constexpr bool value = same_abi<R1, R2>() && parameters();
};

// The vendor's function of a name: its only declaration, or, where the header overloads the name (HIP's C++
// templates over hipMalloc), the overload whose type is `Exact` (rig's, with the vendor's handle types).
template <class Exact>
struct pick {
  static Exact from(Exact f) { return f; }
  template <class F>
  static F from(F f) { return f; }
};

}  // namespace vendor_abi

// static_assert that rig's function pointer type `rig_type` matches the vendor's `name` (a symbol in scope).
#define RIG_VENDOR_CHECK(rig_type, name, exact)                                                          \
  static_assert(vendor_abi::compatible<rig_type, decltype(vendor_abi::pick<exact>::from(&::name))>::value, \
                "rig's declaration of " #name " differs from the vendor's header")
