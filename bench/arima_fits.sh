#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# ARIMA fits on the shipped traces against an independent search
# (bench/arima_fits.c; doc/predictors.md, "arima"): the Azure B8ms
# sysbench series (3 VMs) and the Alibaba PAI mini-batch speeds
# (3 jobs x 10 workers, speed = 1 / normalised time).
# Usage: bench/arima_fits.sh [PROGRAM]   (run from the top of the tree)
set -e
prog=${1:-./bench/arima_fits}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
azure=traces/data/azure-vm-noise-2024/sysbench_cpu_long_eastus_b8ms_events_per_second.csv
# one series per id (column), in id order
series='NR > 1 { v[$c] = v[$c] sprintf("%.17g\n", inv ? 1 / $x : $x); if ($c + 0 > max) max = $c + 0 }
	END { for (k = 0; k <= max; k++) if (k in v) printf "%s\n", v[k] }'
awk -F, -v c=4 -v x=1 -v inv=0 "$series" "$azure" > "$tmp/azure"
for j in 1 2 3; do
	awk -F, -v c=2 -v x=5 -v inv=1 "$series" traces/data/alibaba-pai-gpu-v2020/minibatch_job_${j}_norm.csv
done > "$tmp/pai"
echo "Azure B8ms sysbench (3 series):"
"$prog" 1 1 1 < "$tmp/azure"
"$prog" 2 0 1 < "$tmp/azure"
echo "Alibaba PAI mini-batch speeds (30 series):"
"$prog" 2 0 1 < "$tmp/pai"
