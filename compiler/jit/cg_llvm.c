/* cg_llvm.c - the cost graph's levels as LLVM IR (see cg_llvm.h).
 *
 * One walk over the levels' functions serves two passes.  Planning (emit false) only marks
 * the nodes that must be stored: those read in a function other than the one that computed
 * them.  Emission then builds the IR, storing exactly those.  The walk numbers the functions
 * it enters (seg); stamp[id] == seg says that node id's value is in reg[id] in the current
 * function, computed there or loaded from vals once.  A level is one function when its
 * nodes fit a chunk, else its guard chunks, its body chunks and then the level function,
 * which calls them in order with the checks in between.  Each node maps to the operation
 * that graph.c's apply() performs, so results agree to the bit with graph_eval_level.
 *
 * Two attributes keep compile time linear and low; neither changes a result.  Stores to vals
 * are volatile: they are the level's results, never dead, and with thousands of them in a
 * function dead-store elimination and the DAG combiner's store merging go quadratic.
 * Functions are noimplicitfloat, which keeps the SLP vectoriser (run by default<O2> even with
 * LLVMPassBuilderOptionsSetSLPVectorization(0) in LLVM 19) off code whose time is in kernel
 * calls, where it would take most of the IR passes' time.  Explicit double arithmetic is
 * unaffected. */
#include "cg_llvm.h"

#include <llvm-c/Analysis.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static const char *const kernel_symbols[RTK_N] = {
/* ORDER RtKernel */
#define X(e, name, fn, nargs, target, argnames) [RTK_##e] = #fn,
#include "kernels.def"
#undef X
};

const char *cg_kernel_symbol(RtKernel k) { return kernel_symbols[k]; }

void cg_level_name(int k, char *buf, size_t n) { snprintf(buf, n, "lvl%d", k); }

typedef struct GenCtx {
  const Graph *g;
  int chunk;             /* nodes per chunk function */
  unsigned char *stored; /* the plan: nodes written to vals */
  int *stamp;            /* stamp[id] == seg: reg[id] is id's value in this function */
  LLVMValueRef *reg;
  int seg;   /* the current function's number, from 1 */
  bool emit; /* false while planning: only stored[] changes */
  LLVMContextRef ctx;
  LLVMModuleRef m;
  LLVMBuilderRef b;
  LLVMTypeRef f64, i32, i64, ptr;
  LLVMTypeRef kty;                               /* void (ptr target, ptr args, ptr out): RtKernelFn */
  LLVMTypeRef chunkty;                           /* void (ptr inputs, ptr vals) */
  LLVMTypeRef lvlty;                             /* i32 (ptr inputs, ptr vals): JitLevelFn */
  LLVMValueRef kfn[RTK_N];                       /* kernel declarations, made on first use */
  LLVMValueRef fn, inputs, vals, argbuf, outbuf; /* the function being built */
} GenCtx;

/* --- helpers -------------------------------------------------------------------------- */

static void add_fn_attr(GenCtx *c, LLVMValueRef fn, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(c->ctx, kind, 0));
}

/* &base[i] for a double array. */
static LLVMValueRef slot(GenCtx *c, LLVMValueRef base, int i) {
  LLVMValueRef idx = LLVMConstInt(c->i64, (unsigned long long)i, 0);
  return LLVMBuildInBoundsGEP2(c->b, c->f64, base, &idx, 1, "");
}

static LLVMValueRef load(GenCtx *c, LLVMValueRef base, int i, const char *name) {
  return LLVMBuildLoad2(c->b, c->f64, slot(c, base, i), name);
}

static LLVMValueRef real(GenCtx *c, double x) { return LLVMConstReal(c->f64, x); }

static LLVMValueRef kernel_decl(GenCtx *c, RtKernel k) {
  if (!c->kfn[k]) {
    c->kfn[k] = LLVMAddFunction(c->m, kernel_symbols[k], c->kty);
    add_fn_attr(c, c->kfn[k], "nounwind");
  }
  return c->kfn[k];
}

/* llvm.ceil.f64 or llvm.floor.f64 applied to x. */
static LLVMValueRef intrinsic(GenCtx *c, const char *name, LLVMValueRef x, const char *vname) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(c->m, id, &c->f64, 1);
  return LLVMBuildCall2(c->b, LLVMIntrinsicGetType(c->ctx, id, &c->f64, 1), f, &x, 1, vname);
}

/* C's `x != 0` (true for NaN). */
static LLVMValueRef truth(GenCtx *c, LLVMValueRef x) { return LLVMBuildFCmp(c->b, LLVMRealUNE, x, real(c, 0), ""); }

/* A comparison as C gives it: 1.0 or 0.0. */
static LLVMValueRef cmp(GenCtx *c, LLVMRealPredicate p, LLVMValueRef x, LLVMValueRef y, const char *name) {
  return LLVMBuildUIToFP(c->b, LLVMBuildFCmp(c->b, p, x, y, ""), c->f64, name);
}

/* The operation of graph.c's apply() for an arithmetic node. */
static LLVMValueRef arith(GenCtx *c, GOp op, LLVMValueRef x, LLVMValueRef y, const char *name) {
  LLVMBuilderRef b = c->b;
  switch (op) {
  case GN_ADD: return LLVMBuildFAdd(b, x, y, name);
  case GN_SUB: return LLVMBuildFSub(b, x, y, name);
  case GN_MUL: return LLVMBuildFMul(b, x, y, name);
  case GN_DIV: return LLVMBuildFDiv(b, x, y, name);
  case GN_MOD: return LLVMBuildFRem(b, x, y, name); /* C's fmod */
  case GN_MIN: return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, x, y, ""), x, y, name);
  case GN_MAX: return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOGT, x, y, ""), x, y, name);
  case GN_CEIL: return intrinsic(c, "llvm.ceil", x, name);
  case GN_FLOOR: return intrinsic(c, "llvm.floor", x, name);
  case GN_EQ: return cmp(c, LLVMRealOEQ, x, y, name);
  case GN_NE: return cmp(c, LLVMRealUNE, x, y, name);
  case GN_LT: return cmp(c, LLVMRealOLT, x, y, name);
  case GN_LE: return cmp(c, LLVMRealOLE, x, y, name);
  case GN_GT: return cmp(c, LLVMRealOGT, x, y, name);
  case GN_GE: return cmp(c, LLVMRealOGE, x, y, name);
  case GN_AND: return LLVMBuildUIToFP(b, LLVMBuildAnd(b, truth(c, x), truth(c, y), ""), c->f64, name);
  case GN_OR: return LLVMBuildUIToFP(b, LLVMBuildOr(b, truth(c, x), truth(c, y), ""), c->f64, name);
  case GN_NOT: return cmp(c, LLVMRealOEQ, x, real(c, 0), name);
  case GN_NEG: return LLVMBuildFNeg(b, x, name);
  default: return real(c, NAN); /* as apply() */
  }
}

/* --- values: where a node's value is --------------------------------------------------- */

/* Plans node x (a call's result: its call) to be written to vals. */
static void mark(GenCtx *c, GId x) {
  if (c->g->n[x].op == GN_RESULT) x = c->g->n[x].b;
  c->stored[x] = 1;
  if (c->g->n[x].op == GN_CALL)
    for (int s = 1; s < RT_KERNEL_NOUT; s++) c->stored[x + s] = 1;
}

/* The value of operand x in the current function: an immediate for a constant, the register
 * that computed it here, or a load from vals (made once per function). */
static LLVMValueRef use(GenCtx *c, GId x) {
  const GNode *n = &c->g->n[x];
  if (n->op == GN_CONST) return c->emit ? real(c, n->k) : NULL;
  if (c->stamp[x] == c->seg) return c->reg[x];
  c->stamp[x] = c->seg;
  if (!c->emit) {
    mark(c, x);
    return c->reg[x] = NULL;
  }
  char name[24];
  snprintf(name, sizeof name, "v%d", x);
  return c->reg[x] = load(c, c->vals, x, name);
}

/* Node id's value is v in this function; stored to vals if planned (volatile: see the file's
 * header). */
static void set(GenCtx *c, GId id, LLVMValueRef v) {
  c->stamp[id] = c->seg;
  c->reg[id] = v;
  if (c->emit && c->stored[id]) LLVMSetVolatile(LLVMBuildStore(c->b, v, slot(c, c->vals, id)), 1);
}

/* --- nodes ---------------------------------------------------------------------------- */

/* fn(target, args, out): out is vals + id when the call is stored, else a local array. */
static void gen_call(GenCtx *c, GId id) {
  const GNode *x = &c->g->n[id];
  LLVMValueRef argv[RT_KERNEL_MAXARGS];
  for (int j = 0; j < x->nargs; j++) argv[j] = use(c, c->g->args[x->arg0 + j]);
  for (int s = 0; s < RT_KERNEL_NOUT; s++) c->stamp[id + s] = c->seg;
  if (!c->emit) return;
  for (int j = 0; j < x->nargs; j++) LLVMBuildStore(c->b, argv[j], slot(c, c->argbuf, j));
  const RtKernelInfo *ki = &rt_kernels[x->kernel];
  const void *t = ki->target == 'G' ? c->g->gpu : ki->target == 'C' ? c->g->cluster : NULL;
  LLVMValueRef out = c->stored[id] ? slot(c, c->vals, id) : c->outbuf;
  LLVMValueRef params[3] = {
      t ? LLVMConstIntToPtr(LLVMConstInt(c->i64, (uintptr_t)t, 0), c->ptr) : LLVMConstNull(c->ptr), c->argbuf, out};
  LLVMBuildCall2(c->b, c->kty, kernel_decl(c, (RtKernel)x->kernel), params, 3, "");
  for (int s = 0; s < RT_KERNEL_NOUT; s++) {
    char name[24];
    snprintf(name, sizeof name, "n%d", id + s);
    c->reg[id + s] = load(c, out, s, name);
  }
}

static void gen_node(GenCtx *c, GId id) {
  const GNode *x = &c->g->n[id];
  char name[24];
  snprintf(name, sizeof name, "n%d", id);
  switch ((GOp)x->op) {
  case GN_RESULT: return; /* its call set it */
  case GN_CALL: gen_call(c, id); return;
  case GN_CONST: set(c, id, c->emit ? real(c, x->k) : NULL); return;
  case GN_INPUT: set(c, id, c->emit ? load(c, c->inputs, x->a, name) : NULL); return;
  case GN_SELECT: {
    LLVMValueRef p = use(c, x->a), a = use(c, x->b), b = use(c, x->c);
    set(c, id, c->emit ? LLVMBuildSelect(c->b, truth(c, p), a, b, name) : NULL);
    return;
  }
  default: {
    LLVMValueRef a = use(c, x->a), b = x->b >= 0 ? use(c, x->b) : NULL;
    if (c->emit && !b) b = real(c, 0);
    set(c, id, c->emit ? arith(c, (GOp)x->op, a, b, name) : NULL);
    return;
  }
  }
}

/* --- functions ------------------------------------------------------------------------ */

/* Enters a new function: the level's (external) or a chunk (internal, noinline). */
static void begin(GenCtx *c, const char *name, bool level) {
  c->seg++;
  if (!c->emit) return;
  c->fn = LLVMAddFunction(c->m, name, level ? c->lvlty : c->chunkty);
  add_fn_attr(c, c->fn, "nounwind");
  add_fn_attr(c, c->fn, "noimplicitfloat"); /* no SLP vectoriser: see the file's header */
  if (!level) {
    LLVMSetLinkage(c->fn, LLVMInternalLinkage);
    add_fn_attr(c, c->fn, "noinline");
  }
  LLVMPositionBuilderAtEnd(c->b, LLVMAppendBasicBlockInContext(c->ctx, c->fn, "entry"));
  c->inputs = LLVMGetParam(c->fn, 0);
  c->vals = LLVMGetParam(c->fn, 1);
  LLVMSetValueName2(c->inputs, "inputs", 6);
  LLVMSetValueName2(c->vals, "vals", 4);
  c->argbuf = LLVMBuildAlloca(c->b, LLVMArrayType2(c->f64, RT_KERNEL_MAXARGS), "args");
  c->outbuf = LLVMBuildAlloca(c->b, LLVMArrayType2(c->f64, RT_KERNEL_NOUT), "out");
}

/* The checks in order: the first whose value is 0 returns 1 + its index. */
static void gen_checks(GenCtx *c, const GLevel *lv) {
  for (int i = 0; i < lv->nchecks; i++) {
    LLVMValueRef v = use(c, lv->checks[i]);
    if (!c->emit) continue;
    LLVMBasicBlockRef fail = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "fail");
    LLVMBasicBlockRef next = LLVMAppendBasicBlockInContext(c->ctx, c->fn, "ok");
    LLVMBuildCondBr(c->b, LLVMBuildFCmp(c->b, LLVMRealOEQ, v, real(c, 0), ""), fail, next);
    LLVMPositionBuilderAtEnd(c->b, fail);
    LLVMBuildRet(c->b, LLVMConstInt(c->i32, (unsigned long long)i + 1, 0));
    LLVMPositionBuilderAtEnd(c->b, next);
  }
}

/* A call's results cost nothing; every other node counts one towards a chunk. */
static int weight(const GenCtx *c, const GId *ids, int n) {
  int w = 0;
  for (int i = 0; i < n; i++) w += c->g->n[ids[i]].op != GN_RESULT;
  return w;
}

/* ids as chunk functions lvl<k>.<tag><i> of at most c->chunk nodes; returns their number and,
 * when emitting, puts them in fns. */
static int gen_chunks(GenCtx *c, int k, char tag, const GId *ids, int n, LLVMValueRef *fns) {
  int count = 0;
  for (int i = 0; i < n; count++) {
    char name[48];
    snprintf(name, sizeof name, "lvl%d.%c%d", k, tag, count);
    begin(c, name, false);
    for (int w = 0; i < n && (w += c->g->n[ids[i]].op != GN_RESULT) <= c->chunk; i++) gen_node(c, ids[i]);
    if (c->emit) {
      LLVMBuildRetVoid(c->b);
      fns[count] = c->fn;
    }
  }
  return count;
}

static void call_chunks(GenCtx *c, LLVMValueRef *fns, int n) {
  LLVMValueRef params[2] = {c->inputs, c->vals};
  for (int i = 0; i < n; i++) LLVMBuildCall2(c->b, c->chunkty, fns[i], params, 2, "");
}

static void gen_level(GenCtx *c, int k, const GLevel *lv) {
  char name[32];
  cg_level_name(k, name, sizeof name);
  if (weight(c, lv->guard, lv->nguard) + weight(c, lv->body, lv->nbody) <= c->chunk) {
    begin(c, name, true);
    for (int i = 0; i < lv->nguard; i++) gen_node(c, lv->guard[i]);
    gen_checks(c, lv);
    for (int i = 0; i < lv->nbody; i++) gen_node(c, lv->body[i]);
    if (c->emit) LLVMBuildRet(c->b, LLVMConstInt(c->i32, 0, 0));
    return;
  }
  LLVMValueRef *fns = NULL;
  if (c->emit) fns = xmalloc((size_t)(lv->nguard + lv->nbody) * sizeof *fns);
  int ng = gen_chunks(c, k, 'g', lv->guard, lv->nguard, fns);
  int nb = gen_chunks(c, k, 'b', lv->body, lv->nbody, fns ? fns + ng : NULL);
  begin(c, name, true);
  if (c->emit) call_chunks(c, fns, ng);
  gen_checks(c, lv);
  if (c->emit) {
    call_chunks(c, fns + ng, nb);
    LLVMBuildRet(c->b, LLVMConstInt(c->i32, 0, 0));
  }
  free(fns);
}

static void init_types(GenCtx *c) {
  c->f64 = LLVMDoubleTypeInContext(c->ctx);
  c->i32 = LLVMInt32TypeInContext(c->ctx);
  c->i64 = LLVMInt64TypeInContext(c->ctx);
  c->ptr = LLVMPointerTypeInContext(c->ctx, 0);
  LLVMTypeRef p3[3] = {c->ptr, c->ptr, c->ptr};
  c->kty = LLVMFunctionType(LLVMVoidTypeInContext(c->ctx), p3, 3, 0);
  c->chunkty = LLVMFunctionType(LLVMVoidTypeInContext(c->ctx), p3, 2, 0);
  c->lvlty = LLVMFunctionType(c->i32, p3, 2, 0);
}

LLVMModuleRef cg_module(LLVMContextRef ctx, const Graph *g, const GLevel *levels, int nlevels, const CgOptions *o,
                        unsigned char *stored, char **error) {
  GenCtx c = {.g = g, .chunk = o && o->chunk_nodes > 0 ? o->chunk_nodes : CG_CHUNK_NODES, .stored = stored, .ctx = ctx};
  size_t nn = (size_t)g->nn + 1;
  c.stamp = xcalloc(nn, sizeof *c.stamp);
  c.reg = xcalloc(nn, sizeof *c.reg);

  memset(stored, o && (o->flags & CG_STORE_ALL) ? 1 : 0, (size_t)g->nn);
  for (int i = 0; i < g->nout; i++)
    if (g->out[i].id >= 0) mark(&c, g->out[i].id);
  for (int k = 0; k < nlevels; k++) gen_level(&c, k, &levels[k]); /* plan */

  c.emit = true; /* seg keeps counting, so no stamp of the plan matches a function below */
  c.m = LLVMModuleCreateWithNameInContext("llmp", ctx);
  c.b = LLVMCreateBuilderInContext(ctx);
  init_types(&c);
  for (int k = 0; k < nlevels; k++) gen_level(&c, k, &levels[k]);
  LLVMDisposeBuilder(c.b);
  free(c.stamp);
  free(c.reg);

  char *msg = NULL;
  if (LLVMVerifyModule(c.m, LLVMReturnStatusAction, &msg)) {
    *error = xstrdup(msg ? msg : "invalid module");
    LLVMDisposeModule(c.m);
    c.m = NULL;
  }
  LLVMDisposeMessage(msg);
  return c.m;
}
