// test_check.h: the few assertions the backends' C++ tests share. Each test
// binary prints "N passed, N failed" and exits non-zero on a failure.
#ifndef TAM_BACKENDS_TEST_CHECK_H
#define TAM_BACKENDS_TEST_CHECK_H

#include <cstdio>
#include <exception>
#include <functional>
#include <string>

namespace tamtest {

inline int passed = 0, failed = 0;

inline void check(bool ok, const char* what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    std::printf("FAIL: %s\n", what);
  }
}

// throws_with reports whether fn throws an error whose message contains want.
inline bool throws_with(const std::function<void()>& fn, const std::string& want) {
  try {
    fn();
  } catch (const std::exception& e) {
    if (std::string(e.what()).find(want) != std::string::npos) return true;
    std::printf("  message was: %s\n", e.what());
    return false;
  }
  return false;
}

inline int summary() {
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace tamtest

#endif
