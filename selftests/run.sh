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
# again under valgrind, as suites "<name>-valgrind": their own TAP, plus one
# line saying whether valgrind found invalid accesses, uses of undefined
# values or leaks (definite or indirect) in any test's process. Set
# SACRED_VALGRIND="" to skip them; they are skipped without valgrind.
# Under valgrind, SACRED_CONN_TIMEOUT_MS stretches connection timeouts and
# SACRED_TEST_SLOW=4 the protocol clocks the tests race (sacred_test.h).
cd "$(dirname "$0")" || exit 1
rc=0

valgrind_run() { # valgrind_run PROGRAM
	log=$(mktemp)
	echo "# selftest: $1-valgrind"
	t0=$(date +%s)
	SACRED_CONN_TIMEOUT_MS=30000 SACRED_TEST_SLOW=4 valgrind -q --error-exitcode=99 \
		--leak-check=full --show-leak-kinds=definite,indirect \
		--errors-for-leak-kinds=definite,indirect \
		--log-file="$log" "./$1"
	st=$?
	echo "# $1-valgrind: $(($(date +%s) - t0)) s"
	if [ -s "$log" ] || [ "$st" -eq 99 ]; then
		sed 's/^/# /' "$log"
		echo "not ok 999 valgrind: errors or leaks (exit status $st)"
		rc=1
	else
		echo "ok 999 valgrind: no invalid accesses, no leaks"
	fi
	[ "$st" -eq 0 ] || rc=1
	rm -f "$log"
}

# SACRED_SELFTESTS=none runs none of them (make check-valgrind).
[ "${SACRED_SELFTESTS:-}" = none ] && SACRED_SELFTESTS=" "
for t in ${SACRED_SELFTESTS:-sacred_netlink sacred_dev sacred_mem sacred_region sacred_conn sacred_io sacred_rmem sacred_prims sacred_consensus sacred_log sacred_kv sacred_neb sacred_cq sacred_lifecycle sacred_wire sacred_auth sacred_perm sacred_revoke sacred_nlfuzz sacred_cli sacred_module}; do
	echo "# selftest: $t"
	p=./$t
	[ -e "$p" ] || [ ! -e "$p.sh" ] || p=$p.sh
	t0=$(date +%s)
	"$p" || rc=1
	echo "# $t: $(($(date +%s) - t0)) s"
done
if command -v valgrind > /dev/null; then
	for t in ${SACRED_VALGRIND-sacred_conn sacred_io sacred_rmem sacred_prims sacred_consensus sacred_neb}; do
		valgrind_run "$t"
	done
fi
exit $rc
