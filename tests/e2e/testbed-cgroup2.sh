#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The testbed on cgroup v2 (cpu.max, cpu.weight, cpu.stat) on a machine that
# boots with cgroup v1: this script moves the cpu controller to a cgroup2
# file system mounted over /sys/fs/cgroup, runs the testbed there, and puts
# the v1 hierarchies back. The kernel lets a controller move only when its
# v1 hierarchy has no groups left and can be unmounted, so it runs alone,
# as root, after the other tests (`make check-cgroup2`); it changes the
# machine's mounts while it runs, so never beside another testbed. On the
# machine lbsim is developed on, the v1 cpu hierarchy cannot be unmounted
# ("target is busy": held from outside the session; in a private mount
# namespace the unmount succeeds but the hierarchy stays bound, and a
# cgroup2 mount offers only hugetlb), so the script stops there, saying
# so, and CI does not run it.
#
# What it checks on v2, as testbed.sh does on v1: the testbed names the
# backend, its runs finish, every worker's quota is written as cpu.max
# (seen while a run is going), the measured speedup of static-proportional
# over static on small.ini (quotas 0.2, 0.3, 0.5) is near 1.667 (20%, as
# testbed.sh's bound), and nothing is left behind.
. "$(dirname "$0")/lib.sh"
need sqlite3 sqlite3
[ "$(id -u)" = 0 ] || { echo "FAIL: testbed-cgroup2.sh needs root"; exit 1; }
sc=$top_srcdir/scenarios/testbed/small.ini
v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ { print $2 }' /proc/mounts)
acct=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpuacct(,|$)/ && $4 !~ /(^|,)cpu(,|$)/ { print $2 }' /proc/mounts)
if [ -z "$v1" ]; then
	if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
		echo "skip: this machine boots with cgroup v2 already (testbed.sh runs the testbed on it)"
		finish
		exit $?
	fi
	echo "FAIL: no cgroup v1 cpu hierarchy to move"
	exit 1
fi
# A run whose coordinator was killed (testbed.sh kills some) leaves its
# groups for the next run to remove: removed here, deepest first.
for d in "$v1"/lbsim-testbed-*; do
	[ -d "$d" ] && ! kill -0 "${d##*-}" 2> /dev/null && find "$d" -depth -type d -exec rmdir {} \;
done
if [ -n "$(find "$v1" -mindepth 1 -maxdepth 1 -type d)" ]; then
	echo "FAIL: $v1 has groups (another testbed running?): the cpu controller cannot move"
	exit 1
fi

restore() {
	umount /sys/fs/cgroup 2> /dev/null
	mountpoint -q "$v1" || mount -t cgroup -o cpu cgroup "$v1"
	[ -z "$acct" ] || mountpoint -q "$acct" || mount -t cgroup -o cpuacct cgroup "$acct"
	rm -rf "$TMP"
}
trap restore EXIT
umount "$v1" 2> "$TMP/umount" && { [ -z "$acct" ] || umount "$acct"; } || {
	echo "FAIL: cannot unmount $v1 ($(cat "$TMP/umount")): something outside this test holds the v1"
	echo "      hierarchy, so its cpu controller cannot move to cgroup v2 on this machine"
	exit 1
}
# A hierarchy with no groups goes when it is unmounted; its controllers are
# free for cgroup v2 a moment later.
mount -t cgroup2 none /sys/fs/cgroup || { echo "FAIL: cannot mount cgroup2"; exit 1; }
for _ in $(seq 50); do grep -qw cpu /sys/fs/cgroup/cgroup.controllers && break; sleep 0.1; done
check "cgroup2: the cpu controller moved (cgroup.controllers: $(cat /sys/fs/cgroup/cgroup.controllers))" \
	grep -qw cpu /sys/fs/cgroup/cgroup.controllers

# A run, watched: its groups' cpu.max while it goes.
"$LBSIM" testbed "$sc" --policy static-proportional --set run.iterations=10 -o "$TMP/v2.db" \
	> "$TMP/out" 2> "$TMP/err" &
pid=$!
seen=
for _ in $(seq 100); do
	f=$(find /sys/fs/cgroup -path '*lbsim-testbed-*' -name cpu.max 2> /dev/null | head -n 20)
	for m in $f; do
		read -r quota period < "$m" || continue
		[ "$quota" != max ] && [ "$period" = 10000 ] && seen="$seen $quota"
	done
	[ -n "$seen" ] && break
	sleep 0.1
done
rc=0
wait $pid || rc=$?
cat "$TMP/err"
check "cgroup2: the testbed ran (exit $rc)" test $rc -eq 0
check "cgroup2: quotas written as cpu.max, period 10 ms (saw:$seen)" test -n "$seen"
check "cgroup2: the backend is named" grep -q "cgroup v2" "$TMP/out" "$TMP/err" "$TMP/v2.db"
s=$(q "$TMP/v2.db" "SELECT (SELECT mean_iteration_s FROM runs WHERE policy = 'static') /
	(SELECT mean_iteration_s FROM runs WHERE policy = 'static-proportional')")
check "cgroup2: static-proportional's measured speedup is near 1.667 (got $s)" \
	awk -v s="$s" 'BEGIN { exit !(s > 1.667 * 0.8 && s < 1.667 * 1.2) }'
check "cgroup2: no group left behind" test -z "$(find /sys/fs/cgroup -maxdepth 1 -name 'lbsim-testbed-*')"
finish
