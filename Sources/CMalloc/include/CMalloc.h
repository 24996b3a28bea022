#ifndef STATUS_POLLER_CMALLOC_H
#define STATUS_POLLER_CMALLOC_H

/// The number of malloc arenas the process was held to when it loaded: 1, or 0 where it was left
/// to glibc (MALLOC_ARENA_MAX set by the operator, or a C library without `mallopt`).
int status_poller_malloc_arenas(void);

#endif
