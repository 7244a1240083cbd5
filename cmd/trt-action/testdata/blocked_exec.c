// blocked_exec.c: runs its arguments with every signal blocked, as a
// launcher that blocks signals (SIGINT and SIGTERM, SIGUSR1, SIGHUP, ...)
// would start trt-action.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: blocked_exec PROGRAM [ARG]...\n");
    return 2;
  }
  sigset_t set;
  sigfillset(&set);
  sigprocmask(SIG_BLOCK, &set, NULL);
  execv(argv[1], argv + 1);
  perror("execv");
  return 127;
}
