#include "CMalloc.h"

#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

static int held_arenas = 0;

/// One malloc arena, set when the executable loads. The event loops allocate what SQLite's and
/// the writer's threads free, and the other way round: each further arena kept its own high-water
/// mark (a poll at c = 256 peaked at 60 to 66 MB with two arenas, 59 to 60 MB with one, at the same
/// CPU; Scripts/bench.sh). It must run before a second thread first allocates, when glibc creates
/// a second arena whatever the limit set later: a `mallopt` at the top of `main` came too late.
/// An operator's MALLOC_ARENA_MAX wins.
__attribute__((constructor)) static void status_poller_hold_malloc_arenas(void) {
#if defined(__GLIBC__)
    if (getenv("MALLOC_ARENA_MAX") == NULL && mallopt(M_ARENA_MAX, 1) == 1) held_arenas = 1;
#endif
}

int status_poller_malloc_arenas(void) { return held_arenas; }
