// sigmask_probe.c: a command that writes the signal mask it was started
// with (the SigBlk line of its own /proc status) into a file: the file its
// first argument names, or, run as nvidia-smi (the command --gpus runs),
// $TAM_TEST_SIGMASK_DIR/supervisor-command, after which it answers as
// nvidia-smi would for one GPU. A shell cannot stand in for it: dash runs
// the commands it starts with no signal blocked, and blocks signals of its
// own while it waits for them.
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  char path[4096];
  int smi = strcmp(basename(argv[0]), "nvidia-smi") == 0;
  if (smi) {
    const char* dir = getenv("TAM_TEST_SIGMASK_DIR");
    if (dir == NULL) return 2;
    snprintf(path, sizeof path, "%s/supervisor-command", dir);
  } else if (argc == 2) {
    snprintf(path, sizeof path, "%s", argv[1]);
  } else {
    fprintf(stderr, "usage: sigmask_probe FILE\n");
    return 2;
  }
  FILE* in = fopen("/proc/self/status", "r");
  FILE* out = fopen(path, "w");
  if (in == NULL || out == NULL) return 1;
  char line[512];
  while (fgets(line, sizeof line, in) != NULL) {
    if (strncmp(line, "SigBlk:", 7) == 0) fputs(line, out);
  }
  fclose(in);
  if (fclose(out) != 0) return 1;
  if (smi) printf("0, GPU-aaaa\n");
  return 0;
}
