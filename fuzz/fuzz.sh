#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# `make fuzz`: builds each harness with clang's libFuzzer, ASan and UBSan in
# fuzz/clang/ of the build tree (apart from the normal build, which it never
# touches), then runs each for FUZZ_SECONDS (default 60), starting from the
# seeds (shipped scenarios, traces, sweeps and profiles, the small results
# databases of tests/data/results; fuzz/seeds/ for the what-if traces, their
# metadata and calibrate --fit's CSV) and the regression corpus.
# The corpus it grows is kept in fuzz/corpus/HARNESS/; crashing inputs land
# in fuzz/artifacts/HARNESS/ (copy them to fuzz/regressions/HARNESS/ once
# fixed). Usage: fuzz.sh HARNESS...; the makefile passes the environment.
set -u
: "${srcdir:?}" "${FUZZ_CC:=clang}" "${FUZZ_SECONDS:=60}" "${FUZZ_SOURCES:?}"
: "${FUZZ_CPPFLAGS:=}" "${FUZZ_LIBS:=}" "${FUZZ_FLAGS:=}"
# The harnesses' scratch files (fuzz/harness.c) go to memory where it can:
# the results harness commits to SQLite databases, and each fsync to a disk
# would cost more than the rest of an input.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMPDIR=/dev/shm
	export TMPDIR
fi
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cflags="-g -O1 -std=gnu11 $san"
obj=fuzz/clang
mkdir -p "$obj"

# Newest header: any change to one rebuilds everything (simple and safe).
newest=$(ls -t "$srcdir"/util/*.h "$srcdir"/models/*.h "$srcdir"/models/*/*.h "$srcdir"/traces/*.h "$srcdir"/sim/*.h \
	"$srcdir"/analysis/*.h "$srcdir"/sweep/*.h "$srcdir"/whatif/*.h "$srcdir"/hybrid/*.h "$srcdir"/fuzz/*.h config.h | head -1)
objs=
for s in $FUZZ_SOURCES fuzz/harness.c; do
	src=$s; [ -f "$src" ] || src=$srcdir/$s
	o=$obj/$(echo "$s" | tr / _ | sed 's/\.c$/.o/')
	if [ ! -f "$o" ] || [ "$src" -nt "$o" ] || [ "$newest" -nt "$o" ]; then
		echo "  CLANG    $s"
		$FUZZ_CC $cflags -fsanitize=fuzzer-no-link -I"$srcdir" -I. $FUZZ_CPPFLAGS -c "$src" -o "$o" || exit 1
	fi
	objs="$objs $o"
done

# Seeds by harness: the shipped files of each kind.
seeds() {
	case $1 in
	scenario) echo "$srcdir/scenarios $srcdir/tests/data/bad $srcdir/tests/data/sweep" ;;
	hybrid) echo "$srcdir/scenarios/hybrid $srcdir/fuzz/seeds/hybrid" ;;
	trace) echo "$srcdir/tests/data/traces $srcdir/tests/data/bad/traces" ;;
	sweep) echo "$srcdir/tests/data/sweep $srcdir/tests/data/bad-sweep $srcdir/scenarios/sweeps" ;;
	profile) echo "$srcdir/profiles $srcdir/tests/data/bad/profiles" ;;
	ops|chrome|meta|fit) echo "$srcdir/fuzz/seeds/$1" ;;
	results) echo "$srcdir/tests/data/results" ;;
	esac
}

# The longest input by harness: a results database of 512-byte pages takes
# some 20 kB.
max_len() {
	case $1 in
	results) echo 65536 ;;
	*) echo 8192 ;;
	esac
}

failed=
for h in "$@"; do
	echo "  CCLD     fuzz/fuzz_$h"
	$FUZZ_CC $cflags -fsanitize=fuzzer -I"$srcdir" -I. $FUZZ_CPPFLAGS "$srcdir/fuzz/fuzz_$h.c" $objs \
		$FUZZ_LIBS -o "fuzz/fuzz_$h" || exit 1
	mkdir -p "fuzz/corpus/$h" "fuzz/artifacts/$h"
	dict=
	[ -f "$srcdir/fuzz/$h.dict" ] && dict="-dict=$srcdir/fuzz/$h.dict"
	echo "fuzz: $h for ${FUZZ_SECONDS}s"
	# shellcheck disable=SC2046
	if ! ./fuzz/fuzz_$h -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$h")" \
		-print_final_stats=1 -artifact_prefix="fuzz/artifacts/$h/" $dict $FUZZ_FLAGS \
		"fuzz/corpus/$h" "$srcdir/fuzz/regressions/$h" $(seeds "$h") > "fuzz/fuzz_$h.log" 2>&1; then
		failed="$failed $h"
		tail -60 "fuzz/fuzz_$h.log"
	fi
	grep -E '^stat::(number_of_executed_units|peak_rss_mb)|DONE' "fuzz/fuzz_$h.log" | sed "s/^/fuzz: $h: /"
done
if [ -n "$failed" ]; then
	echo "fuzz: FAILED:$failed (inputs in fuzz/artifacts/)"
	exit 1
fi
echo "fuzz: every harness ran ${FUZZ_SECONDS}s without a finding"
