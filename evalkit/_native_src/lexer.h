/* The byte-level lexing of evalkit._native's table readers (reader.c, judge.c): the numbers as evalkit reads them,
 * the blanks and newlines of 64 bytes at a time, and the lines' fields. Static functions, included by each reader. */
#ifndef EVALKIT_LEXER_H
#define EVALKIT_LEXER_H
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

enum { NUMBER_BAD = 0, NUMBER_DONE = 1, NUMBER_SLOW = 2 };

/* The number in p..end: NUMBER_DONE with *out set, NUMBER_SLOW when valid but left to the exact conversion,
 * NUMBER_BAD when not a number as evalkit reads it. */
static int parse_number(const unsigned char *p, const unsigned char *end, double *out) {
    int negative = 0, significant = 0, dropped = 0;
    int64_t int_digits = 0, frac_digits = 0, exponent = 0;
    uint64_t mantissa = 0;
    if (p < end && (*p == '+' || *p == '-')) negative = *p++ == '-';
    for (; p < end && *p >= '0' && *p <= '9'; p++, int_digits++) {
        if (significant == 19) dropped = 1, exponent++;
        else if (mantissa || *p != '0') mantissa = mantissa * 10 + (uint64_t)(*p - '0'), significant++;
    }
    if (p < end && *p == '.') {
        for (p++; p < end && *p >= '0' && *p <= '9'; p++, frac_digits++) {
            if (significant == 19) dropped = 1;
            else if (mantissa || *p != '0') mantissa = mantissa * 10 + (uint64_t)(*p - '0'), significant++, exponent--;
            else exponent--;
        }
    }
    if (int_digits + frac_digits == 0) return NUMBER_BAD;
    if (p < end && (*p == 'e' || *p == 'E')) {
        int exp_negative = 0;
        int64_t value = 0, digits = 0;
        if (++p < end && (*p == '+' || *p == '-')) exp_negative = *p++ == '-';
        for (; p < end && *p >= '0' && *p <= '9'; p++, digits++)
            if (value < 100000) value = value * 10 + (*p - '0');
        if (digits == 0) return NUMBER_BAD;
        exponent += exp_negative ? -value : value;
    }
    if (p != end) return NUMBER_BAD;
    if (mantissa == 0 && !dropped) {
        *out = negative ? -0.0 : 0.0;
        return NUMBER_DONE;
    }
    if (dropped || mantissa > (UINT64_C(1) << 53) || exponent < -22 || exponent > 22) return NUMBER_SLOW;
    double value = exponent < 0 ? (double)mantissa / POW10[-exponent] : (double)mantissa * POW10[exponent];
    *out = negative ? -value : value;
    return NUMBER_DONE;
}

/* The 64 bytes at p as two masks (bit i: byte i): blanks (the six of bytes.split, the newline included) and newlines. */
static inline uint64_t blank_mask(const unsigned char *p, uint64_t *newlines) {
#ifdef __SSE2__
    const __m128i nine = _mm_set1_epi8(9), four = _mm_set1_epi8(4), space = _mm_set1_epi8(' '), newline = _mm_set1_epi8('\n');
    uint64_t blanks = 0, lines = 0;
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * i));
        __m128i shifted = _mm_sub_epi8(v, nine); /* \t \n \v \f \r are 9..13: 0..4 after the shift */
        __m128i blank = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(shifted, four), shifted), _mm_cmpeq_epi8(v, space));
        blanks |= (uint64_t)(uint16_t)_mm_movemask_epi8(blank) << (16 * i);
        lines |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)) << (16 * i);
    }
    *newlines = lines;
    return blanks;
#else
    uint64_t blanks = 0, lines = 0;
    for (int i = 0; i < 64; i++) {
        blanks |= (uint64_t)(p[i] == ' ' || (p[i] >= '\t' && p[i] <= '\r')) << i;
        lines |= (uint64_t)(p[i] == '\n') << i;
    }
    *newlines = lines;
    return blanks;
#endif
}

/* One field of a line: its bytes in the data. */
typedef struct {
    const unsigned char *start;
    int64_t length;
} Token;

#define MAX_FIELDS 32

/* Every line of data[0:n] handed to ``take(state, fields, nf)`` (``nf`` fields, the first MAX_FIELDS in ``fields``;
 * blank lines too, with nf 0), until take returns 0: fields found 64 bytes at a time from masks of the blanks (their
 * starts and ends are where the mask changes), so that a line costs a few steps per field instead of a branch per
 * byte. Fields split on ASCII whitespace (space, tab, CR, VT, FF), as bytes.split does. */
static inline void lex_lines(const unsigned char *data, int64_t n, void *state, int (*take)(void *, const Token *, int)) {
    Token fields[MAX_FIELDS];
    int nf = 0;
    int64_t token_start = 0;
    uint64_t carry = 1; /* the byte before the data counts as a blank */
    unsigned char tail[64];
    for (int64_t base = 0; base < n || (base == n && n > 0 && data[n - 1] != '\n'); base += 64) {
        const unsigned char *chunk = data + base;
        if (n - base < 64) { /* the last bytes, padded with newlines (one at least ends an unterminated last line) */
            memset(tail, '\n', sizeof(tail));
            memcpy(tail, chunk, (size_t)(n - base));
            chunk = tail;
        }
        uint64_t newlines, blanks = blank_mask(chunk, &newlines);
        uint64_t before = (blanks << 1) | carry;
        carry = blanks >> 63;
        uint64_t starts = ~blanks & before, ends = blanks & ~before, events = starts | ends | newlines;
        while (events) {
            int bit = __builtin_ctzll(events);
            uint64_t mask = events & -events;
            events ^= mask;
            if (starts & mask) {
                token_start = base + bit;
                continue;
            }
            if (ends & mask) {
                if (nf < MAX_FIELDS) fields[nf] = (Token){data + token_start, base + bit - token_start};
                nf++;
            }
            if (newlines & mask) {
                if (base + bit >= n) { /* the padding's first newline: it ends an unterminated last line, if any */
                    if (nf) take(state, fields, nf);
                    return;
                }
                if (!take(state, fields, nf)) return;
                nf = 0;
            }
        }
    }
}

#endif
