#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The H200 twin (doc/gpus.md, "Measured on an H200"): each training step that
# testbed/gpu_steps.py measured on one NVIDIA H200 (traces/data/measured-h200/)
# beside lbsim's prediction from the H200's datasheet (lbsim calibrate
# --datasheet h200:MODEL:SEQ, the device model fitted to MosaicML's A100
# figures only: nothing here was fitted to these steps), with the error, the
# share of the step the GPU computed (kernel time / step time), the median and
# worst |error|; the same steps through the hybrid engine on one GPU (its
# per-operation overhead unset); the run-to-run difference of the GPT-3 steps measured on two
# machines (steps-gpt3-run1.csv); and ResNet-50's PyTorch step against its
# GEMMs through cuBLAS (profiles/measured/h200-cuda-resnet50.ini).
#
#   sh bench/gpu_twin_compare.sh [LBSIM [DIR]]     (make gpu-twin)
set -eu
here=$(dirname "$0")/..
LBSIM=${1:-./lbsim}
DIR=${2:-$here/traces/data/measured-h200}
CUDA=$here/profiles/measured/h200-cuda-resnet50.ini
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lbsim-twin.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

printf '%-10s %5s %6s %11s %11s %8s %8s %6s\n' model seq batch measured_s predicted_s error kernels busy
# the transformers' steps (the CNNs' rows have seq 0), models and lengths in the files' order
steps="$DIR/steps-gpt3.csv $(ls "$DIR"/steps-llama-*.csv 2> /dev/null | tr '\n' ' ')"
# shellcheck disable=SC2086 # $steps: the files, space-separated
awk -F, '!/^#/ && !/^model,/ && $2 > 0' $steps > "$TMP/rows"
awk -F, '!seen[$1 FS $2]++ { print $1 "," $2 }' "$TMP/rows" | while IFS=, read -r m s; do
	# the measured batches, and 1 to 4: --datasheet fits a curve, which needs several
	batches=$({ awk -F, -v m="$m" -v s="$s" '$1 == m && $2 == s { print $3 }' "$TMP/rows"; printf '1\n2\n3\n4\n'; } |
		sort -n -u | paste -s -d, -)
	"$LBSIM" calibrate --datasheet "h200:$m:$s" --batches "$batches" > "$TMP/pred" 2> "$TMP/err" ||
		{ echo "gpu_twin_compare.sh: $m: $(tail -n 1 "$TMP/err")" >&2; exit 1; }
	awk -v m="$m" -v s="$s" 'NR == FNR { if ($1 ~ /^[0-9]+$/) p[$1] = $2; next }
		$1 == m && $2 == s { if (!($3 in p)) { print "no prediction for " m " batch " $3 > "/dev/stderr"; exit 1 }
			printf "%-10s %5d %6d %11.4f %11.4f %+7.1f%% %8d %5.0f%%\n", m, s, $3, $5, p[$3],
				100 * (p[$3] / $5 - 1), $7, 100 * $8 / $5 }' "$TMP/pred" FS=, "$TMP/rows"
done > "$TMP/table"
[ -s "$TMP/table" ] || { echo "gpu_twin_compare.sh: nothing compared" >&2; exit 1; }
cat "$TMP/table"
# the median and worst |error| (column 6) of TABLE's rows, all of them and
# the largest batch (the last row) of each model and length: summary TABLE WORDS
summary() {
	awk -v words="$2" '$6 ~ /%$/ { e = $6; sub(/%/, "", e); e += 0; e = e < 0 ? -e : e; a[++n] = e; last[$1 " " $2] = e }
	function med(v, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
	END { w = 0; for (i = 1; i <= n; i++) if (a[i] > w) w = a[i]
	      printf "%d steps: median |error| %.1f%%, worst %.1f%%\n", n, med(a, n), w
	      k = 0; for (m in last) b[++k] = last[m]; w = 0; for (i = 1; i <= k; i++) if (b[i] > w) w = b[i]
	      printf "%s of each of %d models and lengths: median |error| %.1f%%, worst %.1f%%\n", words, k, med(b, k), w }' "$1"
}
summary "$TMP/table" "largest batch"
# The hybrid engine (doc/hybrid.md) on the same steps: one GPU (d = p = t =
# 1), the model's recomputation none and attention fused, as measured; its
# step has the optimizer's too, and the per-operation overhead left unset.
if command -v sqlite3 > /dev/null; then
	echo
	printf '%-10s %5s %6s %11s %11s %8s\n' hybrid seq batch measured_s predicted_s error
	while IFS=, read -r m s b _ t _; do
		cat > "$TMP/one.ini" <<INI
[run]
steps = 2
[hybrid]
dp = 1
pp = 1
tp = 1
micro_batch = $b
micro_batches = 1
[model]
name = $m
sequence_length = $s
recompute = none
attention = flash
[nodes.h200]
count = 1
gpus_per_node = 1
gpu = h200
[intra_node]
bandwidth = 450 GB/s
[network]
nics_per_node = 1
bandwidth = 400 Gbit/s
INI
		rm -f "$TMP/one.db"
		if "$LBSIM" "$TMP/one.ini" -q -o "$TMP/one.db" > "$TMP/out" 2>&1; then
			awk -v m="$m" -v s="$s" -v b="$b" -v t="$t" -v p="$(sqlite3 "$TMP/one.db" "SELECT step_s FROM hybrid_steps WHERE step = 1")" \
				'BEGIN { printf "%-10s %5d %6d %11.4f %11.4f %+7.1f%%\n", m, s, b, t, p, 100 * (p / t - 1) }'
		elif grep -q 'needs .* GB a GPU' "$TMP/out"; then
			printf '%-10s %5d %6d %11.4f %11s %8s\n' "$m" "$s" "$b" "$t" "-" "memory" # the engine's bound: 6-7% above the peak
		else
			echo "gpu_twin_compare.sh: $m batch $b: $(tail -n 1 "$TMP/out")" >&2; exit 1
		fi
	done < "$TMP/rows" > "$TMP/hy"
	cat "$TMP/hy"
	summary "$TMP/hy" "largest batch it fits"
	echo
fi
# fused element-wise kernels (torch.compile) against eager, paired on a third
# machine, beside the two models' predictions (the tables above)
if ls "$DIR"/run3-compiled-*.csv > /dev/null 2>&1 && [ -s "$TMP/hy" ]; then
	printf '%-10s %5s %6s %9s %11s %11s %8s %11s %8s\n' fused seq batch eager_s compiled_s datasheet_s error hybrid_s error
	awk -F, '!/^#|^model,/' "$DIR"/run3-eager-*.csv > "$TMP/eager"
	awk -F, '!/^#|^model,/' "$DIR"/run3-compiled-*.csv | while IFS=, read -r m s b _ t _; do
		awk -v m="$m" -v s="$s" -v b="$b" -v t="$t" 'FILENAME ~ /eager$/ { split($0, f, ","); if (f[1] == m && f[2] == s && f[3] == b) e = f[5]; next }
			FILENAME ~ /table$/ { if ($1 == m && $2 == s && $3 == b) d = $5; next }
			$1 == m && $2 == s && $3 == b { h = $5 }
			END { if (e == "" || d == "" || h == "") exit 1
			      printf "%-10s %5d %6d %9.4f %11.4f %11.4f %+7.1f%% %11.4f %+7.1f%%\n", m, s, b, e, t, d, 100 * (d / t - 1), h, 100 * (h / t - 1) }' \
			"$TMP/eager" "$TMP/table" "$TMP/hy" || { echo "gpu_twin_compare.sh: $m batch $b: no eager step or prediction" >&2; exit 1; }
	done
	echo
fi
# run to run: the GPT-3 steps measured again on another machine of the same kind
if [ -f "$DIR/steps-gpt3-run1.csv" ]; then
	awk -F, 'NR == FNR { if ($1 !~ /^#|^model$/) t[$1 FS $3] = $5; next }
		$1 !~ /^#|^model$/ && ($1 FS $3) in t { d = $5 / t[$1 FS $3] - 1; d = d < 0 ? -d : d; a[++n] = d
			if (d > wa) wa = d; if ($8 / $5 >= 0.95) { b[++k] = d; if (d > wb) wb = d } }
		function med(v, m,   i, j, x) { for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
			return m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2 }
		END { if (!n) exit; printf "run to run (%d steps measured twice): median |difference| %.1f%%, worst %.1f%%\n", n, 100 * med(a, n), 100 * wa
		      if (k) printf "  where the GPU is busy 95%% or more (%d steps): median %.1f%%, worst %.1f%%\n", k, 100 * med(b, k), 100 * wb }' "$DIR/steps-gpt3-run1.csv" "$DIR/steps-gpt3.csv"
fi
# ResNet-50, fp32: the framework's step against its GEMMs alone
if [ -f "$DIR/steps-resnet50.csv" ] && [ -f "$CUDA" ]; then
	echo
	printf '%-10s %6s %12s %12s %7s\n' resnet50 batch pytorch_s gemms_s ratio
	awk 'NR == FNR { if (/^\[/) { m = $0 == "[measurements]" } else if (m && / = /) { v = $3
		if ($4 == "ms") v /= 1e3; else if ($4 == "us") v /= 1e6; g[$1] = v }; next }
		$1 == "resnet50" && ($3 in g) { printf "%-10s %6d %12.4f %12.4f %6.2fx\n", "", $3, $5, g[$3], $5 / g[$3] }' \
		"$CUDA" FS=, "$DIR/steps-resnet50.csv"
fi
