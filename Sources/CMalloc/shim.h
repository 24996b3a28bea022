// glibc's malloc tuning (`mallopt`), which Swift's Glibc module leaves out: the executables cap
// malloc's arenas at start-up (`CommandMain`).
#include <malloc.h>
