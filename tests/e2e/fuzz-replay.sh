#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The fuzzing harnesses (fuzz/), built with the normal compiler, replay the
# regression corpus (every input a fuzzer once crashed on) and the seeds:
# none may crash, hang or trip a sanitizer.
. "$(dirname "$0")/lib.sh"
: "${FUZZ_REPLAY:?set FUZZ_REPLAY to the fuzz/replay prefix of the build tree (make check does)}"
R="$top_srcdir/fuzz/regressions"
D="$top_srcdir/tests/data"
replay() {
	local h=$1; shift
	if timeout 300 "${FUZZ_REPLAY}_$h" "$@" > "$TMP/out" 2>&1; then
		ok "$h: $(tail -1 "$TMP/out" | sed 's/.*: //')"
	else
		bad "$h (exit $?): $(tail -20 "$TMP/out")"
	fi
}
replay scenario "$R/scenario" "$top_srcdir/scenarios" "$D/bad" "$D/sweep/scenario.ini"
replay trace "$R/trace" "$D/traces" "$D/bad/traces"
replay sweep "$R/sweep" "$D/sweep/sweep.ini" "$D/bad-sweep"
replay profile "$R/profile" "$top_srcdir/profiles" "$D/bad/profiles"
replay simulate "$R/simulate"
replay results "$R/results" "$D/results"
S="$top_srcdir/fuzz/seeds"
replay ops "$R/ops" "$S/ops"
replay chrome "$R/chrome" "$S/chrome"
replay meta "$R/meta" "$S/meta"
replay fit "$R/fit" "$S/fit"
replay hybrid "$R/hybrid" "$top_srcdir/scenarios/hybrid" "$S/hybrid"
finish
