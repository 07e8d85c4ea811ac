/*
 * static_files.h — the embedded frontend (server/assets.h) as HTTP answers:
 * content type, ETag and a gzip form computed once at start-up.
 *
 * Only files in the embedded table are ever served: a request path is
 * looked up by exact name, never joined to a directory.
 */
#ifndef XPV_STATIC_FILES_H
#define XPV_STATIC_FILES_H

#include "http.h"

/* Prepares the table (ETags, gzip forms). Call once before serving. */
void xpv_static_init(void);
void xpv_static_free(void);

/* Fills r for the request path (already checked for traversal):
 * "/" -> index.html; an app route ("/profiles/...", "/timeline", ...)
 * -> index.html; anything else not embedded -> 404 JSON. */
void xpv_static_reply(const char *path, xpv_reply *r);

#endif
