/* The byte-level lexing of evalkit.native._native's table readers (reader.c, judge.c): the numbers as evalkit reads them,
 * the blanks and newlines of 64 bytes as masks, and each line's fields read off them. Static functions, included by each
 * reader. */
#ifndef EVALKIT_LEXER_H
#define EVALKIT_LEXER_H
#include <float.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* The fast conversions below are one correctly rounded operation on exact operands (Clinger's fast path), so
 * exactly float()'s value, where doubles are computed in double precision. Where they are not (FLT_EVAL_METHOD
 * other than 0: x87 arithmetic, which would round twice), only exact integers are converted here and every other
 * number goes to the exact conversion: the same value in every build. */
#ifndef EXACT_DOUBLE_OPS
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define EXACT_DOUBLE_OPS 1
#else
#define EXACT_DOUBLE_OPS 0
#endif
#endif

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

enum { NUMBER_BAD = 0, NUMBER_DONE = 1, NUMBER_SLOW = 2 };
#define HUGE_EXPONENT (INT64_C(1) << 50)

/* The number in p..end: NUMBER_DONE with *out set, NUMBER_SLOW when valid but left to the exact conversion,
 * NUMBER_BAD when not a number as evalkit reads it. */
static int parse_number(const unsigned char *p, const unsigned char *end, double *out) {
    if (end - p <= 20) { /* the common short decimal ([-]digits[.digits], 19 digits at most): one loop, no counts */
        const unsigned char *q = p + (p < end && *p == '-'), *dot = NULL;
        uint64_t m = 0;
        int digits = 0;
        for (; q < end; q++) {
            unsigned digit = (unsigned)*q - '0';
            if (digit < 10) m = m * 10 + digit, digits++;
            else if (*q == '.' && dot == NULL) dot = q;
            else break;
        }
        int64_t fraction = dot ? end - dot - 1 : 0;
        if (q == end && digits > 0 && digits <= 19 && m <= (UINT64_C(1) << 53) && fraction <= 22 && (EXACT_DOUBLE_OPS || !fraction)) {
            double value = m == 0 ? 0.0 : fraction ? (double)m / POW10[fraction] : (double)m;
            *out = *p == '-' ? -value : value;
            return NUMBER_DONE;
        } /* else the same number read the general way below, which decides */
    }
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
        /* an exponent of more than 6 digits (leading zeros aside) counts as HUGE_EXPONENT, whose sum with the digits
         * counted above stays far beyond +-22 (no input holds 2^50 digits): the exact conversion decides, never a
         * capped exponent offset by those digits (0.<99,999 zeros>1e1000000 is 1e900000, not 1) */
        for (; p < end && *p >= '0' && *p <= '9'; p++, digits++)
            if (__builtin_expect(value < 100000, 1)) value = value * 10 + (*p - '0');
            else value = HUGE_EXPONENT;
        if (digits == 0) return NUMBER_BAD;
        exponent += exp_negative ? -value : value;
    }
    if (p != end) return NUMBER_BAD;
    if (mantissa == 0 && !dropped) { /* zero digits: zero whatever the exponent */
        *out = negative ? -0.0 : 0.0;
        return NUMBER_DONE;
    }
    if (dropped || mantissa > (UINT64_C(1) << 53) || exponent < -22 || exponent > 22 || (!EXACT_DOUBLE_OPS && exponent))
        return NUMBER_SLOW;
    double value = exponent < 0 ? (double)mantissa / POW10[-exponent] : (double)mantissa * POW10[exponent];
    *out = negative ? -value : value;
    return NUMBER_DONE;
}

/* What a lexer saw besides its lines (``marks``, ORed over its windows): a NUL byte, and a CR or a byte from 0x80 (text
 * that evalkit/io/textio.py's normalise would change or decode: without either the bytes are ASCII with LF line ends). */
#define MARK_NUL 1u
#define MARK_CR_OR_HIGH 2u

/* The 64 bytes at p as two masks (bit i: byte i): blanks (the six of bytes.split, the newline included) and newlines;
 * their MARK_ bits ORed into *marks. */
static inline uint64_t blank_mask(const unsigned char *p, uint64_t *newlines, unsigned *marks) {
#ifdef __SSE2__
    const __m128i nine = _mm_set1_epi8(9), four = _mm_set1_epi8(4), space = _mm_set1_epi8(' '), newline = _mm_set1_epi8('\n');
    const __m128i zero = _mm_setzero_si128(), cr = _mm_set1_epi8('\r');
    __m128i nul = zero, cr_or_high = zero; /* per byte: the top bit set where it is a NUL / a CR or from 0x80 */
    uint64_t blanks = 0, lines = 0;
    for (int i = 0; i < 4; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * i));
        __m128i shifted = _mm_sub_epi8(v, nine); /* \t \n \v \f \r are 9..13: 0..4 after the shift */
        __m128i blank = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(shifted, four), shifted), _mm_cmpeq_epi8(v, space));
        blanks |= (uint64_t)(uint16_t)_mm_movemask_epi8(blank) << (16 * i);
        lines |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)) << (16 * i);
        nul = _mm_or_si128(nul, _mm_cmpeq_epi8(v, zero));
        cr_or_high = _mm_or_si128(cr_or_high, _mm_or_si128(v, _mm_cmpeq_epi8(v, cr)));
    }
    *marks |= (_mm_movemask_epi8(nul) ? MARK_NUL : 0u) | (_mm_movemask_epi8(cr_or_high) ? MARK_CR_OR_HIGH : 0u);
    *newlines = lines;
    return blanks;
#else
    uint64_t blanks = 0, lines = 0;
    for (int i = 0; i < 64; i++) {
        blanks |= (uint64_t)(p[i] == ' ' || (p[i] >= '\t' && p[i] <= '\r')) << i;
        lines |= (uint64_t)(p[i] == '\n') << i;
        *marks |= (p[i] == 0 ? MARK_NUL : 0u) | (p[i] == '\r' || p[i] >= 0x80 ? MARK_CR_OR_HIGH : 0u);
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

/* The 64 bytes from data + at, padded with newlines past n (into ``tail``), as blank_mask's two masks. */
static inline uint64_t window_masks(const unsigned char *data, int64_t n, int64_t at, unsigned char *tail, uint64_t *newlines,
                                    unsigned *marks) {
    if (n - at >= 64) return blank_mask(data + at, newlines, marks);
    memset(tail, '\n', 64);
    memcpy(tail, data + at, (size_t)(n - at));
    return blank_mask(tail, newlines, marks);
}

/* The fields of the line starting at data + at whose newline is not in its first 64 bytes, into fields / *nf: the
 * masks 64 bytes at a time, a field's start and end where they change. Its newline's offset (or, past n, the end). */
static int64_t lex_long_line(const unsigned char *data, int64_t n, int64_t at, Token *fields, int *nf, unsigned *marks) {
    unsigned char tail[64];
    uint64_t carry = 1; /* the byte before the line counts as a blank */
    int64_t token_start = at;
    *nf = 0;
    for (int64_t base = at;; base += 64) {
        uint64_t newlines, blanks = window_masks(data, n, base, tail, &newlines, marks);
        uint64_t in_line = newlines ? (newlines & -newlines) - 1 + (newlines & -newlines) : ~UINT64_C(0); /* to the newline */
        uint64_t before = (blanks << 1) | carry;
        carry = blanks >> 63;
        uint64_t starts = ~blanks & before & in_line, ends = blanks & ~before & in_line;
        while (starts | ends) {
            uint64_t events = starts | ends, mask = events & -events;
            int bit = __builtin_ctzll(events);
            if (starts & mask) token_start = base + bit, starts ^= mask;
            else {
                if (*nf < MAX_FIELDS) fields[*nf] = (Token){data + token_start, base + bit - token_start};
                ++*nf;
                ends ^= mask;
            }
        }
        if (newlines) return base + __builtin_ctzll(newlines);
    }
}

/* Every line of data[0:n] handed to ``take(state, fields, nf)`` (``nf`` fields, the first MAX_FIELDS in ``fields``;
 * blank lines too, with nf 0), until take returns 0. Fields split on ASCII whitespace (space, tab, CR, VT, FF), as
 * bytes.split does. A line is lexed from masks of the blanks and newlines of the 64 bytes where it starts: where
 * its newline is among them (nearly every line of a run or qrels), its fields' starts and ends are where the blank
 * mask changes before that newline, read off with a count of trailing zeros each, no branch per byte or per field;
 * a longer line is lexed 64 bytes at a time (lex_long_line). The bytes past n read as newlines: one ends an
 * unterminated last line. Every byte is in some window: lexed to the end, ``*marks`` holds the MARK_ bits of all. */
static inline void lex_lines(const unsigned char *data, int64_t n, void *state, int (*take)(void *, const Token *, int),
                             unsigned *marks) {
    Token fields[MAX_FIELDS];
    unsigned char tail[64];
    for (int64_t at = 0; at < n;) {
        uint64_t newlines, blanks = window_masks(data, n, at, tail, &newlines, marks);
        int64_t line_end;
        int nf;
        if (newlines) {
            uint64_t first = newlines & -newlines, in_line = first - 1; /* the line's bytes, before its newline */
            uint64_t before = (blanks << 1) | 1;
            uint64_t starts = ~blanks & before & in_line, ends = blanks & ~before & (in_line | first);
            for (nf = 0; starts; nf++) { /* a loop, not a popcount: without -mpopcnt that is a library call */
                int from = __builtin_ctzll(starts), to = __builtin_ctzll(ends);
                if (nf < MAX_FIELDS) fields[nf] = (Token){data + at + from, to - from};
                starts &= starts - 1, ends &= ends - 1;
            }
            line_end = at + __builtin_ctzll(newlines);
        } else
            line_end = lex_long_line(data, n, at, fields, &nf, marks);
        if (line_end >= n) { /* the padding's newline: it ends an unterminated last line, if any */
            if (nf) take(state, fields, nf);
            return;
        }
        if (!take(state, fields, nf)) return;
        at = line_end + 1;
    }
}

#endif
