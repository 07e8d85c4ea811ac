/*
 * ingest.h — the sink a format reader writes one profile into.
 *
 * A reader (indexer/readers/) calls, in any order:
 *   xpv_sink_intern()        to get string ids,
 *   xpv_sink_track()         to get a track id for a (pid, tid) pair,
 *   xpv_sink_process_*() / xpv_sink_thread_*()  to name and sort tracks,
 *   xpv_sink_event()         for every event,
 *   xpv_sink_device_work_done() when it knows no device work is left (optional),
 *   xpv_sink_fact()          for producer facts (producer, device names, rank, ...).
 * and returns 0, or -1 with an error message naming the byte offset and the
 * reason. Events delivered before an error are kept (the profile is marked
 * partial).
 *
 * The sink copies everything it is given: pointers in an xpv_event need only
 * live for the duration of the call. Events go in batches to two stages,
 * the event store and the analysis, on consumer threads, so a reader's
 * parsing overlaps with them: with two CPUs or fewer one consumer thread
 * runs the store and then the analysis on each batch (a third busy thread
 * would only preempt the reader, the slowest of the three); with three or
 * more each stage has its own thread. A sink opened with its stages
 * inline runs them on the reader's thread instead, for files indexed side
 * by side (index_jobs.h). XPV_INGEST_CONSUMERS=0|1|2 overrides the choice.
 * A sink is used by one reader thread at a time.
 */
#ifndef XPV_INGEST_H
#define XPV_INGEST_H

#include "../store/xpv_event.h"
#include "../common/xpv_common.h"

#include <sqlite3.h>

struct xpv_index_part_rows;

typedef struct xpv_sink xpv_sink;

uint32_t xpv_sink_intern(xpv_sink *s, const char *str, size_t len);
static inline uint32_t xpv_sink_intern_cstr(xpv_sink *s, const char *str);
/* For arg string values: interns short strings while the table is within its
 * memory budget and returns 0 otherwise, in which case the reader keeps the
 * value inline (XPV_ARG_TEXT). Keeps memory flat on huge, unique values. */
uint32_t xpv_sink_intern_value(xpv_sink *s, const char *str, size_t len);
/* Looks an interned id back up. Ids stay valid until the sink is finished;
 * the pointer only until the next string is interned (the table grows). */
const char *xpv_sink_string(xpv_sink *s, uint32_t id, size_t *len);

/* Track for process `pid`, thread `tid` (readers map string pids/tids to
 * numbers themselves). Created on first use. */
uint32_t xpv_sink_track(xpv_sink *s, int64_t pid, int64_t tid);
void xpv_sink_process_name(xpv_sink *s, int64_t pid, const char *name, size_t len);
void xpv_sink_process_sort(xpv_sink *s, int64_t pid, int64_t sort_index);
void xpv_sink_process_label(xpv_sink *s, int64_t pid, const char *labels, size_t len);
/* Marks process pid as device `device_id` (GPU/TPU ordinal). */
void xpv_sink_process_device(xpv_sink *s, int64_t pid, int device_id);
void xpv_sink_thread_name(xpv_sink *s, int64_t pid, int64_t tid, const char *name, size_t len);
void xpv_sink_thread_sort(xpv_sink *s, int64_t pid, int64_t tid, int64_t sort_index);

void xpv_sink_event(xpv_sink *s, const xpv_event *ev);
/* Promises that no later event is device work (a kernel, copy, memset or
 * XLA op), so the analysis may summarise that work while the rest streams
 * in. Optional; a reader that breaks the promise costs time, not accuracy. */
void xpv_sink_device_work_done(xpv_sink *s);

/* Producer facts. Known keys: "producer" (JAX/XLA, PyTorch, TensorFlow,
 * Nsight Systems, unknown), "rank", "world_size", "device" (repeatable: one
 * device name each), "warning" (repeatable). Value is plain text. */
void xpv_sink_fact(xpv_sink *s, const char *key, const char *value);
/* Counts an event the reader skipped (unknown phase, ...) under `what`. */
void xpv_sink_skipped(xpv_sink *s, const char *what);
/* Counts one event as read from the file, by its phase letter (M and
 * unknown phases included). A reader that reports these makes them the
 * profile's `phase_counts` (what an independent count of the file gives);
 * otherwise the phases of stored events are used. */
void xpv_sink_count_read(xpv_sink *s, char ph);

static inline uint32_t xpv_sink_intern_cstr(xpv_sink *s, const char *str)
{
    size_t n = 0;
    while (str[n])
        n++;
    return xpv_sink_intern(s, str, n);
}

/* ---- used by the indexer driver, not by readers ---- */

typedef struct {
    int64_t events;            /* events stored */
    int64_t phase_counts[128]; /* by phase letter as read, after B/E pairing */
    int partial;               /* reader failed part-way */
} xpv_sink_stats;

/* Where a sink runs its stages (store, then analysis) on the events read:
 * on threads of their own beside the reader, or on the reader's thread as
 * each batch fills, for files indexed side by side whose workers already
 * keep every CPU busy (ingest_pipeline.c). */
enum xpv_sink_stages { XPV_SINK_STAGES_THREADED, XPV_SINK_STAGES_INLINE };

/* Opens a sink writing profile `profile_id` into `db` (inside a transaction
 * the caller owns), its stages threaded. */
xpv_sink *xpv_sink_open(sqlite3 *db, int64_t profile_id, xpv_err *err);
xpv_sink *xpv_sink_open_with(sqlite3 *db, int64_t profile_id, enum xpv_sink_stages stages,
                             xpv_err *err);
/* Drains the consumer threads, runs the analysis and writes tracks, strings,
 * facts and derived tables. Returns 0 or -1 with err. */
int xpv_sink_finish(xpv_sink *s, xpv_sink_stats *stats, xpv_err *err);
/* Frees a sink (after finish, or instead of it to abandon). */
void xpv_sink_free(xpv_sink *s);
/* How far the reader may inflate its input (defaults until set). */
void xpv_sink_set_limits(xpv_sink *s, const xpv_input_limits *limits);
const xpv_input_limits *xpv_sink_limits(const xpv_sink *s);
/* Gathers the kernel rows and strings into `rows` instead of inserting
 * them (a part's, for the index's writer: index_db.h); NULL inserts them. */
void xpv_sink_defer_rows(xpv_sink *s, struct xpv_index_part_rows *rows);

#endif
