#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Hybrid-parallel accuracy against published measurements (doc/hybrid.md,
# "Accuracy"): each row of traces/data/published-hybrid/megatron-sc21.csv
# and mt-nlg-530b.csv (or of the CSV files given, space-separated) becomes a hybrid scenario with the run's published configuration; lbsim
# predicts its iteration time, and the script prints it beside the time the
# published throughput implies, with the relative error, the median and the
# worst. The published figures fitted nothing: the device model's efficiency
# is fitted to MosaicML's data-parallel figures only (doc/gpus.md).
#
#   sh bench/hybrid_accuracy.sh [LBSIM ["CSV ..."]]   (make hybrid-accuracy)
#
# ATTENTION=flash costs the runs with fused attention instead of the
# unfused kernels they ran; ALGORITHM=tree or auto reduces the gradients
# over the nodes on trees ([network] algorithm); OVERHEAD="50 us" sets
# [model] op_overhead (unset: the device model's fitted one;
# bench/hybrid_accuracy_loo.sh calibrates it by leave-one-out); KEEP=1
# keeps the scenarios and databases.
#
# Published time: SC'21 defines its throughput X (FLOP/s a GPU) by eq. 3,
# F = 96 B s l h^2 (1 + s / 6h + V / 16 l h) FLOPs an iteration with full
# recomputation, so an iteration took F / (n X) on n GPUs.
set -eu
LBSIM=${1:-./lbsim}
# the runs predate FlashAttention (2022): unfused attention; ATTENTION=flash to compare
ATTENTION=${ATTENTION:-unfused}
ALGORITHM=${ALGORITHM:-ring}
OVERHEAD=${OVERHEAD:-}
CSV=${2:-traces/data/published-hybrid/megatron-sc21.csv traces/data/published-hybrid/mt-nlg-530b.csv}
command -v sqlite3 > /dev/null || { echo "hybrid_accuracy.sh: needs sqlite3" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lbsim-hyacc.XXXXXX")
if [ -n "${KEEP:-}" ]; then echo "hybrid_accuracy.sh: files in $TMP" >&2; else trap 'rm -rf "$TMP"' EXIT; fi

# Selene's nodes (SC'21, sec. 5): 8 A100 80GB on NVLink 3 (600 GB/s a GPU,
# both directions: 300 GB/s one way, NVIDIA A100 datasheet), 8 HDR
# InfiniBand NICs of 200 Gbit/s; latencies as the shipped H100 scenario's
# (assumptions). ddp = torch (PyTorch DDP, overlapping the backward in its
# default 25 MB buckets) or local (Megatron-LM's, after the backward).
scenario() { # id model gpus tp pp v mb gb seq recompute ddp
	nodes=$(($3 / 8)); dp=$(($3 / ($4 * $5)))
	if [ "$6" -gt 1 ]; then sched=interleaved; else sched=1f1b; fi
	if [ "${11}" = torch ]; then overlap=yes; else overlap=no; fi
	cat <<INI
[run]
name = $1
seed = 1
steps = 2

[hybrid]
dp = $dp
pp = $5
tp = $4
micro_batch = $7
global_batch = $8
schedule = $sched
virtual_stages = $6
zero_stage = 0
overlap_dp = $overlap
dp_buckets = $BUCKETS
grad_bytes = 2

[model]
name = $2
sequence_length = $9
recompute = ${10}
attention = $ATTENTION
${OVERHEAD:+op_overhead = $OVERHEAD}

[nodes.selene]
count = $nodes
gpus_per_node = 8
gpu = a100-80gb

[intra_node]
bandwidth = 300 GB/s
latency = 3 us

[network]
nics_per_node = 8
bandwidth = 200 Gbit/s
latency = 5 us
algorithm = $ALGORITHM
INI
}

printf '%-13s %-14s %5s %3s %3s %2s %3s %5s %10s %10s %9s %9s %8s\n' id model gpus tp pp v mb batch \
	published_s predicted_s pub_TF/s pred_TF/s error
# shellcheck disable=SC2086 # CSV: one file or several, space-separated
grep -hv -e '^#' -e '^id,' $CSV | while IFS=, read -r id src model l h V gpu n tp pp v mb gb s rc ddp x; do
	# the published iteration's FLOPs (eq. 3) and time
	f=$(awk -v B="$gb" -v s="$s" -v l="$l" -v h="$h" -v V="$V" \
		'BEGIN { printf "%.10e", 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)) }')
	# torch DDP's 25 MB buckets over a stage's gradients on one tensor rank
	BUCKETS=$(awk -v l="$l" -v h="$h" -v V="$V" -v s="$s" -v t="$tp" -v p="$pp" -v v="$v" 'BEGIN {
		P = 12 * l * h * h + 13 * l * h + (V + s) * h; b = int(P / (t * p * v) * 2 / 25e6 + 0.999)
		print b < 1 ? 1 : (b > 1024 ? 1024 : b) }')
	[ "$ddp" = torch ] || BUCKETS=1
	scenario "$id" "$model" "$n" "$tp" "$pp" "$v" "$mb" "$gb" "$s" "$rc" "$ddp" > "$TMP/$id.ini"
	if ! "$LBSIM" "$TMP/$id.ini" -q -o "$TMP/$id.db" > "$TMP/$id.out" 2>&1; then
		printf '%-13s %-14s refused: %s\n' "$id" "$model" "$(tail -n 1 "$TMP/$id.out")"
		continue
	fi
	pred=$(sqlite3 "$TMP/$id.db" "SELECT step_s FROM hybrid_steps WHERE step = 1")
	awk -v id="$id" -v m="$model" -v n="$n" -v tp="$tp" -v pp="$pp" -v v="$v" -v mb="$mb" -v gb="$gb" \
		-v f="$f" -v x="$x" -v pred="$pred" 'BEGIN {
		pub = f / (n * x * 1e12)
		printf "%-13s %-14s %5d %3d %3d %2d %3d %5d %10.3f %10.3f %9.0f %9.1f %+7.1f%%\n", id, m, n, tp, pp, v,
			mb, gb, pub, pred, x, f / (n * pred) / 1e12, (pred / pub - 1) * 100 }'
done > "$TMP/table"
cat "$TMP/table"
awk '$NF ~ /%$/ { e = $NF; sub(/%/, "", e); e += 0; e = e < 0 ? -e : e; a[++k] = e; if (e > w) w = e }
	END { if (!k) exit 1; for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	      med = k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	      printf "%d configurations: median |error| %.1f%%, worst %.1f%%\n", k, med, w }' "$TMP/table"
