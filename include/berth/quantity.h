/* berth/quantity.h - Kubernetes resource.Quantity, parsed exactly.
 *
 * Grammar (as k8s.io/apimachinery resource.ParseQuantity):
 *   quantity ::= [+-] number [suffix]
 *   number   ::= digits | digits "." [digits] | "." digits
 *   suffix   ::= binarySI (Ki Mi Gi Ti Pi Ei) | decimalSI (n u m "" k M G T P E)
 *              | decimalExponent ("e" | "E") [+-] digits
 * No spaces, no other text; suffixes are case-sensitive ("1gi", "1K" and
 * "1Kb" are errors, "1E" is 10^18 and "1E3" is 1000). Digits may be any
 * number long. A value is held exactly in nano-units (1e-9) in a 128-bit
 * integer; digits beyond nano precision round away from zero (0.1n -> 1n,
 * -0.1n -> -1n), like Kubernetes.
 *
 * Differences from upstream, both deliberate: upstream's scanner also
 * takes a number with no digit as zero ("", ".", "+" before a suffix, so
 * "m" or "e3" parse as 0) - berth requires a digit; and upstream clamps a
 * magnitude above INT64_MAX whole units to that maximum - berth rejects it
 * ("value out of range").
 *
 * Threads: pure functions; safe to call concurrently. */
#ifndef BERTH_QUANTITY_H
#define BERTH_QUANTITY_H

#include <stdint.h>

typedef struct berth_quantity {
    __int128 nano;   /* value x 1e9; |value| <= INT64_MAX units when parsed */
} berth_quantity;

/* Parses s into *out. Returns 0 (and sets *why to NULL), or BERTH_EINVAL
 * with *out zero and *why set (why may be NULL) to a static reason:
 * "empty", "invalid number" (no digit, stray characters such as " 1",
 * "1.5.5", "1,5", "0x10"), "unknown suffix" ("1Kb", "1gi", "1Ki1" is an
 * invalid number), "invalid exponent" ("1e", "1e-", "1e3.5") or
 * "value out of range". The caller reports the bad text itself. */
int berth_quantity_parse(const char *s, berth_quantity *out, const char **why);

/* Integer value rounded away from zero (resource.Quantity.Value(): 1.2 ->
 * 2, -1.2 -> -2); saturates at INT64_MAX / INT64_MIN. */
int64_t berth_quantity_value(berth_quantity q);
/* Value x 1000 rounded away from zero (resource.Quantity.MilliValue():
 * 1n -> 1), saturating. Use for cpu. */
int64_t berth_quantity_milli(berth_quantity q);
/* Value as a double (for ratios and display only). */
double berth_quantity_double(berth_quantity q);
/* -1, 0, 1. */
int berth_quantity_cmp(berth_quantity a, berth_quantity b);
/* Writes a canonical short form into buf (truncated to size - 1 chars,
 * always terminated when size > 0; 48 bytes always suffice):
 *   0                                    -> "0"
 *   whole values: the shorter of two forms, binary on a tie -
 *     binary: largest binary suffix when a multiple of 1024 ("224Gi",
 *             "512Mi", "1536Ki", "1Ki" for 1024)
 *     decimal: largest suffix M..E when a multiple of 10^6 ("1G", "1T",
 *              "1500M"), else plain digits ("2", "1000", "1500")
 *   fractional, |v| >= 1                 -> decimal, no trailing zeros: "1.5"
 *   fractional, |v| < 1                  -> "500m", else "5u", else "5n"
 * A leading "-" for negative values. Parsing the text gives q back. */
void berth_quantity_format(berth_quantity q, char *buf, int size);

#endif
