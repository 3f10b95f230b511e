// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * test_cell - host-side unit tests of cells (lib/cell.c): round trips,
 * empty cells, and every way a cell can be torn or garbled - which must
 * never decode as valid; and the rule a writer that opens its cells again
 * uses to tell which one holds its last complete write (lib/internal.h).
 *
 * lib/cell.c needs only libc and libsodium; it is compiled into this
 * program (found through -Ilib).
 *
 * Prints TAP version 13; exits 1 if any case fails.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cell.c"
#include "internal.h"
#include "tap.h"

#define CELL	128

static bool check(bool cond, const char *what)
{
	if (!cond)
		printf("# failed: %s\n", what);
	return cond;
}

static bool round_trip(void)
{
	uint8_t cell[CELL], data[CELL - SACRED_CELL_HDR];
	struct sacred_cell_view v;
	size_t len;
	bool ok = true;

	for (len = 0; len <= sizeof(data); len += 13) {
		memset(data, (int)len, sizeof(data));
		ok &= check(!sacred_cell_encode(cell, sizeof(cell), len + 1,
						77, data, len), "encode");
		ok &= check(!sacred_cell_decode(cell, sizeof(cell), &v),
			    "decode");
		ok &= check(v.seq == len + 1 && v.pid == 77 && v.len == len,
			    "fields");
		ok &= check(!memcmp(v.data, data, len), "payload");
	}
	return ok;
}

static bool empty_and_bad_arguments(void)
{
	uint8_t cell[CELL] = { 0 };
	bool ok = true;

	ok &= check(sacred_cell_decode(cell, sizeof(cell), NULL) == -ENODATA,
		    "all zero is empty");
	ok &= check(sacred_cell_encode(cell, sizeof(cell), 0, 1, "x", 1) ==
		    -EINVAL, "seq 0 refused");
	ok &= check(sacred_cell_encode(cell, sizeof(cell), 1, 1, cell,
				       CELL - SACRED_CELL_HDR + 1) == -EINVAL,
		    "payload too long refused");
	ok &= check(sacred_cell_encode(cell, SACRED_CELL_HDR - 1, 1, 1, NULL,
				       0) == -EINVAL, "cell too small");
	ok &= check(sacred_cell_decode(cell, SACRED_CELL_HDR - 1, NULL) ==
		    -EINVAL, "decode too small");
	return ok;
}

/*
 * A torn write: the first @cut bytes of the new cell over the old one
 * (or the old one's prefix over the new one). Every cut strictly inside
 * differs from both cells and must be refused.
 */
static bool torn_cells_never_decode(void)
{
	uint8_t old[CELL], new[CELL], torn[CELL], data[64];
	struct sacred_cell_view v;
	unsigned int cut;
	bool ok = true;

	memset(data, 0xaa, sizeof(data));
	sacred_cell_encode(old, sizeof(old), 41, 1, data, sizeof(data));
	memset(data, 0x55, sizeof(data));
	sacred_cell_encode(new, sizeof(new), 42, 1, data, sizeof(data));
	for (cut = 1; cut < CELL; cut++) {
		int r1, r2;

		memcpy(torn, new, cut);
		memcpy(torn + cut, old + cut, CELL - cut);
		r1 = sacred_cell_decode(torn, sizeof(torn), &v);
		memcpy(torn, old, cut);
		memcpy(torn + cut, new + cut, CELL - cut);
		r2 = sacred_cell_decode(torn, sizeof(torn), &v);
		/* Past the payload both cells are zero: the cut is moot. */
		if (cut >= SACRED_CELL_HDR + sizeof(data)) {
			ok &= check(!r1 && v.seq == 41, "cut past payload");
			continue;
		}
		ok &= check(r1 == -EBADMSG, "new prefix over old refused");
		ok &= check(r2 == -EBADMSG, "old prefix over new refused");
		if (!ok) {
			printf("# cut at %u: %d %d\n", cut, r1, r2);
			break;
		}
	}
	return ok;
}

static bool garbage_and_bit_flips_never_decode(void)
{
	uint8_t cell[CELL], bad[CELL];
	unsigned int i, bit;
	bool ok = true;

	sacred_cell_encode(cell, sizeof(cell), 7, 3, "payload", 7);
	for (i = 0; i < SACRED_CELL_HDR + 7; i++)
		for (bit = 0; bit < 8; bit++) {
			memcpy(bad, cell, sizeof(bad));
			bad[i] ^= 1u << bit;
			if (sacred_cell_decode(bad, sizeof(bad), NULL) !=
			    -EBADMSG) {
				printf("# flip byte %u bit %u accepted\n", i,
				       bit);
				ok = false;
			}
		}
	srand(1);
	for (i = 0; i < 10000; i++) {
		unsigned int j;

		for (j = 0; j < sizeof(bad); j++)
			bad[j] = (uint8_t)rand();
		if (!sacred_cell_decode(bad, sizeof(bad), NULL)) {
			printf("# random cell %u accepted\n", i);
			ok = false;
		}
	}
	/* A length beyond the cell. */
	memcpy(bad, cell, sizeof(bad));
	bad[12] = 0xff;
	ok &= check(sacred_cell_decode(bad, sizeof(bad), NULL) == -EBADMSG,
		    "length beyond the cell");
	return ok;
}

static bool newer_orders_by_seq_then_pid(void)
{
	struct sacred_cell_view a = { .seq = 2, .pid = 1 };
	struct sacred_cell_view b = { .seq = 1, .pid = 9 };
	struct sacred_cell_view c = { .seq = 2, .pid = 3 };

	return check(sacred_cell_newer(&a, &b), "seq first") &&
	       check(sacred_cell_newer(&c, &a), "then pid") &&
	       check(!sacred_cell_newer(&a, &a), "not newer than itself");
}

/* Three memories, a quorum of two, as the library's callers use it. */
#define TALLY_MEMS	3
#define TALLY_QUORUM	2

static struct sacred_cell_view tv(uint64_t seq)
{
	return (struct sacred_cell_view){ .seq = seq, .pid = 7 };
}

static bool tally_quorum_keeps_the_newest(void)
{
	struct sacred_cell_tally t = { 0 };
	struct sacred_cell_view a = tv(5), b = tv(4);
	bool ok = true;

	/* Newest (5) in cell 1 on two memories, an older one on the third. */
	sacred_cell_tally_add(&t, &b, 0);
	sacred_cell_tally_add(&t, &a, 1);
	sacred_cell_tally_add(&t, &a, 1);
	ok &= check(t.have == 2 && t.answered == 3 && t.best.seq == 5,
		    "tally counts the newest cell's holders");
	ok &= check(sacred_cell_tally_good(&t, TALLY_MEMS, TALLY_QUORUM) == 1,
		    "a quorum holds cell 1: keep it");
	/* Two of three answered, both with it: still a quorum. */
	t = (struct sacred_cell_tally){ 0 };
	sacred_cell_tally_add(&t, &a, 0);
	sacred_cell_tally_add(&t, &a, 0);
	ok &= check(sacred_cell_tally_good(&t, TALLY_MEMS, TALLY_QUORUM) == 0,
		    "two of three answered with cell 0: keep it");
	return ok;
}

static bool tally_all_answered_takes_the_other_cell(void)
{
	struct sacred_cell_tally t = { 0 };
	struct sacred_cell_view a = tv(9), b = tv(8);

	/* A write of 9 into cell 0 cut short: one memory has it. */
	sacred_cell_tally_add(&t, &a, 0);
	sacred_cell_tally_add(&t, &b, 1);
	sacred_cell_tally_add(&t, &b, 1);
	return check(t.best.seq == 9 && t.have == 1,
		     "the newest is counted once") &
	       check(sacred_cell_tally_good(&t, TALLY_MEMS, TALLY_QUORUM) == 1,
		     "the cut-short write's cell is the one to write over");
}

static bool tally_silent_memory_cannot_tell(void)
{
	struct sacred_cell_tally t = { 0 };
	struct sacred_cell_view a = tv(9), b = tv(8);
	bool ok = true;

	sacred_cell_tally_add(&t, &a, 0);
	sacred_cell_tally_add(&t, &b, 1);
	ok &= check(sacred_cell_tally_good(&t, TALLY_MEMS, TALLY_QUORUM) == -1,
		    "two answered, the newest on one: -1");
	/* One answered with no valid cell: it counts as answering. */
	t = (struct sacred_cell_tally){ 0 };
	sacred_cell_tally_add(&t, &a, 0);
	sacred_cell_tally_add(&t, NULL, 0);
	ok &= check(t.answered == 2 && t.have == 1,
		    "a memory without a cell answered");
	ok &= check(sacred_cell_tally_good(&t, TALLY_MEMS, TALLY_QUORUM) == -1,
		    "the third may hold it: -1");
	sacred_cell_tally_add(&t, NULL, 0);
	ok &= check(sacred_cell_tally_good(&t, TALLY_MEMS, TALLY_QUORUM) == 1,
		    "all answered, one holds it: the other cell");
	return ok;
}

static bool tally_no_cell(void)
{
	struct sacred_cell_tally t = { 0 };
	unsigned int i;

	for (i = 0; i < TALLY_MEMS; i++)
		sacred_cell_tally_add(&t, NULL, 0);
	return check(!t.have && t.answered == TALLY_MEMS,
		     "no cell: have 0, every memory answered");
}

int main(void)
{
	static const struct tap_test tests[] = {
		{ "tally: a quorum holding the newest write keeps it",
		  tally_quorum_keeps_the_newest },
		{ "tally: every memory answered, no quorum: the other cell",
		  tally_all_answered_takes_the_other_cell },
		{ "tally: a memory silent and no quorum: cannot tell",
		  tally_silent_memory_cannot_tell },
		{ "tally: no valid cell anywhere", tally_no_cell },
		{ "cell: encode/decode round trip", round_trip },
		{ "cell: empty cell and bad arguments",
		  empty_and_bad_arguments },
		{ "cell: torn cells never decode", torn_cells_never_decode },
		{ "cell: bit flips and garbage never decode",
		  garbage_and_bit_flips_never_decode },
		{ "cell: newer orders by seq, then pid",
		  newer_orders_by_seq_then_pid },
	};

	return tap_run(tests, sizeof(tests) / sizeof(tests[0]));
}
