/* hw.h - from checked `gpu` and `cluster` declarations to the runtime's RtGpu and RtCluster.
 *
 * The runtime never reads .llmp: this module takes the values sema evaluated (base units)
 * and fills the runtime's structs, loading the calibration tables a declaration names
 * (`calibration = "NAME"`: the folder hw/calibration/NAME/ of the data folder, or, when the
 * name holds a `/`, a folder relative to the file that declares it).
 *
 * Ownership: an HwSet owns everything it returns (names, structs, tables); hw_free() releases
 * it.  Errors (a missing figure, an unreadable table) are reported to the Diag. */
#ifndef LLMP_HW_H
#define LLMP_HW_H

#include <stdint.h>

#include "llmp_rt.h"
#include "front/sema.h"

typedef struct HwSet HwSet;

HwSet *hw_new(Sema *s, Diag *d, const SemaOptions *opt);
void hw_free(HwSet *h);
/* From now on, gpus and clusters are built without the tables their `calibration` names (the
 * datasheet model alone): for `llmp fit`, which fits that model and may be writing the very
 * folder named, missing or stale.  Call before the first hw_gpu()/hw_cluster(). */
void hw_without_calibration(HwSet *h);

/* NULL after reporting why (not declared, a figure missing, a table that does not load). */
const RtGpu *hw_gpu(HwSet *h, const char *name);
const RtCluster *hw_cluster(HwSet *h, const char *name);
/* The same from a declaration (a scenario's `cluster = selene { nodes = 192 }`). */
const RtCluster *hw_cluster_decl(HwSet *h, Decl *decl);
/* c on a copy of g (c's gpu with a stack's calibration: tables, sustained figures, attention
 * rate, fused kernels), owned by h and shared by equal requests; c itself when g changes
 * nothing. */
const RtCluster *hw_cluster_variant(HwSet *h, const RtCluster *c, const RtGpu *g);
/* The operator tables of the folder `calibration` names (as a gpu's `calibration`, relative to
 * the file that declares decl when it holds a `/`), each folder loaded once; NULL with
 * *failed after reporting why they do not load, NULL without for no name. */
const RtCalib *hw_calib_named(HwSet *h, const char *calibration, Decl *decl, bool *failed);

/* FNV-1a (hash.h) from hash over the calibration tables loaded so far, in load order: each
 * folder's .tbl files by name, with their bytes.  For a sweep's identity (llmp merge). */
uint64_t hw_tables_hash(const HwSet *h, uint64_t hash);

/* A program's view of the hardware (llmp op, llmp fit, gen_builtin, hw_consistency): hw/ of
 * so's data folder plus `files` checked as one compilation (the options copied), its
 * diagnostics to stderr.  Open returns the HwSet, or NULL once the errors
 * are reported; close (always, also after NULL) releases everything and flushes the
 * diagnostics.  The session must not move while open: the HwSet points into it. */
typedef struct HwSession {
  Diag diag;
  SemaOptions opt;
  Sema *sema;
  HwSet *hw;
} HwSession;

HwSet *hw_session_open(HwSession *x, const char *name, const SemaOptions *so, const char *const *files, int nfiles);
void hw_session_close(HwSession *x);

#endif
