/* lower_notes.c - the approximations that move a fitting scenario's times by more than a few
 * per cent, named in its Report as notes (printed by report.c: the table, JSON and CSV).
 *
 * llmp gives NVLink SHARP (in-switch reduction) to the all-reduce only: where an all-reduce of
 * the largest all-gather's or reduce-scatter's bytes over its group, placed as the group is
 * (strided over the tiers it crosses), is more than 5 % faster with it, those collectives
 * (sequence parallelism's, ZeRO's) may be overestimated. */
#include <stdio.h>

#include "lower_private.h"

/* The largest all-gather or reduce-scatter call by bytes, or -1. */
static GId largest_gather(const Graph *g, const double *vals) {
  GId big = -1;
  for (GId i = 0; i < g->nn; i++) {
    const GNode *x = &g->n[i];
    if (x->op == GN_CALL && (x->kernel == RTK_ALLGATHER || x->kernel == RTK_REDUCESCATTER) &&
        (big < 0 || vals[g->args[x->arg0]] > vals[g->args[g->n[big].arg0]]))
      big = i;
  }
  return big;
}

static void sharp_note(const Lowered *l, const double *vals, Report *r) {
  const Graph *g = &l->g;
  const RtCluster *c = g->cluster;
  GId big = c && r->nnotes < REPORT_NOTES ? largest_gather(g, vals) : -1;
  if (big < 0) return;
  const GNode *x = &g->n[big];
  double bytes = vals[g->args[x->arg0]], size = vals[g->args[x->arg0 + 1]], stride = vals[g->args[x->arg0 + 2]];
  int nodes, gpn;
  if (!(size >= 1 && size <= 1e9 && stride >= 1 && stride <= 1e9) ||
      rt_group_layout((int)size, (int)stride, c->gpus_per_node, &nodes, &gpn) < 0)
    return;
  RtCluster off = *c;
  for (int t = 0; t < off.ntiers; t++) off.tiers[t].switch_reduction = -1;
  /* the all-reduce kernel on the gather's own (bytes, size, stride): the group as placed */
  double args[3] = {bytes, size, stride}, with[3], without[3];
  rt_kernels[RTK_ALLREDUCE].fn(c, args, with);
  rt_kernels[RTK_ALLREDUCE].fn(&off, args, without);
  if (!(without[0] > 1.05 * with[0])) return;
  snprintf(r->notes[r->nnotes++], sizeof r->notes[0],
           "`%s` (%s, %.3g MB over %d GPUs) may be overestimated by up to %.0f %%: all-gathers and reduce-scatters "
           "are modelled without the NVLink SHARP that all-reduces get (an all-reduce of its bytes: %.3g ms with "
           "SHARP, %.3g ms without)",
           x->label ? x->label : "", rt_kernels[x->kernel].name, bytes / 1e6, nodes * gpn,
           100 * (without[0] / with[0] - 1), 1e3 * with[0], 1e3 * without[0]);
}

void lower_notes(const Lowered *l, const double *vals, Report *r) {
  r->nnotes = 0;
  if (!r->fits) return; /* no time to move */
  sharp_note(l, vals, r);
}
