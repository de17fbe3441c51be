/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sim/resultsdb.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Version 3 added runs.mode and this table, version 4 its machine_drift; a
 * version 2 or 3 file gets what it lacks when a run is appended to it
 * (lbs_recorder_open). */
#define VALIDATIONS_SQL \
	"CREATE TABLE validations (             -- lbsim validate: a simulated run against its measured twin\n" \
	"  validation_id INTEGER NOT NULL,\n" \
	"  policy TEXT NOT NULL,\n" \
	"  simulated_run INTEGER NOT NULL,      -- runs.run_id of the simulation\n" \
	"  measured_runs TEXT NOT NULL,         -- runs.run_id of each testbed repeat, comma-separated\n" \
	"  simulated_iteration_s REAL NOT NULL, -- mean iteration time\n" \
	"  measured_iteration_s REAL NOT NULL,  -- mean over the repeats of their mean iteration time\n" \
	"  measured_iteration_sd_s REAL,        -- its sample standard deviation over the repeats\n" \
	"  simulated_speedup REAL,              -- static's mean iteration time over this one's\n" \
	"  measured_speedup REAL,\n" \
	"  measured_speedup_sd REAL,\n" \
	"  error_mean REAL NOT NULL,            -- per-iteration |simulated - measured| / measured\n" \
	"  error_p95 REAL NOT NULL,\n" \
	"  batch_difference_mean REAL NOT NULL, -- share of B placed differently, mean over iterations\n" \
	"  created_at TEXT NOT NULL,\n" \
	"  machine_drift REAL,                  -- the machine's own speed moved this much during the runs\n" \
	"  PRIMARY KEY (validation_id, policy)\n" \
	") WITHOUT ROWID;\n"

const char lbs_schema_sql[] =
	"CREATE TABLE runs (\n"
	"  run_id INTEGER PRIMARY KEY,\n"
	"  scenario TEXT NOT NULL,              -- [run] name\n"
	"  scenario_path TEXT NOT NULL,\n"
	"  description TEXT NOT NULL,\n"
	"  policy TEXT NOT NULL,\n"
	"  seed INTEGER NOT NULL,\n"
	"  n_workers INTEGER NOT NULL,\n"
	"  global_batch_samples INTEGER NOT NULL,\n"
	"  gradient_bytes REAL NOT NULL,\n"
	"  iterations INTEGER NOT NULL,\n"
	"  iterations_per_epoch INTEGER,       -- NULL unless the run is given in epochs\n"
	"  sim_time_s REAL NOT NULL,           -- simulated time at the end of the last iteration\n"
	"  mean_iteration_s REAL NOT NULL,\n"
	"  mean_compute_s REAL NOT NULL,       -- barrier release to last worker done\n"
	"  mean_aggregation_s REAL NOT NULL,\n"
	"  mean_straggler_gap_s REAL NOT NULL,\n"
	"  mean_decision_s REAL NOT NULL,      -- real time the policy spent per iteration\n"
	"  throughput_samples_per_s REAL NOT NULL,\n"
	"  wall_s REAL NOT NULL,               -- real time the simulation took\n"
	"  events INTEGER NOT NULL,            -- events the engine dispatched\n"
	"  detail TEXT NOT NULL,               -- runs | iterations | workers\n"
	"  lbsim_version TEXT NOT NULL,\n"
	"  created_at TEXT NOT NULL,           -- UTC, ISO 8601\n"
	"  mode TEXT NOT NULL DEFAULT 'simulated' -- simulated | measured (lbsim testbed)\n"
	");\n"
	"CREATE TABLE run_config (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  section TEXT NOT NULL,\n"
	"  key TEXT NOT NULL,\n"
	"  value TEXT NOT NULL,                -- as written, or the default\n"
	"  PRIMARY KEY (run_id, section, key)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE workers (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  worker INTEGER NOT NULL,\n"
	"  group_name TEXT NOT NULL,\n"
	"  device TEXT NOT NULL,               -- cpu | gpu\n"
	"  cost_model TEXT NOT NULL,\n"
	"  max_batch_samples INTEGER,          -- NULL: no memory cap\n"
	"  availability REAL NOT NULL,\n"
	"  PRIMARY KEY (run_id, worker)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE iterations (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  iteration INTEGER NOT NULL,\n"
	"  epoch INTEGER NOT NULL,\n"
	"  start_s REAL NOT NULL,\n"
	"  compute_end_s REAL NOT NULL,\n"
	"  end_s REAL NOT NULL,\n"
	"  straggler_gap_s REAL NOT NULL,      -- slowest minus fastest compute time\n"
	"  aggregation_s REAL NOT NULL,\n"
	"  decision_s REAL NOT NULL,\n"
	"  global_batch_samples INTEGER NOT NULL, -- samples processed (B unless the policy shrinks it)\n"
	"  PRIMARY KEY (run_id, iteration)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE batches (                 -- batch sizes the policy sets, written when they change\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  iteration INTEGER NOT NULL,          -- first iteration with these sizes\n"
	"  worker INTEGER NOT NULL,\n"
	"  batch_samples INTEGER NOT NULL,\n"
	"  PRIMARY KEY (run_id, iteration, worker)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE predictor_errors (        -- lbsim predict: one-step-ahead replay scores\n"
	"  eval_id INTEGER NOT NULL,\n"
	"  source TEXT NOT NULL,                -- what was replayed\n"
	"  predictor TEXT NOT NULL,\n"
	"  series INTEGER NOT NULL,             -- series replayed (e.g. workers)\n"
	"  steps INTEGER NOT NULL,              -- forecasts scored\n"
	"  rmse REAL,                           -- in the series' unit (samples/s for speeds)\n"
	"  mae REAL,\n"
	"  mape_percent REAL,\n"
	"  fallbacks INTEGER NOT NULL,          -- forecasts replaced by the last value\n"
	"  created_at TEXT NOT NULL,\n"
	"  PRIMARY KEY (eval_id, predictor)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE policy_vars (             -- the policy's state at the end of each iteration\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  iteration INTEGER NOT NULL,\n"
	"  name TEXT NOT NULL,\n"
	"  value REAL NOT NULL,\n"
	"  PRIMARY KEY (run_id, iteration, name)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE worker_iterations (\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  iteration INTEGER NOT NULL,\n"
	"  worker INTEGER NOT NULL,\n"
	"  batch INTEGER NOT NULL,             -- samples\n"
	"  compute_s REAL NOT NULL,\n"
	"  wait_s REAL NOT NULL,               -- idle at the barrier before aggregation\n"
	"  predicted_speed REAL,               -- samples/s the policy's predictor expected (NULL: none)\n"
	"  cpu_util REAL,                      -- readings at the iteration's start, 0..1 (NULL: none)\n"
	"  mem_util REAL,\n"
	"  PRIMARY KEY (run_id, iteration, worker)\n"
	") WITHOUT ROWID;\n"
	VALIDATIONS_SQL;

const char lbs_validations_sql[] = VALIDATIONS_SQL;

/* Written by lbsim sweep and merge. */
const char lbs_run_targets_sql[] =
	"CREATE TABLE IF NOT EXISTS run_targets ( -- [convergence], [sync]: time to target, dropped gradients\n"
	"  run_id INTEGER PRIMARY KEY REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  progress REAL,                 -- the way to the target made (1 = reached); NULL: no model\n"
	"  steps_to_target INTEGER,       -- the step that reached it; NULL: not within the run\n"
	"  samples_to_target INTEGER,     -- samples whose gradients counted, to then\n"
	"  time_to_target_s REAL,         -- simulated time at the end of that step\n"
	"  dropped_samples INTEGER NOT NULL -- samples whose gradients were dropped ([sync] backup)\n"
	");\n";

/* Written with [sync] mode = ssp or asp. */
const char lbs_run_staleness_sql[] =
	"CREATE TABLE IF NOT EXISTS run_staleness ( -- [sync] ssp, asp: how stale the updates were\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  staleness INTEGER NOT NULL,    -- ssp: clocks a step's read may miss; asp: updates applied between a\n"
	"                                 -- worker's read of the model and its own update\n"
	"  updates INTEGER NOT NULL,      -- ssp: workers' steps; asp: updates\n"
	"  PRIMARY KEY (run_id, staleness)\n"
	") WITHOUT ROWID;\n";

/* Written by lbsim validate with a measured target. */
const char lbs_validation_targets_sql[] =
	"CREATE TABLE IF NOT EXISTS validation_targets ( -- lbsim validate: simulated against measured time to target\n"
	"  validation_id INTEGER NOT NULL,     -- validations.validation_id\n"
	"  policy TEXT NOT NULL,\n"
	"  target_loss REAL NOT NULL,          -- [testbed] target_loss\n"
	"  simulated_steps INTEGER,            -- the simulated twin's steps to target; NULL: not reached\n"
	"  simulated_time_s REAL,              -- ... and its time to target\n"
	"  measured_reached INTEGER NOT NULL,  -- testbed repeats that reached the target\n"
	"  repeats INTEGER NOT NULL,           -- of\n"
	"  measured_steps REAL,                -- mean over those repeats; NULL: none reached it\n"
	"  measured_steps_sd REAL,             -- sample standard deviation (NULL: fewer than 2)\n"
	"  measured_time_s REAL,\n"
	"  measured_time_sd_s REAL,\n"
	"  PRIMARY KEY (validation_id, policy)\n"
	") WITHOUT ROWID;\n";

/* Written by lbsim validate with a measured target and a simulated
 * ensemble (--sim-seeds): each seed's simulated run. */
const char lbs_validation_seeds_sql[] =
	"CREATE TABLE IF NOT EXISTS validation_seeds ( -- lbsim validate: the simulated ensemble's time to target\n"
	"  validation_id INTEGER NOT NULL,     -- validation_targets.validation_id\n"
	"  policy TEXT NOT NULL,\n"
	"  seed INTEGER NOT NULL,              -- the simulated run's [run] seed\n"
	"  run_id INTEGER NOT NULL,            -- the simulated run (runs.run_id)\n"
	"  simulated_steps INTEGER,            -- its steps to target; NULL: not reached\n"
	"  simulated_time_s REAL,              -- ... and its time to target\n"
	"  PRIMARY KEY (validation_id, policy, seed)\n"
	") WITHOUT ROWID;\n";

/* Written by the testbed's measured runs of the teacher-student task. */
const char lbs_run_losses_sql[] =
	"CREATE TABLE IF NOT EXISTS run_losses ( -- measured: the teacher-student task's held-out loss\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  step INTEGER NOT NULL,         -- after this many steps (iterations)\n"
	"  loss REAL NOT NULL,            -- mean squared error on the held-out set\n"
	"  PRIMARY KEY (run_id, step)\n"
	") WITHOUT ROWID;\n";

const char lbs_sweep_points_sql[] =
	"CREATE TABLE IF NOT EXISTS sweep_points ( -- written by lbsim sweep and merge\n"
	"  run_id INTEGER NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,\n"
	"  sweep TEXT NOT NULL,                -- [sweep] name, or the sweep file's name\n"
	"  sweep_hash TEXT NOT NULL,           -- identity of the sweep's expansion\n"
	"  point INTEGER NOT NULL,             -- the point's number in the expansion, from 1\n"
	"  key TEXT NOT NULL,                  -- SECTION.KEY of the scenario, policy or seed\n"
	"  value TEXT NOT NULL,\n"
	"  PRIMARY KEY (run_id, key)\n"
	") WITHOUT ROWID;\n"
	"CREATE INDEX IF NOT EXISTS sweep_points_by_point ON sweep_points (sweep_hash, point);\n";

/* Written by lbsim whatif. */
const char lbs_whatif_schema_sql[] =
	"CREATE TABLE IF NOT EXISTS whatif_runs ( -- lbsim whatif: one row per analysed trace\n"
	"  whatif_id INTEGER PRIMARY KEY,\n"
	"  trace TEXT NOT NULL,                -- the trace file as given\n"
	"  meta TEXT NOT NULL,                 -- the metadata file as given\n"
	"  trial_name TEXT NOT NULL,\n"
	"  dp_size INTEGER NOT NULL,           -- the metadata's sizes\n"
	"  dsp_size INTEGER NOT NULL,\n"
	"  pp_size INTEGER NOT NULL,\n"
	"  tp_size INTEGER NOT NULL,\n"
	"  vpp_size INTEGER NOT NULL,\n"
	"  world_size INTEGER NOT NULL,\n"
	"  rows INTEGER NOT NULL,              -- op instances read\n"
	"  steps INTEGER NOT NULL,\n"
	"  workers INTEGER NOT NULL,           -- (dp_rank, stage) pairs recorded\n"
	"  ops INTEGER NOT NULL,               -- ops of the template step (dp_rank 0)\n"
	"  edges INTEGER NOT NULL,             -- their dependencies\n"
	"  groups INTEGER NOT NULL,            -- communication groups\n"
	"  sync_ops INTEGER NOT NULL,          -- ops in groups that span the dp_ranks\n"
	"  lbsim_version TEXT NOT NULL,\n"
	"  created_at TEXT NOT NULL            -- UTC, ISO 8601\n"
	");\n"
	"CREATE TABLE IF NOT EXISTS whatif_metrics ( -- one figure a row: S, L, M_S, M_W, ...\n"
	"  whatif_id INTEGER NOT NULL REFERENCES whatif_runs(whatif_id) ON DELETE CASCADE,\n"
	"  name TEXT NOT NULL,\n"
	"  value REAL,                         -- NULL: not computed (S < 1.03)\n"
	"  PRIMARY KEY (whatif_id, name)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE IF NOT EXISTS whatif_steps ( -- per traced step, seconds\n"
	"  whatif_id INTEGER NOT NULL REFERENCES whatif_runs(whatif_id) ON DELETE CASCADE,\n"
	"  step INTEGER NOT NULL,\n"
	"  t_meas REAL NOT NULL,               -- measured: last end - first start\n"
	"  t_base REAL NOT NULL,               -- replay with the trace's launch delays\n"
	"  t_nodelay REAL NOT NULL,            -- replay without launch delays\n"
	"  t_ideal REAL NOT NULL,              -- replay with every op at its type's ideal value\n"
	"  S REAL NOT NULL,                    -- t_nodelay / t_ideal\n"
	"  L REAL NOT NULL,                    -- t_meas / t_nodelay\n"
	"  PRIMARY KEY (whatif_id, step)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE IF NOT EXISTS whatif_slowdowns ( -- S_t, S_dp, S_stage, S_w\n"
	"  whatif_id INTEGER NOT NULL REFERENCES whatif_runs(whatif_id) ON DELETE CASCADE,\n"
	"  metric TEXT NOT NULL,               -- S_t | S_dp | S_stage | S_w\n"
	"  name TEXT NOT NULL,                 -- op type, dp_rank, stage or global rank\n"
	"  dp_rank INTEGER,                    -- NULL where it does not apply\n"
	"  stage INTEGER,\n"
	"  rank INTEGER,\n"
	"  step INTEGER,                       -- NULL: over all steps\n"
	"  value REAL NOT NULL\n"
	");\n"
	"CREATE TABLE IF NOT EXISTS whatif_ideal ( -- the ideal value of each op type\n"
	"  whatif_id INTEGER NOT NULL REFERENCES whatif_runs(whatif_id) ON DELETE CASCADE,\n"
	"  optype TEXT NOT NULL,\n"
	"  role TEXT NOT NULL,                 -- duration (local ops) | transfer (group members)\n"
	"  pooled TEXT NOT NULL,               -- mean | median\n"
	"  value REAL NOT NULL,                -- seconds\n"
	"  PRIMARY KEY (whatif_id, optype, role)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE IF NOT EXISTS whatif_tests ( -- removal/addition tests\n"
	"  whatif_id INTEGER NOT NULL REFERENCES whatif_runs(whatif_id) ON DELETE CASCADE,\n"
	"  name TEXT NOT NULL,                 -- M_S | M_W\n"
	"  workers TEXT NOT NULL,              -- the set W\n"
	"  t_rem REAL NOT NULL,                -- mean step time, W ideal, the rest as traced\n"
	"  t_add REAL NOT NULL,                -- mean step time, W as traced, the rest ideal\n"
	"  t_ori REAL NOT NULL,                -- mean no-delay step time\n"
	"  t_ideal REAL NOT NULL,\n"
	"  rem REAL NOT NULL,                  -- (t_ori - t_rem) / (t_ori - t_ideal): the figure itself\n"
	"  add_fraction REAL NOT NULL,         -- (t_add - t_ideal) / (t_ori - t_ideal)\n"
	"  PRIMARY KEY (whatif_id, name)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE IF NOT EXISTS whatif_timeline ( -- the step with the largest S, op by op\n"
	"  whatif_id INTEGER NOT NULL REFERENCES whatif_runs(whatif_id) ON DELETE CASCADE,\n"
	"  replay TEXT NOT NULL,               -- traced (the trace's rows) | ideal (the ideal replay)\n"
	"  step INTEGER NOT NULL,\n"
	"  dp_rank INTEGER NOT NULL,\n"
	"  stage INTEGER NOT NULL,\n"
	"  optype TEXT NOT NULL,\n"
	"  seq_id INTEGER NOT NULL,\n"
	"  start_s REAL NOT NULL,              -- from the step's start\n"
	"  end_s REAL NOT NULL,\n"
	"  PRIMARY KEY (whatif_id, replay, dp_rank, stage, optype, seq_id)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE IF NOT EXISTS whatif_policies ( -- counterfactual replays\n"
	"  whatif_id INTEGER NOT NULL REFERENCES whatif_runs(whatif_id) ON DELETE CASCADE,\n"
	"  policy TEXT NOT NULL,\n"
	"  description TEXT NOT NULL,\n"
	"  mean_step_s REAL NOT NULL,\n"
	"  recovered REAL NOT NULL,            -- fraction of t_nodelay - t_ideal the policy removes\n"
	"  PRIMARY KEY (whatif_id, policy)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE IF NOT EXISTS whatif_forward ( -- --forward: the traced job simulated forward\n"
	"  whatif_id INTEGER NOT NULL REFERENCES whatif_runs(whatif_id) ON DELETE CASCADE,\n"
	"  policy TEXT NOT NULL,                -- a hybrid policy; 'ideal': static on the ideal job\n"
	"  counterfactual TEXT,                 -- the whatif_policies row of the matching fix\n"
	"  mean_step_s REAL NOT NULL,\n"
	"  recovered REAL,                      -- (static - policy) / (static - ideal), forward\n"
	"  changes INTEGER NOT NULL,            -- steps whose split, partition or packing it changed\n"
	"  counterfactual_recovered REAL,       -- that counterfactual's recovered share\n"
	"  blocks INTEGER NOT NULL,             -- equal blocks a chunk (0: no re-split)\n"
	"  delay INTEGER NOT NULL,              -- --delay: steps between a decision and its effect\n"
	"  PRIMARY KEY (whatif_id, policy)\n"
	") WITHOUT ROWID;\n";

/* Written by a run of a hybrid scenario (hybrid/, doc/hybrid.md). */
const char lbs_hybrid_schema_sql[] =
	"CREATE TABLE IF NOT EXISTS hybrid_runs ( -- a hybrid-parallel job simulated forward\n"
	"  hybrid_id INTEGER PRIMARY KEY,\n"
	"  name TEXT NOT NULL,\n"
	"  scenario_path TEXT NOT NULL,\n"
	"  seed INTEGER NOT NULL,\n"
	"  model TEXT NOT NULL,\n"
	"  sequence_length INTEGER NOT NULL,\n"
	"  dp INTEGER NOT NULL,\n"
	"  pp INTEGER NOT NULL,\n"
	"  tp INTEGER NOT NULL,\n"
	"  virtual_stages INTEGER NOT NULL,\n"
	"  micro_batch INTEGER NOT NULL,\n"
	"  micro_batches INTEGER NOT NULL,\n"
	"  schedule TEXT NOT NULL,\n"
	"  zero_stage INTEGER NOT NULL,\n"
	"  gpus INTEGER NOT NULL,\n"
	"  steps INTEGER NOT NULL,\n"
	"  mean_step_s REAL NOT NULL,\n"
	"  tokens_per_s REAL NOT NULL,\n"
	"  model_flops_per_step REAL NOT NULL,   -- every GPU's GEMM FLOPs, recomputation included\n"
	"  mfu REAL NOT NULL,                    -- model_flops_per_step / (mean_step_s x the GPUs' peak)\n"
	"  events INTEGER NOT NULL,\n"
	"  wall_s REAL NOT NULL,\n"
	"  lbsim_version TEXT NOT NULL,\n"
	"  created_at TEXT NOT NULL\n"
	");\n"
	"CREATE TABLE IF NOT EXISTS hybrid_config ( -- every key's effective value\n"
	"  hybrid_id INTEGER NOT NULL REFERENCES hybrid_runs(hybrid_id) ON DELETE CASCADE,\n"
	"  section TEXT NOT NULL,\n"
	"  key TEXT NOT NULL,\n"
	"  value TEXT NOT NULL,\n"
	"  PRIMARY KEY (hybrid_id, section, key)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE IF NOT EXISTS hybrid_steps ( -- one row a step, seconds\n"
	"  hybrid_id INTEGER NOT NULL REFERENCES hybrid_runs(hybrid_id) ON DELETE CASCADE,\n"
	"  step INTEGER NOT NULL,\n"
	"  start_s REAL NOT NULL,\n"
	"  step_s REAL NOT NULL,\n"
	"  PRIMARY KEY (hybrid_id, step)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE IF NOT EXISTS hybrid_groups ( -- per step and (replica, stage) group; the five sum to step_s\n"
	"  hybrid_id INTEGER NOT NULL REFERENCES hybrid_runs(hybrid_id) ON DELETE CASCADE,\n"
	"  step INTEGER NOT NULL,\n"
	"  dp_rank INTEGER NOT NULL,\n"
	"  stage INTEGER NOT NULL,\n"
	"  rank INTEGER NOT NULL,                -- global rank of the group's first GPU\n"
	"  compute_s REAL NOT NULL,              -- forward and backward passes, tensor-parallel collectives in them\n"
	"  bubble_s REAL NOT NULL,               -- idle, the pipeline waiting for a peer stage\n"
	"  comm_s REAL NOT NULL,                 -- exposed communication: transfers and collectives, no compute\n"
	"  wait_s REAL NOT NULL,                 -- arrived at a collective, waiting for other replicas\n"
	"  optimizer_s REAL NOT NULL,\n"
	"  PRIMARY KEY (hybrid_id, step, dp_rank, stage)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE IF NOT EXISTS hybrid_timeline ( -- every step op by op, or the longest\n"
	"  hybrid_id INTEGER NOT NULL REFERENCES hybrid_runs(hybrid_id) ON DELETE CASCADE,\n"
	"  step INTEGER NOT NULL,\n"
	"  dp_rank INTEGER NOT NULL,\n"
	"  stage INTEGER NOT NULL,\n"
	"  optype TEXT NOT NULL,                -- an op type of the per-operation trace format (doc/whatif.md)\n"
	"  seq_id INTEGER NOT NULL,\n"
	"  mc INTEGER NOT NULL,                 -- its model chunk, -1 none\n"
	"  mb INTEGER NOT NULL,                 -- its micro-batch, -1 none\n"
	"  start_s REAL NOT NULL,               -- from the step's start\n"
	"  end_s REAL NOT NULL,\n"
	"  PRIMARY KEY (hybrid_id, step, dp_rank, stage, optype, seq_id)\n"
	") WITHOUT ROWID;\n"
	"CREATE VIEW IF NOT EXISTS hybrid_shares AS -- per run: mean shares of the step over groups and steps\n"
	"SELECT g.hybrid_id, r.name, r.mean_step_s,\n"
	"  avg(g.compute_s / s.step_s) AS compute_share, avg(g.bubble_s / s.step_s) AS bubble_share,\n"
	"  avg(g.comm_s / s.step_s) AS comm_share, avg(g.wait_s / s.step_s) AS wait_share,\n"
	"  avg(g.optimizer_s / s.step_s) AS optimizer_share\n"
	"FROM hybrid_groups g JOIN hybrid_steps s USING (hybrid_id, step) JOIN hybrid_runs r USING (hybrid_id)\n"
	"GROUP BY g.hybrid_id;\n";

/* Written by a run of a hybrid scenario beside lbs_hybrid_schema_sql's
 * tables: its balancing policy's decisions (hybrid/policy.h). */
const char lbs_hybrid_policy_schema_sql[] =
	"CREATE TABLE IF NOT EXISTS hybrid_decisions ( -- one row a step: the policy's decision before it\n"
	"  hybrid_id INTEGER NOT NULL REFERENCES hybrid_runs(hybrid_id) ON DELETE CASCADE,\n"
	"  step INTEGER NOT NULL,\n"
	"  policy TEXT NOT NULL,\n"
	"  changed INTEGER NOT NULL,             -- 1: the replicas' micro-batches changed before this step\n"
	"  decision_s REAL NOT NULL,             -- real (wall) time the policy took to decide\n"
	"  action_s REAL NOT NULL,               -- simulated pause before the step: moving blocks between stages\n"
	"  PRIMARY KEY (hybrid_id, step)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE IF NOT EXISTS hybrid_partitions ( -- per step and stage: its transformer blocks (a chunk's, with v > 1)\n"
	"  hybrid_id INTEGER NOT NULL REFERENCES hybrid_runs(hybrid_id) ON DELETE CASCADE,\n"
	"  step INTEGER NOT NULL,\n"
	"  stage INTEGER NOT NULL,\n"
	"  blocks INTEGER NOT NULL,\n"
	"  PRIMARY KEY (hybrid_id, step, stage)\n"
	") WITHOUT ROWID;\n"
	"CREATE TABLE IF NOT EXISTS hybrid_replicas ( -- per step and replica: its share of the global batch\n"
	"  hybrid_id INTEGER NOT NULL REFERENCES hybrid_runs(hybrid_id) ON DELETE CASCADE,\n"
	"  step INTEGER NOT NULL,\n"
	"  dp_rank INTEGER NOT NULL,\n"
	"  micro_batches INTEGER NOT NULL,       -- its gradient is weighted micro_batches / the step's sum\n"
	"  PRIMARY KEY (hybrid_id, step, dp_rank)\n"
	") WITHOUT ROWID;\n"
	"CREATE VIEW IF NOT EXISTS hybrid_policy_summary AS -- per run: its policy, steps and time to do them\n"
	"SELECT r.hybrid_id, r.name, r.seed, d.policy, r.steps, r.mean_step_s,\n"
	"  (SELECT max(start_s + step_s) FROM hybrid_steps s WHERE s.hybrid_id = r.hybrid_id) AS total_s,\n"
	"  sum(d.action_s) AS action_s, sum(d.changed) AS changes, avg(d.decision_s) AS mean_decision_s\n"
	"FROM hybrid_runs r JOIN hybrid_decisions d USING (hybrid_id)\n"
	"GROUP BY r.hybrid_id;\n";

/* The analysis views: those of views.sql and the two written for each file
 * (the unit tests check that this list is theirs). */
const char *const lbs_results_views[] = {
	"run_summary", "worker_summary", "group_summary", "run_setting", "speedup", "run_point",
	"speedup_by_point", "speedup_by_size", "straggler_gap_cdf", "straggler_gap_stats", "epoch_times",
	"policy_time_to_epochs", "policy_time_to_iterations", "iteration_times", "batch_changes",
	"run_variant", "run_unique", "t95", "time_by_point", "run_keys",
	"hybrid_shares", /* lbs_hybrid_schema_sql's */
	"hybrid_policy_summary", /* lbs_hybrid_policy_schema_sql's */
	NULL,
};

/* The columns and table that a version added (doc/results.md): a file of an
 * older version lacks them, and gets them when a run is appended to it. */
static const struct {
	const char *table, *column; /* column NULL: the whole table */
	int since;
	const char *definition;     /* the column's, as the upgrade adds it */
} added[] = {
	{ "runs", "mode", 3, "mode TEXT NOT NULL DEFAULT 'simulated'" },
	{ "validations", NULL, 3, NULL },
	{ "validations", "machine_drift", 4, "machine_drift REAL" },
};

/* The tables every results file of version `version` holds. */
static bool required(const char *table, int version)
{
	static const char *const core[] = { "runs", "run_config", "workers", "iterations", "batches",
					    "predictor_errors", "policy_vars", "worker_iterations",
					    "validations" };
	for (size_t i = 0; i < sizeof added / sizeof added[0]; i++)
		if (!added[i].column && !strcmp(added[i].table, table) && version < added[i].since)
			return false;
	for (size_t i = 0; i < sizeof core / sizeof core[0]; i++)
		if (!strcmp(core[i], table))
			return true;
	return false;
}

static bool column_added_after(const char *table, const char *column, int version)
{
	for (size_t i = 0; i < sizeof added / sizeof added[0]; i++)
		if (added[i].column && !strcmp(added[i].table, table) && !strcmp(added[i].column, column))
			return version < added[i].since;
	return false;
}

/* The tokens of an SQL text, malloc'd: comments and white space outside
 * quotes dropped, letters outside quotes in lower case. Two declarations
 * are the same when their canonical texts are: so comments, which lbsim
 * has reworded over versions, and the layout that ALTER TABLE leaves do
 * not matter. NULL when out of memory. */
static char *canonical(const char *sql)
{
	size_t n = strlen(sql);
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	for (const char *p = sql; *p;) {
		char close = *p == '\'' ? '\'' : *p == '"' ? '"' : *p == '`' ? '`' : *p == '[' ? ']' : 0;
		if (close) { /* a quoted string or name, doubled closing quotes inside */
			*o++ = *p++;
			while (*p) {
				if (*p == close && (close == ']' || p[1] != close)) {
					*o++ = *p++;
					break;
				}
				if (*p == close)
					*o++ = *p++;
				*o++ = *p++;
			}
		} else if (p[0] == '-' && p[1] == '-') {
			p += strcspn(p, "\n");
		} else if (p[0] == '/' && p[1] == '*') {
			const char *end = strstr(p + 2, "*/");
			p = end ? end + 2 : p + strlen(p);
		} else if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v') {
			p++;
		} else {
			*o++ = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
			p++;
		}
	}
	*o = '\0';
	return out;
}

/* Whether the CREATE TABLE text of schema.table is the reference's, less
 * the columns its version lacks: so its constraints (CHECK, NOT NULL,
 * UNIQUE, REFERENCES, COLLATE, ON CONFLICT, defaults) are lbsim's too. */
static bool same_sql(sqlite3 *db, const char *schema, sqlite3 *ref, const char *table, int version)
{
	char *sql = sqlite3_mprintf("SELECT sql FROM \"%w\".sqlite_master WHERE type = 'table' AND name = %Q",
				    schema, table);
	sqlite3_stmt *a = NULL, *b = NULL;
	char *have = NULL, *want = NULL;
	if (sql && sqlite3_prepare_v2(db, sql, -1, &a, NULL) == SQLITE_OK && sqlite3_step(a) == SQLITE_ROW &&
	    sqlite3_column_text(a, 0))
		have = canonical((const char *)sqlite3_column_text(a, 0));
	if (sqlite3_prepare_v2(ref, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &b,
			       NULL) == SQLITE_OK) {
		sqlite3_bind_text(b, 1, table, -1, SQLITE_STATIC);
		if (sqlite3_step(b) == SQLITE_ROW && sqlite3_column_text(b, 0))
			want = canonical((const char *)sqlite3_column_text(b, 0));
	}
	sqlite3_free(sql);
	sqlite3_finalize(a);
	sqlite3_finalize(b);
	bool same = have && want && !strcmp(have, want);
	for (size_t i = 0; !same && have && want && i < sizeof added / sizeof added[0]; i++) {
		if (!added[i].column || strcmp(added[i].table, table))
			continue;
		/* The reference without ",DEFINITION", for a file older than
		 * the column. (ALTER TABLE ADD COLUMN, which the upgrade runs,
		 * puts it after the last column: where the reference has it.) */
		char *def = canonical(added[i].definition), *at = NULL;
		size_t len = def ? strlen(def) : 0;
		for (char *p = want; def && (p = strstr(p, def)); p++)
			if (p > want && p[-1] == ',' && (p[len] == ',' || p[len] == ')'))
				at = p - 1;
		if (at && version < added[i].since) {
			memmove(at, at + 1 + len, strlen(at + 1 + len) + 1);
			same = !strcmp(have, want);
		}
		free(def);
	}
	free(have);
	free(want);
	return same;
}

static int progress(void *flag)
{
	return *(const volatile sig_atomic_t *)flag != 0;
}

void lbs_results_harden(sqlite3 *db, int max_value, const volatile sig_atomic_t *interrupt)
{
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
	sqlite3_exec(db, "PRAGMA cell_size_check = ON", NULL, NULL, NULL);
	if (max_value > 0)
		sqlite3_limit(db, SQLITE_LIMIT_LENGTH, max_value);
	if (interrupt)
		sqlite3_progress_handler(db, LBS_RESULTS_PROGRESS_STEPS, progress, (void *)interrupt);
}

lbs_status lbs_results_failure(sqlite3 *db, const volatile sig_atomic_t *interrupt, lbs_status status,
			       lbs_error *err, const char *fmt, ...)
{
	char what[LBS_ERROR_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	int code = sqlite3_errcode(db);
	if (code == SQLITE_INTERRUPT || (interrupt && *interrupt))
		return lbs_error_set(err, LBS_EINTR, "%s: interrupted", what);
	if (code == SQLITE_TOOBIG)
		return lbs_error_set(err, LBS_EINPUT, "%s: a text or blob value (or a row) over %d bytes, the "
				     "limit of what lbsim reads from a results database (doc/results.md)", what,
				     sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1));
	return lbs_error_set(err, status, "%s: %s", what, sqlite3_errmsg(db));
}

/* One integer the query selects (-1 on error or no row). */
static long long one_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *q = NULL;
	long long v = -1;
	if (sql && sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
		v = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return v;
}

/* The reference: lbsim's own tables, indexes and their columns, in memory. */
static sqlite3 *reference(void)
{
	sqlite3 *ref = NULL;
	if (sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
	    sqlite3_exec(ref, lbs_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(ref, lbs_sweep_points_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(ref, lbs_run_targets_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(ref, lbs_run_staleness_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(ref, lbs_run_losses_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(ref, lbs_validation_targets_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(ref, lbs_validation_seeds_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(ref, lbs_whatif_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(ref, lbs_hybrid_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(ref, lbs_hybrid_policy_schema_sql, NULL, NULL, NULL) != SQLITE_OK) {
		sqlite3_close(ref);
		return NULL;
	}
	return ref;
}

/* Compares the columns of schema.table with the reference's, less those
 * its version lacks: names in order, declared types, primary key, none
 * hidden or generated; and the table itself a plain table (not virtual),
 * with or without rowid as lbsim creates it. */
static lbs_status same_table(sqlite3 *db, const char *schema, sqlite3 *ref, const char *table, int version,
			     const char *path, lbs_status refuse, lbs_error *err)
{
	static const char list_sql[] =
		"SELECT type, wr, strict FROM pragma_table_list WHERE name = ?1 AND schema = ?2";
	static const char cols_sql[] = "SELECT name, type, pk, hidden FROM pragma_table_xinfo(?1, ?2) ORDER BY cid";
	sqlite3_stmt *a = NULL, *b = NULL;
	lbs_status st = LBS_OK;
	/* The table: type, without rowid, strict. */
	if (sqlite3_prepare_v2(db, list_sql, -1, &a, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(ref, list_sql, -1, &b, NULL) != SQLITE_OK) {
		st = lbs_results_failure(db, NULL, refuse, err, "%s: cannot read the schema of table %s", path, table);
		goto done;
	}
	sqlite3_bind_text(a, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(a, 2, schema, -1, SQLITE_STATIC);
	sqlite3_bind_text(b, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(b, 2, "main", -1, SQLITE_STATIC);
	int ra = sqlite3_step(a), rb = sqlite3_step(b);
	if (ra != SQLITE_ROW) {
		st = ra == SQLITE_DONE ? lbs_error_set(err, refuse, "%s: has no table %s", path, table)
				       : lbs_results_failure(db, NULL, refuse, err, "%s: table %s", path, table);
		goto done;
	}
	if (rb != SQLITE_ROW) {
		st = lbs_error_set(err, LBS_EINTERNAL, "the reference schema has no table %s", table);
		goto done;
	}
	const char *type = (const char *)sqlite3_column_text(a, 0);
	if (!type || strcmp(type, "table")) {
		st = lbs_error_set(err, refuse, "%s: %s is not a plain table as lbsim creates it (SQLite lists it "
				   "as '%s')", path, table, type ? type : "");
		goto done;
	}
	if (sqlite3_column_int(a, 1) != sqlite3_column_int(b, 1) ||
	    sqlite3_column_int(a, 2) != sqlite3_column_int(b, 2)) {
		st = lbs_error_set(err, refuse, "%s: table %s is %s%s, unlike lbsim's", path, table,
				   sqlite3_column_int(a, 1) ? "WITHOUT ROWID" : "a rowid table",
				   sqlite3_column_int(a, 2) ? ", STRICT" : "");
		goto done;
	}
	sqlite3_finalize(a);
	sqlite3_finalize(b);
	a = b = NULL;
	/* Its columns, in order. */
	if (sqlite3_prepare_v2(db, cols_sql, -1, &a, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(ref, cols_sql, -1, &b, NULL) != SQLITE_OK) {
		st = lbs_results_failure(db, NULL, refuse, err, "%s: cannot read the columns of table %s", path, table);
		goto done;
	}
	sqlite3_bind_text(a, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(a, 2, schema, -1, SQLITE_STATIC);
	sqlite3_bind_text(b, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(b, 2, "main", -1, SQLITE_STATIC);
	for (;;) {
		ra = sqlite3_step(a);
		while ((rb = sqlite3_step(b)) == SQLITE_ROW &&
		       column_added_after(table, (const char *)sqlite3_column_text(b, 0), version))
			;
		if (ra != SQLITE_ROW && ra != SQLITE_DONE) {
			st = lbs_results_failure(db, NULL, refuse, err, "%s: cannot read the columns of table %s",
						 path, table);
			break;
		}
		if (ra == SQLITE_DONE && rb == SQLITE_DONE)
			break;
		const char *name = ra == SQLITE_ROW ? (const char *)sqlite3_column_text(a, 0) : NULL;
		const char *want = rb == SQLITE_ROW ? (const char *)sqlite3_column_text(b, 0) : NULL;
		if (!want) {
			st = lbs_error_set(err, refuse, "%s: table %s has a column %s that lbsim's schema (version "
					   "%d) lacks", path, table, name ? name : "(unnamed)", version);
			break;
		}
		if (!name) {
			st = lbs_error_set(err, refuse, "%s: table %s has no column %s", path, table, want);
			break;
		}
		if (strcmp(name, want)) {
			st = lbs_error_set(err, refuse, "%s: table %s has a column %s where lbsim's schema "
					   "(version %d) has %s", path, table, name, version, want);
			break;
		}
		const char *ta = (const char *)sqlite3_column_text(a, 1), *tb = (const char *)sqlite3_column_text(b, 1);
		if (strcasecmp(ta ? ta : "", tb ? tb : "") || sqlite3_column_int(a, 2) != sqlite3_column_int(b, 2) ||
		    sqlite3_column_int(a, 3) != 0) {
			st = lbs_error_set(err, refuse, "%s: column %s.%s is not declared as lbsim declares it "
					   "(%s%s)", path, table, name, tb ? tb : "", sqlite3_column_int(b, 2) ?
					   ", part of the primary key" : "");
			break;
		}
	}
	if (st == LBS_OK && !same_sql(db, schema, ref, table, version))
		st = lbs_error_set(err, refuse, "%s: table %s is not declared as lbsim declares it (a constraint, "
				   "default or reference differs)", path, table);
done:
	sqlite3_finalize(a);
	sqlite3_finalize(b);
	return st;
}

static bool is_view_name(const char *name)
{
	for (size_t i = 0; lbs_results_views[i]; i++)
		if (!strcmp(lbs_results_views[i], name))
			return true;
	return false;
}

lbs_status lbs_results_check_schema(sqlite3 *db, const char *schema, const char *path, lbs_results_use use,
				    lbs_status refuse, int *version_out, lbs_error *err)
{
	bool write = use == LBS_RESULTS_WRITE;
	char *sql = sqlite3_mprintf("PRAGMA \"%w\".user_version", schema);
	long long version = one_int(db, sql);
	sqlite3_free(sql);
	if (version < 0)
		return lbs_results_failure(db, NULL, refuse, err, "%s: not an SQLite database", path);
	sql = sqlite3_mprintf("SELECT count(*) FROM (SELECT 1 FROM \"%w\".sqlite_master LIMIT %d)", schema,
			      LBS_RESULTS_MAX_OBJECTS + 1);
	long long objects = one_int(db, sql);
	sqlite3_free(sql);
	sql = sqlite3_mprintf("SELECT count(*) FROM (SELECT 1 FROM \"%w\".sqlite_master WHERE type = 'table' "
			      "LIMIT %d)", schema, LBS_RESULTS_MAX_OBJECTS + 1);
	long long tables = one_int(db, sql);
	sqlite3_free(sql);
	sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".sqlite_master WHERE name = 'runs'", schema);
	long long runs = one_int(db, sql);
	sqlite3_free(sql);
	if (objects < 0 || tables < 0 || runs < 0)
		return lbs_results_failure(db, NULL, refuse, err, "%s: cannot read the schema", path);
	if (version_out)
		*version_out = (int)version;
	/* A new file, empty, to be written. */
	if (write && version == 0 && objects == 0)
		return LBS_OK;
	if (version < 2 || version > LBS_SCHEMA_VERSION || !runs) {
		if (write)
			return lbs_error_set(err, refuse, "%s: not an lbsim results database of schema version %d "
					     "(it has user_version %lld and %lld tables)", path, LBS_SCHEMA_VERSION,
					     version, tables);
		return lbs_error_set(err, refuse, "%s: not an lbsim results database of schema version %d (it "
				     "has user_version %lld%s)", path, LBS_SCHEMA_VERSION, version,
				     runs ? "" : " and no runs table");
	}
	if (objects > LBS_RESULTS_MAX_OBJECTS)
		return lbs_error_set(err, refuse, "%s: holds more than %d tables, indexes, views and triggers; "
				     "an lbsim results database holds about 40", path, LBS_RESULTS_MAX_OBJECTS);
	sqlite3 *ref = reference();
	if (!ref)
		return lbs_error_set(err, LBS_EINTERNAL, "cannot build the reference schema (out of memory?)");
	sqlite3_stmt *q = NULL, *known = NULL;
	lbs_status st = LBS_OK;
	sql = sqlite3_mprintf("SELECT type, name, tbl_name, sql FROM \"%w\".sqlite_master ORDER BY rowid", schema);
	if (!sql || sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(ref, "SELECT type, sql FROM sqlite_master WHERE name = ?1 AND tbl_name = ?2", -1,
			       &known, NULL) != SQLITE_OK)
		st = lbs_results_failure(db, NULL, refuse, err, "%s: cannot read the schema", path);
	sqlite3_free(sql);
	/* Every object: lbsim's tables are tables; in a file to be written,
	 * nothing else but lbsim's own indexes and views. */
	int rc = SQLITE_ROW;
	while (st == LBS_OK && (rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(q, 0);
		const char *name = (const char *)sqlite3_column_text(q, 1);
		const char *tbl = (const char *)sqlite3_column_text(q, 2);
		const char *text = (const char *)sqlite3_column_text(q, 3);
		if (!type || !name || !tbl) {
			st = lbs_error_set(err, refuse, "%s: its schema has an entry without a type or name", path);
			break;
		}
		sqlite3_reset(known);
		sqlite3_bind_text(known, 1, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(known, 2, tbl, -1, SQLITE_TRANSIENT);
		const char *ktype = NULL, *ksql = NULL;
		if (sqlite3_step(known) == SQLITE_ROW) {
			ktype = (const char *)sqlite3_column_text(known, 0);
			ksql = (const char *)sqlite3_column_text(known, 1);
		}
		bool ours_table = ktype && !strcmp(ktype, "table");
		if (ours_table) {
			if (strcmp(type, "table"))
				st = lbs_error_set(err, refuse, "%s: %s is a %s, not a table: lbsim reads only the "
						   "tables it writes", path, name, type);
			else
				st = same_table(db, schema, ref, name, (int)version, path, refuse, err);
			if (st == LBS_OK && !required(name, (int)version) && !strcmp(name, "validations"))
				st = lbs_error_set(err, refuse, "%s: has a table validations, which schema version "
						   "%lld lacks", path, version);
			continue;
		}
		if (!strcmp(type, "table")) {
			/* SQLite's own (sqlite_sequence, sqlite_stat1 of ANALYZE)
			 * are not read; never written by lbsim. */
			if (write)
				st = lbs_error_set(err, refuse, "%s: holds a table %s that lbsim did not create; lbsim "
						   "writes only to a file that holds nothing but its own tables, "
						   "indexes and views (drop it, or write to a new file)", path, name);
		} else if (!strcmp(type, "view")) {
			if (write && !is_view_name(name))
				st = lbs_error_set(err, refuse, "%s: holds a view %s that lbsim did not create; lbsim "
						   "writes only to a file that holds nothing but its own tables, "
						   "indexes and views (drop it, or write to a new file)", path, name);
		} else if (!strcmp(type, "index")) {
			bool ours = ktype && !strcmp(ktype, "index") &&
				    ((!ksql && !text) || (ksql && text && !strcmp(ksql, text)));
			if (write && !ours)
				st = lbs_error_set(err, refuse, "%s: holds an index %s that lbsim did not create; lbsim "
						   "writes only to a file that holds nothing but its own tables, "
						   "indexes and views (drop it, or write to a new file)", path, name);
		} else if (!strcmp(type, "trigger")) {
			if (write)
				st = lbs_error_set(err, refuse, "%s: holds a trigger %s that lbsim did not create; "
						   "lbsim writes only to a file that holds nothing but its own tables, "
						   "indexes and views (drop it, or write to a new file)", path, name);
		} else {
			st = lbs_error_set(err, refuse, "%s: its schema has an entry of unknown type '%s'", path, type);
		}
	}
	if (st == LBS_OK && rc != SQLITE_DONE)
		st = lbs_results_failure(db, NULL, refuse, err, "%s: cannot read the schema", path);
	sqlite3_finalize(q);
	sqlite3_finalize(known);
	/* Every table the version has is there. */
	q = NULL;
	if (st == LBS_OK &&
	    sqlite3_prepare_v2(ref, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid", -1, &q,
			       NULL) != SQLITE_OK)
		st = lbs_error_set(err, LBS_EINTERNAL, "cannot read the reference schema");
	while (st == LBS_OK && sqlite3_step(q) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(q, 0);
		if (!required(name, (int)version))
			continue;
		sql = sqlite3_mprintf("SELECT count(*) FROM \"%w\".sqlite_master WHERE name = %Q", schema, name);
		long long n = one_int(db, sql);
		sqlite3_free(sql);
		if (n == 0)
			st = lbs_error_set(err, refuse, "%s: not an lbsim results database: it has no table %s", path,
					   name);
		else if (n < 0)
			st = lbs_results_failure(db, NULL, refuse, err, "%s: cannot read the schema", path);
	}
	sqlite3_finalize(q);
	sqlite3_close(ref);
	return st;
}

lbs_status lbs_results_check(sqlite3 *db, const char *path, lbs_error *err)
{
	return lbs_results_check_schema(db, "main", path, LBS_RESULTS_READ, LBS_EINPUT, NULL, err);
}
