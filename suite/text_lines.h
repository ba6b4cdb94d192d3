/* Lines of a text file, for the text parsers: an iterator over its lines (catalogue, hardware
 * profiles, model specs, .wl workloads, buffer CSVs, factorizations) and the NUL-byte check
 * that all of them make first, as do the readers of HLO text and assignment CSVs, which go
 * character by character.
 *
 * Why: each parser used to split its text by hand (find the '\n', take the line's length,
 * advance, count the line, perhaps drop a '\r'), and several checked for a NUL byte with their
 * own message. This module is the one way to do both, so that every parser numbers lines the
 * same way and reports a NUL byte with the same line.
 *
 * A line is the bytes up to a '\n' or the end of the text; a final '\n' does not begin another
 * (empty) line, so "a\nb" and "a\nb\n" both have two lines and "" has none. The text is
 * text[0, len): it need not end with a NUL byte, and a NUL inside is an ordinary byte here (a
 * parser calls mb_text_check_no_nul first when it reads lines as C strings, or to say "not a
 * text file"). */
#ifndef MB_TEXT_LINES_H
#define MB_TEXT_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* An iterator over the lines of text[0, len). The caller owns it (and the text, which must
 * outlive it). line_no is the number (from 1) of the line last returned, 0 before the first. */
typedef struct mb_text_lines {
  const char *text;
  size_t len, pos; /* pos: where the next line begins */
  int64_t line_no;
} mb_text_lines;

void mb_text_lines_init(mb_text_lines *it, const char *text, size_t len);
/* The next line, in *line (pointing into the text, not NUL-terminated) and *line_len, which
 * leaves out its '\n' and one '\r' right before it (or at the end of the text): a CRLF file
 * reads like an LF file; a '\r' elsewhere stays. Counts it in it->line_no. False at the end of
 * the text. */
bool mb_text_lines_next(mb_text_lines *it, const char **line, size_t *line_len);

/* False, with "PATH:LINE: NUL byte: not a text file", when text[0..len) holds a NUL byte, LINE
 * being the line it is on: a parser that reads C strings would silently stop there. */
bool mb_text_check_no_nul(const char *text, size_t len, const char *path, mb_error *err);

#endif
