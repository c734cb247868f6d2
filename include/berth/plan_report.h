/* berth/plan_report.h - reports of the planners: `disrupt plan` and
 * `autoscale plan` as a table and as SPEC 6.3 JSON (the caller owns the
 * returned reference). Used by the CLI and by `berth serve`.
 *
 * Threads: writers only read the plan; distinct plans may be written
 * concurrently. */
#ifndef BERTH_PLAN_REPORT_H
#define BERTH_PLAN_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "berth/autoscale.h"
#include "berth/disrupt.h"

json_t *berth_report_disrupt_json(const berth_disrupt *m, const berth_dplan *p);
void berth_report_disrupt_table(FILE *out, const berth_disrupt *m, const berth_dplan *p);
/* `disrupt plan --svg`: the cost before and after, then every node before
 * and after the plan with its action (deleted, replaced by new nodes,
 * blocked with the reason, kept) and price (report/disrupt_svg.c). 0,
 * BERTH_ENOMEM or BERTH_EIO. */
int berth_report_disrupt_svg(FILE *out, const berth_disrupt *m, const berth_dplan *p);
json_t *berth_report_autoscale_json(const berth_autoscale *m, const berth_aplan *p);
void berth_report_autoscale_table(FILE *out, const berth_autoscale *m, const berth_aplan *p);
/* `disrupt simulate`: the timeline (report/disrupt_timeline.c). */
json_t *berth_report_disrupt_timeline_json(const berth_dtimeline *t);
void berth_report_disrupt_timeline_table(FILE *out, const berth_dtimeline *t);

/* `autoscale simulate`: the timeline (report/autoscale_timeline.c). o gives
 * from, to and step; t the events the result's indices refer to. */
json_t *berth_report_autoscale_timeline_json(const berth_atimeline *t, const berth_asim_options *o,
                                             const berth_asim_result *r);
/* `autoscale simulate --svg`: nodes and pending pods per step, the nodes
 * launched and terminated per step, and the cost per hour over time
 * (report/autoscale_svg.c). 0, BERTH_ENOMEM or BERTH_EIO. */
int berth_report_autoscale_timeline_svg(FILE *out, const berth_asim_options *o,
                                        const berth_asim_result *r);
void berth_report_autoscale_timeline_table(FILE *out, const berth_atimeline *t,
                                           const berth_asim_options *o, const berth_asim_result *r);

#endif
