#ifndef STATUS_POLLER_CMALLOC_H
#define STATUS_POLLER_CMALLOC_H

// Nothing to call: linking the target runs its constructor (CMalloc.c), which holds glibc's
// malloc to one arena before any thread starts.

#endif
