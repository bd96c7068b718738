/* results.h — the files of a results directory: the contract between the stages.
 *
 * `forkscope run CONFIG -o DIR` writes DIR/config.json, DIR/env.json and DIR/raw.jsonl (and
 * DIR/span.csv, DIR/instructions.csv if the config asks); `forkscope fit DIR` reads only
 * those and writes DIR/summary.csv, DIR/fits.csv and DIR/report.md; `forkscope plot DIR`
 * reads only DIR/summary.csv, DIR/fits.csv, DIR/span.csv (and DIR/env.json, DIR/config.json
 * for titles) and writes DIR/plots/.  So a user can refit or
 * replot without rerunning, and edit any of the inputs by hand.
 *
 * ---- DIR/config.json ---------------------------------------------------------------------
 * A verbatim copy of the configuration file that produced the sweep (see configs/README.md
 * for the format).  `--resume` refuses to continue if the given config differs from it.
 *
 * ---- DIR/env.json ------------------------------------------------------------------------
 * One JSON object: {"date": ISO-8601 UTC, "host": hostname, "kernel": uname -srvm,
 *   "cpu_model": string, "cores": online CPUs, "topology": hwloc summary string,
 *   "memory_bytes": total RAM, "git_revision": string or null, "git_dirty": bool,
 *   "bundle": null, or, run from make bundle's tree, its BUNDLE.txt as strings: {"build_id",
 *             "git_revision", "built", "glibc_build", "glibc_required", "march",
 *             "peer_march", "drivers", "peers", "libraries"} (git_revision is then its),
 *   "compilers": {"gcc": version string, "clang": version string},
 *   "drivers": {variant: {"path": ..., "flags": ..., "compiler": ...}, ...},
 *   "forkscope_version": string, "config_file": path given,
 *   "clock": {"source": "tsc" | "monotonic", "ns_per_tick", "calibration_ms", "fallback_reason",
 *             "use"}: the runtime's clock as calibrated on this machine (fk_clock_get),
 *   "peers_left_out": [the config's "peers" whose drivers were not built],
 *   "peer_kernels": {peer: " fib nqueens ... ", the kernels its driver listed (--kernels),
 *                    or null}: a resumed sweep must find both as they were (a sweep
 *                    started before peer_kernels was recorded is not checked for it)}
 *
 * ---- DIR/raw.jsonl -----------------------------------------------------------------------
 * One JSON object per line, one line per run (a run = one fresh driver process), appended
 * and fsync'd as each run finishes; never rewritten.  Fields:
 *   "schema": 1
 *   "run_id": string, unique in the file: "<cell_id>#<rep>"  (rep from 0)
 *   "cell_id": string "<benchmark>|<variant>|<workers>"; for calibrate runs the benchmark is
 *              "calibrate"
 *   "benchmark": the benchmark's name in the config (e.g. "fib", "T1", "uts-geo-small")
 *   "kernel": driver kernel (a name of `forkscope kernels`, or "calibrate")
 *   "params": {kernel option: value} as given to the driver
 *   "variant": "cont-seg-busy" | ... | "serial" | "omp" | "omp-llvm"
 *   "workers": integer P
 *   "rep": integer, the repetition index within the cell (from 0): which of its processes
 *          ("repetitions"), not a repetition inside the driver ("process_reps")
 *   "kind": "timed" | "calibrate"
 *   "oversubscribed": bool (P > online cores)
 *   "status": "ok"       driver exited 0, answer verified
 *             "wrong"    driver exited 3: the answer did not verify
 *             "crash"    killed by a signal it raised (SIGSEGV, SIGABRT, ...)
 *             "timeout"  killed by the harness at the time limit
 *             "memory"   stopped at the memory limit
 *             "error"    any other failure (bad exit status, unparsable output, exec failed)
 *   "exit_code": integer or null; "signal": signal name ("SIGSEGV") or null
 *   "wall_s": wall time of the whole process as the parent saw it
 *   "maxrss_kib": peak resident set of that process, from wait4(), in KiB
 *   "cgroup_peak_kib": the run's memory.peak under a cgroup-v2 memory limit (all it was
 *                  charged, page cache included), in KiB; null elsewhere
 *   "user_s", "sys_s": CPU time of that process (wait4)
 *   "time_s": the run's one time: the median of the driver's "times", its timed repetitions
 *             (the config's "process_reps", default 1; a command variant's: its time regex or
 *             wall time, once), or null if the run failed.  Every statistic over a cell (fit's
 *             summary.csv, compare, --dry-run's estimate of the noise) reads this one value per
 *             process; only modes.h's between-process test reads the "times" themselves
 *   "cpu_s": the CPU time (user + system, all threads) the driver's process spent during the
 *            timed repetition (median of its "cpu_times"), or null: what busy workers burn
 *            beside the time (the lazy scheduler's point); records from older drivers lack it
 *   "driver": the driver's JSON object as printed (null if none); with the config's "breakdown"
 *             (runtime variants: the drivers' --account times) it has "breakdown": {"seconds":
 *             {"work", "search", "steal", "join", "wait", "fiber", "sleep", "promote", "wall", "cpu"}: the
 *             workers' time over the driver's timed repetitions, summed over the workers,
 *             "per_worker": [the same per worker], "clock": {...}}
 *   "stderr_tail": the last <= 2 KiB the driver wrote to stderr (for failures; "" if none)
 *   "started": ISO-8601 UTC time the run started
 *
 * ---- DIR/summary.csv ---------------------------------------------------------------------
 * One header line, then one row per cell of kind timed (calibrate cells are folded in).
 * Columns, in this order:
 *   benchmark,kernel,variant,workers,oversubscribed,n_ok,n_failed,failures,
 *   time_median,time_mean,time_sd,time_se,time_min,time_max,
 *   mrss_median_kib,mrss_se_kib,calib_median_kib,calib_se_kib,mem_kib,mem_se_kib,
 *   speedup,speedup_se,efficiency,efficiency_se,cpu_median_s,cpu_se_s,span_bound,burdened_bound
 * Times in seconds.  cpu_median_s, cpu_se_s: the median and standard error of the runs'
 * cpu_s (empty when no run has one).  mem_kib = max(mrss_median - calib_median, 4) (the calibrated peak
 * memory, floored at 4 KiB as the paper did); mem_se_kib adds the two standard errors in
 * quadrature.  speedup = T_s / T_P with T_s the serial projection's time_median for the
 * same benchmark (Eq. 15); efficiency = speedup / P (Eq. 16); their standard errors by
 * propagation from the two time standard errors.  failures: "" or e.g. "timeout:2;crash:1".
 * span_bound, burdened_bound: from DIR/span.csv (the config's "span"; harness/run/span.h): the
 * work-span bound min(P, parallelism) on T1/T_P and the burdened estimate at this P; empty
 * for a benchmark without a measured span.
 * work_s,search_s,steal_s,join_s,wait_s,fiber_s,sleep_s,workers_wall_s (appended after
 * burdened_bound): where the workers' time went (the config's "breakdown"), seconds per
 * repetition summed over the workers, the mean over the cell's runs (means, so that the parts
 * add up to workers_wall_s, about P x T_P); inflation_ts, inflation_t1: work_s / T_s and work_s /
 * the variant's own time at P = 1 (work inflation).  Empty without a breakdown.
 * promotions_per_s (appended after inflation_t1): forkscope's runtime variants, publications
 * of private forks (a thief's request answered, a heartbeat's promotion, and on the cont-* builds a stolen frame publishing its own forks; not the forced publications)
 * per second of the timed repetitions, the median over the runs (the drivers' stats.publishes
 * over their times); empty for baselines and peers.
 * modes,modes_p,modes_sd_between,modes_sd_within,modes_d,modes_ratio,mode1_median_s,mode1_runs,
 * mode2_median_s,mode2_runs (appended after promotions_per_s): is the cell one distribution
 * (harness/analyze/modes.h, docs/compare.md): modes "ok", "too-few" (fewer than 6 runs and no
 * flag: too few runs to tell), "between-process" (the processes disagree far beyond the
 * repetitions inside each: the drivers' "times"), "bimodal" (the runs form two clusters), or
 * empty without a successful run; modes_p, modes_sd_between, modes_sd_within: the F test across
 * processes on log times and the SDs of log time between and within processes (empty unless 3
 * runs have >= 2 repetitions); modes_d, modes_ratio: Ashman's D of the best two-cluster split of
 * the runs' log times and the ratio of its centres (empty below 4 runs); mode1_*, mode2_*: the
 * two clusters' median time (s) and runs, fast then slow, only for a bimodal cell.
 * promote_s,promotion_ns (appended after mode2_runs): the breakdown's time promoting (seconds
 * per repetition summed over the workers, as work_s: the owner publishing when a thief's
 * request or a heartbeat's mark asks, and taking back slots it had published), and
 * τ, the time each promotion took, ns (each run's promote time over its publications, the
 * median over the runs that have both); empty without a breakdown, or without a publication.
 * Empty fields where a value cannot be computed (no successful run, no serial cell).
 *
 * ---- DIR/fits.csv --------------------------------------------------------------------------
 *   benchmark,variant,status,points,m1_kib,a,a_se,b,b_se,n,n_se,chi2_dof,note
 * The fit of Eq. 17, mem ~ a + b * M1 * P^n over the variant's cells of that benchmark
 * (weighted nonlinear least squares, GSL, b >= 0, n >= 0), M1 = the variant's own mem_kib
 * at P = 1.  status "ok", or "skipped" with the reason in note (e.g. "3 points, need 4",
 * "no P=1 cell").
 *
 * ---- DIR/span.csv ---------------------------------------------------------------------------
 * Written by `forkscope run` (or `forkscope slurm merge`, on the merging node) after the
 * timed runs if the config has "span": one row per benchmark it names, appended as each is
 * measured, a failed one measured again on --resume (the last row counts); columns in
 * harness/run/span.h (a row whose strands the clock did not resolve has its times and
 * parallelisms empty, and bounds with the DAG in strands).
 *
 * ---- DIR/report.md -------------------------------------------------------------------------
 * The experiment, the machine (from env.json), one results table per benchmark, the work
 * and span (from span.csv) with the bounds and any cell that beats its bound, a Table II
 * style table of fitted exponents n +- error (benchmarks x variants), "Where the time goes" (the
 * breakdown, harness/report/breakdown.c), "One distribution per cell?" (the cells summary.csv's
 * modes flags, with their modes, and how many had too few runs to tell), and the failures.
 */
#ifndef HX_RESULTS_H
#define HX_RESULTS_H

#define HX_RESULTS_SCHEMA 1

#endif
