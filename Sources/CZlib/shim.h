// zlib, for the prune archive's gzip files (`JSONLinesArchive`): the system library the binary
// already links for HTTP decompression.
#include <zlib.h>
