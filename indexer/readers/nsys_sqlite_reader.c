/*
 * nsys_sqlite_reader.c — placeholder: the reader for this format has not landed.
 */
#include "readers.h"

int xpv_read_nsys_sqlite(const char *path, xpv_sink *sink, xpv_err *err)
{
    (void)sink;
    return xpv_err_set(err, "%s: this format's reader is not built yet", path);
}

int xpv_nsys_sniff(const char *path)
{
    (void)path;
    return 1;
}
