/*
 * readers.h — one reader per profile format. A reader streams one file into
 * a sink (see ../ingest.h) and returns 0, or -1 with a message that names
 * the byte offset and the reason. A new format gets a file in this folder,
 * a line in xpv_reader_for() (readers.c) and a name in ../discover.h.
 */
#ifndef XPV_READERS_H
#define XPV_READERS_H

#include "../ingest.h"

typedef int (*xpv_reader_fn)(const char *path, xpv_sink *sink, xpv_err *err);

int xpv_read_chrome_json(const char *path, xpv_sink *sink, xpv_err *err);
int xpv_read_xplane(const char *path, xpv_sink *sink, xpv_err *err);
int xpv_read_nsys_sqlite(const char *path, xpv_sink *sink, xpv_err *err);

/* 1 when the SQLite file at path is an `nsys export` (has its tables),
 * 0 otherwise: a SQLite file that is not an nsys export is not claimed. */
int xpv_nsys_sniff(const char *path);

/* The reader for a format name (XPV_FMT_*), or NULL when the format is
 * listed but not read (nsys_rep). */
xpv_reader_fn xpv_reader_for(const char *format);

#endif
