#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Forward against replay (doc/hybrid.md, "Forward against replay"): each
# shipped hybrid scenario runs under static with its per-op trace written
# (--ops-trace); lbsim whatif analyses that trace, whose no-delay replay is
# the static run itself, and replays its counterfactual policies; then the
# balancing policies run forward on the same scenario and seed. Every
# recovered share is the what-if analysis's, (T_nd - T) / (T_nd - T_id) of
# the mean step, so the two columns measure the same thing on the same job.
# Then the three ByteDance traces, each rebuilt forward (whatif --forward).
#
#   sh bench/forward_vs_replay.sh [LBSIM]       (make forward-vs-replay)
set -eu
LBSIM=${1:-./lbsim}
command -v sqlite3 > /dev/null || { echo "forward_vs_replay.sh: needs sqlite3" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lbsim-fwd.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
dir=$(dirname "$0")/../scenarios/hybrid

# scenario, then its forward policies
for row in "failslow lbbsp dbs resplit ladder oracle" "mixed-fleet lbbsp dbs resplit ladder oracle" \
	"long-tail lbbsp dbs pack oracle"; do
	set -- $row
	sc=$dir/$1.ini name=$1
	shift
	"$LBSIM" "$sc" -q -o "$TMP/$name.db" --ops-trace "$TMP/$name.csv"
	"$LBSIM" whatif "$TMP/$name.csv" --meta "$TMP/$name.csv.meta.yaml" -o "$TMP/$name-w.db" > "$TMP/$name.out"
	set -- $(sed -n 's/^mean step time: measured [0-9.]* s, no-delay \([0-9.]*\) s, ideal \([0-9.]*\) s$/\1 \2/p' \
		"$TMP/$name.out") "$@"
	nd=$1 id=$2
	shift 2
	echo "## $name: T_nd $nd s, T_id $id s (static, seed 1)"
	echo "| policy | recovered |"
	echo "|---|---:|"
	sed -n 's/^policy \([a-z+-]*\): mean step [0-9.]* s, recovers \(-*[0-9.]*\)% .*/| replay \1 | \2% |/p' "$TMP/$name.out"
	for p in "$@"; do
		"$LBSIM" "$sc" -q -o "$TMP/$name-$p.db" --set hybrid_policy.name="$p"
		t=$(sqlite3 "$TMP/$name-$p.db" "SELECT avg(step_s) FROM hybrid_steps")
		echo "$nd $id $t" | awk -v p="$p" '{ printf "| forward %s | %.1f%% |\n", p, 100 * ($1 - $3) / ($1 - $2) }'
	done
	echo
done

# the three ByteDance traces (traces/data/bytedance-whatif): each rebuilt
# as a forward job (lbsim whatif --forward, doc/whatif.md), its policies'
# forward shares beside the counterfactuals
traces=$(dirname "$0")/../traces/data/bytedance-whatif
for n in ST AR SE; do
	"$LBSIM" whatif "$traces/trace-$n.csv.gz" --meta "$traces/meta-$n.yaml" --forward -q -o "$TMP/bd.db"
	echo "## ByteDance $n, rebuilt forward"
	echo "| forward policy | recovered | counterfactual | recovered |"
	echo "|---|---:|---|---:|"
	sqlite3 -separator ' | ' "$TMP/bd.db" "SELECT '| ' || policy, printf('%.1f%%', 100 * recovered),
		counterfactual, printf('%.1f%%', 100 * counterfactual_recovered) || ' |' FROM whatif_forward
		WHERE whatif_id = (SELECT max(whatif_id) FROM whatif_runs) AND counterfactual IS NOT NULL ORDER BY policy"
	echo
done
