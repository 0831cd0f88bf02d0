/* ops_accuracy_known.h - targets ops_accuracy misses today (from its FAIL lines; see the
 * report of the commit that lists them).  One "SYSTEM OPERATOR fwd|bwd|dur" per line. */
"a100-sxm4-80gb-perlmutter embedding fwd", "a100-sxm4-80gb-perlmutter embedding bwd", "gh200-vista embedding fwd",
    "gh200-vista embedding bwd", "gh200-vista lastStage_optimizer dur", "gh200-vista middleStage_optimizer dur",
