#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# End to end: lbsim calibrate (model descriptions, profiles, fits).
. "$(dirname "$0")/lib.sh"

# Model descriptions.
"$LBSIM" calibrate --list > "$TMP/list"
check "--list: exit 0" test $? -eq 0
for m in cifarnet resnet32 inception3 resnet50 resnet101 densenet121 linear-url; do
	check "--list names $m" grep -q "^$m " "$TMP/list"
done
"$LBSIM" calibrate --layers resnet50 --batch 8 > "$TMP/layers"
check "--layers: exit 0" test $? -eq 0
check "--layers: published count in the header" grep -q 'parameters 25557032 (published 25557032)' "$TMP/layers"
check "--layers: conv1's forward GEMM at batch 8" grep -q '^conv1,conv,3,224,224,64,112,112,7,7,2,9408,802816,64,100352,147,,,,64,147,100352,1$' "$TMP/layers"
check "--layers: parameters add up" test "$(grep -v '^#' "$TMP/layers" | awk -F, 'NR > 1 { p += $12 } END { print p }')" = 25557032
"$LBSIM" calibrate --layers resnet-50 2> "$TMP/err"; rc=$?
check "--layers unknown model: exit 2" test $rc -eq 2
check "--layers unknown model: names the known ones" grep -q 'known: cifarnet' "$TMP/err"
"$LBSIM" calibrate 2> /dev/null; check "calibrate without a mode: exit 2" test $? -eq 2
"$LBSIM" calibrate --list --batch 0 2> /dev/null; check "--batch 0: exit 2" test $? -eq 2

# The profile-key reference is what `lbsim calibrate --keys` prints.
"$LBSIM" calibrate --keys > "$TMP/keys.md"
if cmp -s "$TMP/keys.md" "$top_srcdir/doc/profile-keys.md"; then
	ok "doc/profile-keys.md is current"
else
	bad "doc/profile-keys.md is stale: run 'make doc-keys'"
fi

finish
