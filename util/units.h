/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Values as users write them: integers, real numbers, and quantities with a
 * unit ("5 us", "100 MB", "10 Gbit/s"). A dimensioned value must carry its
 * unit: "latency = 5" is refused rather than guessed at. */
#ifndef LBS_UNITS_H
#define LBS_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum lbs_dim {
	LBS_DIM_NONE,      /* plain real number; a trailing % divides by 100 */
	LBS_DIM_TIME,      /* seconds */
	LBS_DIM_BYTES,     /* bytes */
	LBS_DIM_BANDWIDTH  /* bytes per second */
} lbs_dim;

/* Parses text into *out in base units (s, B, B/s). On failure returns false
 * and writes what was expected into why. */
bool lbs_parse_quantity(const char *text, lbs_dim dim, double *out, char *why, size_t whylen);

/* Parses an integer; exponent forms ("1e6") are accepted when exact. */
bool lbs_parse_int(const char *text, int64_t *out, char *why, size_t whylen);

/* A plain decimal number, the whole text (spaces around it allowed):
 * optional sign, digits with an optional point, an optional exponent. No
 * hexadecimal, no inf or nan, no unit; the value must be finite. The one
 * number grammar every reader of lbsim's own formats uses. */
bool lbs_parse_real(const char *text, double *out, char *why, size_t whylen);

/* The name of a dimension and an example value, for messages and docs. */
const char *lbs_dim_name(lbs_dim dim);
const char *lbs_dim_example(lbs_dim dim);

/* Formats v (base units) with a readable unit: "1.5 ms", "100 MB". */
void lbs_format_quantity(double v, lbs_dim dim, char *buf, size_t len);

#endif
