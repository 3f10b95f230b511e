#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run the sacred kselftests in order, inside the SoftRoCE VM (scripts/vm-run
# loads the module and creates the rxe devices first). Each program prints
# its own TAP; scripts/check merges them into one stream. A program may be
# a script: "sacred_cli" runs ./sacred_cli.sh when there is no ./sacred_cli.
#
# sacred_module runs last: it unloads and reloads the module.
#
# Then the programs in SACRED_VALGRIND (default: the data path, the
# primitives, single-shot consensus and non-equivocating broadcast) run
# again under valgrind, SACRED_VALGRIND_JOBS at a time (default 2), as
# suites "<name>-valgrind": their own TAP, plus one
# line saying whether valgrind found invalid accesses, uses of undefined
# values or leaks (definite or indirect) in any test's process. Set
# SACRED_VALGRIND="" to leave them out; without valgrind installed they
# are one failing suite "valgrind".
# valgrind.supp holds the only suppressions: valgrind's false reports on
# libbpf's bpf() calls (sacred_consensus loads a program with libbpf).
# Under valgrind, SACRED_CONN_TIMEOUT_MS stretches connection timeouts and
# SACRED_TEST_SLOW=4 the protocol clocks the tests race (sacred_test.h).
cd "$(dirname "$0")" || exit 1
rc=0

# valgrind_run PROGRAM: its TAP and valgrind's verdict on stdout; exits
# non-zero if either failed.
valgrind_run() {
	log=$(mktemp)
	echo "# selftest: $1-valgrind"
	t0=$(date +%s)
	SACRED_CONN_TIMEOUT_MS=30000 SACRED_TEST_SLOW=4 valgrind -q --error-exitcode=99 \
		--suppressions=valgrind.supp \
		--leak-check=full --show-leak-kinds=definite,indirect \
		--errors-for-leak-kinds=definite,indirect \
		--log-file="$log" "./$1"
	st=$?
	echo "# $1-valgrind: $(($(date +%s) - t0)) s"
	if [ -s "$log" ] || [ "$st" -eq 99 ]; then
		sed 's/^/# /' "$log"
		echo "not ok 999 valgrind: errors or leaks (exit status $st)"
		st=1
	else
		echo "ok 999 valgrind: no invalid accesses, no leaks"
	fi
	rm -f "$log"
	return "$st"
}

# valgrind_lane DIR PROGRAM...: run, one after the other, every PROGRAM
# no other lane has claimed yet (mkdir is the claim), each one's output
# in DIR/PROGRAM.out and a DIR/PROGRAM.failed for a failure.
valgrind_lane() {
	dir=$1
	shift
	for t in "$@"; do
		mkdir "$dir/$t.claim" 2> /dev/null || continue
		valgrind_run "$t" > "$dir/$t.out" 2>&1 || : > "$dir/$t.failed"
	done
}

# SACRED_SELFTESTS=none runs none of them (make check-valgrind).
[ "${SACRED_SELFTESTS:-}" = none ] && SACRED_SELFTESTS=" "
for t in ${SACRED_SELFTESTS:-sacred_netlink sacred_dev sacred_mem sacred_region sacred_conn sacred_io sacred_rmem sacred_prims sacred_consensus sacred_log sacred_kv sacred_neb sacred_cheapq sacred_lifecycle sacred_wire sacred_auth sacred_perm sacred_bpf sacred_revoke sacred_nlfuzz sacred_cli sacred_poll sacred_module}; do
	echo "# selftest: $t"
	p=./$t
	[ -e "$p" ] || [ ! -e "$p.sh" ] || p=$p.sh
	t0=$(date +%s)
	"$p" || rc=1
	echo "# $t: $(($(date +%s) - t0)) s"
done
# Valgrind runs one thread at a time, so one such program keeps one vCPU
# busy: SACRED_VALGRIND_JOBS (default 2, the rig's vCPUs) of them run at
# once, each suite's output printed whole, in the list's order, when all
# are done. The list starts with the longest: the lanes end together.
vg=${SACRED_VALGRIND-sacred_conn sacred_neb sacred_rmem sacred_consensus sacred_prims sacred_io}
if [ -n "$vg" ] && ! command -v valgrind > /dev/null; then
	# Asked for and not run is a failure, not a skip (scripts/deps
	# installs valgrind).
	echo "# selftest: valgrind"
	echo "1..1"
	echo "not ok 1 valgrind is not installed: $vg did not run under it"
	rc=1
elif [ -n "$vg" ]; then
	vgdir=$(mktemp -d)
	j=0
	while [ "$j" -lt "${SACRED_VALGRIND_JOBS:-2}" ]; do
		# shellcheck disable=SC2086 # the list is words
		valgrind_lane "$vgdir" $vg &
		j=$((j + 1))
	done
	wait
	for t in $vg; do
		cat "$vgdir/$t.out"
		[ -e "$vgdir/$t.failed" ] && rc=1
	done
	rm -rf "$vgdir"
fi
exit $rc
