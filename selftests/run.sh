#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run the sacred kselftests in order, inside the SoftRoCE VM (scripts/vm-run
# loads the module and creates the rxe devices first). Each program prints
# its own TAP; scripts/check merges them into one stream.
#
# sacred_module runs last: it unloads and reloads the module.
cd "$(dirname "$0")" || exit 1
rc=0
for t in ${SACRED_SELFTESTS:-sacred_netlink sacred_dev sacred_mem sacred_region sacred_conn sacred_wire sacred_auth sacred_perm sacred_revoke sacred_module}; do
	echo "# selftest: $t"
	"./$t" || rc=1
done
exit $rc
