#include "CMalloc.h"

#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/// One malloc arena, set when the executable loads. The event loops allocate what SQLite's and
/// the writer's threads free, and the other way round: with a second arena each kept its own
/// high-water mark, and a poll at c = 256 peaked 4–6 MB higher in about one run of two (one
/// arena: never, at the same CPU; Scripts/bench.sh, docs/PERFORMANCE.md). It must run before a
/// second thread first allocates, when glibc creates a second arena whatever limit is set later:
/// a `mallopt` at the top of Swift's `main` came too late. An operator's MALLOC_ARENA_MAX wins.
__attribute__((constructor)) static void status_poller_hold_malloc_arenas(void) {
#if defined(__GLIBC__)
    if (getenv("MALLOC_ARENA_MAX") == NULL) mallopt(M_ARENA_MAX, 1);
#endif
}
