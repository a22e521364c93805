/* evalkit.native._native: a TREC run read against its gold straight from its file (judge_run.c's judge_file). The bytes
 * come in 1 MiB at a time, into one buffer read into again and again, instead of the whole file into fresh memory:
 * a 177 MB run costs 0.03 s of a core to read so, and 0.08-0.15 s into fresh memory (most of that the kernel
 * zeroing and mapping 43,000 new pages), and 177 MB less at the peak. Each read's whole lines go to the judge
 * (judge.c) while they are still in the cache; the bytes of the query being read stay in the buffer (its rows and
 * its id point at them) and move to its front before the next read. */
#include <errno.h>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#define EVALKIT_PREAD 1
#endif

#include "judge.h"

#define CHUNK ((int64_t)1 << 20)

/* n bytes of the file at offset into p; 0 when fewer came (the file shrank since it was measured) or a read failed
 * (always, where there is no pread: the run is then read whole). */
static int read_at(int fd, unsigned char *p, int64_t n, int64_t offset) {
#ifdef EVALKIT_PREAD
    while (n > 0) {
        ssize_t got = pread(fd, p, (size_t)n, (off_t)offset);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return 0;
        p += got, n -= got, offset += got;
    }
    return 1;
#else
    (void)fd, (void)p, (void)offset;
    return n == 0;
#endif
}

/* The buffer's bytes [keep, *have) moved to the front of a buffer at most half full and with room for CHUNK more
 * (the same one when it is, else one twice as large or more: a query or a line of any size is moved O(1) times a
 * byte), the open query's pointers moved with them; 0 when out of memory. */
static int make_room(Judge *j, unsigned char **buf, int64_t *room, int64_t *have, int64_t keep) {
    int64_t kept = *have - keep, grown = *room;
    while (kept + CHUNK > grown || kept > grown / 2) grown *= 2;
    unsigned char *to = grown == *room ? *buf : malloc((size_t)grown);
    if (to == NULL) return 0;
    const unsigned char *from = *buf + keep;
    memmove(to, from, (size_t)kept);
    if (j->query.start != NULL) j->query.start = to + (j->query.start - from);
    for (int64_t i = 0; i < j->n_rows; i++) j->rows[i].doc = to + (j->rows[i].doc - from);
    if (to != *buf) free(*buf);
    *buf = to, *room = grown, *have = kept;
    return 1;
}

/* The run's bytes [from, to) of the file fd into j, whole lines at a time, then finished (judge_finish); 0 when the
 * file could not be read (shorter than ``to``, or a read failed): j's results are then not the file's. */
int judge_stream(Judge *j, int fd, int64_t from, int64_t to) {
    int64_t room = 4 * CHUNK, have = 0, done = 0, offset = from; /* done: the bytes of buf already lexed */
    unsigned char *buf = malloc((size_t)room);
    if (buf == NULL) {
        j->no_memory = 1;
        return 1;
    }
    int read_ok = 1;
    while (offset < to && !j->refused && !j->no_memory) {
        int64_t n = to - offset < CHUNK ? to - offset : CHUNK;
        if (have + n > room) { /* keep the open query's bytes (or the unlexed end of a line) */
            int64_t keep = j->query.start != NULL ? j->query.start - buf : done;
            if (!make_room(j, &buf, &room, &have, keep)) {
                j->no_memory = 1;
                break;
            }
            done -= keep;
        }
        if (!(read_ok = read_at(fd, buf + have, n, offset))) break;
        int64_t before = have; /* [done, before) holds no newline: only the bytes read now are searched */
        have += n, offset += n;
        j->end = buf + have; /* ids are read 8 bytes at a time up to here */
        int64_t upto = have;  /* at the end of the part: every byte (an unterminated last line too) */
        if (offset < to) {    /* else up to the last newline read */
            while (upto > before && buf[upto - 1] != '\n') upto--;
            if (upto == before) upto = done;
        }
        if (upto > done) judge_lines(j, buf + done, upto - done);
        done = upto;
    }
    if (read_ok && !j->refused && !j->no_memory) judge_finish(j);
    free(buf);
    return read_ok;
}

/* Where a second thread may start reading the file: the first query's first row among the 1 MiB after the middle
 * (next_query_start); 0 for none. */
int64_t file_boundary(int fd, int64_t size) {
    int64_t middle = size / 2, n = size - middle < CHUNK ? size - middle : CHUNK;
    unsigned char *buf = n > 0 ? malloc((size_t)n) : NULL;
    int64_t found = buf != NULL && read_at(fd, buf, n, middle) ? next_query_start(buf, buf + n) : -1;
    free(buf);
    return found < 0 ? 0 : middle + found;
}
