#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# `make reproduce`: runs the scenarios of scenarios/reproduce/, fits the two
# values that are fitted (one figure each), predicts the other figures,
# prints the table (figure, paper value, lbsim value, difference, fitted or
# predicted) and writes doc/reproduction.md with it, the plots and the
# sensitivity sweeps. Deterministic: every run has a fixed seed and nothing
# in the table depends on the clock (the decision overhead, a wall-clock
# measurement, is reported apart from it).
#
# Usage: analysis/reproduce.sh [--quick] [--lbsim PATH] [--bench PATH]
#                              [--work DIR] [--doc FILE] [-j N]
#   --quick      the same scenarios, lengths and assumption grids with fewer
#                seeds where the figure is a mean over seeds (the CPU
#                cluster's): the table and figures.tsv of the full run within
#                the tolerances figures.tsv states (tests/e2e/reproduce.sh)
#   --lbsim      the lbsim binary (default: ./lbsim)
#   --bench      bench/bench, for the decision overhead (default: skipped)
#   --work       folder for the results databases (default: reproduce.d)
#   --doc        where to write the report, with its plots in a folder named
#                after it without .md (default: none; the table is printed)
#   -j N         sweep points run at once (default: 2)
# Run from the source tree's top folder (make reproduce does). On a terminal,
# the progress on standard error (step k of n, elapsed, an estimate of the
# time left); nothing there without one.
set -euo pipefail

quick=0 lbsim=./lbsim bench="" work=reproduce.d doc="" jobs=2
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1 ;;
	--lbsim) lbsim=$2; shift ;;
	--bench) bench=$2; shift ;;
	--work) work=$2; shift ;;
	--doc) doc=$2; shift ;;
	-j) jobs=$2; shift ;;
	*) echo "reproduce.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done
[ -d scenarios/reproduce ] || { echo "reproduce.sh: run me from the source tree's top folder" >&2; exit 2; }
case $lbsim in /*) ;; *) lbsim=$PWD/$lbsim ;; esac
mkdir -p "$work"
work=$(cd "$work" && pwd)
# gs TEXT: TEXT quoted for gnuplot or SQL ('' for a quote): a path is data,
# never code
gs() { printf "'%s'" "${1//\'/\'\'}"; }
R=scenarios/reproduce

# Quick mode runs every scenario at its full length and every assumption grid
# in full, but the CPU cluster's figures (means over the tenants' random
# draws) on fewer seeds: 2 instead of 5 for the table's figure, 1 instead of 3
# per point of the load grid. The GPU and DBS figures are the same runs in both
# modes, so they agree exactly; the CPU ones within the tolerance the full run
# derives from the spread it measures over its seeds (figures.tsv).
if [ $quick -eq 1 ]; then
	cpu_seeds=(1 2) grid_seeds=1
else
	cpu_seeds=(1 2 3 4 5) grid_seeds=3
fi
steps_h=14 steps_bw=16
gpu_len=() dbs_len=() cpu_len=()
# The steps, each announced by progress: the bisections' steps, the CPU
# seeds, and the fixed steps of the table; with --doc, those of the report
# (three sweeps, the five refits of the bandwidth, a few more).
steps=$((steps_h + 2 + 1 + ${#cpu_seeds[@]} + 2 + 1 + 1 + steps_bw + 1 + 5 * steps_bw + 1))
[ -n "$doc" ] && steps=$((steps + 2 + 1 + 1 + 2 + 1 + 1 + 1))
[ -n "$doc" ] && [ -n "$bench" ] && steps=$((steps + 1))
step=0
# progress TEXT: on a terminal, "step k of n", the time since the start and
# an estimate of the time left (the mean time of the steps done so far, times
# the steps left: rough, the steps differ), on one line of standard error
# rewritten in place. Nothing without a terminal. A step announced in a
# subshell ($(...)) is counted by its caller (stepped).
clock() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }
progress() {
	step=$((step + 1))
	[ -t 2 ] || return 0
	local k=$((step < steps ? step : steps)) left="estimating the time left"
	[ $k -gt 1 ] && left="about $(clock $((SECONDS * (steps - k + 1) / (k - 1)))) left"
	printf '\r\033[Kreproduce: step %d of %d, %s elapsed, %s: %s' "$k" "$steps" "$(clock $SECONDS)" "$left" "$*" >&2
}
stepped() { step=$((step + $1)); }
calc() { awk "BEGIN { printf \"%.10g\", $* }"; }
# run DB SCENARIO POLICIES [lbsim options...]: a fresh database of one setting
run() {
	local db=$1 scn=$2 pol=$3
	shift 3
	rm -f "$db"
	"$lbsim" "$scn" -q -o "$db" --policy "$pol" "$@"
}
sim_time() { sqlite3 "$1" "SELECT sim_time_s FROM runs WHERE policy = '$2' ORDER BY run_id LIMIT 1"; }
# faster DB POLICY [min|max|avg]: the policy's % faster than the static run
# of the same seed, over the database's seeds (most databases hold one).
faster() {
	sqlite3 "$1" "SELECT ${3:-avg}(100 * (s.sim_time_s / p.sim_time_s - 1)) FROM runs p
		JOIN runs s ON s.seed = p.seed AND s.policy = 'static' WHERE p.policy = '$2'"
}
saved() { calc "100 * (1 - $(sim_time "$1" "$2") / $(sim_time "$1" static))"; }   # % less time

# ---- LB-BSP, GPU cluster: fit the slow GPUs' relative speed h to 54% -------
gpu=$R/lbbsp-gpu.ini
gpu_at() {   # gpu_at H [options]: LB-BSP's % faster with the slow GPUs at H
	local a=$1
	shift
	run "$work/gpu-fit.db" "$gpu" lbbsp-gpu "${gpu_len[@]}" --set "workers.slow.availability=$a" "$@"
	faster "$work/gpu-fit.db" lbbsp-gpu
}
lo=0.05 hi=1
for ((i = 0; i < steps_h; i++)); do
	mid=$(calc "($lo + $hi) / 2")
	progress "fitting h ($i/$steps_h): h = $mid"
	s=$(gpu_at "$mid")
	if awk "BEGIN { exit !($s > 54) }"; then lo=$mid; else hi=$mid; fi
done
h=$(printf '%.4f' "$(calc "($lo + $hi) / 2")")
run "$work/gpu.db" "$gpu" lbbsp-gpu,dbs,oracle "${gpu_len[@]}" --set "workers.slow.availability=$h" --detail workers
gpu_lbbsp=$(faster "$work/gpu.db" lbbsp-gpu)
gpu_dbs=$(faster "$work/gpu.db" dbs)
gpu_oracle=$(faster "$work/gpu.db" oracle)
final_batches() {   # final_batches POLICY: the workers' batches at the run's last batch change
	sqlite3 "$work/gpu.db" "SELECT group_concat(batch_samples, ' ') FROM (SELECT b.batch_samples FROM batches b
		JOIN runs r ON r.run_id = b.run_id AND r.policy = '$1'
		WHERE b.iteration = (SELECT max(iteration) FROM batches WHERE run_id = r.run_id) ORDER BY b.worker)"
}
gpu_b_lbbsp=$(final_batches lbbsp-gpu) gpu_b_dbs=$(final_batches dbs) gpu_b_oracle=$(final_batches oracle)
# t_at PROFILE B: the profile's t(B) in seconds, for each cost kind
# (doc/profiles.md); flat_at PROFILE: the batch up to which it is flat.
t_at() { awk -F' = ' -v b="$2" '
	function sec(v) { x = v + 0; if (v ~ / ms/) x /= 1e3; else if (v ~ / us/) x /= 1e6; else if (v ~ / ns/) x /= 1e9; return x }
	/^\[/ { c = $0 == "[cost]" } !c { next }
	/^cost = / { kind = $2 } /^t_flat/ { tf = sec($2) } /^saturation_batch/ { sb = $2 + 0 }
	/^t0/ { t0 = sec($2) } /^per_sample = / { ps = sec($2) } /^per_sample_sq/ { p2 = sec($2) }
	/^exponent/ { ex = $2 + 0 } /^flat_below/ { fb = $2 + 0 }
	END { if (kind != "piecewise" && b < fb) b = fb
	      if (kind == "piecewise") t = b <= sb ? tf : tf + ps * (b - sb)
	      else if (kind == "power") t = t0 + ps * b ^ ex
	      else t = t0 + ps * b + p2 * b * b
	      printf "%.6g", t }' "$1"; }
flat_at() { awk -F' = ' '/^cost = / { kind = $2 } /^saturation_batch/ { sb = $2 } /^flat_below/ { fb = $2 }
	END { print kind == "piecewise" ? sb : fb ? fb : 1 }' "$1"; }
gpu_flat=$(flat_at profiles/v100-resnet18.ini)
gpu_tflat=$(t_at profiles/v100-resnet18.ini "$gpu_flat")
gpu_rise=$(calc "100 * ($(t_at profiles/v100-resnet18.ini $((2 * gpu_flat))) / $gpu_tflat - 1)")
# The same cluster with real slow GPUs in place of the slowed V100s:
# predicted, no fit. The measured profiles: T4 (Pollux's CIFAR-10 ResNet-18
# table), P100 and K80 (Gavel's ResNet-18), and, for a second model, V100s
# with P100s or K80s on Gavel's ResNet-50 (ImageNet; 25.6 M parameters, He
# et al.), 32 samples a worker (Goyal et al.'s ImageNet batch per GPU; the
# profiles' cap is 128). Each pair's run records the final batches: the
# slow GPUs' share of the global batch says which regime it is in.
pairs=(t4 p100 k80 p100r50 k80r50)
pair_opts() {   # pair_opts PAIR: sets popt, the pair's lbsim options
	case $1 in
	t4) popt=(--set workers.slow.profile=profiles/t4-cifar10.ini) ;;
	*r50) popt=(--set "workers.slow.profile=profiles/${1%r50}-resnet50.ini" --set workers.fast.profile=profiles/v100-resnet50.ini
		--set model.name=resnet50-imagenet --set model.parameters=25557032 --set run.global_batch=256) ;;
	*) popt=(--set "workers.slow.profile=profiles/$1-resnet18.ini") ;;
	esac
	popt=(--set workers.slow.availability= "${popt[@]}")
}
pair_label() {   # pair_label PAIR: its slow GPU and model, for the table
	case $1 in
	*r50) echo "$(echo "${1%r50}" | tr a-z A-Z)s, ResNet-50" ;;
	*) echo "$(echo "$1" | tr a-z A-Z)s" ;;
	esac
}
slow_share() {   # slow_share DB: the slow GPUs' % of the global batch at LB-BSP's last change
	sqlite3 "$1" "SELECT 100.0 * sum(CASE WHEN w.group_name = 'slow' THEN b.batch_samples END) / sum(b.batch_samples)
		FROM batches b JOIN workers w ON w.run_id = b.run_id AND w.worker = b.worker
		JOIN runs r ON r.run_id = b.run_id AND r.policy = 'lbbsp-gpu'
		WHERE b.iteration = (SELECT max(iteration) FROM batches WHERE run_id = r.run_id)"
}
for g in "${pairs[@]}"; do
	pair_opts "$g"
	run "$work/gpu-$g.db" "$gpu" lbbsp-gpu "${gpu_len[@]}" "${popt[@]}" --detail workers
	eval "gpu_$g=\$(faster \"\$work/gpu-\$g.db\" lbbsp-gpu) share_$g=\$(slow_share \"\$work/gpu-\$g.db\")"
done
share_fitted=$(slow_share "$work/gpu.db")

# The GPU rows' assumption grid: the samples per worker and the network, both
# assumed (the paper gives neither). Plausible: 32 to 192 samples per worker
# (CIFAR-10 ResNets are trained with 64 to 256 samples a step, and the V100
# profile's cap of 256 must leave room to move samples onto the fast GPUs)
# and EC2's GPU networks of the paper's time: 10 Gbit/s (p3.2xlarge to
# p3.8xlarge, p2.8xlarge) and 25 Gbit/s (p3.16xlarge, g4dn).
gpu_batches=(32 64 128 192) gpu_nets=(10 25)
# ResNet-50 (cap 128): 16 to 96, half to three times Goyal et al.'s 32.
gpu_batches50=(16 32 64 96)
# gpu_grid NAME [lbsim options]: LB-BSP's % faster at every point of the grid
# ("batch network %" lines in $work/grid-NAME.txt); prints "min max".
minmax() { awk 'NR == 1 { lo = hi = $NF } { if ($NF < lo) lo = $NF; if ($NF > hi) hi = $NF } END { print lo, hi }' "$1"; }
gpu_grid() {
	local name=$1 b n bs=("${gpu_batches[@]}")
	shift
	case $name in *r50) bs=("${gpu_batches50[@]}") ;; esac
	: > "$work/grid-$name.txt"
	for b in "${bs[@]}"; do
		for n in "${gpu_nets[@]}"; do
			run "$work/gpu-grid.db" "$gpu" lbbsp-gpu "$@" --set "run.global_batch=$((8 * b))" --set "network.bandwidth=$n Gbit/s"
			echo "$b $n $(faster "$work/gpu-grid.db" lbbsp-gpu)" >> "$work/grid-$name.txt"
		done
	done
	minmax "$work/grid-$name.txt"
}
progress "GPU assumption grid"
read -r gpu_lo gpu_hi < <(gpu_grid fitted --set "workers.slow.availability=$h")
for g in "${pairs[@]}"; do
	pair_opts "$g"
	read -r lo hi < <(gpu_grid "$g" "${popt[@]}")
	eval "gpu_${g}_lo=$lo gpu_${g}_hi=$hi"
done
# The h that gives 54% at each point of the grid (bisection, as the fit);
# "none" where even h = 0.05 gives less (the fast GPUs' cap leaves too
# much on the slow ones).
progress "GPU: the h of 54% over the grid"
: > "$work/grid-h54.txt"
h54_none=0 h54_none_at=""
for b in "${gpu_batches[@]}"; do
	for n in "${gpu_nets[@]}"; do
		o=(--set "run.global_batch=$((8 * b))" --set "network.bandwidth=$n Gbit/s")
		if awk "BEGIN { exit !($(gpu_at 0.05 "${o[@]}") <= 54) }"; then
			h54_none=$((h54_none + 1))
			h54_none_at+="${h54_none_at:+, }$b samples at $n Gbit/s"
			continue
		fi
		lo=0.05 hi=1
		for ((i = 0; i < steps_h; i++)); do
			mid=$(calc "($lo + $hi) / 2")
			s=$(gpu_at "$mid" "${o[@]}")
			if awk "BEGIN { exit !($s > 54) }"; then lo=$mid; else hi=$mid; fi
		done
		echo "$b $n $(calc "($lo + $hi) / 2")" >> "$work/grid-h54.txt"
	done
done
read -r h54_lo h54_hi < <(minmax "$work/grid-h54.txt")

cfg() { echo "(SELECT value FROM run_config c WHERE c.run_id = s.run_id AND c.section = '$1' AND c.key = '$2')"; }
sweep() {   # sweep NAME: runs scenarios/reproduce/NAME.ini into $work/NAME.db
	local f=$work/$1.ini
	progress "sensitivity sweep $1"
	# A copy naming its base scenario by absolute path, with the CPU sweeps
	# on the mode's seeds.
	sed "s|^scenario = |scenario = $PWD/$R/|" "$R/$1.ini" > "$f"
	case $1 in *cpu*) sed -i "s/^seeds = .*/seeds = 1..$grid_seeds/" "$f" ;; esac
	rm -rf "$work/$1.db" "$work/$1.db.sweep"
	"$lbsim" sweep "$f" -q -j "$jobs" -o "$work/$1.db"
	sqlite3 "$work/$1.db" < analysis/views.sql
}
# ---- LB-BSP, CPU cluster, and the predictors' errors: predicted -------------
# The tenants' draws differ from seed to seed, and so does the figure (by a
# few points): it is the mean over the seeds.
cpu=$R/lbbsp-cpu.ini
rm -f "$work/cpu.db"
for seed in "${cpu_seeds[@]}"; do
	progress "CPU cluster (NARX), seed $seed"
	"$lbsim" "$cpu" -q -o "$work/cpu.db" --policy lbbsp-cpu,dbs,oracle --seed "$seed" "${cpu_len[@]}" --detail workers
done
cpu_lbbsp=$(faster "$work/cpu.db" lbbsp-cpu)
# sd_of SQL: the sample standard deviation of the values SQL selects
sd_of() { sqlite3 "$work/cpu.db" "$1" | awk '{ s += $1; q += $1 * $1; n++ } END { printf "%.6g", (n > 1 ? sqrt((q - s * s / n) / (n - 1)) : 0) }'; }
cpu_sd=$(sd_of "SELECT 100 * (s.sim_time_s / p.sim_time_s - 1) FROM runs p
	JOIN runs s ON s.seed = p.seed AND s.policy = 'static' WHERE p.policy = 'lbbsp-cpu'")
cpu_lbbsp_min=$(faster "$work/cpu.db" lbbsp-cpu min)
cpu_lbbsp_max=$(faster "$work/cpu.db" lbbsp-cpu max)
cpu_dbs=$(faster "$work/cpu.db" dbs)
cpu_oracle=$(faster "$work/cpu.db" oracle)
for p in ema last; do
	progress "CPU cluster ($p)"
	rm -f "$work/cpu-$p.db"
	for seed in "${cpu_seeds[@]}"; do
		"$lbsim" "$cpu" -q -o "$work/cpu-$p.db" --policy lbbsp-cpu --seed "$seed" "${cpu_len[@]}" \
			--set "policy.lbbsp-cpu.predictor=$p"
	done
	eval "cpu_with_$p=\$(faster \"\$work/cpu-\$p.db\" lbbsp-cpu)"
done
# The CPU row's assumption grid: the tenants' load while on (25, 50, 75% of
# the CPU) and their on periods (1, 5, 30 s, off twice as long), none
# published; the sensitivity sweep runs it (5 epochs a point, the mode's
# seeds) and the range is that of its points' means over the seeds.
sweep sensitivity-cpu
sqlite3 "$work/sensitivity-cpu.db" "SELECT 100 * (avg(s.speedup) - 1) FROM speedup s WHERE s.policy = 'lbbsp-cpu'
	GROUP BY $(cfg generator.tenants on_mean), $(cfg generator.tenants load)" > "$work/grid-cpu.txt"
read -r cpu_grid_lo cpu_grid_hi < <(minmax "$work/grid-cpu.txt")
# the largest standard deviation over the seeds of one point (0 with one seed)
cpu_grid_sd=$(sqlite3 "$work/sensitivity-cpu.db" "SELECT max(sd) FROM (SELECT
	sqrt(max(0, (sum(x * x) - sum(x) * sum(x) / count(*)) / max(1, count(*) - 1))) AS sd FROM
	(SELECT 100 * (s.speedup - 1) AS x, $(cfg generator.tenants on_mean) AS o, $(cfg generator.tenants load) AS l
	 FROM speedup s WHERE s.policy = 'lbbsp-cpu') GROUP BY o, l)")

# Score the predictors on the speeds each LB-BSP run measured (the paper's
# setting: evaluations 1..seeds; with --doc, seed 1's static run is scored
# too, after the table: evaluation seeds + 1).
progress "scoring the predictors"
for id in $(sqlite3 "$work/cpu.db" "SELECT run_id FROM runs WHERE policy = 'lbbsp-cpu' ORDER BY seed"); do
	"$lbsim" predict "$work/cpu.db:$id" -q
done
n_lb=${#cpu_seeds[@]}
# ratio A B [EVAL]: RMSE of A over B's, the mean over the LB-BSP runs' evaluations or one evaluation
ratio() {
	local where="e1.eval_id <= $n_lb"
	[ $# -eq 3 ] && where="e1.eval_id = $3"
	sqlite3 "$work/cpu.db" "SELECT avg(e1.rmse / e2.rmse) FROM predictor_errors e1
		JOIN predictor_errors e2 ON e2.eval_id = e1.eval_id AND e2.predictor = '$2'
		WHERE e1.predictor = '$1' AND $where"
}
narx_ema=$(ratio narx ema)
narx_arima=$(ratio narx arima)
narx_last=$(ratio narx last)
ratio_sd() { sd_of "SELECT e1.rmse / e2.rmse FROM predictor_errors e1
	JOIN predictor_errors e2 ON e2.eval_id = e1.eval_id AND e2.predictor = '$2'
	WHERE e1.predictor = '$1' AND e1.eval_id <= $n_lb"; }
narx_ema_sd=$(ratio_sd narx ema) narx_arima_sd=$(ratio_sd narx arima)
# The predictor rows' assumption grids, scored on the LB-BSP runs of seeds 1
# and 2 (both modes have them): EMA's alpha, which the paper does not give
# (0.1 to 0.9: from heavy smoothing to almost none), and ARIMA's order (p, d,
# q), not given either: lbsim's default (2, 0, 1), an AR(1) and an
# ARIMA(1, 1, 1). NARX's error is the one scored above on the same runs.
progress "scoring EMA and ARIMA over their options"
rm -f "$work/pred-grid.db"
grid_runs=$(sqlite3 "$work/cpu.db" "SELECT run_id FROM runs WHERE policy = 'lbbsp-cpu' AND seed <= 2 ORDER BY seed")
for a in 0.1 0.3 0.5 0.7 0.9; do
	for id in $grid_runs; do
		"$lbsim" predict "$work/cpu.db:$id" -q -p ema --set "predictor.ema.alpha=$a" -o "$work/pred-grid.db"
	done
done
for o in 1,0,0 1,1,1; do   # (2, 0, 1): scored above
	IFS=, read -r ap ad aq <<< "$o"
	for id in $grid_runs; do
		"$lbsim" predict "$work/cpu.db:$id" -q -p arima -o "$work/pred-grid.db" \
			--set "predictor.arima.p=$ap" --set "predictor.arima.d=$ad" --set "predictor.arima.q=$aq"
	done
done
# grid_ratio PREDICTOR: NARX's error below PREDICTOR's (%) for each option
# (the mean over the two runs of the ratio), one line each; evaluations
# are numbered in order, two per option.
grid_ratio() {
	sqlite3 "$work/pred-grid.db" "ATTACH $(gs "$work/cpu.db") AS c;
		SELECT 100 * (1 - avg(n.rmse / g.rmse)) FROM predictor_errors g
		JOIN c.predictor_errors n ON n.source = g.source AND n.predictor = 'narx' AND n.eval_id <= $n_lb
		WHERE g.predictor = '$1' GROUP BY (g.eval_id - 1) / 2"
}
grid_ratio ema > "$work/grid-ema.txt"
{
	grid_ratio arima
	sqlite3 "$work/cpu.db" "SELECT 100 * (1 - avg(e1.rmse / e2.rmse)) FROM predictor_errors e1
		JOIN predictor_errors e2 ON e2.eval_id = e1.eval_id AND e2.predictor = 'arima'
		WHERE e1.predictor = 'narx' AND e1.eval_id <= 2"
} > "$work/grid-arima.txt"
read -r ema_lo ema_hi < <(minmax "$work/grid-ema.txt")
read -r arima_lo arima_hi < <(minmax "$work/grid-arima.txt")

# ---- DBS: fit the all-reduce bandwidth to 12% at 4 workers -----------------
dbs=$R/dbs.ini
# dbs_at BW SHARE_AVAIL K [options]: K copies of the 3+1 layout
dbs_at() {
	local bw=$1 a=$2 k=$3
	shift 3
	run "$work/dbs-fit.db" "$dbs" dbs "${dbs_len[@]}" --set "network.bandwidth=$bw GB/s" \
		--set "workers.shared.availability=$a" --set "workers.shared.count=$((3 * k))" \
		--set "workers.alone.count=$k" "$@"
	saved "$work/dbs-fit.db" dbs
}
share=0.0740740741   # a third of the ResNet-101-scaled V100 (dbs.ini)
fit_bw() {   # fit_bw SHARE_AVAIL: bandwidth (GB/s) giving 12% at 4 workers
	local lo=0.01 hi=20 mid s i
	for ((i = 0; i < steps_bw; i++)); do
		mid=$(calc "sqrt($lo * $hi)")
		progress "fitting the DBS bandwidth ($i/$steps_bw): $mid GB/s"
		s=$(dbs_at "$mid" "$1" 1)
		if awk "BEGIN { exit !($s > 12) }"; then hi=$mid; else lo=$mid; fi
	done
	printf '%.4g' "$(calc "sqrt($lo * $hi)")"
}
bw=$(fit_bw $share)
stepped $steps_bw   # its steps, announced in the subshell
# last_batches: the sharing and lone workers' batches (mean) at the run's last re-balancing
last_batches() {
	sqlite3 "$work/dbs-fit.db" "SELECT printf('%.0f and %.0f', avg(CASE WHEN w.group_name = 'shared' THEN b.batch_samples END),
		avg(CASE WHEN w.group_name = 'alone' THEN b.batch_samples END))
		FROM batches b JOIN workers w ON w.run_id = b.run_id AND w.worker = b.worker
		JOIN runs r ON r.run_id = b.run_id AND r.policy = 'dbs'
		WHERE b.iteration = (SELECT max(iteration) FROM batches WHERE run_id = r.run_id)"
}
dbs4=$(dbs_at "$bw" $share 1)
dbs4_batches=$(last_batches)
dbs8=$(dbs_at "$bw" $share 2)
dbs8_batches=$(last_batches)
dbs16=$(dbs_at "$bw" $share 4)
dbs16_batches=$(last_batches)
dbs32=$(dbs_at "$bw" $share 8)
# Disturbance (the authors' "irrelevant tasks"), five seeds: how much longer
# each policy takes with it than without.
progress "DBS under disturbance"
dist=(--set generator.irrelevant-tasks.kind=dbs_disturbance --set generator.irrelevant-tasks.workers=shared,alone)
rm -f "$work/dbs-dist.db"
for seed in 1 2 3 4 5; do
	"$lbsim" "$dbs" -q -o "$work/dbs-dist.db" --policy dbs --seed $seed "${dbs_len[@]}" \
		--set "network.bandwidth=$bw GB/s" --set run.name=clean --detail iterations
	"$lbsim" "$dbs" -q -o "$work/dbs-dist.db" --policy dbs --seed $seed "${dbs_len[@]}" \
		--set "network.bandwidth=$bw GB/s" --set run.name=disturbed "${dist[@]}" --detail iterations
done
growth() {   # growth POLICY: mean over seeds of (disturbed / clean - 1), in %
	sqlite3 "$work/dbs-dist.db" "SELECT 100 * (avg(d.sim_time_s / c.sim_time_s) - 1)
		FROM runs d JOIN runs c ON c.seed = d.seed AND c.policy = d.policy AND c.scenario = 'clean'
		WHERE d.scenario = 'disturbed' AND d.policy = '$1'"
}
grow_static=$(growth static)
grow_dbs=$(growth dbs)
growth_s() {   # growth_s POLICY: mean over seeds of disturbed - clean, in s
	sqlite3 "$work/dbs-dist.db" "SELECT avg(d.sim_time_s - c.sim_time_s)
		FROM runs d JOIN runs c ON c.seed = d.seed AND c.policy = d.policy AND c.scenario = 'clean'
		WHERE d.scenario = 'disturbed' AND d.policy = '$1'"
}
grow_static_s=$(growth_s static)
grow_dbs_s=$(growth_s dbs)
dist_saved=$(sqlite3 "$work/dbs-dist.db" "SELECT 100 * (1 - avg(d.sim_time_s / s.sim_time_s))
	FROM runs d JOIN runs s ON s.seed = d.seed AND s.scenario = d.scenario AND s.policy = 'static'
	WHERE d.scenario = 'disturbed' AND d.policy = 'dbs'")

# DBS's assumption grid: how much of a GPU each of the three sharing
# processes gets, the one assumption the fit cannot separate from the
# bandwidth; each point refits the bandwidth to 12% at 4 workers and
# predicts 8 and 16 workers and the disturbance's growth (five seeds).
# Plausible: 0.25 to 0.5. Gavel's co-locations of two saturating jobs on one
# GPU give each 0.46 to 0.60 of its isolated throughput (together 0.92 to
# 1.2 of one), so three get about 0.31 to 0.40 each; 0.25 allows for more
# contention, 0.5 for a job that does not saturate the GPU. 0.6 is shown,
# outside the range.
# dist_growth BW SHARE_AVAIL: "S-SGD DBS" growth (%) under disturbance, five seeds
dist_growth() {
	local seed d
	rm -f "$work/dbs-distg.db"
	for seed in 1 2 3 4 5; do
		for d in clean disturbed; do
			extra=()
			[ $d = disturbed ] && extra=("${dist[@]}")
			"$lbsim" "$dbs" -q -o "$work/dbs-distg.db" --policy dbs --seed $seed "${dbs_len[@]}" \
				--set "network.bandwidth=$1 GB/s" --set "workers.shared.availability=$2" \
				--set "run.name=$d" --detail runs "${extra[@]}"
		done
	done
	sqlite3 -separator ' ' "$work/dbs-distg.db" "SELECT
		100 * (avg(CASE WHEN d.policy = 'static' THEN d.sim_time_s / c.sim_time_s END) - 1),
		100 * (avg(CASE WHEN d.policy = 'dbs' THEN d.sim_time_s / c.sim_time_s END) - 1)
		FROM runs d JOIN runs c ON c.seed = d.seed AND c.policy = d.policy AND c.scenario = 'clean'
		WHERE d.scenario = 'disturbed'"
}
dbs_alt_rows=""
: > "$work/grid-dbs.txt"
for x in 0.25 0.3333333333 0.4 0.5 0.6; do
	a=$(calc "0.2222222222 * $x")
	b=$(fit_bw "$a")
	stepped $steps_bw
	r4=$(dbs_at "$b" "$a" 1)
	if awk "BEGIN { exit !($r4 < 11.5 || $r4 > 12.5) }"; then
		dbs_alt_rows+="| $(printf '%.2f' "$x") | no bandwidth gives 12% (best $(printf '%.1f' "$r4")%) | | | | |"$'\n'
		continue
	fi
	ratio=$(sqlite3 "$work/dbs-fit.db" "SELECT mean_aggregation_s / mean_compute_s FROM runs WHERE policy = 'static'")
	r8=$(dbs_at "$b" "$a" 2) r16=$(dbs_at "$b" "$a" 4)
	read -r gs gd < <(dist_growth "$b" "$a")
	in=no
	awk "BEGIN { exit !($x >= 0.25 && $x <= 0.5) }" && { in=yes; echo "$x $r8 $r16 $gs $gd" >> "$work/grid-dbs.txt"; }
	dbs_alt_rows+="| $(printf '%.2f' "$x")$([ $in = no ] && printf ' (outside)') | $b | $(printf '%.2f' "$ratio") | $(printf '%.1f%%' "$r8") | $(printf '%.1f%%' "$r16") | $(printf '%+.1f%% vs %+.1f%%' "$gs" "$gd") |"$'\n'
done
col_minmax() { awk -v c="$2" 'NR == 1 { lo = hi = $c } { if ($c < lo) lo = $c; if ($c > hi) hi = $c } END { print lo, hi }' "$1"; }
read -r dbs8_lo dbs8_hi < <(col_minmax "$work/grid-dbs.txt" 2)
read -r dbs16_lo dbs16_hi < <(col_minmax "$work/grid-dbs.txt" 3)
read -r gs_lo gs_hi < <(col_minmax "$work/grid-dbs.txt" 4)
read -r gd_lo gd_hi < <(col_minmax "$work/grid-dbs.txt" 5)

# ---- the table ---------------------------------------------------------------
pct() { printf '%+.1f%%' "$1"; }
pp() { printf "%+.1f pp" "$(calc "$1 - $2")"; }
table=$work/table.tsv
rng() { printf '%+.1f%% to %+.1f%%' "$1" "$2"; }   # a range of "faster" figures
rngp() { printf '%.1f%% to %.1f%%' "$1" "$2"; }    # a range of "less" figures
ver="the paper's abstract" unv="unverified: later papers' summaries" unvd="unverified: summaries of the paper (not in its abstract)"
a_gpu="samples per worker, network (and h, fitted)" a_pair="samples per worker, network"
a_cpu="tenants' load and on/off periods" a_pred="tenants' load; EMA's alpha" a_ari="tenants' load; ARIMA's order"
a_dbs="GPU share per sharing process (bandwidth refitted), layout of 8 and 16"
{
	printf 'figure\tpaper\tpaper figure from\tlbsim\trange over the assumptions\tdifference\tstatus\tassumed values it depends on\n'
	printf 'LB-BSP, GPU cluster: faster than BSP\t+54%% (up to)\t%s (the cluster: %s)\t%s\t%s\t%s\tfitted (slow GPUs at h = %s of a V100)\t%s\n' \
		"$ver" "${unv#unverified: }" "$(pct "$gpu_lbbsp")" "$(rng "$gpu_lo" "$gpu_hi")" "$(pp "$gpu_lbbsp" 54)" "$h" "$a_gpu"
	for g in "${pairs[@]}"; do
		eval "v=\$gpu_$g lo=\$gpu_${g}_lo hi=\$gpu_${g}_hi"
		printf 'LB-BSP, GPU cluster of V100s + %s (measured profiles)\t-\t-\t%s\t%s\t-\tpredicted (no paper figure for this pair)\t%s\n' \
			"$(pair_label "$g")" "$(pct "$v")" "$(rng "$lo" "$hi")" "$a_pair"
	done
	printf 'LB-BSP, CPU cluster: faster than BSP (NARX)\t+38.7%%\t%s\t%s\t%s\t%s\tpredicted\t%s\n' \
		"$unv" "$(pct "$cpu_lbbsp")" "$(rng "$cpu_grid_lo" "$cpu_grid_hi")" "$(pp "$cpu_lbbsp" 38.7)" "$a_cpu"
	printf 'NARX error below EMA'"'"'s (RMSE, LB-BSP run)\t40%%\t%s\t%.1f%%\t%s\t%s\tpredicted\t%s\n' \
		"$unv" "$(calc "100 * (1 - $narx_ema)")" "$(rngp "$ema_lo" "$ema_hi")" "$(pp "$(calc "100 * (1 - $narx_ema)")" 40)" "$a_pred"
	printf 'NARX error below ARIMA'"'"'s (RMSE, LB-BSP run)\t40%%\t%s\t%.1f%%\t%s\t%s\tpredicted\t%s\n' \
		"$unv" "$(calc "100 * (1 - $narx_arima)")" "$(rngp "$arima_lo" "$arima_hi")" "$(pp "$(calc "100 * (1 - $narx_arima)")" 40)" "$a_ari"
	printf 'DBS, 4 workers: less training time than S-SGD\t12%%\t%s\t%.1f%%\t- (fitted at every point)\t%s\tfitted (all-reduce at %s GB/s)\t%s\n' \
		"$unvd" "$dbs4" "$(pp "$dbs4" 12)" "$bw" "GPU share per sharing process"
	printf 'DBS, 8 workers\t10%%\t%s\t%.1f%%\t%s\t%s\tpredicted\t%s\n' "$unvd" "$dbs8" "$(rngp "$dbs8_lo" "$dbs8_hi")" "$(pp "$dbs8" 10)" "$a_dbs"
	printf 'DBS, 16 workers\tless than at 8\t%s\t%.1f%%\t%s\t%s\tpredicted\t%s\n' "$unvd" "$dbs16" "$(rngp "$dbs16_lo" "$dbs16_hi")" \
		"$(awk "BEGIN { print ($dbs16 < $dbs8) ? \"holds\" : \"does not hold\" }")" "$a_dbs"
	printf 'DBS under disturbance: growth of training time, S-SGD vs DBS\tDBS grows far less\t%s\t%+.1f%% vs %+.1f%%\tS-SGD %s, DBS %s\t%s\tpredicted\t%s\n' \
		"$unvd" "$grow_static" "$grow_dbs" "$(rng "$gs_lo" "$gs_hi")" "$(rng "$gd_lo" "$gd_hi")" \
		"$(awk "BEGIN { print ($grow_dbs < $grow_static / 2) ? \"holds (DBS grows less than half as much)\" : \"does not hold\" }")" \
		"GPU share per sharing process (bandwidth refitted)"
} > "$table"
# figures.tsv: every figure of the table as numbers (key, central value, the
# range's ends), with the tolerances (central value, range's ends) within which a --quick run must give them
# (tests/e2e/reproduce.sh). The GPU and DBS figures are the same runs in both
# modes: 0.05 (printing). The CPU ones are means over fewer seeds in quick
# mode, nested in the full run's: for a mean over seeds 1-2 against one over
# 1-5, the difference has a standard deviation of sd * sqrt(1/2 - 1/5) (sd:
# the spread over the full run's seeds); for one seed against a point's mean
# over seeds 1-3, sd * sqrt(2/3). The tolerance is three of those.
tol2of5=$(calc "3 * sqrt(0.3)") tol1of3=$(calc "3 * sqrt(2 / 3)")
{
	printf 'key\tcentral\tlow\thigh\ttolerance_central\ttolerance_range\n'
	row() { printf '%s\t%.4f\t%.4f\t%.4f\t%.4f\t%.4f\n' "$1" "$2" "$3" "$4" "$5" "${6:-$5}"; }
	row gpu-fitted "$gpu_lbbsp" "$gpu_lo" "$gpu_hi" 0.05
	for g in "${pairs[@]}"; do
		eval "row gpu-$g \$gpu_$g \$gpu_${g}_lo \$gpu_${g}_hi 0.05"
	done
	row h54 "$h" "$h54_lo" "$h54_hi" 0.0005
	row cpu-narx "$cpu_lbbsp" "$cpu_grid_lo" "$cpu_grid_hi" \
		"$(calc "$tol2of5 * $cpu_sd")" "$(calc "$tol1of3 * $cpu_grid_sd")"
	row narx-ema "$(calc "100 * (1 - $narx_ema)")" "$ema_lo" "$ema_hi" "$(calc "$tol2of5 * 100 * $narx_ema_sd")"
	row narx-arima "$(calc "100 * (1 - $narx_arima)")" "$arima_lo" "$arima_hi" "$(calc "$tol2of5 * 100 * $narx_arima_sd")"
	row dbs4 "$dbs4" "$dbs4" "$dbs4" 0.05
	row dbs8 "$dbs8" "$dbs8_lo" "$dbs8_hi" 0.05
	row dbs16 "$dbs16" "$dbs16_lo" "$dbs16_hi" 0.05
	row dist-static "$grow_static" "$gs_lo" "$gs_hi" 0.05
	row dist-dbs "$grow_dbs" "$gd_lo" "$gd_hi" 0.05
} > "$work/figures.tsv"
progress "table done"
[ -t 2 ] && printf '\n' >&2
# Aligned columns (two passes over the table: widths, then the rows).
awk -F'\t' 'NR == FNR { for (i = 1; i <= NF; i++) if (length($i) > w[i]) w[i] = length($i); next }
	{ for (i = 1; i < NF; i++) printf "%-*s  ", w[i], $i; print $NF }' "$table" "$table"

# Everything below feeds the report; the quick mode stops here unless a doc
# was asked for.
[ -n "$doc" ] || exit 0

# ---- sensitivity: degree of heterogeneity and communication-to-compute ratio
docdir=${doc%.md}
mkdir -p "$docdir"
# the figures as numbers, for tests/e2e/reproduce.sh to check a quick run against
cp "$work/figures.tsv" "$docdir/figures.tsv"
gp=analysis/reproduce.gp
plot() { gnuplot -e "$1" "$gp"; }
# GPU: speedup against h at three bandwidths; the communication-to-compute
# ratio of each is the static run's aggregation time over its compute time
# on the homogeneous cluster (h = 1).
sweep sensitivity-gpu
sqlite3 -csv "$work/sensitivity-gpu.db" "
	WITH p AS (SELECT s.policy, $(cfg network bandwidth) AS bw, CAST($(cfg workers.slow availability) AS REAL) AS h,
	                  s.speedup, r.mean_aggregation_s / r.mean_compute_s AS ratio
	           FROM speedup s JOIN runs r ON r.run_id = s.run_id)
	SELECT 'series', 'x', 'y'
	UNION ALL
	SELECT * FROM (SELECT p.policy || ':comm/compute~' || printf('%.2f', q.ratio), p.h, p.speedup
	               FROM p JOIN p q ON q.bw = p.bw AND q.policy = 'static' AND q.h = 1
	               WHERE p.policy <> 'static' ORDER BY q.ratio, p.policy, p.h)" > "$work/sens-gpu.csv"
printf 'label,x,y,kind,pos\nLB-BSP 54%% (h fitted),%s,1.54,fitted,0.08/0.5\n' "$h" > "$work/sens-gpu-marks.csv"
plot "data=$(gs "$work/sens-gpu.csv"); out=$(gs "$docdir/sensitivity-gpu.png"); marks=$(gs "$work/sens-gpu-marks.csv");
	xlabel='h: slow GPUs speed / fast GPUs speed'; ylabel='speedup over BSP (static time / policy time)';
	title='GPU cluster (lbbsp-gpu.ini): 4 fast + 4 slow GPUs'"

# CPU: LB-BSP's speedup against the tenants' load and the length of their
# on/off periods, and against the network (the communication ratio).
# (the CPU sweep ran before the table: its range)
sqlite3 -csv "$work/sensitivity-cpu.db" "
	WITH p AS (SELECT s.policy, replace($(cfg generator.tenants on_mean), ' ', '') AS tag,
	                  CAST($(cfg generator.tenants on_mean) AS REAL) AS on_s,
	                  CAST(replace($(cfg generator.tenants load), '%', '') AS REAL) AS load, s.speedup
	           FROM speedup s WHERE s.policy <> 'static')
	SELECT 'series', 'x', 'y'
	UNION ALL
	SELECT * FROM (SELECT policy || ':tenants~on~' || tag, load, avg(speedup) FROM p
	               GROUP BY policy, on_s, load ORDER BY policy, on_s, load)" > "$work/sens-cpu.csv"
printf 'label,x,y,kind,pos\nLB-BSP 38.7%% (load unknown),50,1.387,paper,right\n' > "$work/sens-cpu-marks.csv"
plot "data=$(gs "$work/sens-cpu.csv"); out=$(gs "$docdir/sensitivity-cpu.png"); marks=$(gs "$work/sens-cpu-marks.csv");
	xlabel='co-located tenant load while on (% of the CPU)'; ylabel='speedup over BSP (static time / policy time)';
	title='CPU cluster (lbbsp-cpu.ini): 16 workers, tenants on 1/3 of the time'"
sweep sensitivity-cpu-network
cpu_net_rows=$(sqlite3 -separator ' | ' "$work/sensitivity-cpu-network.db" "
	SELECT '| ' || $(cfg network bandwidth), printf('%.3f', avg(r.mean_aggregation_s / r.mean_compute_s)),
	       printf('%+.1f%%', 100 * (avg(l.speedup) - 1)) || ' |'
	FROM speedup s JOIN runs r ON r.run_id = s.run_id
	JOIN speedup l ON l.setting_id = s.setting_id AND l.policy = 'lbbsp-cpu'
	WHERE s.policy = 'static' GROUP BY 1 ORDER BY avg(r.mean_aggregation_s) DESC")

# DBS: the figures against the cluster size at the fitted bandwidth and at
# others (the communication ratio), and LB-BSP's GPU figure against the
# cluster size at the fitted h (half fast, half slow, 128 samples a worker).
progress "scaling"
{
	echo "series,x,y"
	for f in 0.25 1 4; do
		b=$(calc "$bw * $f")
		for k in 1 2 4 8; do
			echo "dbs:all-reduce~$(printf '%.3g' "$b")~GB/s,$((4 * k)),$(calc "1 / (1 - $(dbs_at "$b" $share $k) / 100)")"
		done
	done
	for n in 4 8 16 32; do
		run "$work/gpu-size.db" "$gpu" lbbsp-gpu "${gpu_len[@]}" --set "workers.slow.availability=$h" \
			--set "workers.fast.count=$((n / 2))" --set "workers.slow.count=$((n / 2))" \
			--set "run.global_batch=$((128 * n))"
		echo "lbbsp-gpu:GPU~cluster~at~the~fitted~h~=~$h,$n,$(calc "1 + $(faster "$work/gpu-size.db" lbbsp-gpu) / 100")"
	done
} > "$work/scaling.csv"
printf 'label,x,y,kind,pos\nDBS 12%%,4,%s,fitted,above\nDBS 10%%,8,%s,paper,right\nLB-BSP 54%%,8,1.54,fitted,below\n' "$(calc "1 / 0.88")" "$(calc "1 / 0.9")" > "$work/scaling-marks.csv"
plot "data=$(gs "$work/scaling.csv"); out=$(gs "$docdir/speedup-vs-size.png"); marks=$(gs "$work/scaling-marks.csv"); logx=1;
	xlabel='workers'; ylabel='speedup over BSP / S-SGD (static time / policy time)';
	title='Speedup against cluster size: DBS (dbs.ini, copies of the 3+1 layout) and LB-BSP (lbbsp-gpu.ini)'"

# Disturbance: seed 1's epoch times, and the growth with longer delays.
progress "disturbance"
sqlite3 "$work/dbs-dist.db" < analysis/views.sql
sqlite3 -csv "$work/dbs-dist.db" "
	SELECT 'series', 'x', 'y'
	UNION ALL
	SELECT * FROM (SELECT r.policy || ':' || r.scenario, e.epoch + 1,
	                      e.end_s - coalesce(lag(e.end_s) OVER (PARTITION BY e.run_id ORDER BY e.epoch), 0)
	               FROM epoch_times e JOIN runs r ON r.run_id = e.run_id WHERE r.seed = 1
	               ORDER BY r.scenario, r.policy, e.epoch)" > "$work/disturbance.csv"
plot "data=$(gs "$work/disturbance.csv"); out=$(gs "$docdir/disturbance.png");
	xlabel='epoch'; ylabel='epoch time (s)';
	title='DBS setting (dbs.ini), seed 1: epoch times of S-SGD (static) and DBS, clean and disturbed'; baseline='S-SGD'"
dist_rows=""
for f in 1 4 16; do
	rm -f "$work/dbs-distk.db"
	for seed in 1 2 3 4 5; do
		for d in 0 1; do
			extra=()
			[ $d -eq 1 ] && extra=("${dist[@]}" --set "generator.irrelevant-tasks.delay_min=$((5 * f)) s" \
				--set "generator.irrelevant-tasks.delay_max=$((10 * f)) s")
			"$lbsim" "$dbs" -q -o "$work/dbs-distk.db" --policy dbs --seed $seed "${dbs_len[@]}" \
				--set "network.bandwidth=$bw GB/s" --set "run.name=d$d" --detail runs "${extra[@]}"
		done
	done
	g() { sqlite3 "$work/dbs-distk.db" "SELECT printf('%+.1f%%', 100 * (avg(d.sim_time_s / c.sim_time_s) - 1))
		FROM runs d JOIN runs c ON c.seed = d.seed AND c.policy = d.policy AND c.scenario = 'd0'
		WHERE d.scenario = 'd1' AND d.policy = '$1'"; }
	share_of_epoch=$(sqlite3 "$work/dbs-distk.db" "SELECT printf('%.0f%%', 100 * 7.5 * $f / avg(sim_time_s /
		(SELECT CAST(value AS REAL) FROM run_config c WHERE c.run_id = runs.run_id AND c.section = 'run' AND c.key = 'epochs')))
		FROM runs WHERE scenario = 'd0' AND policy = 'static'")
	dist_rows+="| $((5 * f))-$((10 * f)) s | $share_of_epoch | $(g static) | $(g dbs) |"$'\n'
done

# Iteration time over simulated time, BSP vs LB-BSP vs DBS (and the oracle),
# smoothed over 20 iterations.
timeline() {   # timeline DB OUT TITLE
	sqlite3 "$1" < analysis/views.sql
	sqlite3 -csv "$1" "
		SELECT 'series', 'x', 'y'
		UNION ALL
		SELECT * FROM (SELECT policy, end_s,
		                      avg(iteration_s) OVER (PARTITION BY run_id ORDER BY iteration ROWS 19 PRECEDING)
		               FROM iteration_times WHERE seed = 1 AND iteration % 5 = 4
		               ORDER BY run_id, iteration)" > "$work/timeline.csv"
	plot "data=$(gs "$work/timeline.csv"); out=$(gs "$2"); xlabel='simulated time (s)';
		ylabel='iteration time (s), mean of the last 20'; title='$3'; xmin=0"
}
timeline "$work/cpu.db" "$docdir/timeline-cpu.png" "CPU cluster (lbbsp-cpu.ini): BSP vs LB-BSP (NARX) vs DBS"
timeline "$work/gpu.db" "$docdir/timeline-gpu.png" "GPU cluster (lbbsp-gpu.ini, fitted h): BSP vs LB-BSP vs DBS"

# Every run behind the page in one self-contained HTML file (lbsim report),
# beside it: the databases merged, the report's plots and tables.
progress "report: merging the runs"
rm -f "$work/all.db"
"$lbsim" merge -q "$work/all.db" $(ls "$work"/*.db | grep -v '/all\.db$')
progress "report: writing $docdir/report.html"
top=$PWD
case $docdir in /*) html=$docdir/report.html ;; *) html=$top/$docdir/report.html ;; esac
(cd "$work" && "$lbsim" report -q all.db -o "$html") # named all.db in it

# The decision overhead at 96 workers (wall-clock: varies between runs).
overhead="(not measured: run with --bench bench/bench)"
if [ -n "$bench" ]; then
	progress "decision overhead at 96 workers"
	overhead=$("$bench" --decision-only scenarios/policies/cpu-96-narx.ini | sed -n '2,$p' | sed 's/^/    /')
fi
# The predictors on seed 1's static run (speeds not shaped by the policy).
progress "scoring the predictors on a static run"
"$lbsim" predict "$work/cpu.db:$(sqlite3 "$work/cpu.db" "SELECT run_id FROM runs WHERE policy = 'static' ORDER BY seed LIMIT 1")" -q
narx_ema_static=$(ratio narx ema $((n_lb + 1)))
narx_arima_static=$(ratio narx arima $((n_lb + 1)))
narx_static_last=$(ratio narx last $((n_lb + 1)))
progress "writing $doc"
[ -t 2 ] && printf '\n' >&2

# LB-BSP's speedup (%) at on periods of 5 s for each load of the CPU sweep
sens_cpu() {
	sqlite3 "$work/sensitivity-cpu.db" "SELECT 100 * (avg(s.speedup) - 1) FROM speedup s
		WHERE s.policy = 'lbbsp-cpu' AND $(cfg generator.tenants on_mean) = '5 s'
		AND $(cfg generator.tenants load) = '$1'"
}
sens_cpu_25=$(sens_cpu 25%) sens_cpu_50=$(sens_cpu 50%) sens_cpu_75=$(sens_cpu 75%)

# ---- the report --------------------------------------------------------------
md_table() { awk -F'\t' '{ l = "|"; for (i = 1; i <= NF; i++) l = l " " $i " |"; print l }
	NR == 1 { l = "|"; for (i = 1; i <= NF; i++) l = l "---|"; print l }' "$table"; }
f1() { printf '%.1f' "$1"; }
ratio_pct() { printf '%.1f%%' "$(calc "100 * (1 - $1)")"; }
# The LB-BSP speedups of the real GPU pairs, and h of each pair: the slow
# GPU's speed relative to a V100 at the balanced batch (~128 samples).
h_of() { calc "$(t_at profiles/v100-resnet18.ini 128) / $(t_at "$1" 128)"; }
h_p100r50=$(calc "$(t_at profiles/v100-resnet50.ini 32) / $(t_at profiles/p100-resnet50.ini 32)")
h_k80r50=$(calc "$(t_at profiles/v100-resnet50.ini 32) / $(t_at profiles/k80-resnet50.ini 32)")
h_t4=$(h_of profiles/t4-cifar10.ini) h_p100=$(h_of profiles/p100-resnet18.ini) h_k80=$(h_of profiles/k80-resnet18.ini)
cpu_ratio=$(sqlite3 "$work/cpu.db" "SELECT avg(mean_aggregation_s / mean_compute_s) FROM runs WHERE policy = 'static'")
dbs_ratio=$(dbs_at "$bw" $share 1 > /dev/null; sqlite3 "$work/dbs-fit.db" "SELECT mean_aggregation_s / mean_compute_s FROM runs WHERE policy = 'static'")
# The chance that some worker's tenant switches during an LB-BSP iteration:
# 16 workers, each switching twice per 15 s cycle on average (Poisson).
cpu_iter=$(sqlite3 "$work/cpu.db" "SELECT avg(mean_iteration_s) FROM runs WHERE policy = 'lbbsp-cpu'")
p_switch=$(calc "100 * (1 - exp(-16 * 2 / 15 * $cpu_iter))")

h54_none_text=""
[ "$h54_none" -gt 0 ] && h54_none_text=" (at $h54_none_at no h down to 0.05 gives it: the fast GPUs' cap leaves too many samples on the slow ones)"
pairs_at_54() {   # which measured pairs' ranges hold 54%
	local g lo hi in=""
	for g in "${pairs[@]}"; do
		eval "lo=\$gpu_${g}_lo hi=\$gpu_${g}_hi"
		awk "BEGIN { exit !($lo <= 54 && $hi >= 54) }" && in+="${in:+, }V100s with $(pair_label "$g")"
	done
	if [ -n "$in" ]; then echo "of the measured pairs, the grid holds 54% for $in"; else echo "no measured pair gives 54% anywhere on the grid"; fi
}
cat > "$doc" <<MD
<!-- SPDX-License-Identifier: GPL-3.0-or-later -->
<!-- Written by analysis/reproduce.sh (make reproduce); edit that script, not this file. -->
# Does lbsim reproduce what the papers measured?

\`make reproduce\` runs the scenarios of [scenarios/reproduce/](../scenarios/reproduce), fits the two
values that are fitted (each to one figure, which then does not count as reproduced), predicts every
other figure, prints the table below and writes this page with its plots. Every run has a fixed
seed and nothing in the table depends on the clock, so the same command prints the same table
(\`tests/e2e/reproduce.sh\` checks it). It takes about 75 s of processor time on
two cores (under three minutes of wall time on a machine shared with other work);
\`make reproduce-quick\` (\`analysis/reproduce.sh --quick\`) prints the same table from fewer seeds
in about 30 s of processor time (below, "The quick mode").
On a terminal it shows its progress on standard error (\`reproduce: step 12 of 70, 1:40 elapsed,
about 8:10 left: ...\`, the estimate the mean time of the steps so far times the steps left: rough,
the steps differ); without one it prints nothing there.

\`\`\`sh
./configure && make && make reproduce        # the table on stdout, this page in doc/
\`\`\`

Every run behind this page is also in one self-contained HTML file,
[reproduction/report.html](reproduction/report.html) (\`lbsim report\` of the merged results: the
runs, the speedups per policy with their spread over seeds, the settings, the plots).

The papers are LB-BSP (Chen et al., "Semi-Dynamic Load Balancing", SoCC'20, arXiv 1806.02508) and
DBS (Ye et al., arXiv 2007.11831, and the authors' code); what is known of their setups (LB-BSP
publishes neither its instance types, nor its worker counts, nor how it made background load) is
restated key by key in each scenario's header. "Faster" is the baseline's training time over the policy's,
minus one; "less training time" is one minus the policy's time over the baseline's; a training time
is the simulated time to run the scenario's epochs. Both baselines (BSP and S-SGD) are lbsim's
\`static\` policy: the global batch split evenly, every iteration.

## The table

$(md_table)

"lbsim" is the figure at the scenario's own values, the central value; "range over the
assumptions" is the least and the greatest value of the same figure over a grid of the values the
papers do not give, each point run by \`make reproduce\` (not typed in), with the grids and what
makes their values plausible below. The last column names the assumed values a row depends on:
every row depends on some, which is why the range matters more than the central value where it is
wide. "Paper figure from" says where the paper's figure comes from: LB-BSP's abstract gives "up
to 54%" on EC2 without naming the cluster; the GPU cluster, the CPU cluster's 38.7% and NARX's 40%
are what later papers' summaries of it report; DBS's abstract gives no numbers, and its 12%, 10% and
the disturbance's outcome come from summaries of its results. All of those are marked unverified:
they were not checked against the papers' own tables.

Differences are in percentage points, of the central value. The issue behind this page asks that a
predicted figure be within 5 points of the paper's (2 for DBS's) or explained; every one that is
not is explained below, with the runs that show why. No value was changed after seeing a result to
move a predicted figure.

### The assumption grids, and what makes a value plausible

- **GPU rows**: the samples per worker, 32, 64, 128 (the scenario's) and 192 (ResNet-50: 16, 32,
  64 and 96, around Goyal et al.'s 32 per GPU for ImageNet, below its profiles' cap of 128), times the network,
  10 Gbit/s (the scenario's) and 25 Gbit/s. He et al. train CIFAR-10 ResNets with 128 samples a
  step; the grid goes from a quarter of that to 1.5 times it, below the V100 profile's memory cap of
  256, which must leave the fast GPUs room for the samples LB-BSP moves. 10 and 25 Gbit/s are EC2's
  GPU instances' networks of the paper's time (p3.2xlarge to p3.8xlarge: up to 10; p3.16xlarge and
  g4dn: 25). The fitted row keeps h at its fitted value; the pairs use the measured profiles.
- **CPU row**: the tenants' load while on, 25, 50 (the scenario's) and 75% of the CPU, times their
  mean on period, 1, 5 (the scenario's) and 30 s, off twice as long; the paper does not say how it
  made its background load, so the grid brackets it: from tenants that switch within a few
  iterations to ones that stay for hundreds, and from a light to a heavy share of the CPU. Each point is the mean over ${grid_seeds} seed(s) of 5 epochs (the central value: ${#cpu_seeds[@]}
  seeds of 10 epochs), from [sensitivity-cpu.ini](../scenarios/reproduce/sensitivity-cpu.ini).
- **NARX against EMA**: EMA's alpha, 0.1, 0.3, 0.5 (lbsim's default), 0.7 and 0.9, from heavy
  smoothing to almost none; the paper gives no alpha. **Against ARIMA**: the order (p, d, q), (2, 0,
  1) (lbsim's default), (1, 0, 0) and (1, 1, 1); the paper gives none. Both are scored on the LB-BSP
  runs of seeds 1 and 2; the central values are the means over all ${#cpu_seeds[@]} seeds.
- **DBS rows**: the share of a GPU each of the three sharing processes gets, 0.25, 1/3 (the
  scenario's), 0.4 and 0.5, each with the all-reduce bandwidth refitted to 12% at 4 workers.
  Gavel's co-locations of two saturating jobs on one GPU give each 0.46 to 0.60 of its isolated
  throughput (0.92 to 1.2 of one GPU together), so three get about 0.31 to 0.40 each; 0.25 allows
  for more contention, 0.5 for a job that does not saturate its GPU. The 8- and 16-worker layouts
  (copies of the 3+1 one) are assumed and not varied.

### The quick mode

\`make reproduce-quick\` runs the same scenarios at the same lengths and the same grids, but the
CPU cluster's figures, means over the tenants' random draws, on fewer seeds: 2 instead of 5 for the
central values and 1 instead of 3 per point of the load grid. The GPU and DBS figures are the same
runs in both modes and agree exactly. For the CPU ones the full run states a tolerance in
[reproduction/figures.tsv](reproduction/figures.tsv), derived from the spread it measures over its
seeds: a mean over seeds 1-2 differs from one over seeds 1-5 with a standard deviation of sd x
sqrt(1/2 - 1/5), one seed from a point's mean over three by sd x sqrt(2/3) (sd: the spread over the
seeds, the largest over the grid's points for the range); the tolerance is three of those: here
$(printf '%.1f' "$(awk -F'\t' '$1 == "cpu-narx" { print $5 }' "$work/figures.tsv")") points for the CPU figure, $(printf '%.1f' "$(awk -F'\t' '$1 == "cpu-narx" { print $6 }' "$work/figures.tsv")") for its range's ends, $(printf '%.1f' "$(awk -F'\t' '$1 == "narx-ema" { print $5 }' "$work/figures.tsv")") and $(printf '%.1f' "$(awk -F'\t' '$1 == "narx-arima" { print $5 }' "$work/figures.tsv")") for NARX against
EMA and ARIMA. \`tests/e2e/reproduce.sh\` (in \`make check\`) runs the quick mode and checks every
figure against this file.

## LB-BSP on a GPU cluster (fitted)

[lbbsp-gpu.ini](../scenarios/reproduce/lbbsp-gpu.ini): 4 fast and 4 slow GPUs, each running the
V100's measured ResNet-18 (CIFAR-10) step time (Gavel), the slow ones at a fraction h of its speed;
128 samples a worker, ring all-reduce of ResNet-18's gradient over 10 Gbit/s. The paper does not say
which GPUs it mixed, so h is fitted (bisection, ${steps_h} steps) to LB-BSP's 54%:
**h = ${h}**. At that h DBS is $(pct "$gpu_dbs") and the oracle (the best any barrier-time policy can
do) $(pct "$gpu_oracle"), so LB-BSP's step search gets $(f1 "$(calc "100 * $gpu_lbbsp / $gpu_oracle")")% of the possible gain.

What the fitted setting is, the runs' final batches show (fast GPUs, then slow ones): LB-BSP
${gpu_b_lbbsp}, DBS ${gpu_b_dbs}, the oracle ${gpu_b_oracle}. At this h a slow GPU's flat time (the V100's
t(b) / h, $(printf '%.0f' "$(calc "1000 * $gpu_tflat / $h")") ms for any batch up to ${gpu_flat}, where its profile is flat) already exceeds a fast GPU's
time at its memory cap of 256 samples, so the best split leaves the slow GPUs idle, as the oracle
does. LB-BSP's step search empties them too (a GPU at 0 samples took no time, which says
nothing of its speed, so it is never the leader; it is probed with one sample every 100
iterations: doc/policies.md), while DBS, whose rule assumes time proportional to the batch, keeps a
few samples on each and pays that flat time every iteration. So LB-BSP's gain keeps growing as h
falls, above DBS's (orange in the sweep below), and the paper's 54% is reached where the
slow GPUs contribute nothing, which is a statement about lbsim's model of the paper's
(unknown) cluster, not a measurement of it; the real pairs below are the better guide.

So the regime the 54% requires is one where the slow GPUs are all but idle: at the fitted h they
hold $(printf '%.1f' "$share_fitted")% of the global batch at the end of LB-BSP's run. Over the GPU grid the h that
gives 54% ranges from $(printf '%.3f' "$h54_lo") to $(printf '%.3f' "$h54_hi")${h54_none_text}: the figure needs slow GPUs $(printf '%.1f' "$(calc "1 / $h54_hi")") to $(printf '%.1f' "$(calc "1 / $h54_lo")") times slower
than a V100, fixed overheads included.

A uniformly slowed V100 is not a real GPU: its fixed overheads are slowed too. The measured
profiles of real slower GPUs, in place of the slowed V100s (no fit: each profile is fitted from a
published table, doc/profiles.md), give (h: the slow GPU's speed relative to a V100 at 128
samples; range over the GPU grid; the slow GPUs' share of the global batch at the end of the
central run: the slow GPUs idle, as in the fitted setting, or still working):

| slow GPUs | h at 128 samples | LB-BSP faster than BSP | range over the grid | slow GPUs' share of the batch |
|---|---|---|---|---|
| V100 slowed to the fitted h | $(printf '%.2f' "$h") | $(pct "$gpu_lbbsp") | $(rng "$gpu_lo" "$gpu_hi") | $(printf '%.1f%%' "$share_fitted") |
| T4 (Pollux, CIFAR-10 ResNet-18) | $(printf '%.2f' "$h_t4") | $(pct "$gpu_t4") | $(rng "$gpu_t4_lo" "$gpu_t4_hi") | $(printf '%.1f%%' "$share_t4") |
| P100 (Gavel, ResNet-18) | $(printf '%.2f' "$h_p100") | $(pct "$gpu_p100") | $(rng "$gpu_p100_lo" "$gpu_p100_hi") | $(printf '%.1f%%' "$share_p100") |
| K80 (Gavel, ResNet-18) | $(printf '%.2f' "$h_k80") | $(pct "$gpu_k80") | $(rng "$gpu_k80_lo" "$gpu_k80_hi") | $(printf '%.1f%%' "$share_k80") |
| P100, ResNet-50 (Gavel; fast GPUs: the V100's ResNet-50) | $(printf '%.2f' "$h_p100r50") at 32 | $(pct "$gpu_p100r50") | $(rng "$gpu_p100r50_lo" "$gpu_p100r50_hi") | $(printf '%.1f%%' "$share_p100r50") |
| K80, ResNet-50 (Gavel) | $(printf '%.2f' "$h_k80r50") at 32 | $(pct "$gpu_k80r50") | $(rng "$gpu_k80r50_lo" "$gpu_k80r50_hi") | $(printf '%.1f%%' "$share_k80r50") |

Over the grid, V100s with T4s give at most $(pct "$gpu_t4_hi"), with P100s at most $(pct "$gpu_p100_hi") (ResNet-50:
$(pct "$gpu_p100r50_hi")), and with K80s at least $(pct "$gpu_k80_lo") (ResNet-50: $(pct "$gpu_k80r50_lo"), at $(awk 'NR == 1 || $3 < m { m = $3; b = $1 } END { print b }' "$work/grid-k80r50.txt") samples a worker, where the
fast GPUs' cap of 128 keeps samples on the K80s): $(pairs_at_54). EC2 offered K80s (p2), M60s (g3), V100s (p3) and T4s
(g4dn) when the paper was written; no measured M60 table is in this project. The 54% is thus
reached by a pair between a V100 and a T4 and a V100 and a K80 in speed, by V100s and K80s where
the fast GPUs' memory keeps work on the K80s, or by a cluster of one kind of GPU with some of them
shared or throttled (the slowed-V100 model, at h = ${h}).
Which of those the paper ran, its text does not say.

![Speedup against h at three communication-to-compute ratios](reproduction/sensitivity-gpu.png)

The sensitivity sweep ([sensitivity-gpu.ini](../scenarios/reproduce/sensitivity-gpu.ini)) shows
how the gain moves with the degree of heterogeneity (h) and with the communication-to-compute ratio
(the static run's all-reduce time over its compute time on the homogeneous cluster, set by the
network: 1, 10 and 100 Gbit/s): the gain grows as h falls and shrinks as communication, which no
batch split can shorten, takes a larger share of the iteration. The paper's setting sits on the
10 Gbit/s line at the marked point.

![Iteration time over simulated time, GPU cluster](reproduction/timeline-gpu.png)

## LB-BSP on a CPU cluster (predicted)

[lbbsp-cpu.ini](../scenarios/reproduce/lbbsp-cpu.ini): 16 CPU workers running ResNet-32 at the
measured BLAS cost of this project's build machine (profiles/measured/cpu1-resnet32.ini), each
sharing its machine with a tenant whose jobs are on for 5 s and off for 10 s on average and take
50% of the CPU while on. The paper does not say how its background load was made; these four values
were written down before the first run and not changed.

lbsim predicts **$(pct "$cpu_lbbsp")** with NARX against the paper's 38.7% ($(pp "$cpu_lbbsp" 38.7)): the mean over
${#cpu_seeds[@]} seeds (tenants' draws), which range from $(pct "$cpu_lbbsp_min") to $(pct "$cpu_lbbsp_max"). With EMA LB-BSP is
$(pct "$cpu_with_ema"), with the last measured speed $(pct "$cpu_with_last"); DBS, which re-balances once an epoch on
speeds that change every few seconds, is $(pct "$cpu_dbs"); the oracle, which sees each coming iteration, is
$(pct "$cpu_oracle"). Most of the gap between LB-BSP and the oracle is what no barrier-time predictor can
see: with 16 workers whose tenants switch twice per 15 s cycle on average and LB-BSP iterations of
$(printf '%.0f' "$(calc "1000 * $cpu_iter")") ms, some worker changes speed during $(printf '%.0f' "$p_switch")% of the iterations (Poisson).

The agreement owes much to the assumed load, which the paper does not describe. The sweep below
([sensitivity-cpu.ini](../scenarios/reproduce/sensitivity-cpu.ini), ${grid_seeds} seed(s) of 5 epochs a
point; the table's range) varies it: with on periods of 5 s, LB-BSP gains $(pct "$sens_cpu_25") at 25% load, $(pct "$sens_cpu_50") at 50% and
$(pct "$sens_cpu_75") at 75%; shorter periods (1 s) put more switches inside iterations and lower the gain,
longer ones (30 s) bring LB-BSP close to the oracle.
So the figure is reproduced for a plausible load, not pinned down by it: a reader whose cluster's
co-located load is lighter should expect much less.

![LB-BSP's speedup against the tenants' load and on-period](reproduction/sensitivity-cpu.png)

The communication-to-compute ratio matters little here (ResNet-32 has 0.46 M parameters; the static
run's ratio is $(printf '%.3f' "$cpu_ratio")) until the network is slow
([sensitivity-cpu-network.ini](../scenarios/reproduce/sensitivity-cpu-network.ini), means over three
seeds of 5 epochs, so the last row differs from the table's 10-epoch figure):

| network | comm/compute (static) | LB-BSP (NARX) faster than BSP |
|---|---|---|
${cpu_net_rows}

![Iteration time over simulated time, CPU cluster](reproduction/timeline-cpu.png)

## NARX's prediction error (predicted)

\`lbsim predict\` replays the speeds every worker measured and scores each predictor one step
ahead (RMSE over all workers' iterations). On the LB-BSP runs (mean of the per-seed ratios) NARX's
error is $(ratio_pct "$narx_ema") below EMA's and $(ratio_pct "$narx_arima") below ARIMA's (paper: about 40%); on seed 1's
static run (speeds not shaped by the policy) $(ratio_pct "$narx_ema_static") and $(ratio_pct "$narx_arima_static"). Against the last measured speed
NARX's error ratio is $(printf '%.3f' "$narx_last") on the LB-BSP runs and $(printf '%.3f' "$narx_static_last") on the static run: here a tenant's
period lasts many iterations, so the last speed is already a strong forecast, and NARX's edge comes
from the CPU reading at decision time, which shows a switch that happened since the last measurement
(doc/predictors.md compares NARX with and without the readings). EMA and ARIMA smooth over
the switches and lag them, which is why they trail both. ARIMA's error is that of the fit with the
least conditional sum of squares, stationary and invertible by construction; until that fit was
searched from several starts, the windows whose minimum lies at the edge of invertibility had their
fit refused and an older one kept, which forecast better here (NARX's error was then 35.0% below
ARIMA's; doc/predictors.md, "arima"). The NARX defaults (window 120, weight decay
0.3) were chosen on scenarios/predict/cpu-bursty.ini, a different setting (8 workers, tenants on for
2 s and off for 4 s taking 60% of the CPU), before this report existed.

## LB-BSP's decision overhead at 96 workers (wall clock, apart from the table)

\`bench/bench --decision-only scenarios/policies/cpu-96-narx.ini\`: real time of every decision of a
96-worker LB-BSP (NARX) run, against the simulated iteration. It varies between runs and machines,
which is why it is not in the table. This run:

\`\`\`
${overhead}
\`\`\`

The paper reports under 1.1%. Predicting and splitting (what sits on the critical path at the
barrier) is far below that; training the 96 NARX networks one after another is not, when it is
counted as if it ran at the barrier. The networks are independent: trained at once, one core each
(the last line: the slowest worker's learning per iteration), learning costs a fraction of a percent
on average, within the paper's figure, with peaks in the iterations where every network retrains.
The paper's module presumably trains in parallel, off the critical path or less often
(doc/predictors.md gives the share when it retrains less often).

## DBS: 4, 8 and 16 workers (fitted at 4, predicted at 8 and 16)

[dbs.ini](../scenarios/reproduce/dbs.ini): the authors' 4 workers, three processes sharing one GPU
and one alone on another, ResNet-101 on CIFAR-10, global batch 512, 50 epochs. The GPU's step time
is the V100's measured ResNet-18 profile scaled to ResNet-101's work; each sharing process gets a
third of its GPU (Gavel's measured co-locations split a saturated GPU's throughput evenly). The
all-reduce bandwidth (gloo between processes on one host) is unknown and fitted (bisection,
${steps_bw} steps, log scale) to 12% at 4 workers: **$(printf '%s' "$bw") GB/s**, which makes the all-reduce
$(printf '%.2f' "$dbs_ratio") times the static run's compute time. 8 and 16 workers are 2 and 4 copies of the 3+1
layout (how the authors placed them is not known), with the same bandwidth: **$(f1 "$dbs8")%** and
**$(f1 "$dbs16")%** less time (paper: about 10%, and less). The trend holds: with the global batch fixed,
each worker's share of the compute shrinks while a ring all-reduce's time grows with the workers,
so the part DBS can balance shrinks. The runs show a second reason: DBS moves samples off the
sharing processes until they reach the flat part of the GPU's t(b) (up to ${gpu_flat} samples the V100
profile's time does not fall, and at twice that it is only $(f1 "$gpu_rise")% higher), where a smaller batch is little faster and DBS's rule (share
proportional to measured throughput, which falls with the batch there) keeps cutting. At the last
re-balancing the sharing and lone workers hold $dbs4_batches samples at 4 workers, $dbs8_batches
at 8 and $dbs16_batches at 16: with fewer samples each, more of the cluster sits on that floor.

The 8-worker figure is $(f1 "$(calc "10 - $dbs8")") points below the paper's. It depends on the one assumption the
fit cannot separate from the bandwidth: how much of a GPU each sharing process gets. Each row below
refits the bandwidth to 12% at 4 workers under another guess and predicts again (the rows from
0.25 to 0.5 are the table's ranges; 0.6 lies outside what the measured co-locations make plausible):

| share of a GPU per sharing process | fitted all-reduce (GB/s) | all-reduce / compute (static, 4 workers) | 8 workers | 16 workers | disturbance: S-SGD vs DBS time grows |
|---|---|---|---|---|---|
${dbs_alt_rows}
A smaller imbalance needs less communication to bring the gain down to 12%, and the gain then falls
more slowly with the workers: if each process got about half of its GPU (a GPU the job does not
saturate, as Gavel measures for small batches on a V100) the prediction would be near the paper's.
lbsim keeps the third its data supports as the central value, and reports the range. (Where a row's 16-worker figure
exceeds its 8-worker one, DBS has cut the sharing processes to zero samples: the cluster then runs
on the lone GPUs alone.)

![Speedup against cluster size](reproduction/speedup-vs-size.png)

In the plot, DBS's gain at 32 workers rises again where DBS has cut the sharing processes to zero
samples; LB-BSP's GPU gain (blue, the fitted h, 128 samples a worker) falls with the cluster
because a run of 20 epochs holds fewer iterations as the global batch grows (240 at 32 workers) while
LB-BSP's step search needs more of them to converge with more workers.

## DBS under disturbance (predicted)

The authors' "irrelevant tasks" (scenarios/generators: each epoch, each worker not already slowed
starts with probability 0.1 a slow phase of 5 to 10 s per epoch for 4 to 20 epochs) on the 4-worker
setting, five seeds: S-SGD takes $(pct "$grow_static") longer than without it, DBS $(pct "$grow_dbs") (in seconds,
$(printf '%.0f' "$grow_static_s") and $(printf '%.0f' "$grow_dbs_s")); under disturbance DBS still takes $(f1 "$dist_saved")% less time than S-SGD. The paper
says DBS's time grows far less than S-SGD's. Here it grows less in seconds, but not far less, and
about as much in proportion. The plot shows why: S-SGD hides a delay on the lone fast worker, which
waits for the sharing ones anyway (its epochs do not change when only that worker is slowed), while
balanced DBS has no slack anywhere, pays every delay in full in the epoch it starts, and moves work
away from the slowed worker only from the next epoch boundary on, over several epochs (its rule is
exact only when time is proportional to the batch, and a GPU's is not); the delay itself is a fixed
sleep per iteration that no batch size removes. Longer delays (the same draws, scaled) do not change the
picture:

| delay per epoch | mean delay / static epoch | S-SGD time grows | DBS time grows |
|---|---|---|---|
${dist_rows}
![Epoch times with and without disturbance](reproduction/disturbance.png)

## What this report changed in lbsim

The first full run of this report predicted LB-BSP's CPU figure as +21.2% (NARX) and put NARX's
error only 11% below EMA's. Its CPU sweep then showed LB-BSP with NARX *slower* than BSP where the
tenants' periods are long: at on periods of 30 s (off 60 s, load 50%, 5 epochs, seed 1) NARX gave
-1.5% while the last measured speed gave +50.4% and the oracle +56.0%. The cause was in lbsim's
NARX, not in the scenario: after a steady stretch the window's speeds have almost no spread, their
z-scores saturate the hidden units at a switch, and the forecast stayed at the old level for most
of a window. NARX now models the change from the last speed (a skip connection, commit eff0551,
doc/predictors.md; a unit test feeds it piecewise-constant speeds), and the same run gave +50.5% (+50.1% since NARX's
default solver became \`cholesky\`).
No scenario value was changed, and the NARX defaults were not re-tuned; the table above is the
run after that fix.

## What the scenarios assume

Each scenario's header says, key by key, which values come from the paper, which from measured
data (traces/data, profiles/), which are assumed and which are fitted. The fitted values are the
two above; everything else was set before the results were seen. The GPU profiles are fitted from
published tables (Gavel, Pollux; doc/profiles.md) because this project had no GPU to calibrate on;
ResNet-18 stands in for the paper's ResNet-32 and, scaled by work, for DBS's ResNet-101.
MD
progress "done"
[ -t 2 ] && printf '\n' >&2
exit 0
