/* jit.c - the LLJIT wrapper of jit.h.
 *
 * jit_compile: a host TargetMachine -> the LLJIT (with ORC's error reporter routed into the
 * Jit, so ORC never prints) -> the runtime's kernels and the few libc functions the backend
 * may call (fmod for frem, ceil and floor on CPUs without SSE4.1, memcpy/memmove/memset) as
 * absolute symbols -> cg_module -> triple, data layout, default<O2> -> the module added to
 * the main JITDylib -> a lookup per level, where machine code is generated.  Every
 * LLVMErrorRef is consumed and every message disposed; ownership moves are commented where
 * they happen. */
#include "jit.h"

#include <llvm-c/Core.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <llvm/Config/llvm-config.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "cg_llvm.h"

struct Jit {
  LLVMOrcLLJITRef lljit;
  JitLevelFn *fn; /* per level */
  int nlevels;
  unsigned char *stored; /* per node: written to vals (cg_module's plan) */
  int nn;
  double seconds;
  char *ir, *ir_opt;   /* module text before and after the passes (LLVM messages) */
  char *session_error; /* the first error ORC reported (malloc'd) */
};

static pthread_once_t native_once = PTHREAD_ONCE_INIT;
static bool native_ok;

static void init_native(void) { native_ok = !LLVMInitializeNativeTarget() && !LLVMInitializeNativeAsmPrinter(); }

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* *error = "what: msg", unless an error is set already. */
static void set_error(char **error, const char *what, const char *msg) {
  if (!error || *error) return;
  size_t n = strlen(what) + strlen(msg) + 3;
  *error = xmalloc(n);
  snprintf(*error, n, "%s: %s", what, msg);
}

/* set_error with err's message; consumes err. */
static void set_llvm_error(char **error, const char *what, LLVMErrorRef err) {
  char *m = LLVMGetErrorMessage(err);
  set_error(error, what, m);
  LLVMDisposeErrorMessage(m);
}

/* ORC's reporter for failures no caller receives (symbols the linker cannot resolve). */
static void report_error(void *ctx, LLVMErrorRef err) {
  Jit *j = ctx;
  char *m = LLVMGetErrorMessage(err);
  if (!j->session_error) j->session_error = xstrdup(m);
  LLVMDisposeErrorMessage(m);
}

/* A TargetMachine for this host (its CPU and features); NULL with *error.  Machine code is
 * generated at LLVMCodeGenLevelNone (fast instruction selection and register allocation)
 * from IR that default<O2> has optimised: it compiles in about half the time of the Default
 * level, and an evaluation's time is in its kernel calls, which the level does not change. */
static LLVMTargetMachineRef host_tm(char **error) {
  char *triple = LLVMGetDefaultTargetTriple(), *msg = NULL;
  LLVMTargetRef t;
  LLVMTargetMachineRef tm = NULL;
  if (LLVMGetTargetFromTriple(triple, &t, &msg)) {
    set_error(error, "target", msg ? msg : triple);
  } else {
    char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
    tm = LLVMCreateTargetMachine(t, triple, cpu, features, LLVMCodeGenLevelNone, LLVMRelocDefault,
                                 LLVMCodeModelJITDefault);
    LLVMDisposeMessage(cpu);
    LLVMDisposeMessage(features);
    if (!tm) set_error(error, "target", "cannot create a target machine for this host");
  }
  LLVMDisposeMessage(msg);
  LLVMDisposeMessage(triple);
  return tm;
}

static LLVMOrcCSymbolMapPair symbol(Jit *j, const char *name, uintptr_t addr) {
  return (LLVMOrcCSymbolMapPair){
      LLVMOrcLLJITMangleAndIntern(j->lljit, name),
      {(LLVMOrcExecutorAddress)addr, {LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable, 0}}};
}

/* The kernels (their rt_kernels[] entries: kernels.c's wrappers) and libc's helpers. */
static LLVMErrorRef define_symbols(Jit *j) {
  LLVMOrcCSymbolMapPair syms[RTK_N + 6];
  int n = 0;
  for (int k = 0; k < RTK_N; k++) syms[n++] = symbol(j, cg_kernel_symbol((RtKernel)k), (uintptr_t)rt_kernels[k].fn);
  syms[n++] = symbol(j, "fmod", (uintptr_t)fmod);
  syms[n++] = symbol(j, "ceil", (uintptr_t)ceil);
  syms[n++] = symbol(j, "floor", (uintptr_t)floor);
  syms[n++] = symbol(j, "memcpy", (uintptr_t)memcpy);
  syms[n++] = symbol(j, "memmove", (uintptr_t)memmove);
  syms[n++] = symbol(j, "memset", (uintptr_t)memset);
  LLVMOrcMaterializationUnitRef mu = LLVMOrcAbsoluteSymbols(syms, (size_t)n);          /* takes the names */
  LLVMErrorRef err = LLVMOrcJITDylibDefine(LLVMOrcLLJITGetMainJITDylib(j->lljit), mu); /* takes mu if ok */
  if (err) LLVMOrcDisposeMaterializationUnit(mu);
  return err;
}

static bool create_lljit(Jit *j, char **error) {
  LLVMTargetMachineRef tm = host_tm(error);
  if (!tm) return false;
  LLVMOrcLLJITBuilderRef jb = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(
      jb, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm)); /* takes tm */
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&j->lljit, jb);               /* takes jb */
  if (err) {
    j->lljit = NULL;
    set_llvm_error(error, "creating the JIT", err);
    return false;
  }
  LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(j->lljit), report_error, j);
  if ((err = define_symbols(j))) {
    set_llvm_error(error, "defining the kernels", err);
    return false;
  }
  return true;
}

/* default<O2> on m; false with *error. */
static bool optimise(LLVMModuleRef m, char **error) {
  LLVMTargetMachineRef tm = host_tm(error);
  if (!tm) return false;
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(m, "default<O2>", tm, po);
  LLVMDisposePassBuilderOptions(po);
  LLVMDisposeTargetMachine(tm);
  if (err) set_llvm_error(error, "optimising", err);
  return !err;
}

/* Generates, optimises and adds the module of the levels. */
static bool add_module(Jit *j, const Graph *g, const GLevel *levels, int nlevels, const JitOptions *o, char **error) {
#if LLVM_VERSION_MAJOR >= 21
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContextFromLLVMContext(ctx);
#else
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
#endif
  LLVMContextSetDiscardValueNames(ctx, !(o->flags & (JIT_IR | JIT_IR_OPT)));
  CgOptions co = {o->flags & JIT_STORE_ALL ? CG_STORE_ALL : 0, o->chunk_nodes};
  char *msg = NULL;
  bool ok = false;
  LLVMModuleRef m = cg_module(ctx, g, levels, nlevels, &co, j->stored, &msg);
  if (!m) {
    set_error(error, "code generation", msg);
    free(msg);
  } else {
    LLVMSetTarget(m, LLVMOrcLLJITGetTripleString(j->lljit));
    LLVMSetDataLayout(m, LLVMOrcLLJITGetDataLayoutStr(j->lljit));
    if (o->flags & JIT_IR) j->ir = LLVMPrintModuleToString(m);
    if (!optimise(m, error)) {
      LLVMDisposeModule(m);
    } else {
      if (o->flags & JIT_IR_OPT) j->ir_opt = LLVMPrintModuleToString(m);
      LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(m, tsc); /* takes m */
      LLVMErrorRef err =
          LLVMOrcLLJITAddLLVMIRModule(j->lljit, LLVMOrcLLJITGetMainJITDylib(j->lljit), tsm); /* takes tsm */
      if (err) set_llvm_error(error, "adding the module", err);
      ok = !err;
    }
  }
  LLVMOrcDisposeThreadSafeContext(tsc); /* the module keeps its own reference */
  return ok;
}

/* Looks the level functions up: machine code is generated here. */
static bool lookup_levels(Jit *j, char **error) {
  for (int k = 0; k < j->nlevels; k++) {
    char name[32];
    cg_level_name(k, name, sizeof name);
    LLVMOrcExecutorAddress a = 0;
    LLVMErrorRef err = LLVMOrcLLJITLookup(j->lljit, &a, name);
    if (err) {
      if (j->session_error) set_error(error, "JIT", j->session_error);
      set_llvm_error(error, "JIT", err);
      return false;
    }
    j->fn[k] = (JitLevelFn)(uintptr_t)a;
  }
  return true;
}

Jit *jit_compile_opts(const Graph *g, const GLevel *levels, int nlevels, const JitOptions *o, char **error) {
  double t0 = now();
  static const JitOptions defaults = {0, 0};
  if (!o) o = &defaults;
  if (error) *error = NULL;
  pthread_once(&native_once, init_native);
  if (!native_ok) {
    set_error(error, "LLVM", "the native target cannot be initialised");
    return NULL;
  }
  Jit *j = xcalloc(1, sizeof *j);
  j->nlevels = nlevels;
  j->nn = g->nn;
  j->fn = xcalloc((size_t)nlevels + 1, sizeof *j->fn);
  j->stored = xcalloc((size_t)g->nn + 1, 1);
  if (!create_lljit(j, error) || !add_module(j, g, levels, nlevels, o, error) || !lookup_levels(j, error)) {
    jit_free(j);
    return NULL;
  }
  j->seconds = now() - t0;
  return j;
}

Jit *jit_compile(const Graph *g, const GLevel *levels, int nlevels, int flags, char **error) {
  JitOptions o = {flags, 0};
  return jit_compile_opts(g, levels, nlevels, &o, error);
}

Jit *jit_compile_graph(const Graph *g, int flags, char **error) {
  GId *all = xmalloc(((size_t)g->nn + 1) * sizeof *all);
  for (int i = 0; i < g->nn; i++) all[i] = i;
  GLevel lv = {.body = all, .nbody = g->nn};
  Jit *j = jit_compile(g, &lv, 1, flags, error);
  free(all);
  return j;
}

JitLevelFn jit_level(const Jit *j, int k) { return k >= 0 && k < j->nlevels ? j->fn[k] : NULL; }

bool jit_stored(const Jit *j, GId id) { return id >= 0 && id < j->nn && j->stored[id]; }

double jit_compile_seconds(const Jit *j) { return j->seconds; }

const char *jit_ir(const Jit *j, int which) { return which == JIT_IR ? j->ir : which == JIT_IR_OPT ? j->ir_opt : NULL; }

void jit_free(Jit *j) {
  if (!j) return;
  if (j->lljit) {
    LLVMErrorRef err = LLVMOrcDisposeLLJIT(j->lljit);
    if (err) LLVMConsumeError(err);
  }
  LLVMDisposeMessage(j->ir);
  LLVMDisposeMessage(j->ir_opt);
  free(j->session_error);
  free(j->fn);
  free(j->stored);
  free(j);
}

void jit_shutdown(void) { LLVMShutdown(); }
