#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sacred_cli.sh - the sacred CLI (tools/sacred) end to end, against the
# real sacred.ko on SoftRoCE, inside the VM (scripts/vm-run loads the
# module and creates rxe0.. first; selftests/run.sh runs this).
#
# Every command of every object is run as a user would type it, and what
# it prints is held against what the kernel holds: a memory instance made
# with "memory add" must come back from "-j memory show" with the fields it
# was given, a region's ACL set with "region set" must come back from
# "-d -j region show", a "perm set" must move "cur" in that ACL, the
# monitor must print the events of those changes. Errors are held to
# sacred(8), EXIT STATUS: a usage error exits 255, a refusal of the kernel
# 1 with its extack message, a missing family 2; each with one line on
# stderr that names the bad word, and nothing on stdout.
#
# JSON is read with jq (scripts/deps). The instances made here have ids
# and rdma_cm ports 7581-7593, which no other selftest uses; all of them,
# the key files and the background monitors go at exit, even on failure.
#
# Output is TAP, as the kselftest harness prints it: one "ok N - name" or
# "not ok N - name" per case, comment lines with "# " saying why a case
# failed. Environment: SACRED_RXE_DEVS, SACRED_RXE_ADDRS (the rig's),
# SACRED_CLI (the binary, default ../tools/sacred), SACRED_CLI_CASES (the
# cases to run by function name, e.g. "case_batch case_valgrind"; the
# others are skipped; default all). Each case's time is a comment line.

cd "$(dirname "$0")" || exit 1
top=$(cd .. && pwd)
SACRED=${SACRED_CLI:-$top/tools/sacred}
LOSE_PERMISSION=$top/examples/lose_permission

read -r -a devs <<< "${SACRED_RXE_DEVS:-}"
read -r -a addrs <<< "${SACRED_RXE_ADDRS:-}"
dev0=${devs[0]:-}
dev1=${devs[1]:-}
addr0=${addrs[0]:-}
addr1=${addrs[1]:-}

# Ours: memory instance ids (and their rdma_cm ports) 7581-7593; 7599 is
# never made, for "no such instance".
MEM_IDS=$(seq 7581 7593)
NO_MEM=7599

T=$(mktemp -d /tmp/sacred_cli.XXXXXX) || exit 1
bg_pids=""
# The TAP stream: comments reach it from inside $(...) too.
exec 3>&1

cleanup() {
	local p id

	for p in $bg_pids; do
		kill -TERM "$p" 2> /dev/null
		wait "$p" 2> /dev/null
	done
	for id in $MEM_IDS; do
		"$SACRED" memory del "$id" > /dev/null 2>&1
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------- assertions

case_name=""
skip=""		# set by a case that cannot run here: why
wrap=()		# a command to run the CLI under (setpriv, valgrind)
tmo=60		# seconds any one command may take

# A failed check: said on the TAP stream, and remembered in a file, so
# that a check made inside $(...) fails its case too.
fail() {
	echo "# $case_name: $*" >&3
	: > "$T/failed"
}

# What the last command printed, for a failure's comment lines.
show_io() {
	sed -n '1,12s/^/#     stdout: /p' "$T/out" >&3
	sed -n '1,6s/^/#     stderr: /p' "$T/err" >&3
}

# run ARGS...: the CLI, bounded; $rc, stdout in $T/out, stderr in $T/err.
run() {
	timeout -k 5 "$tmo" "${wrap[@]}" "$SACRED" "$@" > "$T/out" 2> "$T/err"
	rc=$?
}

# ok ARGS...: the command must succeed and say nothing on stderr.
ok() {
	run "$@"
	if [ "$rc" -ne 0 ] || [ -s "$T/err" ]; then
		fail "sacred $*: exit status $rc, want 0 and a quiet stderr"
		show_io
		return 1
	fi
	return 0
}

# err STATUS WORD ARGS...: the command must exit with STATUS, print
# nothing on stdout and one line on stderr, "sacred: ...", containing
# WORD; a usage error (255) must end with the hint to the help. Checked
# with bash alone: a grep costs 0.1 s in the TCG guest, more than the
# command it checks.
err() {
	local want=$1 word=$2 hint='; try "sacred ([a-z]+ help|-h)"$'
	local -a line
	shift 2

	run "$@"
	if [ "$rc" -ne "$want" ]; then
		fail "sacred $*: exit status $rc, want $want"
		show_io
		return 1
	fi
	if [ -s "$T/out" ]; then
		fail "sacred $*: failed but printed on stdout"
		show_io
		return 1
	fi
	mapfile line < "$T/err"		# each line with its newline
	if [ "${#line[@]}" -ne 1 ] || [[ ${line[0]} != "sacred: "*$'\n' ]]; then
		fail "sacred $*: not one \"sacred: ...\" line on stderr"
		show_io
		return 1
	fi
	line[0]=${line[0]%$'\n'}
	if [[ ${line[0]} != *"$word"* ]]; then
		fail "sacred $*: stderr does not say '$word'"
		show_io
		return 1
	fi
	if [ "$want" -eq 255 ] && ! [[ ${line[0]} =~ $hint ]]; then
		fail "sacred $*: usage error without the hint to the help"
		show_io
		return 1
	fi
	return 0
}

# expect WHAT GOT WANT
expect() {
	[ "$2" = "$3" ] && return 0
	fail "$1: got '$2', want '$3'"
	return 1
}

# jq over the last command's stdout; fails the case if it is not JSON.
js() {
	local v

	if ! v=$(jq -c "$1" < "$T/out" 2> "$T/jq.err"); then
		fail "jq '$1': stdout is not the JSON expected: $(head -n 1 "$T/jq.err")"
		show_io
		return 1
	fi
	printf '%s\n' "$v"
}

# The -j object of region MEM/ID with its ACL, from the kernel now.
region_json() {
	run -d -j region show "$1"
	[ "$rc" -eq 0 ] || { fail "-d -j region show $1: exit status $rc"; show_io; }
	js '.[0]'
}

# The ACL of region MEM/ID as "pid:max:cur ..." ordered by pid.
acl_of() {
	run -d -j region show "$1"
	[ "$rc" -eq 0 ] || { fail "-d -j region show $1: exit status $rc"; show_io; }
	js '[.[0].acl[] | "\(.pid):\(.max):\(.cur)"] | join(" ")' | tr -d '"'
}

# wait_for FILE PATTERN SECONDS: until a line of FILE matches (grep -E).
wait_for() {
	local i

	for i in $(seq $(($3 * 10))); do
		grep -qE -- "$2" "$1" 2> /dev/null && return 0
		sleep 0.1
	done
	return 1
}

# stop_monitor PID OUT MEM WHAT: change instance MEM's cap until the
# monitor PID (started in the background, printing to OUT) prints an
# event - it is up - then SIGTERM it; its exit status must be 0.
stop_monitor() {
	local pid=$1 out=$2 mem=$3 what=$4 i st

	for i in $(seq 150); do
		"$SACRED" memory set "$mem" cap $((4 + i))m > /dev/null
		[ -s "$out" ] && break
		sleep 0.2
	done
	[ -s "$out" ] || fail "$what: no event in 30 s"
	kill -TERM "$pid"
	wait "$pid"
	st=$?
	bg_pids=""
	expect "$what, SIGTERM: exit status" "$st" 0
}

# ------------------------------------------------------------------ cases

# -h, "help", "OBJECT help": usage on stdout, exit 0.
case_help() {
	local o w first

	ok -h || return
	grep -q '^Usage: sacred \[ OPTIONS \] OBJECT { COMMAND | help }$' "$T/out" ||
		fail "-h: no usage line"
	grep -qF 'OBJECT := { dev | memory | region | peer | perm | monitor }' "$T/out" ||
		fail "-h: the objects are not listed"
	cp "$T/out" "$T/usage"
	ok --help && { cmp -s "$T/out" "$T/usage" || fail "--help differs from -h"; }
	ok help && { cmp -s "$T/out" "$T/usage" || fail "help differs from -h"; }
	for o in dev memory region peer perm monitor; do
		ok "$o" help || continue
		first=$(head -n 1 "$T/out")
		case "$first" in
		"Usage: sacred $o "*) ;;
		*) fail "$o help: first line '$first'" ;;
		esac
		grep -q "^       sacred $o help$" "$T/out" ||
			fail "$o help: does not list \"sacred $o help\""
		cp "$T/out" "$T/help.$o"
	done
	# Objects and commands abbreviated: "mem h" is "memory help".
	ok mem h && { cmp -s "$T/out" "$T/help.memory" || fail "mem h differs from memory help"; }
	ok monitor h && { cmp -s "$T/out" "$T/help.monitor" || fail "monitor h differs from monitor help"; }
	for w in add del set show; do
		grep -q "sacred memory $w" "$T/help.memory" ||
			fail "memory help: no $w"
		grep -q "sacred region $w\|sacred \[ -d \] region $w" "$T/help.region" ||
			fail "region help: no $w"
	done
	grep -qF 'static | exclusive-writer | swmr | revoke-only | fenced' "$T/help.region" ||
		fail "region help: the policies are not listed"
}

# Unknown words: 255, the word named, nothing on stdout.
case_usage_errors() {
	local o

	err 255 'unknown object "bogus"' bogus
	err 255 'ambiguous object "p"' p
	err 255 'unknown option "-x"' -x
	err 255 'unknown option "--bogus"' --bogus
	for o in dev memory region peer perm; do
		err 255 'unknown command "bogus"' "$o" bogus
	done
	err 255 'missing command' perm
	err 255 'unknown argument "bogus"' memory add dev "$dev0" port 7581 bogus 1
	err 255 'unknown argument "bogus"' memory set 7581 bogus 1
	err 255 'unknown argument "bogus"' region add mem 7581 size 4k bogus 1
	err 255 'unknown argument "bogus"' region show bogus 1
	err 255 'unknown argument "bogus"' region set 7581/1 bogus 1
	err 255 'unknown argument "bogus"' peer show bogus 1
	err 255 'unknown argument "bogus"' perm set 7581/1 bogus 1
	err 255 'unknown argument "bogus"' monitor bogus
	err 255 'unexpected argument "extra"' dev show "$dev0" extra
	err 255 'unexpected argument "extra"' memory show 7581 extra
	err 255 '"port" given twice' memory add dev "$dev0" port 7581 port 7582
	err 255 '"state" given twice' memory set 7581 state up state down
	err 255 '"id" needs "mem"' region show id 1
	# No arguments at all: the usage, on stderr.
	run
	expect "sacred: exit status" "$rc" 255
	[ -s "$T/out" ] && fail "sacred: printed on stdout"
	grep -q '^Usage: sacred' "$T/err" || fail "sacred: no usage on stderr"
	# None of these made anything.
	ok -j memory show &&
		expect "instances made by bad commands" \
			"$(js '[.[] | select(.id >= 7581 and .id <= 7599)] | length')" 0
}

case_version() {
	local version

	version=$(sed -n 's/^VERSION[[:space:]]*:=[[:space:]]*//p' "$top/Makefile")
	ok -V || return
	expect "-V" "$(cat "$T/out")" \
		"sacred utility, libsacred $version, netlink family \"sacred\" version 1"
	cp "$T/out" "$T/version"
	for a in --version -Version -Ver; do
		ok "$a" && { cmp -s "$T/out" "$T/version" || fail "$a differs from -V"; }
	done
}

# A full disk (/dev/full) fails the command, says so, exit 1.
case_write_error() {
	local a st

	for a in "-V" "-h" "help" "dev help" "-j dev show" "dev"; do
		# shellcheck disable=SC2086
		timeout -k 5 "$tmo" "$SACRED" $a > /dev/full 2> "$T/err"
		st=$?
		expect "sacred $a > /dev/full: exit status" "$st" 1
		grep -q '^sacred: write error on standard output$' "$T/err" ||
			fail "sacred $a > /dev/full: stderr '$(head -n 1 "$T/err")'"
	done
}

# dev show: the rig's rxe devices, in text and JSON, as rdma(8) has them.
case_dev_show() {
	local d idx guid ports pstate netdev

	ok dev show || return
	cp "$T/out" "$T/dev.txt"
	ok dev && { cmp -s "$T/out" "$T/dev.txt" || fail "dev differs from dev show"; }
	ok -j dev show || return
	cp "$T/out" "$T/dev.json"
	# iproute2's spellings: one dash, whole or abbreviated words.
	for a in -json -js --json; do
		ok "$a" dev show && { cmp -s "$T/out" "$T/dev.json" || fail "$a dev show differs from -j dev show"; }
	done
	ok -d -j dev show && cp "$T/out" "$T/dev-d.json" &&
		ok -details -json dev show &&
		{ cmp -s "$T/out" "$T/dev-d.json" || fail "-details -json dev show differs from -d -j dev show"; }
	for d in "${devs[@]}"; do
		# One jq for all of a device's fields (jq takes 0.5 s to
		# start in the TCG guest).
		IFS='|' read -r idx guid ports pstate netdev <<< "$(js ".[] |
			select(.ifname == \"$d\") | [(.ifindex | tostring),
			.node_guid, ([.ports[].port | tostring] | join(\",\")),
			(.ports[0] | \"\\(.state) \\(.physical_state) \\(.link_layer)\"),
			(.ports[0].netdev // \"null\")] | join(\"|\")" | tr -d '"')"
		if [ -z "$idx" ]; then
			fail "-j dev show: $d is not listed"
			continue
		fi
		expect "$d: ports" "$ports" 1
		expect "$d port 1" "$pstate" "ACTIVE LINK_UP Ethernet"
		if [ -z "$netdev" ] || [ "$netdev" = null ]; then
			fail "$d: no netdev"
		fi
		grep -qx "$idx: $d: node_guid $guid ports 1" "$T/dev.txt" ||
			fail "dev show: no line '$idx: $d: node_guid $guid ports 1'"
		grep -qE "^    port 1 state ACTIVE physical_state LINK_UP( mtu [0-9]+)? link_layer Ethernet netdev $netdev$" "$T/dev.txt" ||
			fail "dev show: no port line for $d"
		# What rdma(8) says of the same device.
		if command -v rdma > /dev/null; then
			rdma -j dev show "$d" > "$T/rdma.json" 2> /dev/null
			expect "$d: node_guid, ifindex against rdma dev" \
				"$(jq -r '.[0] | "\(.node_guid) \(.ifindex)"' "$T/rdma.json")" "$guid $idx"
			rdma -j link show "$d/1" > "$T/rdma.json" 2> /dev/null
			expect "$d: netdev, state against rdma link" \
				"$(jq -r '.[0] | "\(.netdev) \(.state) \(.physical_state)"' "$T/rdma.json")" \
				"$netdev ACTIVE LINK_UP"
		fi
	done
	ok -j dev show "$dev0" &&
		expect "-j dev show $dev0" "$(js '[.[].ifname] | join(",")' | tr -d '"')" "$dev0"
	ok -d -j dev show "$dev0" &&
		expect "-d -j dev show: num_ports" "$(js '.[0].num_ports')" 1
	ok -j -p dev show "$dev0" && {
		[ "$(wc -l < "$T/out")" -gt 5 ] || fail "-j -p dev show: not indented"
		jq -c . "$T/out" > "$T/pretty"
		"$SACRED" -j dev show "$dev0" | cmp -s - "$T/pretty" ||
			fail "-j -p dev show: not the same document as -j"
	}
	err 1 'No such device: no such RDMA device' dev show nosuch0
}

# memory add, show (text, -j, -p, -d), set state/cap, del.
case_memory_round_trip() {
	local idx line want

	idx=$("$SACRED" -j dev show "$dev1" | jq '.[0].ifindex')
	ok memory add dev "$dev1" port 7581 id 7581 cap 2m addr "$addr1" || return
	line="7581: dev $dev1 ibport 1 addr $addr1 port 7581 state up cap 2MiB used 0 regions 0"
	expect "memory add prints" "$(cat "$T/out")" "$line"
	want="{\"id\":7581,\"ifindex\":$idx,\"ifname\":\"$dev1\",\"ibport\":1,\"addr\":\"$addr1\",\"port\":7581,\"state\":\"up\",\"cap\":2097152,\"used\":0,\"regions\":0,\"keyed\":false}"
	ok -j memory show && expect "-j memory show: 7581" "$(js '.[] | select(.id == 7581)')" "$want"
	ok memory show 7581 && expect "memory show 7581" "$(cat "$T/out")" "$line"
	ok memory show && { grep -qxF "$line" "$T/out" || fail "memory show: no '$line'"; }
	ok mem sh id 7581 && expect "mem sh id 7581" "$(cat "$T/out")" "$line"
	# -d adds the objects and the module's own bytes (struct sizes vary).
	if ok -d memory show 7581 &&
	   ! grep -qxE "7581: dev $dev1 ifindex $idx ibport 1 addr $addr1 port 7581 state up cap 2MiB used 0 regions 0 peers 0 conns 0 mrs 0 mr-pages 0 meta [1-9][0-9]*([KMG]iB)?" "$T/out"; then
		fail "-d memory show 7581"
		show_io
	fi
	ok -d -j memory show 7581 &&
		expect "-d -j memory show 7581" "$(js '.[0] | [.peers, .conns, .mrs, .mr_pages, (.meta > 0)] | map(tostring) | join(" ")' | tr -d '"')" "0 0 0 0 true"
	ok -j -p memory show 7581 && {
		[ "$(wc -l < "$T/out")" -gt 10 ] || fail "-j -p memory show: not indented"
		expect "-j -p memory show 7581" "$(js '.[0]')" "$want"
	}
	ok -j memory add dev "$dev0" port 0 id 7582 && {
		expect "-j memory add: defaults" \
			"$(js '.[0] | [.id, .ifname, .ibport, .addr, .state, .cap, .used, .regions, .keyed] | map(tostring) | join(" ")' | tr -d '"')" \
			"7582 $dev0 1 $addr0 up 1073741824 0 0 false"
		[ "$(js '.[0].port')" -gt 0 ] || fail "port 0: no port was chosen"
	}

	ok memory set 7581 state down &&
		expect "set state down prints" "$(cat "$T/out")" "${line/state up/state down}"
	ok -j memory show 7581 && expect "state after down" "$(js '.[0].state')" '"down"'
	ok memory set id 7581 state up &&
		expect "set state up prints" "$(cat "$T/out")" "$line"
	ok -j memory show 7581 && expect "state after up" "$(js '.[0].state')" '"up"'
	ok -j memory show i 7581 && expect "show i 7581" "$(js '.[0].id')" 7581
	ok memory set 7581 cap 0x400000 && {
		ok -j memory show 7581 && expect "cap after set" "$(js '.[0].cap')" 4194304
	}
	# Abbreviated keywords, both at once.
	ok -j mem set 7581 st down ca 3m && {
		expect "-j set st down ca 3m" "$(js '.[0] | [.state, .cap] | map(tostring) | join(" ")' | tr -d '"')" "down 3145728"
		ok -j memory show 7581 && expect "after st down ca 3m" "$(js '.[0] | [.state, .cap] | map(tostring) | join(" ")' | tr -d '"')" "down 3145728"
	}

	ok memory del 7581 && expect "memory del prints" "$(cat "$T/out")" ""
	ok memory delete id 7582
	ok -j memory show && expect "instances left" "$(js '[.[] | select(.id == 7581 or .id == 7582)] | length')" 0
	err 1 'No such file or directory: no such memory instance' memory show 7581
	err 1 'no such memory instance' memory del 7581
}

# memory add/set key KEYFILE, key none: "keyed" follows; memory key.
case_memory_key() {
	head -c 32 /dev/urandom > "$T/key32"
	head -c 8 /dev/urandom > "$T/key8"
	head -c 65 /dev/urandom > "$T/key65"
	ok memory add dev "$dev0" port 7583 id 7583 key "$T/key32" || return
	case "$(cat "$T/out")" in
	*" keyed") ;;
	*) fail "memory add key: line does not end with keyed" ;;
	esac
	ok -j memory show 7583 && expect "keyed after add key" "$(js '.[0].keyed')" true
	ok -j memory set 7583 key none && expect "set key none prints" "$(js '.[0].keyed')" false
	ok memory show 7583 && case "$(cat "$T/out")" in
		*keyed*) fail "memory show: keyed after key none" ;;
		esac
	ok memory set 7583 key "$T/key32"
	ok -j memory show 7583 && expect "keyed after set key" "$(js '.[0].keyed')" true
	err 255 "key file \"$T/key8\" must hold 16 to 64 bytes" memory set 7583 key "$T/key8"
	err 255 "key file \"$T/key65\" must hold 16 to 64 bytes" memory set 7583 key "$T/key65"
	err 255 "cannot read key file \"$T/nokey\"" memory set 7583 key "$T/nokey"
	ok -j memory show 7583 && expect "keyed after refused keys" "$(js '.[0].keyed')" true
	ok memory set 7583 key none
	ok -j memory show 7583 && expect "keyed after key none" "$(js '.[0].keyed')" false
	ok memory del 7583

	# memory key: process PID's key from the master key, raw, on stdout.
	ok memory key "$T/key32" pid 1100 || return
	expect "memory key: bytes" "$(wc -c < "$T/out")" 32
	cp "$T/out" "$T/pkey"
	ok mem k "$T/key32" p 1100 && { cmp -s "$T/out" "$T/pkey" || fail "memory key: not the same key twice"; }
	ok memory key "$T/key32" pid 1101 && { cmp -s "$T/out" "$T/pkey" && fail "memory key: pid 1101 got pid 1100's key"; }
	if command -v openssl > /dev/null && command -v xxd > /dev/null; then
		# HMAC-SHA256(master, "sacred-process-key" || le32 pid), the uapi's Identity
		expect "memory key: HMAC-SHA256" "$(xxd -p -c 64 "$T/pkey")" \
			"$( (printf 'sacred-process-key'; printf '\x4c\x04\x00\x00') |
			    openssl dgst -sha256 -mac HMAC -macopt "hexkey:$(xxd -p -c 256 "$T/key32")" -binary |
			    xxd -p -c 64)"
	fi
	err 255 'invalid pid "x" (0-4294967295)' memory key "$T/key32" pid x
	err 255 'usage: memory key KEYFILE pid PID' memory key "$T/key32"
	err 255 "key file \"$T/key8\" must hold 16 to 64 bytes" memory key "$T/key8" pid 1
	rm -f "$T"/key* "$T/pkey"
}

# memory errors: the kernel's refusals (1, extack) and bad numbers (255).
case_memory_errors() {
	ok memory add dev "$dev0" port 7584 id 7584 cap 64k || return
	err 1 'File exists: memory instance id in use' memory add dev "$dev0" port 7585 id 7584
	err 1 'No such device: no such RDMA device' memory add dev nosuch0 port 7585 id 7585
	err 1 'Invalid argument: no such port on this device' memory add dev "$dev0" ibport 2 port 7585 id 7585
	err 1 'Cannot assign requested address: the address does not belong to this device and port' \
		memory add dev "$dev1" addr "$addr0" port 7585 id 7585
	err 255 'invalid port "65536" (0-65535)' memory add dev "$dev0" port 65536
	# Options may follow the object: a negative number is one.
	err 255 'unknown option "-1"' memory add dev "$dev0" port -1
	err 255 'invalid port "7x"' memory add dev "$dev0" port 7x
	err 255 'invalid id "abc"' memory add dev "$dev0" port 7585 id abc
	err 255 'invalid id "4294967295" (0-4294967294)' memory add dev "$dev0" port 7585 id 4294967295
	err 255 'invalid ibport "256" (1-255)' memory add dev "$dev0" port 7585 ibport 256
	err 255 'invalid cap "0"' memory add dev "$dev0" port 7585 cap 0
	err 255 'invalid cap "12q"' memory add dev "$dev0" port 7585 cap 12q
	err 255 'invalid address "300.1.1.1"' memory add dev "$dev0" port 7585 addr 300.1.1.1
	err 255 '"port" is required' memory add dev "$dev0"
	err 255 '"dev" is required' memory add port 7585
	err 255 '"port" needs a value' memory add dev "$dev0" port
	err 255 'invalid id "abc"' memory show abc
	err 255 'memory instance ID expected' memory del
	err 1 'no such memory instance' memory set "$NO_MEM" state down
	# A cap below what the regions use.
	ok region add mem 7584 size 32k || return
	err 1 'Device or resource busy: cap below the memory its regions use' memory set 7584 cap 16k
	# With a key too: refused as a whole, the key not set either.
	head -c 32 /dev/urandom > "$T/key32c"
	err 1 'Device or resource busy: cap below the memory its regions use' memory set 7584 key "$T/key32c" cap 16k
	ok -j memory show 7584 && expect "keyed after a refused key and cap" "$(js '.[0].keyed')" false
	rm -f "$T/key32c"
	err 1 'No space left on device: region would exceed the instance' region add mem 7584 size 64k
	ok -j memory show 7584 &&
		expect "7584 after refused cap" "$(js '.[0] | [.cap, .used, .regions] | map(tostring) | join(" ")' | tr -d '"')" "65536 32768 1"
	err 255 'invalid state "sideways" (up or down)' memory set 7584 state sideways
	err 255 'invalid cap "0"' memory set 7584 cap 0
	err 255 'nothing to set' memory set 7584
	ok -j memory show &&
		expect "instances after the errors" "$(js '[.[] | select(.id >= 7581 and .id <= 7599) | .id] | map(tostring) | join(",")' | tr -d '"')" 7584
	ok memory del 7584
}

# region add with every policy and size form, show in every form, del.
case_region_round_trip() {
	local i spec size policy pretty want

	ok memory add dev "$dev0" port 7585 id 7585 cap 16m || return
	i=0
	for spec in "4096 static 4KiB" "8k exclusive-writer 8KiB" \
		    "64KiB swmr 64KiB" "0x10000 revoke-only 64KiB" \
		    "1m fenced 1MiB"; do
		read -r size policy pretty <<< "$spec"
		ok region add mem 7585 size "$size" policy "$policy" &&
			expect "region add size $size policy $policy" "$(cat "$T/out")" \
				"7585/$i: size $pretty policy $policy epoch 0"
		i=$((i + 1))
	done
	ok -j region add memory 7585 size 2M id 7 && {
		want='[{"mem":7585,"id":7,"size":2097152,"policy":"static","epoch":0}]'
		expect "-j region add" "$(js .)" "$want"
	}
	ok -j region show mem 7585 && {
		expect "ids" "$(js '[.[].id] | map(tostring) | join(",")' | tr -d '"')" "0,1,2,3,4,7"
		expect "sizes" "$(js '[.[].size] | map(tostring) | join(",")' | tr -d '"')" \
			"4096,8192,65536,65536,1048576,2097152"
		expect "policies" "$(js '[.[].policy] | join(",")' | tr -d '"')" \
			"static,exclusive-writer,swmr,revoke-only,fenced,static"
		expect "epochs" "$(js '[.[].epoch] | map(tostring) | join(",")' | tr -d '"')" "0,0,0,0,0,0"
	}
	ok -j memory show 7585 &&
		expect "memory used and regions" "$(js '.[0] | [.used, .regions] | map(tostring) | join(" ")' | tr -d '"')" \
			"$((4096 + 8192 + 65536 + 65536 + 1048576 + 2097152)) 6"
	ok region show mem 7585 || return
	cat > "$T/want" <<-EOF
	7585/0: size 4KiB policy static epoch 0
	7585/1: size 8KiB policy exclusive-writer epoch 0
	7585/2: size 64KiB policy swmr epoch 0
	7585/3: size 64KiB policy revoke-only epoch 0
	7585/4: size 1MiB policy fenced epoch 0
	7585/7: size 2MiB policy static epoch 0
	EOF
	cmp -s "$T/out" "$T/want" || { fail "region show mem 7585: not the regions made"; show_io; }
	cp "$T/out" "$T/regions"
	ok region show 7585 && { cmp -s "$T/out" "$T/regions" || fail "region show 7585 differs from show mem 7585"; }
	ok reg && { grep -qxF "7585/4: size 1MiB policy fenced epoch 0" "$T/out" || fail "reg (all): 7585/4 missing"; }
	ok region show 7585/4 &&
		expect "region show 7585/4" "$(cat "$T/out")" "7585/4: size 1MiB policy fenced epoch 0"
	ok region show mem 7585 id 4 &&
		expect "region show mem 7585 id 4" "$(cat "$T/out")" "7585/4: size 1MiB policy fenced epoch 0"
	ok -j region show 7585/4 &&
		expect "-j region show 7585/4" "$(js .)" '[{"mem":7585,"id":4,"size":1048576,"policy":"fenced","epoch":0}]'
	if ok -d region show 7585/4 &&
	   ! grep -qxE "7585/4: size 1MiB policy fenced epoch 0 chunks [1-9][0-9]* raced 0 tag 0x[0-9a-f]+ ballot 0" "$T/out"; then
		fail "-d region show 7585/4"
		show_io
	fi
	ok -d -j region show mem 7585 && {
		expect "-d -j: every ACL empty" "$(js '[.[].acl | length] | add')" 0
		expect "-d -j: chunks" "$(js '[.[] | select(.chunks < 1)] | length')" 0
	}
	# A printed size is accepted back.
	ok region add mem 7585 size "$(awk '$1 == "7585/4:" { print $3 }' "$T/regions")" id 8 &&
		expect "size printed and taken back" "$(cat "$T/out")" "7585/8: size 1MiB policy static epoch 0"
	ok region del 7585/0 && expect "region del prints" "$(cat "$T/out")" ""
	ok region delete mem 7585 id 7
	ok region del 7585/8
	ok -j region show mem 7585 &&
		expect "ids after del" "$(js '[.[].id] | map(tostring) | join(",")' | tr -d '"')" "1,2,3,4"
	ok -j memory show 7585 &&
		expect "used after del" "$(js '.[0] | [.used, .regions] | map(tostring) | join(" ")' | tr -d '"')" \
			"$((8192 + 65536 + 65536 + 1048576)) 4"
	ok memory del 7585
	ok -j region show && expect "regions of a deleted instance" "$(js '[.[] | select(.mem == 7585)] | length')" 0
}

# region set acl: PID:ACCESS lists, none, ""; show -d in text and JSON.
case_region_acl() {
	local e0 e1 chunks acl

	ok memory add dev "$dev0" port 7586 id 7586 || return
	ok region add mem 7586 size 64k policy exclusive-writer id 1 tag 7586 || return
	ok region add mem 7586 size 4k policy static id 2 || return
	e0=$(region_json 7586/1 | jq '.epoch')
	ok region set 7586/1 acl 1:rw,2:rw,3:r && expect "region set prints" "$(cat "$T/out")" ""
	expect "exclusive-writer ACL" "$(acl_of 7586/1)" "1:rw:r 2:rw:r 3:r:r"
	e1=$(region_json 7586/1 | jq '.epoch')
	chunks=$(region_json 7586/1 | jq '.chunks')
	[ "$e1" -gt "$e0" ] || fail "epoch not bumped by the ACL: $e0 -> $e1"
	ok -d region show 7586/1 || return
	cat > "$T/want" <<-EOF
	7586/1: size 64KiB policy exclusive-writer epoch $e1 chunks $chunks raced 0 tag 0x1da2 ballot 0
	    pid 1 max rw cur r
	    pid 2 max rw cur r
	    pid 3 max r cur r
	EOF
	cmp -s "$T/out" "$T/want" || { fail "-d region show 7586/1"; show_io; }
	# Static: what the ACL says is held; shown ordered by pid.
	ok region set mem 7586 id 2 acl 20:r,10:rwa,30:none
	expect "static ACL" "$(acl_of 7586/2)" "10:rwa:rwa 20:r:r 30:none:none"
	ok -d -j region show mem 7586 &&
		expect "-d -j region show mem 7586" "$(js '[.[] | "\(.id):\(.acl | length)"] | join(",")' | tr -d '"')" "1:3,2:3"
	ok -d region show 7586 && {
		expect "-d region show 7586: lines" "$(wc -l < "$T/out")" 8
		grep -qx '    pid 10 max rwa cur rwa' "$T/out" || fail "-d region show 7586: pid 10"
	}
	# Replacing: 1 stays within its new maximum, 3 leaves.
	ok region set 7586/1 acl 1:r,2:rw
	expect "ACL replaced" "$(acl_of 7586/1)" "1:r:r 2:rw:r"
	ok region set 7586/2 acl none
	expect "acl none" "$(acl_of 7586/2)" ""
	ok -d -j region show 7586/2 && expect "acl none in JSON" "$(js '.[0].acl')" "[]"
	ok region set 7586/1 acl ""
	expect "acl \"\"" "$(acl_of 7586/1)" ""
	# The most the kernel takes: 1024 processes; "show -d" makes room
	# for 32 first and must grow to fit them all.
	acl=$(seq 1 1025 | sed 's/$/:r/' | paste -sd,)
	err 1 'Argument list too long: too many ACL entries (max 1024)' region set 7586/2 acl "$acl"
	ok region set 7586/2 acl "${acl%,1025:r}"
	ok -d -j region show 7586/2 &&
		expect "1024 entries" "$(js '.[0].acl | [length, .[0].pid, .[1023].pid, ([.[] | select(.cur != "r")] | length)] | map(tostring) | join(" ")' | tr -d '"')" "1024 1 1024 0"
	ok -d region show 7586 && expect "-d region show 7586: lines" "$(wc -l < "$T/out")" 1026
	ok memory del 7586
}

# region errors: sizes, policies, swmr writers, unknown regions.
case_region_errors() {
	ok memory add dev "$dev0" port 7587 id 7587 cap 1m || return
	ok region add mem 7587 size 4k policy swmr id 1 || return
	err 1 'Invalid argument: size must be a non-zero multiple of 4096' region add mem 7587 size 4097
	err 1 'size must be a non-zero multiple of 4096' region add mem 7587 size 6k
	err 1 'No space left on device: region would exceed the instance' region add mem 7587 size 2m
	err 255 'invalid size "0"' region add mem 7587 size 0
	err 255 'invalid size "4x"' region add mem 7587 size 4x
	err 255 'invalid policy "bogus" (static, exclusive-writer, swmr, revoke-only, fenced, bpf)' \
		region add mem 7587 size 4k policy bogus
	err 1 'File exists: region id in use' region add mem 7587 size 4k id 1
	err 1 'No such file or directory: no such memory instance' region add mem "$NO_MEM" size 4k
	err 255 '"mem" is required' region add size 4k
	err 255 '"size" is required' region add mem 7587
	err 255 'invalid region id "-" (0-4294967294)' region add mem 7587 size 4k id -
	err 255 'invalid memory instance id "4294967295"' region add mem 4294967295 size 4k
	# swmr: one writer at most; a refused ACL changes nothing.
	err 1 'Invalid argument: an swmr region has at most one writer' region set 7587/1 acl 1:rw,2:rw
	expect "ACL after the refusal" "$(acl_of 7587/1)" ""
	ok region set 7587/1 acl 1:rw,2:r
	err 1 'Invalid argument: process listed twice in the ACL' region set 7587/1 acl 1:rw,1:r
	err 1 'an swmr region has at most one writer' region set 7587/1 acl 1:rw,2:rw,3:r
	expect "ACL after the refusals" "$(acl_of 7587/1)" "1:rw:rw 2:r:r"
	err 255 'invalid ACL entry "1:xx"' region set 7587/1 acl 1:xx
	err 255 'invalid ACL entry "x:r"' region set 7587/1 acl 1:r,x:r
	err 255 'invalid ACL entry ""' region set 7587/1 acl 1:r,
	err 255 'invalid ACL entry "4294967296:r"' region set 7587/1 acl 4294967296:r
	err 255 'invalid size "99999999999999999999"' region add mem 7587 size 99999999999999999999
	err 1 'size must be a non-zero multiple of 4096, at most 16 GiB' region add mem 7587 size 17g
	err 255 '"acl", "policy" or "prog" is required' region set 7587/1
	err 255 'invalid region "7587"' region set 7587 acl none
	# Regions and instances that do not exist.
	err 1 'No such file or directory: no such region in this memory instance' region show 7587/9
	err 1 'no such region in this memory instance' region show mem 7587 id 9
	err 1 'no such region in this memory instance' region del 7587/9
	err 1 'no such region in this memory instance' region set 7587/9 acl none
	err 1 'no such region in this memory instance' -d -j region show 7587/9
	err 1 'no such memory instance' region show "$NO_MEM"
	err 1 'no such memory instance' -j region show mem "$NO_MEM"
	err 255 'invalid region "7587/x"' region show 7587/x
	err 255 '"id" is required' region del 7587
	ok -j region show mem 7587 && expect "regions after the errors" "$(js '[.[].id] | map(tostring) | join(",")' | tr -d '"')" 1
	ok memory del 7587
}

# region add tag: given (hex, decimal, 0, the largest) or random; shown
# with -d; never changed.
case_region_tag() {
	local t1 t2

	ok memory add dev "$dev0" port 7593 id 7593 || return
	ok region add mem 7593 size 4k id 1 tag 0xfeedface00000001 || return
	ok -d region show 7593/1 &&
		expect "-d region show: the tag given" "$(cat "$T/out")" \
			"7593/1: size 4KiB policy static epoch 0 chunks 1 raced 0 tag 0xfeedface00000001 ballot 0"
	ok -j -d region add mem 7593 size 4k id 2 tag 4660 &&
		expect "-j -d region add: tag" "$(js '.[0].tag')" '"0x1234"'
	ok region add mem 7593 size 4k id 3 tag 0
	ok region add mem 7593 size 4k id 4 tag 18446744073709551615
	ok -d region show 7593/4 &&
		expect "the largest tag" "$(grep -o 'tag 0x[0-9a-f]*' "$T/out")" "tag 0xffffffffffffffff"
	# JSON carries the tag as a string, every bit of it.
	ok -j -d region show 7593/4 &&
		expect "-j: the largest tag" "$(js '.[0].tag')" '"0xffffffffffffffff"'
	# A tag shown is taken back.
	ok region add mem 7593 size 4k id 6 tag "$(region_json 7593/4 | jq -r .tag)" &&
		expect "tag taken back" "$(region_json 7593/6 | jq -r .tag)" 0xffffffffffffffff
	ok -d region show 7593/3 &&
		expect "tag 0" "$(grep -o 'tag [0-9a-fx]*' "$T/out")" "tag 0x0"
	# No tag: a random one each time, even for the same id again.
	ok region add mem 7593 size 4k id 5 || return
	t1=$(region_json 7593/5 | jq -r '.tag')
	ok region del 7593/5
	ok region add mem 7593 size 4k id 5 || return
	t2=$(region_json 7593/5 | jq -r '.tag')
	[ -n "$t1" ] && [ "$t1" != null ] && [ "$t1" != "$t2" ] ||
		fail "random tags of two incarnations of 7593/5: \"$t1\" \"$t2\""
	err 255 'invalid tag "x"' region add mem 7593 size 4k tag x
	err 255 'invalid tag "18446744073709551616"' region add mem 7593 size 4k tag 18446744073709551616
	err 255 'unknown argument "tag"' region set 7593/1 tag 5
	ok -d region show 7593/1 &&
		expect "tag after the errors" "$(grep -o 'tag 0x[0-9a-f]*' "$T/out")" "tag 0xfeedface00000001"
	ok memory del 7593
}

# region policy bpf: a program from an object file or bpffs, shown with
# -d, replaced, removed; and every way to name a wrong one.
case_region_bpf() {
	local pol=$top/examples/policies pin=/sys/fs/bpf/sacred_cli_ballot
	local p1 p2

	ok memory add dev "$dev0" port 7594 id 7594 || return
	ok region add mem 7594 size 4k policy bpf prog "$pol/ballot.bpf.o" id 1 tag 0x7594 &&
		expect "region add policy bpf" "$(cat "$T/out")" \
			"7594/1: size 4KiB policy bpf epoch 0"
	expect "policy bpf with a tag" "$(region_json 7594/1 | jq -r '.tag')" 0x7594
	p1=$(region_json 7594/1 | jq '.prog')
	[ "${p1:-0}" != null ] && [ "${p1:-0}" -gt 0 ] ||
		fail "-d -j region show: no program id for a bpf region (\"$p1\")"
	ok -d region show 7594/1 &&
		expect "-d region show: the program's id" \
			"$(grep -o ' prog [0-9]*$' "$T/out")" " prog $p1"
	# Another program replaces it; with an ACL, in one command.
	ok region set 7594/1 acl 1:rw,2:r policy bpf prog "$pol/lease.bpf.o" section socket
	p2=$(region_json 7594/1 | jq '.prog')
	[ "$p2" != "$p1" ] || fail "region set prog: program id still $p1"
	expect "ACL set with the program" "$(acl_of 7594/1)" "1:rw:r 2:r:r"
	ok region set 7594/1 prog "$pol/allowlist.bpf.o"
	[ "$(region_json 7594/1 | jq '.prog')" != "$p2" ] ||
		fail "region set prog alone: program not replaced"
	# From bpffs.
	if ! mountpoint -q /sys/fs/bpf; then
		mount -t bpf bpf /sys/fs/bpf || fail "cannot mount bpffs"
	fi
	rm -f "$pin"
	if bpftool prog load "$pol/ballot.bpf.o" "$pin" type socket; then
		ok region set 7594/1 policy bpf prog pinned "$pin" &&
			expect "prog pinned: the pinned program" \
				"$(region_json 7594/1 | jq '.prog')" \
				"$(bpftool -j prog show pinned "$pin" | jq '.id')"
		rm -f "$pin"
	else
		fail "bpftool prog load $pol/ballot.bpf.o failed"
	fi
	# Back to a built-in policy: the program goes.
	ok region set 7594/1 policy fenced
	ok -d -j region show 7594/1 &&
		expect "policy fenced, no program" "$(js '.[0] | [.policy, .prog] | map(tostring) | join(" ")' | tr -d '"')" "fenced null"
	err 255 'policy bpf needs "prog"' region add mem 7594 size 4k policy bpf
	err 255 'policy bpf needs "prog"' region set 7594/1 policy bpf
	err 255 '"prog" is for policy bpf' region add mem 7594 size 4k policy static prog "$pol/ballot.bpf.o"
	err 255 '"section" goes with "prog FILE.o"' region set 7594/1 section socket
	err 255 '"prog pinned" needs a path' region set 7594/1 prog pinned
	err 1 'cannot open the object file' region add mem 7594 size 4k policy bpf prog /nonexistent.bpf.o
	err 1 'no program in section "nope"' region add mem 7594 size 4k policy bpf prog "$pol/ballot.bpf.o" section nope
	err 1 'cannot open the pinned program' region set 7594/1 policy bpf prog pinned /sys/fs/bpf/sacred_nope
	err 1 '7594/1 has policy fenced: "prog" alone replaces the program of a bpf region' region set 7594/1 prog "$pol/ballot.bpf.o"
	ok region add mem 7594 size 4k policy static id 2
	err 1 'the policy changes at runtime only among' region set 7594/2 policy fenced
	ok memory del 7594
}

# perm set: moves access as each policy says; refusals change nothing.
case_perm_set() {
	local before e0 e1

	ok memory add dev "$dev0" port 7588 id 7588 || return
	ok region add mem 7588 size 64k policy exclusive-writer id 1 || return
	ok region set 7588/1 acl 1:rw,2:rw,3:r || return
	e0=$(region_json 7588/1 | jq '.epoch')
	ok perm set 7588/1 pid 1 access rw && expect "perm set prints" "$(cat "$T/out")" ""
	expect "pid 1 takes write" "$(acl_of 7588/1)" "1:rw:rw 2:rw:r 3:r:r"
	e1=$(region_json 7588/1 | jq '.epoch')
	[ "$e1" -gt "$e0" ] || fail "epoch not bumped by perm set: $e0 -> $e1"
	# Another writer: the first is demoted first.
	ok permission set mem 7588 id 1 pid 2 access rw
	expect "pid 2 takes write from 1" "$(acl_of 7588/1)" "1:rw:r 2:rw:rw 3:r:r"
	# Refused: beyond the ACL, or a process not in it. Nothing moves.
	before=$(region_json 7588/1)
	err 1 'Operation not permitted: the ACL does not allow that access to this process' \
		perm set 7588/1 pid 3 access rw
	err 1 'the ACL does not allow that access to this process' perm set 7588/1 pid 9 access r
	expect "region after the refusals" "$(region_json 7588/1)" "$before"
	ok perm set 7588/1 pid 2 access r
	expect "pid 2 gives write back" "$(acl_of 7588/1)" "1:rw:r 2:rw:r 3:r:r"

	# fenced: a grant above the highest ballot, not below it.
	ok region add mem 7588 size 4k policy fenced id 2 && ok region set 7588/2 acl 1:rw,2:rw
	ok perm set 7588/2 pid 1 access rw ballot 5
	expect "fenced: pid 1 at ballot 5" "$(region_json 7588/2 | jq -c '[.ballot, [.acl[].cur]]')" '[5,["rw","r"]]'
	before=$(region_json 7588/2)
	err 1 'Operation not permitted: fenced region: the ballot is not above the highest seen' \
		perm set 7588/2 pid 2 access rw ballot 4
	expect "fenced after the refusal" "$(region_json 7588/2)" "$before"
	ok perm set 7588/2 pid 2 access rw ballot 6
	expect "fenced: pid 2 at ballot 6" "$(region_json 7588/2 | jq -c '[.ballot, [.acl[].cur]]')" '[6,["r","rw"]]'
	if ok -d region show 7588/2 &&
	   ! grep -qE '^7588/2: size 4KiB policy fenced epoch [0-9]+ chunks 1 raced 0 tag 0x[0-9a-f]+ ballot 6$' "$T/out"; then
		fail "-d region show 7588/2: no ballot 6"
		show_io
	fi

	# swmr and static refuse every change; revoke-only revokes only.
	ok region add mem 7588 size 4k policy swmr id 3 && ok region set 7588/3 acl 1:rw,2:r
	err 1 'Operation not permitted: swmr region' perm set 7588/3 pid 2 access rw
	ok region add mem 7588 size 4k policy static id 4 && ok region set 7588/4 acl 1:rw
	err 1 'Operation not permitted: static region' perm set 7588/4 pid 1 access r
	expect "static after the refusal" "$(acl_of 7588/4)" "1:rw:rw"
	ok region add mem 7588 size 4k policy revoke-only id 5 && ok region set 7588/5 acl 1:rw,2:r
	expect "revoke-only before" "$(acl_of 7588/5)" "1:rw:rw 2:r:r"
	err 1 'Operation not permitted: revoke-only region: nothing is ever granted' \
		perm set 7588/5 pid 2 access rw
	err 255 'region 7588/5 is revoke-only: "target" names the process to revoke' \
		perm set 7588/5 pid 2 access none
	expect "revoke-only: no target, no change" "$(acl_of 7588/5)" "1:rw:rw 2:r:r"
	ok perm set 7588/5 pid 2 access none target 1
	expect "revoke-only: 2 revoked 1's write" "$(acl_of 7588/5)" "1:rw:r 2:r:r"

	# The command line.
	err 255 '"access" is required' perm set 7588/1 pid 2
	err 255 '"pid" is required' perm set 7588/1 access rw
	err 255 '"mem" is required' perm set id 1 pid 2 access rw
	err 255 'invalid access "rx" (none, r, rw, rwa)' perm set 7588/1 pid 2 access rx
	err 255 'invalid ballot "x"' perm set 7588/2 pid 2 access rw ballot x
	err 255 'invalid ballot "18446744073709551616"' perm set 7588/2 pid 2 access rw ballot 18446744073709551616
	err 255 'invalid region "7588"' perm set 7588 pid 2 access rw
	err 1 'No such file or directory: no such region in this memory instance' perm set 7588/9 pid 1 access rw
	err 1 'no such memory instance' perm set "$NO_MEM/1" pid 1 access rw
	ok memory del 7588
}

# peer show before any process connected: empty, and errors for one.
case_peer_none() {
	ok memory add dev "$dev0" port 7589 id 7589 || return
	ok peer show mem 7589 && expect "peer show mem 7589" "$(cat "$T/out")" ""
	ok peer show 7589 && expect "peer show 7589" "$(cat "$T/out")" ""
	ok peer && { grep -q '^7589/' "$T/out" && fail "peer (all): lists a peer of 7589"; }
	ok -j peer show mem 7589 && expect "-j peer show mem 7589" "$(cat "$T/out")" "[]"
	ok -j peer show && expect "-j peer show: 7589" "$(js '[.[] | select(.mem == 7589)] | length')" 0
	err 1 'process 1 is not known to memory instance 7589' peer show 7589/1
	err 1 'process 1 is not known to memory instance 7589' -j peer show mem 7589 pid 1
	err 1 'no such memory instance' peer show "$NO_MEM"
	err 255 'invalid peer "7589/x"' peer show 7589/x
	err 255 '"pid" needs "mem"' peer show pid 1
	ok memory del 7589
}

# peer show with processes that connected: examples/lose_permission runs
# processes 1 and 2 on an exclusive-writer region (2 takes write from 1,
# which is fenced and reconnects).
case_peer_connected() {
	local i

	if [ ! -x "$LOSE_PERMISSION" ]; then
		fail "$LOSE_PERMISSION is not built (make examples)"
		return
	fi
	ok memory add dev "$dev0" port 7590 id 7590 || return
	ok region add mem 7590 size 64k policy exclusive-writer id 3 || return
	ok region set 7590/3 acl 1:rw,2:rw || return
	if ! timeout -k 5 "$tmo" "$LOSE_PERMISSION" "$addr0" 7590 3 > "$T/lp" 2>&1; then
		fail "lose_permission failed"
		sed 's/^/#     /' "$T/lp"
		return
	fi
	expect "after lose_permission" "$(acl_of 7590/3)" "1:rw:r 2:rw:rw"
	# Its connections are gone; the kernel may take a moment to see it.
	for i in $(seq 50); do
		run -j peer show mem 7590
		[ "$rc" -eq 0 ] && [ "$(js '[.[] | select(.connected)] | length')" = 0 ] && break
		sleep 0.1
	done
	ok -j peer show mem 7590 || return
	expect "peers" "$(js '[.[] | "\(.mem)/\(.pid) connected \(.connected)"] | join(",")' | tr -d '"')" \
		"7590/1 connected false,7590/2 connected false"
	expect "pid 1: fenced once, connected twice, one MR" \
		"$(js '.[] | select(.pid == 1) | [.fences, .connects, .mrs, .refused] | map(tostring) | join(" ")' | tr -d '"')" "1 2 1 0"
	expect "pid 2: connected once, one MR" \
		"$(js '.[] | select(.pid == 2) | [.fences, .connects, .mrs, .refused] | map(tostring) | join(" ")' | tr -d '"')" "0 1 1 0"
	# 2 took write from 1: never answered in the CQ handler. 1 took it
	# from nobody: there, unless the instance's mutex was held just then.
	expect "pid 2: no change in the CQ handler" "$(js '.[] | select(.pid == 2) | .cq_changes')" 0
	[ "$(js '.[] | select(.pid == 1) | .cq_changes')" -le 1 ] || fail "pid 1: more than 1 change in the CQ handler"
	[ "$(js '.[] | select(.pid == 1) | .requests')" -ge 2 ] || fail "pid 1: fewer than 2 requests"
	[ "$(js '.[] | select(.pid == 2) | .requests')" -ge 1 ] || fail "pid 2: no request"
	if ok peer show 7590/2 &&
	   ! grep -qxE '7590/2: connected no requests [0-9]+ refused 0 fences 0 connects 1 mrs 1 raced 0 cq-changes 0' "$T/out"; then
		fail "peer show 7590/2"
		show_io
	fi
	ok -j peer show mem 7590 pid 1 &&
		expect "-j peer show mem 7590 pid 1" "$(js '[.[].pid] | map(tostring) | join(",")' | tr -d '"')" 1
	ok peer show mem 7590 && expect "peer show mem 7590: lines" "$(wc -l < "$T/out")" 2
	# Two processes known, none connected, an MR each over the region's
	# 64 KiB: 1 to 16 pages, as the region's chunks allow.
	ok -d -j memory show 7590 &&
		expect "-d -j memory show 7590" "$(js '.[0] | [.peers, .conns, .mrs, (.mr_pages >= 2 and .mr_pages <= 32)] | map(tostring) | join(" ")' | tr -d '"')" "2 0 2 true"
	err 1 'process 3 is not known to memory instance 7590' -j peer show 7590/3
	ok memory del 7590
}

# monitor: events of region add/set/del and perm set, in JSON lines and
# in text, filtered by instance; SIGTERM ends it with status 0.
case_monitor() {
	local mj mt st i line

	ok memory add dev "$dev0" port 7591 id 7591 || return
	ok memory add dev "$dev0" port 7592 id 7592 || return
	"$SACRED" -j monitor > "$T/mon.json" 2> "$T/mon.json.err" &
	mj=$!
	"$SACRED" monitor mem 7591 > "$T/mon.txt" 2> "$T/mon.txt.err" &
	mt=$!
	bg_pids="$bg_pids $mj $mt"
	# The monitors subscribe when they get there: change the cap of 7591
	# until both have seen it.
	for i in $(seq 100); do
		"$SACRED" memory set 7591 cap $((64 + i))m > /dev/null
		grep -q '"event":"mem set","id":7591' "$T/mon.json" &&
			grep -q '^\[mem set\] 7591:' "$T/mon.txt" && break
		sleep 0.2
	done
	[ "$i" -lt 100 ] || fail "the monitors printed no event in 20 s"

	ok region add mem 7591 size 4k policy exclusive-writer id 1
	ok region set 7591/1 acl 1:rw,2:rw
	ok perm set 7591/1 pid 1 access rw
	err 1 'the ACL does not allow' perm set 7591/1 pid 3 access rw
	ok memory set 7592 state down
	ok region del 7591/1
	wait_for "$T/mon.json" '"event":"region del","mem":7591,"id":1' 10 ||
		fail "-j monitor: no region del event"
	wait_for "$T/mon.txt" '^\[region del\] 7591/1:' 10 ||
		fail "monitor mem 7591: no region del event"
	kill -TERM "$mj" "$mt"
	wait "$mj"
	st=$?
	expect "-j monitor: exit status after SIGTERM" "$st" 0
	wait "$mt"
	st=$?
	expect "monitor mem 7591: exit status after SIGTERM" "$st" 0
	bg_pids=""
	[ -s "$T/mon.json.err" ] && fail "-j monitor: stderr '$(head -n 1 "$T/mon.json.err")'"
	[ -s "$T/mon.txt.err" ] && fail "monitor: stderr '$(head -n 1 "$T/mon.txt.err")'"

	# JSON lines: each line one object, with "event" first.
	while IFS= read -r line; do
		printf '%s\n' "$line" | jq -e 'type == "object" and (keys_unsorted[0] == "event")' > /dev/null 2>&1 ||
			fail "-j monitor: not a JSON object line: $line"
	done < "$T/mon.json"
	cp "$T/mon.json" "$T/out"
	expect "-j monitor: the events of 7591/1" \
		"$(jq -c 'select(.mem == 7591 and .id == 1) | [.event, .epoch, .pid, .access, .reason] | map(select(. != null))' "$T/mon.json" | paste -sd ' ')" \
		'["region new",0] ["region set",1] ["perm",2,1,"rw"] ["perm refused",2,3,"rw","not-member"] ["region del",2]'
	expect "-j monitor: region new" \
		"$(jq -c 'select(.event == "region new" and .mem == 7591)' "$T/mon.json")" \
		'{"event":"region new","mem":7591,"id":1,"size":4096,"policy":"exclusive-writer","epoch":0}'
	expect "-j monitor: 7592 down" \
		"$(jq -c 'select(.event == "mem set" and .id == 7592) | .state' "$T/mon.json")" '"down"'
	# Text, only instance 7591.
	grep -v '^\[mem set\] 7591:' "$T/mon.txt" > "$T/mon.txt.rest"
	cat > "$T/want" <<-EOF
	[region new] 7591/1: size 4KiB policy exclusive-writer epoch 0
	[region set] 7591/1: size 4KiB policy exclusive-writer epoch 1
	[perm] 7591/1: pid 1 access rw ballot 0 target 0 epoch 2
	[perm refused] 7591/1: pid 3 access rw ballot 0 target 0 epoch 2 reason not-member
	[region del] 7591/1: size 4KiB policy exclusive-writer epoch 2
	EOF
	if ! cmp -s "$T/mon.txt.rest" "$T/want"; then
		fail "monitor mem 7591: not the events of 7591/1"
		sed 's/^/#     /' "$T/mon.txt"
	fi
	ok memory del 7591
	ok memory del 7592
}

# Outside the initial network namespace: exit 2, the reason. Without
# CAP_NET_ADMIN: shows work, changes are refused with status 1.
case_namespace_privileges() {
	local st

	if command -v unshare > /dev/null; then
		unshare -n "$SACRED" dev show > "$T/out" 2> "$T/err"
		st=$?
		expect "dev show in a new netns: exit status" "$st" 2
		[ -s "$T/out" ] && fail "dev show in a new netns: printed on stdout"
		grep -q 'sacred.ko is loaded but its generic netlink family "sacred" is not visible here' "$T/err" ||
			{ fail "dev show in a new netns"; show_io; }
		timeout -k 5 "$tmo" unshare -n "$SACRED" -j monitor > "$T/out" 2> "$T/err"
		st=$?
		expect "monitor in a new netns: exit status" "$st" 2
		[ -s "$T/out" ] && fail "monitor in a new netns: printed on stdout"
		grep -q 'not visible here' "$T/err" ||
			{ fail "monitor in a new netns"; show_io; }
	else
		echo "# $case_name: unshare is not installed, namespace part skipped"
	fi
	if ! command -v setpriv > /dev/null; then
		echo "# $case_name: setpriv is not installed, privilege part skipped"
		return
	fi
	ok memory add dev "$dev0" port 7592 id 7592 || return
	ok region add mem 7592 size 4k policy exclusive-writer id 1 || return
	wrap=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	ok -j memory show 7592 && expect "memory show as nobody" "$(js '.[0].id')" 7592
	ok -d region show 7592/1
	ok peer show 7592
	ok dev show
	err 1 'memory add: Operation not permitted' memory add dev "$dev0" port 7581 id 7581
	err 1 'memory set: Operation not permitted' memory set 7592 state down
	err 1 'region add: Operation not permitted' region add mem 7592 size 4k
	err 1 'region set: Operation not permitted' region set 7592/1 acl 1:rw
	err 1 'perm set: Operation not permitted' perm set 7592/1 pid 1 access rw
	err 1 'memory del: Operation not permitted' memory del 7592
	wrap=()
	ok -j memory show 7592 && expect "7592 after nobody's tries" \
		"$(js '.[0] | [.state, .regions] | map(tostring) | join(" ")' | tr -d '"')" "up 1"
	ok memory del 7592
}

# -batch FILE and -force: one command a line, as ip -batch; the first
# failure stops the run (its exit status, "Command failed FILE:LINE"),
# -force goes on; continuation lines, quotes, comments; -j prints one
# JSON document per command; standard input as "-".
case_batch() {
	local i

	cat > "$T/batch" <<-EOF
	# made by -batch
	memory add dev $dev0 port 7593 id 7593 cap 4m

	region add mem 7593 size 4k \\
	    policy "exclusive-writer" id 1   # a comment
	region set 7593/1 acl '601:rw,602:r'
	region add mem 7593 size 64m id 2
	region add mem 7593 size 4k id 3
	EOF
	run -batch "$T/batch"
	expect "-batch stopped at the refused line: exit status" "$rc" 1
	expect "-batch: its stderr" "$(sed -n 2p "$T/err")" "Command failed $T/batch:7"
	grep -qF 'cap' "$T/err" || { fail "-batch: the refusal's reason missing"; show_io; }
	ok -j region show mem 7593 &&
		expect "-batch: the regions before the failure, none after" \
			"$(js '[.[].id] | map(tostring) | join(",")' | tr -d '"')" "1"
	expect "-batch: ACL set" "$(acl_of 7593/1)" "601:rw:r 602:r:r"
	ok region del 7593/1

	run -force -batch "$T/batch"
	expect "-force -batch: exit status of the first failure" "$rc" 1
	expect "-force -batch: failures" "$(grep -c '^Command failed ' "$T/err")" 2
	grep -qxF "Command failed $T/batch:2" "$T/err" ||
		{ fail "-force -batch: the duplicate memory not reported at line 2"; show_io; }
	ok -j region show mem 7593 &&
		expect "-force -batch: went on after the failures" \
			"$(js '[.[].id] | map(tostring) | join(",")' | tr -d '"')" "1,3"

	# -j: one JSON document per command; standard input.
	printf 'region show 7593/1\nregion show 7593/3\n' > "$T/batch2"
	run -j -batch - < "$T/batch2"
	expect "-j -batch -: exit status" "$rc" 0
	expect "-j -batch -: documents" "$(jq -c '.[0].id' < "$T/out" 2>&1 | paste -sd,)" "1,3"
	printf 'region show 7593/1\nregion show "7593/3\n' > "$T/batch3"
	run -batch "$T/batch3"
	expect "unterminated quote: exit status" "$rc" 255
	if ! grep -qF 'unterminated quote' "$T/err" ||
	   ! grep -qxF "Command failed $T/batch3:2" "$T/err"; then
		fail "unterminated quote: not said, or not at line 2"
		show_io
	fi

	# A backslash in a comment continues nothing; one on the last line
	# is an error; CR LF line ends are fine.
	printf 'region show 7593/1 # then \\\nregion show 7593/3\r\nregion show 7593/1 \\\n' > "$T/batch5"
	run -j -batch "$T/batch5"
	expect "missing continuation line: exit status" "$rc" 255
	expect "the commands before it ran" "$(jq -c '.[0].id' < "$T/out" 2>&1 | paste -sd,)" "1,3"
	if ! grep -qF 'missing continuation line' "$T/err" ||
	   ! grep -qxF "Command failed $T/batch5:3" "$T/err"; then
		fail "missing continuation line: not said, or not at line 3"
		show_io
	fi

	# A monitor in a batch runs until a signal, which ends the run.
	printf 'monitor mem 7593\nregion add mem 7593 size 4k id 99\n' > "$T/batch6"
	"$SACRED" -batch "$T/batch6" > "$T/bmon" 2> "$T/bmon.err" &
	i=$!
	bg_pids="$bg_pids $i"
	stop_monitor "$i" "$T/bmon" 7593 "monitor in a batch"
	ok -j region show mem 7593 &&
		expect "the line after the monitor did not run" \
			"$(js '[.[].id | select(. == 99)] | length')" 0

	err 255 '"-force" goes with "-batch"' -force memory show
	err 255 '"-batch" takes no command line' -batch "$T/batch2" memory show
	err 255 '"-batch" needs a file name' -batch
	err 1 'cannot open' -batch "$T/nosuch"
	# Many commands, one process: 200 regions in one run.
	for i in $(seq 10 209); do
		echo "region add mem 7593 size 4k id $i"
	done > "$T/batch4"
	ok -batch "$T/batch4" &&
		expect "-batch: 200 regions" "$(wc -l < "$T/out")" 200
	ok memory del 7593
}

# The CLI under valgrind: no invalid access, no leak. Starting a program
# under valgrind in the TCG guest costs about 14 s, so the paths are run
# as one forced batch (the commands share a process, so a per-command
# leak adds up and is found at exit) plus the monitor: a dump in JSON,
# pretty; an add; an ACL parsed into an array and a dump with ACLs grown
# to fit (-d); a kernel refusal with extack; a refused permission change;
# a usage error after an allocation; the peer kept out of a dump; an
# unknown command; then the monitor from start to SIGTERM.
case_valgrind() {
	local -a vg
	local f i

	if ! command -v valgrind > /dev/null; then
		skip="valgrind is not installed"
		return
	fi
	# shellcheck disable=SC2054 # commas inside valgrind's options
	vg=(valgrind -q --leak-check=full --show-leak-kinds=definite,indirect
	    --errors-for-leak-kinds=definite,indirect --error-exitcode=99
	    --log-file="$T/vg.%p")
	tmo=180
	{
		echo "dev show"
		echo "memory add dev $dev0 port 7592 id 7592 cap 4m"
		echo "region add mem 7592 size 64k policy fenced id 1"
		# 100 processes: more than "show -d" makes room for at first.
		echo "region set 7592/1 acl $(seq 1 100 | sed 's/$/:rw/' | paste -sd,)"
		echo "region show mem 7592"
		echo "memory add dev nosuch0 port 7581"
		echo "perm set 7592/1 pid 200 access rw ballot 2"
		echo "region set 7592/1 acl 1:r,2:x"
		echo "peer show 7592/9"
		echo "bogus"
		echo "region show 7592/1"
	} > "$T/vgbatch"
	wrap=("${vg[@]}")
	run -force -d -j -p -batch "$T/vgbatch"
	wrap=()
	expect "-force -batch under valgrind: exit status of the first failure" "$rc" 1
	expect "-force -batch under valgrind: failures" \
		"$(grep '^Command failed ' "$T/err" | sed 's/.*://' | paste -sd,)" "6,7,8,9,10"
	for f in 'no such RDMA device' 'the ACL does not allow that access' \
		 'invalid ACL entry "2:x"' 'process 9 is not known' \
		 'unknown object "bogus"'; do
		grep -qF -- "$f" "$T/err" ||
			{ fail "-force -batch under valgrind: stderr does not say '$f'"; show_io; }
	done
	# One JSON array per command that prints: dev show, memory add,
	# region add, region show mem, region show (region set prints none).
	expect "-force -batch under valgrind: documents" \
		"$(jq -s -c 'map(type)' < "$T/out" 2>&1)" \
		'["array","array","array","array","array"]'
	expect "-d region show under valgrind: ACL entries" \
		"$(jq -s -c '[(.[3][0].acl | length), (.[4][0].acl | length)]' < "$T/out" 2>&1)" "[100,100]"
	expect "dev show under valgrind: $dev0 listed" \
		"$(jq -s --arg d "$dev0" '[.[0][] | select(.ifname == $d)] | length' < "$T/out" 2>&1)" 1
	# The monitor, from start to SIGTERM.
	"${vg[@]}" "$SACRED" -j monitor mem 7592 > "$T/vgmon" 2> "$T/vgmon.err" &
	i=$!
	bg_pids="$bg_pids $i"
	stop_monitor "$i" "$T/vgmon" 7592 "monitor under valgrind"
	tmo=60
	for f in "$T"/vg.*; do
		[ -s "$f" ] || continue
		fail "valgrind: $(basename "$f"):"
		sed -n '1,30s/^/#     /p' "$f"
	done
	ok memory del 7592
}

# ------------------------------------------------------------------- main

cases=(
	"case_help|cli: -h, help and OBJECT help print the usage on stdout"
	"case_usage_errors|cli: unknown object, command, argument, option: exit 255, the word named, nothing on stdout"
	"case_version|cli: -V prints the version"
	"case_write_error|cli: a write error on stdout fails the command"
	"case_dev_show|cli: dev show lists the rxe devices, plain and -j, as rdma dev does"
	"case_memory_round_trip|cli: memory add/show/set/del round trip"
	"case_memory_key|cli: memory add/set key KEYFILE and key none, memory key derives a process key"
	"case_memory_errors|cli: memory errors: duplicate id, unknown dev, cap below use, bad numbers"
	"case_region_round_trip|cli: region add/show/del with every policy and size form"
	"case_region_acl|cli: region set acl and show -d"
	"case_region_errors|cli: region errors: sizes, swmr writers, unknown regions"
	"case_region_tag|cli: region add tag: given or random, shown with -d, fixed"
	"case_region_bpf|cli: region policy bpf: prog from a file or bpffs, replaced, removed, errors"
	"case_perm_set|cli: perm set moves access as each policy says, refusals change nothing"
	"case_peer_none|cli: peer show with no peers"
	"case_peer_connected|cli: peer show after lose_permission's processes connected"
	"case_monitor|cli: monitor prints region and perm events, JSON and text, until SIGTERM"
	"case_namespace_privileges|cli: another network namespace exits 2, no CAP_NET_ADMIN exits 1"
	"case_batch|cli: -batch runs a file of commands, stops at the first failure unless -force"
	"case_valgrind|cli: no invalid access or leak under valgrind"
)

echo "TAP version 13"
echo "1..${#cases[@]}"

missing=""
[ -x "$SACRED" ] || missing="$SACRED is not built (make tools)"
command -v jq > /dev/null || missing="jq is not installed (scripts/deps)"
[ -n "$dev1" ] && [ -n "$addr1" ] ||
	missing="fewer than two rxe devices (SACRED_RXE_DEVS, SACRED_RXE_ADDRS: run under scripts/vm-run)"
[ -z "$missing" ] && ! "$SACRED" dev show > /dev/null 2>&1 && missing="sacred.ko is not loaded"

# Leftovers of an earlier run that was killed are ours to remove.
[ -z "$missing" ] && for id in $MEM_IDS; do "$SACRED" memory del "$id" > /dev/null 2>&1; done

n=0
passed=0
failed=0
skipped=0
for c in "${cases[@]}"; do
	n=$((n + 1))
	case_name=${c#*|}
	if [ -n "${SACRED_CLI_CASES:-}" ] &&
	   [[ " $SACRED_CLI_CASES " != *" ${c%%|*} "* ]]; then
		echo "ok $n - $case_name # SKIP not in SACRED_CLI_CASES"
		skipped=$((skipped + 1))
		continue
	fi
	if [ -n "$missing" ]; then
		echo "ok $n - $case_name # SKIP $missing"
		skipped=$((skipped + 1))
		continue
	fi
	echo "#  RUN $case_name"
	rm -f "$T/failed"
	skip=""
	wrap=()
	tmo=60
	t0=${EPOCHREALTIME/./}
	"${c%%|*}"
	echo "# ${c%%|*}: $(((${EPOCHREALTIME/./} - t0) / 1000)) ms"
	if [ -e "$T/failed" ]; then
		echo "not ok $n - $case_name"
		failed=$((failed + 1))
	elif [ -n "$skip" ]; then
		echo "ok $n - $case_name # SKIP $skip"
		skipped=$((skipped + 1))
	else
		echo "ok $n - $case_name"
		passed=$((passed + 1))
	fi
done
echo "# Totals: pass:$passed fail:$failed xfail:0 xpass:0 skip:$skipped error:0"
[ "$failed" -eq 0 ]
