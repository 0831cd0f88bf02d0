/* jit_gen.h - random valid scenarios as .llmp text, for test_jit.c's differential test.
 *
 * gen_scenario() appends a model, a plan and a scenario named m<i>, p<i>, s<i> to a text
 * that imports the stdlib and the four systems of hw/systems.  Every choice is drawn so that
 * the checker's rules hold (docs/language.md, `scenario`): the cluster's GPUs are split as
 * tp * cp * pp * dp; heads and kv_heads divide by tp, kv_heads divides heads, layers by
 * pp * virtual_stages (uniform partition) or cover them (balanced), seq by cp, experts by ep,
 * the global batch by micro_batch * dp; and so that `llmp run` accepts it too: dp % ep == 0,
 * the dp, dp x cp and expert data-parallel groups tile the nodes,
 * interleaved with virtual stages has a multiple of pp micro-batches, at most 1024 chunks.
 * Include after cmocka.h and support.h. */
#ifndef LLMP_TEST_JIT_GEN_H
#define LLMP_TEST_JIT_GEN_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "strbuf.h"

typedef struct Rng {
  uint64_t s;
} Rng;

static inline uint64_t rng_next(Rng *r) { return splitmix64(&r->s); }

static inline int rng_int(Rng *r, int n) { return (int)(rng_next(r) % (uint64_t)n); }
static inline bool rng_chance(Rng *r, double p) { return unit_double(rng_next(r)) < p; }

#define RNG_PICK(r, arr) ((arr)[rng_int((r), (int)(sizeof(arr) / sizeof((arr)[0])))])

static inline void gen_header(StrBuf *t) {
  strbuf_printf(t, "import \"stdlib/transformer\"\nimport \"hw/systems/perlmutter\"\nimport \"hw/systems/vista\"\n"
                   "import \"hw/systems/selene\"\nimport \"hw/systems/eos\"\n");
}

/* A random divisor of n among the candidates (1 always qualifies). */
static inline int gen_divisor(Rng *r, int n, const int *cand, int ncand) {
  int ok[16], k = 0;
  for (int i = 0; i < ncand; i++)
    if (n % cand[i] == 0) ok[k++] = cand[i];
  return k ? ok[rng_int(r, k)] : 1;
}

static inline int gen_gcd(int a, int b) { return b ? gen_gcd(b, a % b) : a; }

/* A group of size ranks stride apart tiles nodes of gpn GPUs (rt_group_layout). */
static inline bool gen_tiles(int size, int stride, int gpn) {
  int nodes, per;
  return size >= 1 && stride >= 1 && rt_group_layout(size, stride, gpn, &nodes, &per) == 0;
}

static inline void gen_scenario(Rng *r, StrBuf *t, int i) {
  static const struct {
    const char *name;
    int gpn;
    bool fp8;
  } systems[] = {{"perlmutter", 4, false}, {"vista", 1, true}, {"selene", 8, false}, {"eos", 8, true}};
  static const char *const bases[] = {"gpt", "llama", "gpt_neox", "mixtral"};
  static const int node_counts[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64};
  static const int par[] = {1, 2, 4, 8, 16};
  int sys = rng_int(r, 4), nodes = RNG_PICK(r, node_counts), gpus = nodes * systems[sys].gpn;
  const char *base = RNG_PICK(r, bases);
  bool gqa = base[0] == 'l' || base[0] == 'm', moe = base[0] == 'm';

  /* the split of the GPUs: tp (at most 8), cp (at most 2), pp, then dp, and the placement;
   * drawn again (up to 32 times, then no cp and no pipeline) until the groups the collectives
   * run over tile the nodes */
  int gpn = systems[sys].gpn, tp, cp, pp, dp;
  bool placed;
  for (int tries = 0;; tries++) {
    tp = gen_divisor(r, gpus, par, 4), cp = rng_chance(r, 0.2) ? gen_divisor(r, gpus / tp, par, 2) : 1;
    pp = gen_divisor(r, gpus / (tp * cp), par, 5), dp = gpus / (tp * cp * pp);
    placed = rng_chance(r, 0.3);
    if (tries == 32) cp = 1, pp = 1, dp = gpus / tp, placed = false;
    if (gen_tiles(dp, placed ? tp : tp * cp, gpn) && gen_tiles(dp * cp, tp, gpn) && (!moe || gen_tiles(tp * cp * dp, 1, gpn)))
      break;
  }

  /* the model, shaped around tp and pp */
  int head_dim = rng_chance(r, 0.5) ? 64 : 128, heads = tp * RNG_PICK(r, ((const int[]){1, 2, 4, 8}));
  int kv_heads = heads;
  if (gqa) kv_heads = tp * gen_divisor(r, heads / tp, par, 4);
  bool interleaved = pp > 1 && rng_chance(r, 0.3);
  int vs = interleaved ? 1 + rng_int(r, 3) : 1;
  bool balanced = !interleaved && rng_chance(r, 0.25);
  int layers = balanced ? pp + rng_int(r, 3 * pp) : pp * vs * (1 + rng_int(r, 4));
  int seq = cp * RNG_PICK(r, ((const int[]){256, 512, 1024, 2048}));
  int vocab = 1000 + rng_int(r, 60000);
  strbuf_printf(t, "model m%d extends %s {\n  layers = %d\n  hidden = %d\n  heads = %d\n  seq = %d\n  vocab = %d\n", i,
                base, layers, heads * head_dim, heads, seq, vocab);
  if (gqa) strbuf_printf(t, "  kv_heads = %d\n", kv_heads);
  int experts = 8;
  if (moe) {
    experts = RNG_PICK(r, ((const int[]){4, 8, 16}));
    strbuf_printf(t, "  experts = %d\n  top_k = %d\n  moe_ffn = %d\n", experts, 1 + rng_int(r, 2),
                  256 * (4 + rng_int(r, 40)));
  }
  strbuf_printf(t, "}\n");

  /* the plan */
  int micro = RNG_PICK(r, ((const int[]){1, 2, 4, 8}));
  int steps = 1 + rng_int(r, 16);
  if (vs > 1) steps = pp * (1 + rng_int(r, 4));
  static const char *const schedules[] = {"gpipe", "1f1b", "zero_bubble"};
  static const char *const recomputes[] = {"none", "selective", "full"};
  static const char *const dtypes[] = {"fp32", "tf32", "fp16", "bf16", "fp8"};
  const char *dtype = dtypes[rng_int(r, systems[sys].fp8 ? 5 : 4)];
  strbuf_printf(t, "plan p%d {\n  tp = %d\n  pp = %d\n  micro_batch = %d\n  global_batch = %d\n", i, tp, pp, micro,
                micro * dp * steps);
  if (cp > 1 || rng_chance(r, 0.2)) strbuf_printf(t, "  cp = %d\n", cp);
  if (rng_chance(r, 0.7)) strbuf_printf(t, "  dp = %d\n", dp);
  if (moe) {
    static const int eps[] = {1, 2, 4, 8, 16};
    int ok[5], k = 0; /* the expert data-parallel group, edp ranks ep apart, tiles the nodes */
    for (int e = 0; e < 5; e++)
      if (gen_tiles(tp * cp * dp / eps[e], eps[e], gpn)) ok[k++] = eps[e];
    strbuf_printf(t, "  ep = %d\n", gen_divisor(r, gen_gcd(experts, dp), ok, k));
  }
  strbuf_printf(t, "  schedule = %s\n", interleaved ? "interleaved" : RNG_PICK(r, schedules));
  if (vs > 1 || (interleaved && rng_chance(r, 0.5))) strbuf_printf(t, "  virtual_stages = %d\n", vs);
  if (balanced) strbuf_printf(t, "  layer_partition = balanced\n");
  strbuf_printf(t, "  recompute = %s\n  dtype = %s\n  zero = %d\n", RNG_PICK(r, recomputes), dtype, rng_int(r, 4));
  if (rng_chance(r, 0.5)) strbuf_printf(t, "  sequence_parallel = %s\n", rng_chance(r, 0.5) ? "true" : "false");
  if (rng_chance(r, 0.5)) strbuf_printf(t, "  overlap_dp = %s\n", rng_chance(r, 0.5) ? "true" : "false");
  if (rng_chance(r, 0.5)) strbuf_printf(t, "  overlap_tp = %s\n", rng_chance(r, 0.5) ? "true" : "false");
  if (rng_chance(r, 0.3)) strbuf_printf(t, "  grad_dtype = %s\n", rng_chance(r, 0.5) ? "fp16" : "bf16");
  if (rng_chance(r, 0.3)) strbuf_printf(t, "  optimizer = sgd\n");
  if (placed) strbuf_printf(t, "  placement = [tp, dp, pp]\n");
  if (rng_chance(r, 0.3)) strbuf_printf(t, "  dp_bucket_elements = %d\n", 1000000 * (1 + rng_int(r, 500)));
  strbuf_printf(t, "}\nscenario s%d {\n  model = m%d\n  cluster = %s { nodes = %d }\n  plan = p%d\n}\n", i, i,
                systems[sys].name, nodes, i);
}

#endif
