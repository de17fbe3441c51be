# SPDX-License-Identifier: GPL-3.0-or-later
# Shared helpers of the end-to-end tests: a scratch directory, check/expect
# helpers, and the closing "NAME: N passed, M failed" line.
set -u
: "${LBSIM:?set LBSIM to the lbsim binary (make check does)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lbsim-e2e.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "ok: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; }

# check NAME COMMAND...: passes when COMMAND succeeds.
check() {
	local name=$1; shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}

# The torch runs of this test keep their rendezvous folders in its own
# scratch folder (lbsim's testbed makes them under TMPDIR), so that the
# checks that none outlives its run look at this test's workers and
# folders, not at those of a test run beside it (make -j).
torch_own() { export TMPDIR=$TMP; }
torch_left() { pgrep -f "torch_worker[.]py serve .*--init file://$TMP/" > /dev/null; }
torch_folders_left() { ls -d "$TMP"/lbsim-torch-* > /dev/null 2>&1; }

# q DB SQL: one value from the database.
q() { sqlite3 "$1" "$2"; }

# need COMMAND PACKAGE: a test that cannot run without COMMAND fails at
# once, rather than passing checks that would silently not run.
need() {
	command -v "$1" > /dev/null || { echo "FAIL: $(basename "$0") needs $1 (Debian package $2)"; exit 1; }
}

# measured: whether the long measured comparisons run (the testbed's and
# the torch worker's validations, minutes each). LBSIM_CHECK_MEASURED=no
# leaves them out, saying so, and runs a short pass of the same commands
# instead: CI sets it for its sanitizer and tarball builds, whose `make
# check` follows or repeats the README's, which runs them in full.
measured() { [ "${LBSIM_CHECK_MEASURED:-yes}" != no ]; }

# missing WHAT: a requirement of this test (root, a cgroup cpu controller,
# PyTorch) is missing: skip (exit 77) saying what, or, where
# LBSIM_REQUIRE_TESTBED=yes (CI, whose machine has them all), fail.
missing() {
	if [ "${LBSIM_REQUIRE_TESTBED:-no}" = yes ]; then
		echo "FAIL: $1 (LBSIM_REQUIRE_TESTBED=yes: a requirement may not be missing here)"
		exit 1
	fi
	echo "SKIP: $1"
	exit 77
}

# need_torch WHAT: python3 with PyTorch ($LBSIM_PYTHON, else the system's)
# and the testbed (root, a cgroup cpu controller), or skip (exit 77) saying
# which is missing and that WHAT is not tested (missing, above). Sets py,
# and LBSIM_PATH to the source tree (where the torch worker is).
need_torch() {
	py=${LBSIM_PYTHON:-/usr/bin/python3}
	"$py" -c 'import torch' 2> /dev/null ||
		missing "$py cannot import torch (Debian: apt-get install python3-torch); $1 not tested"
	export LBSIM_PATH=$top_srcdir
	local rc=0 msg
	msg=$("$LBSIM" testbed "$top_srcdir/scenarios/testbed/small.ini" --set run.iterations=1 -q -o "$TMP/blas.db" 2>&1) ||
		rc=$?
	[ $rc -eq 6 ] && missing "the testbed cannot run here: ${msg##*: }"
	return 0
}

finish() {
	echo "$(basename "$0" .sh): $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}
