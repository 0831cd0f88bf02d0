/* emit.h - the one writer of JSON and CSV values, used by every output of llmp (run's
 * report and trace, sweep and merge, llmp graph).
 *
 * Strings in JSON: '"' and '\' are escaped, control characters too (\b \f \n \r \t, the
 * others \u00XX); valid UTF-8 (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF)
 * passes as it is, and each byte that does not start a valid sequence becomes U+FFFD, written
 * as its UTF-8 bytes (EF BF BD).  So the output is always valid UTF-8, and a string read back
 * (the sweep reader reads such a byte as U+FFFD too) is written again byte for byte.
 *
 * Numbers: the shortest of %.15g, %.16g and %.17g that reads back as the same double, so a
 * value written and read again has the same bits (-0 stays "-0").  JSON has no NaN or
 * infinity: emit_json_number writes null for them; an output that needs another rule applies
 * it before calling emit_shortest.
 *
 * CSV fields (RFC 4180): quoted when the text holds a comma, a quote or a line break, is
 * empty, or has a space at either end; quotes inside are doubled.  Bytes pass as they are.
 *
 * Each function returns 0, or -1 if writing to out failed (the stream's error flag is set). */
#ifndef LLMP_EMIT_H
#define LLMP_EMIT_H

#include <stddef.h>
#include <stdio.h>

enum { EMIT_NUM_MAX = 32 }; /* room for any number emit_shortest writes */

/* The shortest text that reads back as x (finite x; see above) into buf; returns buf. */
const char *emit_shortest(char *buf, size_t n, double x);

/* x as a JSON number; NaN and infinities as null. */
int emit_json_number(FILE *out, double x);

/* The length of the UTF-8 sequence at p (RFC 3629: no overlong forms, no surrogates, at most
 * U+10FFFF), or 0 if it is not one (a NUL ends the text: p need only be NUL-terminated). */
int emit_utf8_len(const unsigned char *p);

/* s as a JSON string, quotes included; NULL as "". */
int emit_json_string(FILE *out, const char *s);

/* s as a CSV field; NULL as an empty field (unquoted, unlike "", which is quoted). */
int emit_csv_field(FILE *out, const char *s);

#endif
