/* tests/torture/torture.h - the failure-injecting allocator of `make
 * torture` (fail_alloc.c): count allocations, fail the Nth once. */
#ifndef BERTH_TORTURE_H
#define BERTH_TORTURE_H

/* Resets the counter; the nth allocation from now fails (0: none). */
void torture_fail_at(unsigned long n);
/* Allocations since the last torture_fail_at. */
unsigned long torture_allocations(void);
/* 1 when the chosen allocation happened (and failed). */
int torture_failed(void);

#endif
