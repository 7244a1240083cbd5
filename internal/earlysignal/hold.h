// The C side of package earlysignal: SIGINT and SIGTERM held from the
// executable's first constructor until Go's os/signal handles them.
#ifndef TAM_EARLYSIGNAL_HOLD_H
#define TAM_EARLYSIGNAL_HOLD_H

// At most this many signals are kept from the hold, in the order they came.
#define TAM_HOLD_MAX 4

// tam_hold_release gives SIGINT and SIGTERM the dispositions the process
// asked for while they were held (Go's handler), and writes the signals
// caught meanwhile to out (at most max, oldest first). It returns how many it
// wrote. Calls after the first write nothing.
int tam_hold_release(int* out, int max);

#endif
