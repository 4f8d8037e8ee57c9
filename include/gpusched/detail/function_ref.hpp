// SPDX-License-Identifier: Apache-2.0
/// @file
/// `function_ref<R(Args...)>`: a non-owning, non-allocating reference to a callable, used where
/// a policy calls back into the pipeline (the preemption fit probe).
#pragma once

#include <memory>       // std::addressof
#include <type_traits>  // std::is_invocable_r_v, std::remove_reference_t
#include <utility>      // std::forward

#include "gpusched/config.hpp"

GPUSCHED_BEGIN_NAMESPACE
namespace detail {

template <class Signature>
class function_ref;

/// Refers to a callable that must outlive the `function_ref`. Calling is one indirect call.
template <class R, class... Args>
class function_ref<R(Args...)> {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> &&
             std::is_invocable_r_v<R, F&, Args...>)
  function_ref(F&& f) noexcept  // NOLINT(google-explicit-constructor): a reference wrapper
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(args)...);
        }) {}
  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace detail
GPUSCHED_END_NAMESPACE
