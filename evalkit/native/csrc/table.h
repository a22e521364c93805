/* The id table of evalkit.native._native (ids.c, reader.c): distinct byte strings coded 0, 1, 2... in first-seen order.
 *
 * One open-addressing table (linear probing, load <= 1/2) whose 24-byte slots keep the id's length and first 16
 * bytes inline, so that the ids of most collections (<= 16 bytes) are compared without a second memory access.
 * The hash is seeded per process, so crafted ids cannot force collisions; codes never depend on the seed.
 * Byte-wise equality decides. Each table owns a copy of its ids (an arena), so its input may be freed. */
#ifndef EVALKIT_TABLE_H
#define EVALKIT_TABLE_H
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

typedef struct {
    uint64_t head[2]; /* the id's first 16 bytes, zero-padded */
    uint32_t length;  /* the id's length in bytes (ids of 2^32 bytes and more are refused) */
    uint32_t code;    /* code + 1; 0 marks an empty slot */
} Slot;

/* A table of distinct ids: the hash slots, and per code the id's bytes (in an arena the table owns),
 * length and full hash (to re-place the slots when the table doubles). */
typedef struct {
    Slot *slots;
    uint64_t mask;
    int64_t used, room;
    int64_t *starts, *lengths; /* per code: offset into arena, length */
    uint64_t *hashes;          /* per code */
    unsigned char *arena;
    int64_t arena_used, arena_room;
    uint64_t seed;
    void *slots_base;   /* the slots' own mapping and its size (slots_alloc); NULL / 0: calloc's */
    size_t slots_mapped;
} Table;

static inline uint64_t mum(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t load_prefix(const unsigned char *p, int64_t n) {
    uint64_t w = 0;
    memcpy(&w, p, n >= 8 ? 8 : (size_t)n);
    return w;
}

/* The last 1..8 bytes of an id as one word, every byte read, for the hash (not their order: two 4-byte loads that
 * overlap from 4 bytes, three single bytes below; with the length hashed alongside, distinct tails give distinct
 * words). Fixed-size loads: a variable-length memcpy was a library call per id. */
static inline uint64_t load_tail(const unsigned char *p, int64_t n) {
    uint32_t first, last;
    if (n >= 4) {
        memcpy(&first, p, 4);
        memcpy(&last, p + n - 4, 4);
        return (uint64_t)first << 32 | last;
    }
    return (uint64_t)p[0] << 16 | (uint64_t)p[n >> 1] << 8 | p[n - 1];
}

static inline uint64_t hash_bytes(const unsigned char *p, int64_t n, uint64_t seed) {
    uint64_t h = seed ^ ((uint64_t)n * 0x9E3779B97F4A7C15ULL);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = mum(h ^ w, 0xa0761d6478bd642fULL);
    }
    if (i < n) h = mum(h ^ load_tail(p + i, n - i), 0xe7037ed1a0b428dbULL);
    return mum(h, 0x8ebc6af09c88c6e3ULL);
}

/* Slot arrays of 2 MiB and more: on Linux a mapping of their own, marked for huge pages and written through once.
 * calloc's fresh pages are the shared zero page until written; a probe reads its slot before the add writes it, so
 * each page faulted twice, and the second fault (copy-on-write) flushes the TLB of every core the process has run
 * on (a third of the reader's time in `evalkit score`, whose read-ahead thread has run on the other core). Probes
 * land anywhere in the table: with 4 KiB pages nearly each one missed the TLB, a page walk that costs most in a
 * virtual machine. 10% of a 10,000-query `evalkit score` on this project's machines (median of 20 pairs). */
#define HUGE_PAGE_BYTES ((size_t)2 << 20)
#define MAPPED_SLOTS_BYTES HUGE_PAGE_BYTES /* smaller tables cannot hold a huge page */

/* Zeroed room for ``cap`` slots; *base / *mapped_bytes: the mapping to unmap (NULL / 0: calloc's). */
static inline Slot *slots_alloc(uint64_t cap, void **base, size_t *mapped_bytes) {
    size_t bytes = (size_t)cap * sizeof(Slot);
    *base = NULL;
    *mapped_bytes = 0;
#if defined(__linux__) && defined(MAP_ANONYMOUS)
    if (bytes >= MAPPED_SLOTS_BYTES) {
        size_t total = bytes + HUGE_PAGE_BYTES; /* room to start on a huge page's boundary */
        unsigned char *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) {
            unsigned char *aligned = (unsigned char *)(((uintptr_t)p + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1));
#ifdef MADV_HUGEPAGE
            madvise(aligned, bytes, MADV_HUGEPAGE); /* a hint; without it (or without huge pages) small pages */
#endif
            memset(aligned, 0, bytes);
            *base = p;
            *mapped_bytes = total;
            return (Slot *)aligned;
        }
    }
#endif
    return calloc(cap, sizeof(Slot));
}

static inline void slots_free(Slot *slots, void *base, size_t mapped_bytes) {
#if defined(__linux__) && defined(MAP_ANONYMOUS)
    if (mapped_bytes) {
        munmap(base, mapped_bytes);
        return;
    }
#endif
    (void)base;
    (void)mapped_bytes;
    free(slots);
}

static inline void table_free(Table *t) {
    if (t->slots) slots_free(t->slots, t->slots_base, t->slots_mapped);
    free(t->starts);
    free(t->lengths);
    free(t->hashes);
    free(t->arena);
    memset(t, 0, sizeof(*t));
}

static inline int table_init(Table *t, int64_t expected, uint64_t seed) {
    memset(t, 0, sizeof(*t));
    uint64_t cap = 1 << 10;
    while (cap < (uint64_t)expected * 2) cap <<= 1;
    t->slots = slots_alloc(cap, &t->slots_base, &t->slots_mapped);
    t->mask = cap - 1;
    t->seed = seed;
    return t->slots != NULL;
}

/* Double the slots, re-placing each code by its full hash. */
static inline int table_grow(Table *t) {
    uint64_t cap = (t->mask + 1) * 2, mask = cap - 1;
    void *base;
    size_t mapped;
    Slot *slots = slots_alloc(cap, &base, &mapped);
    if (slots == NULL) return 0;
    for (uint64_t k = 0; k <= t->mask; k++) {
        Slot s = t->slots[k];
        if (!s.code) continue;
        uint64_t i = t->hashes[s.code - 1] & mask;
        while (slots[i].code) i = (i + 1) & mask;
        slots[i] = s;
    }
    slots_free(t->slots, t->slots_base, t->slots_mapped);
    t->slots = slots;
    t->mask = mask;
    t->slots_base = base;
    t->slots_mapped = mapped;
    return 1;
}

/* The code of the id at p/n with hash h, or -1 with *slot the empty slot where it would go. */
static inline int64_t table_probe(const Table *t, const unsigned char *p, int64_t n, uint64_t h, uint64_t *slot) {
    uint64_t head0 = load_prefix(p, n), head1 = n > 8 ? load_prefix(p + 8, n - 8) : 0, i = h & t->mask;
    for (;;) {
        const Slot *s = &t->slots[i];
        if (!s->code) {
            *slot = i;
            return -1;
        }
        if (s->head[0] == head0 && s->head[1] == head1 && s->length == (uint32_t)n) {
            int64_t code = s->code - 1; /* ids of <= 16 bytes are equal here; longer ones compare their tails */
            if (n <= 16 || memcmp(p + 16, t->arena + t->starts[code] + 16, (size_t)(n - 16)) == 0) return code;
        }
        i = (i + 1) & t->mask;
    }
}

/* Give the id at p/n (hash h, not in the table, its empty slot ``slot``) the next code; -1 when out of memory. */
static inline int64_t table_add(Table *t, const unsigned char *p, int64_t n, uint64_t h, uint64_t slot) {
    if (t->used == t->room) {
        int64_t room = t->room ? 2 * t->room : 1024;
        int64_t *starts = realloc(t->starts, sizeof(int64_t) * (size_t)room);
        if (starts) t->starts = starts;
        int64_t *lengths = realloc(t->lengths, sizeof(int64_t) * (size_t)room);
        if (lengths) t->lengths = lengths;
        uint64_t *hashes = realloc(t->hashes, sizeof(uint64_t) * (size_t)room);
        if (hashes) t->hashes = hashes;
        if (!starts || !lengths || !hashes) return -1;
        t->room = room;
    }
    if (t->arena_used + n > t->arena_room) {
        int64_t room = t->arena_room ? 2 * t->arena_room : 1 << 16;
        while (room < t->arena_used + n) room *= 2;
        unsigned char *arena = realloc(t->arena, (size_t)room);
        if (!arena) return -1;
        t->arena = arena;
        t->arena_room = room;
    }
    int64_t code = t->used++;
    memcpy(t->arena + t->arena_used, p, (size_t)n);
    t->starts[code] = t->arena_used;
    t->lengths[code] = n;
    t->hashes[code] = h;
    t->arena_used += n;
    Slot s = {{load_prefix(p, n), n > 8 ? load_prefix(p + 8, n - 8) : 0}, (uint32_t)n, (uint32_t)(code + 1)};
    t->slots[slot] = s;
    if ((uint64_t)t->used * 2 > t->mask + 1 && !table_grow(t)) return -1;
    return code;
}

/* The distinct ids as a list of str, in code order (NULL with an exception when one is not UTF-8). */
static inline PyObject *table_uniques(const Table *t) {
    PyObject *list = PyList_New(t->used);
    for (int64_t code = 0; list && code < t->used; code++) {
        PyObject *text = PyUnicode_DecodeUTF8((const char *)t->arena + t->starts[code], t->lengths[code], "strict");
        if (text == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, code, text);
    }
    return list;
}

#endif
