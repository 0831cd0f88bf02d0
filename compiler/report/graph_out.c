/* graph_out.c - `llmp graph`: the cost graph as JSON (values through emit.h) or as
 * Graphviz dot. */
#include "graph_out.h"

#include "emit.h"

/* One node a line: its op, then its value, input, kernel call or operands. */
void graph_dump_json(FILE *out, const Graph *g, const double *vals) {
  fputs("{\"nodes\":[", out);
  for (int i = 0; i < g->nn; i++) {
    const GNode *x = &g->n[i];
    fprintf(out, "%s\n{\"id\":%d,\"op\":\"%s\"", i ? "," : "", i, gop_name((GOp)x->op));
    if (x->op == GN_CONST) {
      fputs(",\"value\":", out);
      emit_json_number(out, x->k);
    } else if (x->op == GN_INPUT) {
      fprintf(out, ",\"input\":%d", x->a);
    } else if (x->op == GN_CALL) {
      fputs(",\"kernel\":", out);
      emit_json_string(out, rt_kernels[x->kernel].name);
      fputs(",\"label\":", out);
      emit_json_string(out, x->label);
      fputs(",\"args\":[", out);
      for (int j = 0; j < x->nargs; j++) fprintf(out, "%s%d", j ? "," : "", g->args[x->arg0 + j]);
      fputc(']', out);
    } else if (x->op == GN_RESULT) {
      fprintf(out, ",\"call\":%d,\"slot\":%d", x->b, x->a);
    } else {
      fprintf(out, ",\"operands\":[%d", x->a);
      if (x->b >= 0) fprintf(out, ",%d", x->b);
      if (x->c >= 0) fprintf(out, ",%d", x->c);
      fputc(']', out);
    }
    if (vals && x->op != GN_CONST) {
      fputs(",\"value\":", out);
      emit_json_number(out, vals[i]);
    }
    fputc('}', out);
  }
  fputs("\n],\"outputs\":{", out);
  for (int i = 0; i < g->nout; i++) {
    fputs(i ? "," : "", out);
    emit_json_string(out, g->out[i].name);
    fprintf(out, ":%d", g->out[i].id);
  }
  fputs("}}\n", out);
}

/* Calls are boxes with their label (quotes and backslashes left out), operations ellipses;
 * a result node is drawn as its call. */
void graph_dump_dot(FILE *out, const Graph *g, const double *vals) {
  fputs("digraph cost {\n  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=10];\n", out);
  for (int i = 0; i < g->nn; i++) {
    const GNode *x = &g->n[i];
    if (x->op == GN_RESULT) continue;
    fprintf(out, "  n%d [", i);
    if (x->op == GN_CONST)
      fprintf(out, "shape=plaintext, label=\"%.6g\"", x->k);
    else if (x->op == GN_INPUT)
      fprintf(out, "shape=invhouse, label=\"input %d\"", x->a);
    else if (x->op == GN_CALL) {
      fprintf(out, "shape=box, style=filled, fillcolor=\"#dde8f7\", label=\"%s\\n", rt_kernels[x->kernel].name);
      for (const char *s = x->label; s && *s; s++)
        if (*s != '"' && *s != '\\') fputc(*s, out);
      if (vals) fprintf(out, "\\nfwd %.4g s  bwd %.4g s", vals[i], vals[i + 1]);
      fputc('"', out);
    } else {
      fprintf(out, "shape=ellipse, label=\"%s", gop_name((GOp)x->op));
      if (vals) fprintf(out, "\\n%.6g", vals[i]);
      fputc('"', out);
    }
    fputs("];\n", out);
    GId ops[RT_KERNEL_MAXARGS];
    int n = graph_operands(g, i, ops);
    for (int j = 0; j < n; j++) {
      GId s = g->n[ops[j]].op == GN_RESULT ? g->n[ops[j]].b : ops[j];
      fprintf(out, "  n%d -> n%d;\n", s, i);
    }
  }
  for (int i = 0; i < g->nout; i++) {
    GId s = g->out[i].id;
    if (s >= 0 && g->n[s].op == GN_RESULT) s = g->n[s].b;
    fprintf(out, "  out%d [shape=doublecircle, label=\"%s\"];\n  n%d -> out%d;\n", i, g->out[i].name, s, i);
  }
  fputs("}\n", out);
}
