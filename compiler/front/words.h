/* words.h - the words of the plan's enumerations that lowering reads as numbers (and a sweep
 * may vary): one table, X(NAME, "word") in code order, that schema's checks (schema.c), sema's
 * plan checks, lowering's word -> code mapping and its code -> word echo all expand.  A
 * schedule's code is its RtSchedule (llmp_rt.h: RT_<NAME>, asserted where lowering reads it);
 * recompute and layer_partition count from 0. */
#ifndef LLMP_WORDS_H
#define LLMP_WORDS_H

#define SCHEDULE_WORDS(X) X(GPIPE, "gpipe") X(1F1B, "1f1b") X(INTERLEAVED, "interleaved") X(ZERO_BUBBLE, "zero_bubble")
#define RECOMPUTE_WORDS(X) X(NONE, "none") X(SELECTIVE, "selective") X(FULL, "full")
#define PARTITION_WORDS(X) X(UNIFORM, "uniform") X(BALANCED, "balanced")

/* The expansions: a word of a string table, a code of an enumeration. */
#define WORD_STRING(e, w) w,
#define WORD_SCHED(e, w) SCHED_##e,
#define WORD_REC(e, w) REC_##e,
#define WORD_PART(e, w) PART_##e,

enum { SCHEDULE_WORDS(WORD_SCHED) SCHED_N };
enum { RECOMPUTE_WORDS(WORD_REC) REC_N };
enum { PARTITION_WORDS(WORD_PART) PART_N };

#endif
