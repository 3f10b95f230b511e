#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sacred_poll.sh - polling mode (kmod/poll.c): sacred.ko loaded with
# poll_cpu=0, so that a kernel thread busy-polls every connection's
# completion queue, must keep every promise the softirq mode keeps. The
# selftests of the switch - sacred_revoke (no write lands after a revoke's
# reply; every torn write counted), sacred_perm and sacred_conn - run
# again in that mode; a poll_cpu that is neither -1 nor an online CPU must
# be refused at load; unloading must stop the thread, with no connection
# and with a connected writer (sacred_module's case, polled).
#
# Reloads the module: SACRED_KO names its file (scripts/check sets it);
# without it every case is skipped. Leaves the module loaded as it found
# it, without parameters. Output is TAP; the rig checks the kernel log
# after the run.

cd "$(dirname "$0")" || exit 1
n=0
rc=0

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	echo "not ok $n - $1"
	rc=1
}

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

cases=(refuses_bad_cpus loads_and_starts_the_poller sacred_revoke sacred_perm
       sacred_conn unload_stops_the_poller unload_with_connected_writer)
echo "TAP version 13"
echo "1..${#cases[@]}"
ko=${SACRED_KO:-}
if [[ -z $ko || ! -r $ko ]]; then
	for c in "${cases[@]}"; do
		skip "$c" "SACRED_KO does not name the module file"
	done
	exit 0
fi

reload() {
	rmmod sacred 2> /dev/null
	insmod "$ko" "$@"
}

poller_pid() {
	pgrep -x sacred_poll
}

# 1. Out of range, negative other than -1: refused, nothing left loaded.
bad=()
for cpu in -2 "$(nproc --all)" 4096; do
	if reload "poll_cpu=$cpu" 2> /dev/null; then
		bad+=("$cpu")
	fi
done
if ((${#bad[@]})) || [[ -d /sys/module/sacred ]]; then
	echo "# loaded with poll_cpu=${bad[*]}"
	not_ok refuses_bad_cpus
else
	ok refuses_bad_cpus
fi

# 2. poll_cpu=0: the parameter reads back, the thread runs on CPU 0.
if reload poll_cpu=0 && [[ $(cat /sys/module/sacred/parameters/poll_cpu) == 0 ]] &&
	pid=$(poller_pid) && [[ $(taskset -pc "$pid" | sed 's/.*: //') == 0 ]]; then
	ok loads_and_starts_the_poller
else
	echo "# poll_cpu reads '$(cat /sys/module/sacred/parameters/poll_cpu 2>&1)', poller '$(poller_pid)'"
	not_ok loads_and_starts_the_poller
	pid=
fi

# 3. The switch's selftests, polled. Their TAP is kept as comments.
for t in sacred_revoke sacred_perm sacred_conn; do
	if [[ -z $pid ]]; then
		skip "$t" "no poller"
		continue
	fi
	t0=$(date +%s)
	if out=$("./$t" 2>&1); then
		ok "$t (poll_cpu=0, $(($(date +%s) - t0)) s)"
	else
		echo "$out" | sed 's/^/# /'
		not_ok "$t (poll_cpu=0)"
	fi
done
# It polled: the thread has run (schedstat: nanoseconds on a CPU).
if [[ -n $pid ]]; then
	ran=$(cut -d' ' -f1 "/proc/$pid/schedstat" 2> /dev/null)
	echo "# the poller ran ${ran:-?} ns"
fi

# 4. Unload: the thread goes.
if rmmod sacred && ! poller_pid > /dev/null; then
	ok unload_stops_the_poller
else
	echo "# poller after rmmod: '$(poller_pid)'"
	not_ok unload_stops_the_poller
fi

# 5. Unload with a connected writer, polled: sacred_module's case, which
# reloads the module without parameters when it is done.
if ! reload poll_cpu=0; then
	not_ok "unload_with_connected_writer: cannot load with poll_cpu=0"
elif out=$(SACRED_KO=$ko ./sacred_module -t unload_with_connected_writer 2>&1) &&
	! poller_pid > /dev/null; then
	ok "unload_with_connected_writer (poll_cpu=0)"
else
	echo "$out" | sed 's/^/# /'
	not_ok "unload_with_connected_writer (poll_cpu=0)"
fi
# Loaded as found: without parameters.
if [[ ! -d /sys/module/sacred ]]; then
	insmod "$ko"
elif [[ $(cat /sys/module/sacred/parameters/poll_cpu) != -1 ]]; then
	rmmod sacred && insmod "$ko"
fi
exit $rc
