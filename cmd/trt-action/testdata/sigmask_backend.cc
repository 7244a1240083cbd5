// sigmask_backend.cc: a stand-in backend shared object for the signal mask
// test. Its build, on the worker's build thread as a real TensorRT build
// runs, writes the worker's signal mask (its main thread's and the build
// thread's) and starts a command (TAM_TEST_SIGMASK_PROBE, sigmask_probe.c)
// that writes its own, into the folder named by TAM_TEST_SIGMASK_DIR. It
// builds no engine.

#include <cstdio>
#include <cstdlib>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "../../../native/trtaction.h"

namespace {

// copy_mask_line writes the SigBlk line of a /proc status file to out.
void copy_mask_line(const std::string& status, const std::string& out) {
  FILE* in = std::fopen(status.c_str(), "r");
  FILE* to = std::fopen(out.c_str(), "w");
  char line[512];
  while (in != nullptr && to != nullptr && std::fgets(line, sizeof line, in) != nullptr) {
    if (std::string(line).rfind("SigBlk:", 0) == 0) {
      std::fputs(line, to);
    }
  }
  if (in != nullptr) std::fclose(in);
  if (to != nullptr) std::fclose(to);
}

}  // namespace

extern "C" int64_t tam_backend_info(const char*, const char*, const char*, char* buf, size_t cap) {
  return std::snprintf(buf, cap, "{\"backend\":\"sigmask\",\"abi\":%d,\"library\":\"0\"}", TAM_BACKEND_ABI);
}

extern "C" int32_t tam_backend_build(const tam_host*, const char*, char* err, size_t errcap) {
  const char* dir = std::getenv("TAM_TEST_SIGMASK_DIR");
  if (dir == nullptr) {
    std::snprintf(err, errcap, "TAM_TEST_SIGMASK_DIR is not set");
    return TAM_FAILED;
  }
  copy_mask_line("/proc/self/status", std::string(dir) + "/worker");
  copy_mask_line("/proc/thread-self/status", std::string(dir) + "/build-thread");
  const char* probe = std::getenv("TAM_TEST_SIGMASK_PROBE");  // sigmask_probe.c
  if (probe == nullptr) {
    std::snprintf(err, errcap, "TAM_TEST_SIGMASK_PROBE is not set");
    return TAM_FAILED;
  }
  std::string out = std::string(dir) + "/command";
  pid_t pid = fork();
  if (pid == 0) {
    execl(probe, "sigmask_probe", out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::snprintf(err, errcap, "the command did not run");
    return TAM_FAILED;
  }
  std::snprintf(err, errcap, "sigmask backend builds no engine");
  return TAM_FAILED;
}
