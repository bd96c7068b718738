/* slurm.h — `forkscope slurm`: a sweep as a SLURM job array.
 *
 *   submit CONFIG [-o DIR] [--shards N] [--max-parallel K] [--partition P] [--time T]
 *          [--cores C] [--sbatch-arg ARG]... [--no-submit]
 *   run-shard DIR K      (what array task K runs; also by hand)
 *   status DIR | resubmit DIR | merge DIR
 *
 * The plan is the local sweep's (harness/run/sweep.h), built for the nodes' core count (--cores,
 * default this machine's).  Its cells are grouped into families — a benchmark at one P with
 * all its variants (what `forkscope compare` pairs), or the calibrate cells at one P — and
 * the families into N shards by estimated time (largest first, onto the lightest shard): a
 * family is never split, so what is compared ran on one node.  DIR gets config.json,
 * slurm/manifest.json (shard k's cells, the run count, the jobs submitted), slurm/job.sbatch
 * (an array of N tasks, at most K at once, each on a whole node) and slurm/out/.
 *
 * Array task k runs `forkscope slurm run-shard DIR k`: the local sweep restricted to shard k's
 * cells, into DIR/shards/k/ (its config.json, its node's env.json, raw.jsonl appended and
 * fsync'd per run, each record naming its host); run again, it skips the runs recorded.
 * status counts each shard's recorded runs against its plan (the files win over SLURM's
 * state, which is shown beside them); resubmit submits the shards that miss runs and are not
 * queued; merge writes DIR/raw.jsonl (duplicates dropped) and env.json, refusing a cell whose
 * runs come from nodes of different CPU models, counts instructions if the configuration asks
 * (here, once: callgrind's counts do not depend on the node), then fits and plots DIR as
 * `run` does. */
#ifndef HX_SLURM_H
#define HX_SLURM_H

int hx_cmd_slurm(int argc, char **argv);

#endif
