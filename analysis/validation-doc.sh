#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# `make validate`'s page writer: replaces, in DOC (doc/validation.md), the
# lines between "<!-- validate NAME -->" and "<!-- /validate NAME -->" with
# the comparison table of the last validation in DB (a database written by
# lbsim validate), so that the page shows what the last run measured.
# Usage: validation-doc.sh DOC NAME DB
set -eu
doc=$1 name=$2 db=$3
grep -q "^<!-- validate $name -->\$" "$doc" || { echo "$0: $doc has no <!-- validate $name --> block" >&2; exit 1; }
grep -q "^<!-- /validate $name -->\$" "$doc" || { echo "$0: $doc has no <!-- /validate $name --> end" >&2; exit 1; }
table=$(mktemp)
trap 'rm -f "$table" "$table.doc"' EXIT
{
	sqlite3 "$db" "SELECT printf('Measured %s (validation %d, profile t0 = %s, %s per sample; ' ||
		'the machine''s own speed moved %.1f%% while the testbed ran).', max(created_at),
		validation_id, '$(sed -n 's/^t0 = //p' "${db%.db}-profile.ini" 2>/dev/null | head -n 1)',
		'$(sed -n 's/^per_sample = //p' "${db%.db}-profile.ini" 2>/dev/null | head -n 1)', 100 * max(machine_drift))
		FROM validations WHERE validation_id = (SELECT max(validation_id) FROM validations)"
	echo
	echo '| policy | simulated | measured | gap | speedup sim | speedup measured | gap | per-iteration error | batch |'
	echo '|---|---|---|---|---|---|---|---|---|'
	sqlite3 "$db" "SELECT printf('| %s | %.4f | %.4f ± %.4f | %+.1f%% | %.3f | %.3f ± %.3f | %s | %.1f%% / %.1f%% | %.1f%% |',
		policy, simulated_iteration_s, measured_iteration_s, coalesce(measured_iteration_sd_s, 0),
		100 * (simulated_iteration_s / measured_iteration_s - 1), simulated_speedup, measured_speedup,
		coalesce(measured_speedup_sd, 0),
		CASE WHEN policy = 'static' THEN '' ELSE printf('%+.1f%%', 100 * (simulated_speedup / measured_speedup - 1)) END,
		100 * error_mean, 100 * error_p95, 100 * batch_difference_mean)
		FROM validations WHERE validation_id = (SELECT max(validation_id) FROM validations)
		ORDER BY policy <> 'static', policy"
} > "$table"
awk -v name="$name" -v table="$table" '
	$0 == "<!-- validate " name " -->" { print; while ((getline line < table) > 0) print line; skip = 1; next }
	$0 == "<!-- /validate " name " -->" { skip = 0 }
	!skip { print }' "$doc" > "$table.doc"
cat "$table.doc" > "$doc"
