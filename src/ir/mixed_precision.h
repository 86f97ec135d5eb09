/* gfxep — mixed precision: a partition lowered to float16 whose values outside float16's range stay
 * float32.
 *
 * precision=fp16 imports each partition twice: as the model declares it (float32) and lowered, with
 * every float32 value float16 (ort/compile.c). Float16 ends at 65504: a network without
 * normalization layers can carry activations beyond it, and lowered, those become inf and then NaN
 * on every output. The range guard (exec/range_guard.c) runs the float32 graph with range probes,
 * picks the nodes that touch a value near float16's limit, and composes a graph that runs those
 * nodes from the float32 import and all others from the lowered one, with casts where the two meet.
 */
#ifndef GFXEP_IR_MIXED_PRECISION_H
#define GFXEP_IR_MIXED_PRECISION_H

#include <stdint.h>

#include "ir/graph.h"

/* A value whose largest magnitude on the calibration input reaches this stays float32. Float16's
 * largest finite value is 65504; the margin of 8 leaves room for inputs brighter than the one the
 * guard calibrated on. */
#define IR_FP16_SAFE_MAX 8192.0f

/* Which values range probes watch. */
typedef enum ir_probe_set {
  IR_PROBE_FLOAT32_VALUES, /* every float32 value a node writes or the graph takes: max |x| of each */
  IR_PROBE_OUTPUTS,        /* each float32 graph output: sum |x|, which is NaN or inf iff the output has one */
} ir_probe_set;

/* Appends the probes to g: each probe is a scalar float32 graph output after the graph's own
 * outputs. probed[k] (allocated, the caller frees) is the value probe k watches. */
gfx_status ir_add_range_probes(ir_graph* g, ir_probe_set set, int** probed, int* n_probed);

/* The nodes of `full` (float32) that must stay float32: those reading or writing a float32 value
 * whose max |x| (max_abs, one per value of full; negative where unknown) reaches limit or is not
 * finite, and those reading a float32 constant beyond float16's range. keep gets one flag per node.
 * *worst is the value with the largest finite magnitude among the kept ones (or -1). */
int ir_float32_nodes(const ir_graph* full, const float* max_abs, float limit, uint8_t* keep, int* worst);

/* Composes the mixed graph: node k runs as full's node k where keep[k], else as lowered's node
 * first_lowered + k (lowered is full lowered node for node, after first_lowered input casts).
 * Values meet through Cast nodes; the graph's inputs and outputs keep full's types. */
gfx_status ir_mixed_graph(const ir_graph* full, const ir_graph* lowered, int first_lowered, const uint8_t* keep,
                          ir_graph** out);

#endif
