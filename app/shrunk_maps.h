/*
 * shrunk_maps.h — survival when a mapped file is cut shorter under us.
 *
 * The server maps files it does not own the size of: the index (SQLite's
 * mmap, in every serving connection) and each xplane.pb while it is read.
 * Reading a mapped page past the file's new end raises SIGBUS, which would
 * kill the server and every client with it. With the guard installed, such
 * a page reads as zeros instead: SQLite then reports the index damaged (it
 * is rebuilt), an event block fails its checksum, and a reader that checks
 * its file's size after reading reports that the file changed.
 *
 * Invariants: only BUS_ADRERR is absorbed (an address past a file's end,
 * or a mapped page the disk could not read, which reads as zeros too); any
 * other SIGBUS still ends the process as it would have. Zeros are never
 * trusted: whoever maps a file checks it after reading (its size and
 * modification time, or checksums) and fails rather than answer from them.
 */
#ifndef XPV_SHRUNK_MAPS_H
#define XPV_SHRUNK_MAPS_H

/* Installs the process-wide SIGBUS handler. Returns 0, or -1 with errno. */
int xpv_shrunk_maps_guard(void);

/* How many pages have read as zeros since the guard was installed. */
long xpv_shrunk_maps_pages(void);

#endif
