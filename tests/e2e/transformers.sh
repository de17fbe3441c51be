#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: the transformer presets (doc/transformers.md) in calibrate
# and in scenarios, their memory caps and the out-of-memory errors.
. "$(dirname "$0")/lib.sh"

"$LBSIM" calibrate --list > "$TMP/list"
for pair in gpt3-175b:174604259328 llama2-7b:6738415616 llama2-70b:68976648192 llama3-8b:8030261248 \
	llama3-70b:70553706496 llama-like-small:19532032; do
	check "--list: ${pair%%:*} has ${pair#*:} parameters" \
		test "$(awk -v n="${pair%%:*}" '$1 == n { print $2 }' "$TMP/list")" = "${pair#*:}"
done
"$LBSIM" calibrate --layers llama3-8b > "$TMP/layers"
check "--layers llama3-8b: exit 0" test $? -eq 0
check "--layers llama3-8b: the published count" grep -q 'parameters 8030261248 (published 8030261248)' "$TMP/layers"
check "--layers llama3-8b: 8192 tokens, bf16" grep -q '^# 8192 tokens per sample, bf16, tensor parallelism 1' "$TMP/layers"
# QKV: 32 query and 8 KV heads of 128 (6144 rows) over 8192 tokens of 4096
check "--layers llama3-8b: the QKV GEMM" grep -q '^layer0.qkv,linear,4096,8192,1,6144,8192,1,0,0,0,25165824,' "$TMP/layers"
check "--layers llama3-8b: 32 score GEMMs of 8192 x 8192 x 128" \
	grep -q '^layer0.scores,scores,.*,8192,8192,128,8192,128,8192,8192,128,8192,32,' "$TMP/layers"
check "--layers llama3-8b: parameters add up" \
	test "$(grep -v '^#' "$TMP/layers" | awk -F, 'NR > 1 { p += $12 } END { printf "%.0f", p }')" = 8030261248
# One rank of 8 under tensor parallelism: the QKV's (64 + 2 x 8) x 128 / 8 rows.
"$LBSIM" calibrate --layers llama3-70b --tp 8 --seq 4096 --recompute selective > "$TMP/tp"
check "--layers --tp 8: one rank's QKV" grep -q '^layer0.qkv,linear,8192,4096,1,1280,4096,1,' "$TMP/tp"
check "--layers --tp 8: says it is one rank" grep -q 'on one of 8 tensor-parallel ranks' "$TMP/tp"
"$LBSIM" calibrate --layers llama3-8b --tp 16 2> "$TMP/err"; rc=$?
check "--layers --tp 16 of 8 KV heads: exit 2 (got $rc)" test $rc -eq 2
check "--layers --tp 16: says what it must divide" grep -q 'must divide its 32 heads, 8 key/value heads' "$TMP/err"

# A scenario names a preset: its parameters follow from it.
cat > "$TMP/fleet.ini" <<'INI'
[run]
global_batch = 6
iterations = 20
[model]
name = llama3-8b
sequence_length = 4096
recompute = selective
zero_stage = 1
[network]
topology = ring
bandwidth = 100 Gbit/s
[workers.h200]
count = 2
device = gpu
cost = linear
per_sample = 0.25 s
memory = 141 GB
[workers.h100]
count = 4
device = gpu
cost = linear
per_sample = 0.8 s
memory = 80 GB
INI
"$LBSIM" "$TMP/fleet.ini" --policy static-proportional --no-baseline -q -o "$TMP/fleet.db" --detail workers 2> "$TMP/err"
rc=$?
check "a preset by name, no parameters: static-proportional runs (exit $rc)" test $rc -eq 0
check "static-proportional gives the h200s more than the h100s" test "$(q "$TMP/fleet.db" \
	"SELECT max(wi.batch) FROM worker_iterations wi JOIN workers w USING (run_id, worker)
	 WHERE w.group_name = 'h200' AND wi.iteration > 5")" -gt 1
# 4096 tokens: state 48.18 GB (ZeRO 1 over 6), a sample 24.18 GB: 141 GB holds 3, 80 GB 1
check "memory caps: no h200 above 3, no h100 above 1" test "$(q "$TMP/fleet.db" \
	"SELECT max(CASE WHEN w.group_name = 'h200' THEN wi.batch > 3 ELSE wi.batch > 1 END)
	 FROM worker_iterations wi JOIN workers w USING (run_id, worker)")" = 0
check "memory caps recorded" test "$(q "$TMP/fleet.db" "SELECT group_concat(max_batch_samples) FROM
	(SELECT DISTINCT group_name, max_batch_samples FROM workers ORDER BY group_name)")" = "1,3"
"$LBSIM" "$TMP/fleet.ini" --set policy.name=static --set run.global_batch=10 -q -o "$TMP/static.db" 2> "$TMP/err"; rc=$?
check "a plan over the memory: exit 3 (got $rc)" test $rc -eq 3
check "a plan over the memory: names the group, the batch and the bytes" \
	grep -q '\[workers.h100\]: worker 2: policy .static. gives it 2 samples, more than its memory cap of 1: out of memory, 2 samples of llama3-8b need .* GB' "$TMP/err"
"$LBSIM" "$TMP/fleet.ini" --set 'workers.h100.memory=40 GB' 2> "$TMP/err"; rc=$?
check "memory that holds no sample: exit 3 (got $rc)" test $rc -eq 3
check "memory that holds no sample: says what takes it" \
	grep -q 'workers.h100.memory: out of memory: 40 GB hold no sample of llama3-8b: its weights (16.06 GB)' "$TMP/err"
"$LBSIM" "$TMP/fleet.ini" --set model.sequence_length=8193 2> "$TMP/err"; rc=$?
check "a sequence over the context: exit 3" test $rc -eq 3
check "a sequence over the context: names the key and the limit" \
	grep -q 'model.sequence_length: llama3-8b: a sequence of 8193 tokens: expected 1 to 8192' "$TMP/err"
"$LBSIM" "$TMP/fleet.ini" --set model.name=resnet50 2> "$TMP/err"; rc=$?
check "sequence_length on a CNN: exit 3" test $rc -eq 3
check "sequence_length on a CNN: says it is a transformer's" grep -q 'sequence_length: applies to a transformer' "$TMP/err"
"$LBSIM" "$TMP/fleet.ini" --set model.name=mine --set model.sequence_length= --set model.recompute= \
	--set model.parameters=1000 2> "$TMP/err"; rc=$?
check "memory with a model lbsim does not know: exit 3 (got $rc)" test $rc -eq 3
check "memory with a model lbsim does not know: says why" grep -q 'memory: sizing the memory needs the model' "$TMP/err"

# GPUs from datasheets (doc/gpus.md): the fit and its held-out error, and a
# profile predicted for a device nobody measured.
"$LBSIM" calibrate --gpus > "$TMP/gpus"
check "--gpus: exit 0" test $? -eq 0
check "--gpus: every device of the issue" test "$(grep -cE '^(a100-40gb|a100-80gb|h100-sxm|h100-pcie|h200|l4|a10g|v100|t4|p100|k80) ' "$TMP/gpus")" -ge 11
check "--gpus: held-out figures are reported" grep -qE '^all +held out +63 ' "$TMP/gpus"
check "--gpus: no held-out figure is fitted" test "$(grep -c 'held out$' "$TMP/gpus")" = 63
"$LBSIM" calibrate --datasheet l4:llama3-8b:2048:full --batches 1,2,4,8 -o "$TMP/l4.ini" > "$TMP/l4.out"
check "--datasheet: exit 0" test $? -eq 0
check "--datasheet: a datasheet profile" grep -q '^kind = datasheet$' "$TMP/l4.ini"
check "--datasheet: the activations' cap" grep -q '^max_batch = 10$' "$TMP/l4.ini"
"$LBSIM" calibrate --datasheet b200:llama3-8b 2> "$TMP/err"; rc=$?
check "--datasheet unknown device: exit 2" test $rc -eq 2
check "--datasheet unknown device: says what it expects" grep -q 'expected DEVICE:MODEL' "$TMP/err"
"$LBSIM" calibrate --datasheet l4:llama3-8b:8192 2> "$TMP/err"; rc=$?
check "--datasheet beyond the memory: exit 3 (got $rc)" test $rc -eq 3
check "--datasheet beyond the memory: says so" grep -q 'out of memory' "$TMP/err"

# The shipped scenario of 2026: it runs, with the caps its memory gives.
"$LBSIM" "$top_srcdir/scenarios/llama3-8b-mixed-fleet.ini" --policy static-proportional,lbbsp-gpu,dbs -q \
	-o "$TMP/mixed.db" 2> "$TMP/err"
check "llama3-8b-mixed-fleet: runs every policy" test "$(q "$TMP/mixed.db" "SELECT count(*) FROM runs")" = 4
check "llama3-8b-mixed-fleet: caps 32, 32, 7" test "$(q "$TMP/mixed.db" "SELECT group_concat(c) FROM (SELECT DISTINCT
	group_name, max_batch_samples AS c FROM workers ORDER BY group_name)")" = "32,32,7"
check "llama3-8b-mixed-fleet: no L4 above 7" test "$(q "$TMP/mixed.db" "SELECT max(b.batch_samples) FROM batches b JOIN workers w
	USING (run_id, worker) WHERE w.group_name = 'l4'")" -le 7

finish
