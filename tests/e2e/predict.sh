#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# LB-BSP for CPU clusters on bursty co-located load: NARX predicts speed
# better than EMA and ARIMA, and LB-BSP with it beats static and DBS; the
# oracle bounds them all.
. "$(dirname "$0")/lib.sh"
S="$top_srcdir/scenarios/predict/cpu-bursty.ini"

"$LBSIM" "$S" -o "$TMP/r.db" --policy lbbsp-cpu,dbs,oracle --detail workers -q --set run.epochs=12
check "four runs" test "$(q "$TMP/r.db" 'SELECT group_concat(policy) FROM runs')" = "static,lbbsp-cpu,dbs,oracle"
t() { q "$TMP/r.db" "SELECT sim_time_s FROM runs WHERE policy = '$1'"; }
faster() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
check "lbbsp-cpu (NARX) beats static" faster "$(t lbbsp-cpu)" "$(t static)"
check "lbbsp-cpu (NARX) beats dbs" faster "$(t lbbsp-cpu)" "$(t dbs)"
check "oracle bounds lbbsp-cpu" faster "$(t oracle)" "$(t lbbsp-cpu)"
check "readings recorded" test "$(q "$TMP/r.db" 'SELECT count(*) > 0 FROM worker_iterations WHERE cpu_util > 0')" = 1

"$LBSIM" predict "$TMP/r.db:1" > "$TMP/out"
check "predict: exit 0" test $? -eq 0
rmse() { q "$TMP/r.db" "SELECT rmse FROM predictor_errors WHERE eval_id = 1 AND predictor = '$1'"; }
check "NARX below EMA" faster "$(rmse narx)" "$(rmse ema)"
check "NARX below ARIMA" faster "$(rmse narx)" "$(rmse arima)"
check "predict says it used readings" grep -q 'with cpu_util and mem_util readings' "$TMP/out"

# Trace files replay directly: PAI mini-batch times as 1 / time.
"$LBSIM" predict --format pai "$top_srcdir/traces/data/alibaba-pai-gpu-v2020/minibatch_job_2_norm.csv" \
	-o "$TMP/t.db" > "$TMP/out"
check "predict --format pai: exit 0" test $? -eq 0
check "predict --format pai: 10 series" grep -q ': 10 series' "$TMP/out"
check "predict --format pai: four scores" test "$(q "$TMP/t.db" 'SELECT count(*) FROM predictor_errors')" = 4
"$LBSIM" predict --format nope x.csv > /dev/null 2>&1; check "predict: bad format: exit 2" test $? -eq 2
"$LBSIM" predict --format pai "$TMP/missing.csv" -o "$TMP/t.db" 2> /dev/null; check "predict: missing trace: exit 3" test $? -eq 3

finish
