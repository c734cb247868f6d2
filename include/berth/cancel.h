/* berth/cancel.h - stopping a planner from outside: a wall-clock deadline
 * and a stop flag (core/cancel.c), shared by every planner.
 *
 * A caller that wants a bound fills one berth_cancel and passes a pointer
 * to it in the planner's options (berth_kube_options.cancel,
 * berth_kview.cancel, berth_ksession_set_cancel, berth_kube_fit,
 * berth_fleet_options.cancel, berth_dplan_options.cancel,
 * berth_dsim_options.cancel, berth_aplan_options.cancel,
 * berth_asim_options.cancel). NULL means no limit: the CLI's default, at the
 * cost of one pointer test per check. The planners check it at bounded
 * intervals (per pod scheduled, per placement, per candidate set, per
 * timeline step; berth_cancel_poll reads the clock on every 64th call of
 * a hot loop) and, once it has expired, return BERTH_ETIMEDOUT with their
 * output freed (no partial plan). The disruption and autoscaling plans
 * look once more before returning: a plan finished past the deadline is
 * not returned either (their parts may read a stopped what-if as "does
 * not fit").
 *
 * Threads: berth_cancel_init before the planner starts, from the thread
 * that owns the record. While planners run, any number of threads may read
 * one record (berth_cancel_expired, berth_cancel_poll: the deadline is
 * immutable and the flag atomic) and any thread may call berth_cancel_stop.
 * The record must outlive every planner given it. */
#ifndef BERTH_CANCEL_H
#define BERTH_CANCEL_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct berth_cancel {
    int64_t deadline_ns;   /* CLOCK_MONOTONIC nanoseconds; 0: no deadline */
    atomic_int stopped;    /* set by berth_cancel_stop */
} berth_cancel;

/* Planners read the clock on every BERTH_CANCEL_EVERY-th berth_cancel_poll. */
#define BERTH_CANCEL_EVERY 64

/* A deadline `seconds` from now (fractions allowed); seconds <= 0 (or not
 * a number): no deadline, only the stop flag. */
void berth_cancel_init(berth_cancel *c, double seconds);
/* Stops every planner reading c at its next check (async-signal-safe). */
void berth_cancel_stop(berth_cancel *c);
/* 1 when c is not NULL and stopped or past its deadline (reads the clock). */
int berth_cancel_expired(const berth_cancel *c);

/* For hot loops: 0 without reading the clock except on every
 * BERTH_CANCEL_EVERY-th call (the first included) through *tick, a counter
 * the loop owns (start it at 0). */
static inline int berth_cancel_poll(const berth_cancel *c, uint32_t *tick)
{
    return c && ((*tick)++ % BERTH_CANCEL_EVERY) == 0 && berth_cancel_expired(c);
}

#endif
