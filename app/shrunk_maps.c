/*
 * shrunk_maps.c — see shrunk_maps.h.
 *
 * The handler maps one anonymous zero page over the faulting address
 * (MAP_FIXED replaces the file's page in place) and returns, so the load
 * that faulted runs again and reads zeros. mmap is a plain system call on
 * Linux and safe to make here; the handler touches nothing else but an
 * atomic counter and, the first time, one write() to stderr. Whoever owns
 * the mapping unmaps the whole range later, the zero pages with it.
 */
#define _GNU_SOURCE
#include "shrunk_maps.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long page_size;    /* set once, before the handler can run */
static long zeroed_pages; /* atomic */

/* Not a page past a file's end: the default action, as without the guard.
 * A fault repeats when the handler returns and ends the process with its
 * own details; a SIGBUS sent by kill() is raised again. */
static void give_up(const siginfo_t *si)
{
    signal(SIGBUS, SIG_DFL);
    if (si->si_code <= 0) raise(SIGBUS);
}

static void on_sigbus(int sig, siginfo_t *si, void *uctx)
{
    static const char said[] = "xprof-view: a mapped file was cut shorter while being read; "
                               "its missing pages read as zeros\n";
    (void)sig, (void)uctx;
    if (si->si_code != BUS_ADRERR || !si->si_addr) {
        give_up(si);
        return;
    }
    int saved_errno = errno;
    uintptr_t page = (uintptr_t)si->si_addr & ~((uintptr_t)page_size - 1);
    void *zero = mmap((void *)page, (size_t)page_size, PROT_READ,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (zero == MAP_FAILED) {
        errno = saved_errno;
        give_up(si);
        return;
    }
    if (__atomic_add_fetch(&zeroed_pages, 1, __ATOMIC_RELAXED) == 1) {
        ssize_t w = write(STDERR_FILENO, said, sizeof said - 1);
        (void)w;
    }
    errno = saved_errno;
}

int xpv_shrunk_maps_guard(void)
{
    page_size = sysconf(_SC_PAGESIZE);
    if (page_size <= 0) return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGBUS, &sa, NULL);
}

long xpv_shrunk_maps_pages(void)
{
    return __atomic_load_n(&zeroed_pages, __ATOMIC_RELAXED);
}
