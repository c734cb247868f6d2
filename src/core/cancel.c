/* core/cancel.c - the planners' deadline and stop flag (berth/cancel.h). */
#include "berth/cancel.h"

#include <time.h>

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void berth_cancel_init(berth_cancel *c, double seconds)
{
    c->deadline_ns = 0;
    atomic_init(&c->stopped, 0);
    if (!(seconds > 0))
        return;
    if (seconds > 1e9) /* ~31 years: as good as none, and no overflow */
        seconds = 1e9;
    int64_t d = now_ns() + (int64_t)(seconds * 1e9);
    c->deadline_ns = d ? d : 1;
}

void berth_cancel_stop(berth_cancel *c)
{
    atomic_store_explicit(&c->stopped, 1, memory_order_relaxed);
}

int berth_cancel_expired(const berth_cancel *c)
{
    if (!c)
        return 0;
    if (atomic_load_explicit(&c->stopped, memory_order_relaxed))
        return 1;
    return c->deadline_ns && now_ns() >= c->deadline_ns;
}
