/* graph_out.h - `llmp graph`: the cost graph (lower/graph.h) printed for people and programs.
 *
 * It is its own library, llmpgraphout, beside llmpreport: it reads the graph of llmplower,
 * which itself links llmpreport, so keeping it out of llmpreport keeps the libraries'
 * dependencies one way (report <- lower <- graph output). */
#ifndef LLMP_GRAPH_OUT_H
#define LLMP_GRAPH_OUT_H

#include <stdio.h>

#include "lower/graph.h"

/* The DAG as Graphviz dot or as JSON: nodes with their operands, kernel calls with their
 * labels, the named outputs, and each node's value when vals != NULL. */
void graph_dump_dot(FILE *out, const Graph *g, const double *vals);
void graph_dump_json(FILE *out, const Graph *g, const double *vals);

#endif
