-- SPDX-License-Identifier: GPL-3.0-or-later
-- SQL views over an lbsim results database (schema version 2, doc/results.md).
-- lbsim stores them in every results file it writes (and `lbsim views DB`
-- adds or refreshes them in an older one), together with two views it
-- writes for each file: run_keys, one column per key that varies, and
-- speedup_by_size with those columns. Load these alone with:
--   sqlite3 results.db < analysis/views.sql

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

-- ---- comparing policies ---------------------------------------------------
-- A run's setting is everything it was configured with except its policy:
-- its run_config rows outside [policy] and [policy.NAME], seed and scenario
-- name included, as text. Runs that share a setting differ only in their
-- policy; setting_id numbers the settings 1, 2, ... in order of their first
-- run. (run_config is stored in (run_id, section, key) order, the order in
-- which group_concat sees the rows.)
CREATE VIEW IF NOT EXISTS run_setting AS
WITH fp AS (
  SELECT run_id, group_concat(section || '.' || key || '=' || value, char(10)) AS setting
  FROM (SELECT run_id, section, key, value FROM run_config
        WHERE section <> 'policy' AND section NOT LIKE 'policy.%'
        ORDER BY run_id, section, key)
  GROUP BY run_id)
SELECT run_id, setting, dense_rank() OVER (ORDER BY first_run_id) AS setting_id
FROM (SELECT run_id, setting, min(run_id) OVER (PARTITION BY setting) AS first_run_id FROM fp);

-- Speedup of every run over the static run of the same setting (same
-- scenario, seed and every other key): the static run's simulated time over
-- this run's. NULL where the setting has no static run.
CREATE VIEW IF NOT EXISTS speedup AS
SELECT r.run_id, s.setting_id, r.scenario, r.policy, r.seed, r.n_workers, r.iterations,
       r.sim_time_s, b.run_id AS baseline_run_id, b.sim_time_s AS baseline_sim_time_s,
       b.sim_time_s / r.sim_time_s AS speedup
FROM runs r
JOIN run_setting s ON s.run_id = r.run_id
LEFT JOIN (SELECT s2.setting, min(r2.run_id) AS run_id
           FROM runs r2 JOIN run_setting s2 ON s2.run_id = r2.run_id
           WHERE r2.policy = 'static' GROUP BY s2.setting) bs ON bs.setting = s.setting
LEFT JOIN runs b ON b.run_id = bs.run_id;

-- A run's point: its setting without the seed. Runs of one point and one
-- policy differ only in their seed; point_id numbers the points 1, 2, ...
-- in order of their first run.
CREATE VIEW IF NOT EXISTS run_point AS
WITH fp AS (
  SELECT run_id, group_concat(section || '.' || key || '=' || value, char(10)) AS point
  FROM (SELECT run_id, section, key, value FROM run_config
        WHERE section <> 'policy' AND section NOT LIKE 'policy.%'
          AND NOT (section = 'run' AND key = 'seed')
        ORDER BY run_id, section, key)
  GROUP BY run_id)
SELECT run_id, point, dense_rank() OVER (ORDER BY first_run_id) AS point_id
FROM (SELECT run_id, point, min(run_id) OVER (PARTITION BY point) AS first_run_id FROM fp);

-- A run's variant: its policy's name, and the options of its own
-- [policy.NAME] section that are not the policy's defaults, as
-- "lbbsp-cpu (predictor=ema)", so that runs of one policy with different
-- options are never pooled. This copy has the name alone; lbsim's own (in
-- the file, and in lbsim export) knows the built-in policies' defaults.
CREATE VIEW IF NOT EXISTS run_variant AS
SELECT run_id, policy, policy AS variant FROM runs;

-- The runs counted once: a run with the same setting, policy variant,
-- mode and result (simulated time to the last digit, iterations) as an
-- earlier one is that run again (lbsim is deterministic: the same
-- scenario and seed give the same run), appended twice or merged from two
-- files; the views that pool runs over seeds count the first alone.
CREATE VIEW IF NOT EXISTS run_unique AS
SELECT run_id FROM (
  SELECT r.run_id, min(r.run_id) OVER (PARTITION BY s.setting, v.variant, r.mode, r.sim_time_s, r.iterations) AS first
  FROM runs r JOIN run_setting s ON s.run_id = r.run_id JOIN run_variant v ON v.run_id = r.run_id)
WHERE run_id = first;

-- t(0.975, df), the Student quantile of a two-sided 95% interval, for df =
-- 1 to 30 (to 4 decimals, from GSL's gsl_cdf_tdist_Pinv); beyond 30 the
-- views use 1.96 + 2.4 / df, within 0.1% of it.
CREATE VIEW IF NOT EXISTS t95 AS SELECT column1 AS df, column2 AS t FROM (VALUES
  (1, 12.7062), (2, 4.3027), (3, 3.1824), (4, 2.7764), (5, 2.5706), (6, 2.4469), (7, 2.3646),
  (8, 2.3060), (9, 2.2622), (10, 2.2281), (11, 2.2010), (12, 2.1788), (13, 2.1604), (14, 2.1448),
  (15, 2.1314), (16, 2.1199), (17, 2.1098), (18, 2.1009), (19, 2.0930), (20, 2.0860), (21, 2.0796),
  (22, 2.0739), (23, 2.0687), (24, 2.0639), (25, 2.0595), (26, 2.0555), (27, 2.0518), (28, 2.0484),
  (29, 2.0452), (30, 2.0423));

-- Speedup per point and policy, over seeds (each run once: run_unique):
-- one row for each setting but the seed, so that a sweep of any key
-- (bandwidth, say) is never averaged over that key. first_run_id names the point's first run (join run_keys
-- on it for the values of the keys that vary). sd_speedup is the sample
-- standard deviation over the seeds, ci95_low and ci95_high the 95%
-- interval of the mean (Student's t; NULL with one seed): each run's
-- speedup is over the static run of its own seed, so the interval is of
-- the paired ratio.
CREATE VIEW IF NOT EXISTS speedup_by_point AS
WITH x AS (SELECT p.point_id, s.run_id, s.scenario, v.variant AS policy, s.n_workers, s.speedup
           FROM speedup s JOIN run_point p ON p.run_id = s.run_id JOIN run_variant v ON v.run_id = s.run_id
           WHERE s.speedup IS NOT NULL AND s.run_id IN (SELECT run_id FROM run_unique)),
     g AS (SELECT point_id, policy, min(run_id) AS first_run_id, scenario, n_workers, count(*) AS runs,
                  avg(speedup) AS mean_speedup, min(speedup) AS min_speedup, max(speedup) AS max_speedup
           FROM x GROUP BY point_id, policy),
     d AS (SELECT g.point_id, g.policy, CASE WHEN g.runs > 1 THEN sqrt(sum((x.speedup - g.mean_speedup) *
                  (x.speedup - g.mean_speedup)) / (g.runs - 1)) END AS sd
           FROM g JOIN x ON x.point_id = g.point_id AND x.policy = g.policy GROUP BY g.point_id, g.policy)
SELECT g.point_id, g.first_run_id, g.scenario, g.policy, g.n_workers, g.runs, g.mean_speedup, g.min_speedup,
       g.max_speedup, d.sd AS sd_speedup,
       g.mean_speedup - coalesce(t.t, 1.96 + 2.4 / (g.runs - 1)) * d.sd / sqrt(g.runs) AS ci95_low,
       g.mean_speedup + coalesce(t.t, 1.96 + 2.4 / (g.runs - 1)) * d.sd / sqrt(g.runs) AS ci95_high
FROM g JOIN d ON d.point_id = g.point_id AND d.policy = g.policy LEFT JOIN t95 t ON t.df = g.runs - 1
ORDER BY g.scenario, g.policy, g.n_workers, g.point_id;

-- The simulated time per point and policy, over seeds: the mean with its
-- sample standard deviation and 95% interval (Student's t; NULL with one
-- seed), and the mean iteration time.
CREATE VIEW IF NOT EXISTS time_by_point AS
WITH x AS (SELECT p.point_id, r.run_id, r.scenario, v.variant AS policy, r.n_workers, r.sim_time_s,
                  r.mean_iteration_s
           FROM runs r JOIN run_point p ON p.run_id = r.run_id JOIN run_variant v ON v.run_id = r.run_id
           WHERE r.run_id IN (SELECT run_id FROM run_unique)),
     g AS (SELECT point_id, policy, min(run_id) AS first_run_id, scenario, n_workers, count(*) AS runs,
                  avg(sim_time_s) AS mean_sim_time_s, avg(mean_iteration_s) AS mean_iteration_s
           FROM x GROUP BY point_id, policy),
     d AS (SELECT g.point_id, g.policy, CASE WHEN g.runs > 1 THEN sqrt(sum((x.sim_time_s - g.mean_sim_time_s) *
                  (x.sim_time_s - g.mean_sim_time_s)) / (g.runs - 1)) END AS sd
           FROM g JOIN x ON x.point_id = g.point_id AND x.policy = g.policy GROUP BY g.point_id, g.policy)
SELECT g.point_id, g.first_run_id, g.scenario, g.policy, g.n_workers, g.runs, g.mean_sim_time_s,
       d.sd AS sd_sim_time_s,
       g.mean_sim_time_s - coalesce(t.t, 1.96 + 2.4 / (g.runs - 1)) * d.sd / sqrt(g.runs) AS ci95_low_s,
       g.mean_sim_time_s + coalesce(t.t, 1.96 + 2.4 / (g.runs - 1)) * d.sd / sqrt(g.runs) AS ci95_high_s,
       g.mean_iteration_s
FROM g JOIN d ON d.point_id = g.point_id AND d.policy = g.policy LEFT JOIN t95 t ON t.df = g.runs - 1
ORDER BY g.scenario, g.policy, g.n_workers, g.point_id;

-- Speedup per scenario, policy and cluster size, over seeds. lbsim's own
-- copy of this view (in the file, and in lbsim export) adds a column for
-- each key that varies; this one has the point_id instead.
CREATE VIEW IF NOT EXISTS speedup_by_size AS
SELECT scenario, policy, n_workers, point_id, runs, mean_speedup, min_speedup, max_speedup, sd_speedup,
       ci95_low, ci95_high
FROM speedup_by_point;

-- ---- straggler gaps ---------------------------------------------------------
-- Every iteration's straggler gap with its place in the run's distribution:
-- cdf is the fraction of the run's iterations with a gap at most this one.
CREATE VIEW IF NOT EXISTS straggler_gap_cdf AS
SELECT i.run_id, r.policy, i.iteration, i.straggler_gap_s,
       cume_dist() OVER (PARTITION BY i.run_id ORDER BY i.straggler_gap_s) AS cdf
FROM iterations i JOIN runs r ON r.run_id = i.run_id;

-- The distribution per run: nearest-rank percentiles (the smallest gap with
-- at least that fraction of iterations at or below it).
CREATE VIEW IF NOT EXISTS straggler_gap_stats AS
SELECT run_id, policy, count(*) AS iterations, avg(straggler_gap_s) AS mean_s,
       min(straggler_gap_s) AS min_s,
       min(CASE WHEN cdf >= 0.50 THEN straggler_gap_s END) AS p50_s,
       min(CASE WHEN cdf >= 0.90 THEN straggler_gap_s END) AS p90_s,
       min(CASE WHEN cdf >= 0.99 THEN straggler_gap_s END) AS p99_s,
       max(straggler_gap_s) AS max_s
FROM straggler_gap_cdf GROUP BY run_id;

-- ---- time to train ----------------------------------------------------------
-- When each run finished each epoch (runs given in epochs; a run given in
-- iterations is one epoch 0).
CREATE VIEW IF NOT EXISTS epoch_times AS
SELECT i.run_id, r.policy, i.epoch, max(i.iteration) + 1 AS iterations_done, max(i.end_s) AS end_s
FROM iterations i JOIN runs r ON r.run_id = i.run_id
GROUP BY i.run_id, i.epoch;

-- Per policy (its variant: run_variant), the simulated time to finish a
-- number of epochs, over seeds (and any other key that varies) of a
-- scenario and cluster size.
CREATE VIEW IF NOT EXISTS policy_time_to_epochs AS
SELECT r.scenario, r.n_workers, v.variant AS policy, e.epoch + 1 AS epochs, count(*) AS runs,
       avg(e.end_s) AS mean_time_s, min(e.end_s) AS min_time_s, max(e.end_s) AS max_time_s
FROM epoch_times e JOIN runs r ON r.run_id = e.run_id JOIN run_variant v ON v.run_id = e.run_id
WHERE r.run_id IN (SELECT run_id FROM run_unique)
GROUP BY r.scenario, r.n_workers, v.variant, e.epoch;

-- The same for a number of iterations: select one, e.g.
--   SELECT * FROM policy_time_to_iterations WHERE iterations = 1000;
CREATE VIEW IF NOT EXISTS policy_time_to_iterations AS
SELECT r.scenario, r.n_workers, v.variant AS policy, i.iteration + 1 AS iterations, count(*) AS runs,
       avg(i.end_s) AS mean_time_s, min(i.end_s) AS min_time_s, max(i.end_s) AS max_time_s
FROM iterations i JOIN runs r ON r.run_id = i.run_id JOIN run_variant v ON v.run_id = i.run_id
WHERE r.run_id IN (SELECT run_id FROM run_unique)
GROUP BY r.scenario, r.n_workers, v.variant, i.iteration;

-- ---- series for plots (lbsim plot) ------------------------------------------
-- Every iteration of every run with its setting, for time series per policy.
CREATE VIEW IF NOT EXISTS iteration_times AS
SELECT s.setting_id, i.run_id, r.policy, r.seed, r.n_workers, i.iteration, i.epoch,
       i.start_s, i.end_s, i.end_s - i.start_s AS iteration_s, i.straggler_gap_s
FROM iterations i
JOIN runs r ON r.run_id = i.run_id
JOIN run_setting s ON s.run_id = i.run_id;

-- Every worker's batch from the iteration the policy set it, in samples,
-- with the simulated time that iteration started.
CREATE VIEW IF NOT EXISTS batch_changes AS
SELECT b.run_id, b.worker, w.group_name, b.iteration, i.start_s, b.batch_samples
FROM batches b
JOIN workers w ON w.run_id = b.run_id AND w.worker = b.worker
LEFT JOIN iterations i ON i.run_id = b.run_id AND i.iteration = b.iteration;
