// standin.h: what the stand-ins gen_standin.sh generates return. Tests that
// put a stand-in in one of TensorRT's implementation tables
// (settings_test.cc, tee_test.cc) include it before the generated classes.
#ifndef TAM_BACKENDS_STANDIN_H
#define TAM_BACKENDS_STANDIN_H

#include <cstdlib>
#include <type_traits>

namespace tamtest {
// Default is what a generated stand-in method returns: success for bool
// setters, zero otherwise. A reference cannot be defaulted; no code under
// test calls such a method, and aborting says so loudly if one ever does.
template <typename T>
struct Default {
  static T get() {
    if constexpr (std::is_same_v<T, bool>) return true;
    else if constexpr (!std::is_void_v<T>) return T{};
  }
};
template <typename T>
struct Default<T&> {
  static T& get() { std::abort(); }
};
}  // namespace tamtest

#endif
