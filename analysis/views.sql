-- SPDX-License-Identifier: GPL-3.0-or-later
-- SQL views over an lbsim results database (schema version 1, doc/results.md).
-- Load them into a results file with:  sqlite3 results.db < analysis/views.sql

-- One line per run: what ran and how fast.
CREATE VIEW IF NOT EXISTS run_summary AS
SELECT r.run_id, r.scenario, r.policy, r.seed, r.n_workers, r.global_batch_samples,
       r.iterations, r.sim_time_s, r.mean_iteration_s, r.mean_compute_s,
       r.mean_aggregation_s, r.mean_straggler_gap_s, r.throughput_samples_per_s,
       r.mean_aggregation_s / r.mean_iteration_s AS aggregation_share,
       r.wall_s, r.events
FROM runs r;

-- Per worker (needs --detail workers): mean batch, compute and barrier wait,
-- and the share of the compute phase it spent waiting for stragglers.
CREATE VIEW IF NOT EXISTS worker_summary AS
SELECT wi.run_id, wi.worker, w.group_name, w.device,
       avg(wi.batch) AS mean_batch_samples,
       avg(wi.compute_s) AS mean_compute_s,
       avg(wi.wait_s) AS mean_wait_s,
       sum(wi.wait_s) / sum(wi.compute_s + wi.wait_s) AS wait_share
FROM worker_iterations wi
JOIN workers w ON w.run_id = wi.run_id AND w.worker = wi.worker
GROUP BY wi.run_id, wi.worker;

-- Per worker group (needs --detail workers): who the stragglers are.
CREATE VIEW IF NOT EXISTS group_summary AS
SELECT run_id, group_name, device, count(*) AS workers,
       avg(mean_batch_samples) AS mean_batch_samples,
       avg(mean_compute_s) AS mean_compute_s,
       avg(wait_share) AS wait_share
FROM worker_summary
GROUP BY run_id, group_name;
