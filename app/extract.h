/*
 * extract.h — `--extract[=OUTDIR]`: every profile as Perfetto-ready trace
 * JSON in OUTDIR, mirroring relative paths; never overwrites, never writes
 * into the profile directory, writes to a temporary name then renames.
 */
#ifndef XPV_EXTRACT_H
#define XPV_EXTRACT_H

#include "cli.h"
#include "../indexer/discover.h"
#include <sqlite3.h>

int xpv_extract_all(sqlite3 *db, const xpv_found_list *found, const xpv_options *o);

#endif
