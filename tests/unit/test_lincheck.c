// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * test_lincheck - host-side unit tests of the linearizability checker the
 * fault tests of the log and of sacred-kv use (selftests/sacred_lincheck.h):
 * histories that are linearizable pass, and ones that are not - a stale
 * read after a completed write, a read of a value never written, a write
 * two reads see appear and then disappear, a lost update, a log position
 * read as two values - are refused; an operation with no answer may or may
 * not have taken effect, one that failed did not; a search that hits its
 * bound says it could not decide; and big random linearizable histories
 * pass within the bound.
 *
 * Prints TAP version 13; exits 1 if any case fails.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../selftests/sacred_lincheck.h"
#include "tap.h"

#define STEPS	1000000

static bool check(bool cond, const char *what)
{
	if (!cond)
		printf("# failed: %s\n", what);
	return cond;
}

static struct lc_op put(uint64_t key, int64_t v, uint64_t a, uint64_t b)
{
	return (struct lc_op){ .kind = LC_PUT, .key = key, .val = v,
			       .call = a, .done = b };
}

static struct lc_op get(uint64_t key, int64_t v, uint64_t a, uint64_t b)
{
	return (struct lc_op){ .kind = LC_GET, .key = key, .out = v,
			       .call = a, .done = b };
}

static struct lc_op cas(uint64_t key, int64_t expect, int64_t v, bool swapped,
			uint64_t a, uint64_t b)
{
	return (struct lc_op){ .kind = LC_CAS, .key = key, .expect = expect,
			       .val = v, .out = swapped, .call = a, .done = b };
}

static struct lc_op unknown(struct lc_op o)
{
	o.outcome = LC_UNKNOWN;
	o.done = 0;
	return o;
}

static struct lc_op failed(struct lc_op o)
{
	o.outcome = LC_FAILED;
	return o;
}

static struct lc_op append(int64_t v, int64_t pos, uint64_t a, uint64_t b)
{
	return (struct lc_op){ .kind = LC_APPEND, .val = v, .out = pos,
			       .call = a, .done = b };
}

static struct lc_op rd(int64_t pos, int64_t v, uint64_t a, uint64_t b)
{
	return (struct lc_op){ .kind = LC_READ, .val = pos, .out = v,
			       .call = a, .done = b };
}

static enum lc_verdict kv(const struct lc_op *h, size_t n)
{
	struct lc_result r;

	return lc_check(h, n, false, STEPS, &r);
}

static enum lc_verdict lg(const struct lc_op *h, size_t n)
{
	struct lc_result r;

	return lc_check(h, n, true, STEPS, &r);
}

#define N(h)	(sizeof(h) / sizeof((h)[0]))
#define GOOD(f, h, what)	check(f(h, N(h)) == LC_LINEARIZABLE, what)
#define BAD(f, h, what)		check(f(h, N(h)) == LC_NOT_LINEARIZABLE, what)

static bool good_register_histories(void)
{
	struct lc_op seq[] = { put(1, 5, 0, 10), get(1, 5, 20, 30),
			       cas(1, 5, 6, true, 40, 50), get(1, 6, 60, 70),
			       cas(1, 5, 7, false, 80, 90) };
	/* The get overlaps the put: old or new value, either is fine. */
	struct lc_op old[] = { put(1, 5, 0, 100), get(1, LC_ABSENT, 10, 20) };
	struct lc_op new[] = { put(1, 5, 0, 100), get(1, 5, 10, 20) };
	/* Concurrent puts, then reads that agree on the one that won. */
	struct lc_op race[] = { put(1, 1, 0, 50), put(1, 2, 10, 60),
				get(1, 1, 70, 80), get(1, 1, 90, 95) };
	/* Answers that only fit one order of three overlapping ops. */
	struct lc_op order[] = { put(1, 1, 0, 100), put(1, 2, 0, 100),
				 get(1, 2, 0, 100), get(1, 1, 0, 100),
				 get(1, 1, 150, 160) };
	/* Keys are independent: key 2's history has its own order. */
	struct lc_op keys[] = { put(1, 1, 0, 10), put(2, 2, 20, 30),
				get(2, 2, 40, 50), get(1, 1, 40, 50) };
	/* A call and a return at one instant overlap. */
	struct lc_op touch[] = { put(1, 1, 0, 10), get(1, LC_ABSENT, 10, 20) };
	bool ok = true;

	ok &= GOOD(kv, seq, "sequential put, get, cas");
	ok &= GOOD(kv, old, "overlapping get sees the old value");
	ok &= GOOD(kv, new, "overlapping get sees the new value");
	ok &= GOOD(kv, race, "concurrent puts");
	ok &= GOOD(kv, order, "only one order fits");
	ok &= GOOD(kv, keys, "two keys");
	ok &= GOOD(kv, touch, "touching intervals overlap");
	ok &= check(kv(NULL, 0) == LC_LINEARIZABLE, "empty history");
	return ok;
}

static bool stale_read_after_a_completed_write(void)
{
	struct lc_op h[] = { put(1, 1, 0, 10), get(1, LC_ABSENT, 20, 30) };
	struct lc_op h2[] = { put(1, 1, 0, 10), put(1, 2, 20, 30),
			      get(1, 1, 40, 50) };

	return BAD(kv, h, "absent after a completed put") &
	       BAD(kv, h2, "the older of two completed puts");
}

static bool read_of_a_value_never_written(void)
{
	struct lc_op h[] = { put(1, 1, 0, 10), get(1, 9, 0, 30) };
	struct lc_op other_key[] = { put(2, 9, 0, 10), get(1, 9, 20, 30) };

	return BAD(kv, h, "a value nobody wrote") &
	       BAD(kv, other_key, "a value written to another key");
}

static bool a_write_appears_and_disappears(void)
{
	/* One long put; one read sees it, a later read does not. */
	struct lc_op h[] = { put(1, 1, 0, 100), get(1, 1, 10, 20),
			     get(1, LC_ABSENT, 30, 40) };
	/* The same with a put that never answered. */
	struct lc_op u[] = { unknown(put(1, 1, 0, 0)), get(1, 1, 10, 20),
			     get(1, LC_ABSENT, 30, 40) };

	return BAD(kv, h, "appear, disappear") &
	       BAD(kv, u, "appear, disappear, unanswered put");
}

static bool lost_update(void)
{
	/* Both swap from absent: one of the two updates is lost. */
	struct lc_op both[] = { cas(1, LC_ABSENT, 1, true, 0, 50),
				cas(1, LC_ABSENT, 2, true, 10, 60) };
	/* A read-modify-write by cas after a put, which then reads old. */
	struct lc_op over[] = { put(1, 1, 0, 10), cas(1, 1, 2, true, 20, 30),
				cas(1, 1, 3, true, 40, 50) };
	/* A cas that says it failed though the value was expected. */
	struct lc_op refused[] = { put(1, 1, 0, 10),
				   cas(1, 1, 2, false, 20, 30) };
	struct lc_op fine[] = { cas(1, LC_ABSENT, 1, true, 0, 50),
				cas(1, LC_ABSENT, 2, false, 10, 60),
				get(1, 1, 70, 80) };

	return BAD(kv, both, "two swaps from absent") &
	       BAD(kv, over, "two swaps from one value") &
	       BAD(kv, refused, "a cas refused that had to swap") &
	       GOOD(kv, fine, "one swap wins");
}

static bool unknown_outcomes_go_both_ways(void)
{
	struct lc_op took[] = { unknown(put(1, 1, 0, 0)), get(1, 1, 10, 20) };
	struct lc_op not[] = { unknown(put(1, 1, 0, 0)),
			       get(1, LC_ABSENT, 10, 20) };
	/* Late: it may take effect long after any other operation. */
	struct lc_op late[] = { unknown(put(1, 1, 0, 0)), put(1, 2, 10, 20),
				get(1, 2, 30, 40), get(1, 1, 50, 60) };
	/* Not before it was invoked. */
	struct lc_op early[] = { get(1, 1, 0, 10), unknown(put(1, 1, 20, 0)) };
	/* A cas with no answer, swapped or not. */
	struct lc_op cas_yes[] = { put(1, 1, 0, 10),
				   unknown(cas(1, 1, 2, false, 20, 0)),
				   get(1, 2, 30, 40) };
	struct lc_op cas_no[] = { put(1, 1, 0, 10),
				  unknown(cas(1, 1, 2, true, 20, 0)),
				  get(1, 1, 30, 40) };
	/* A read with no answer says nothing. */
	struct lc_op rd_unk[] = { put(1, 1, 0, 10),
				  unknown(get(1, 7, 20, 0)) };
	/* A failed put did not happen. */
	struct lc_op fail[] = { failed(put(1, 1, 0, 10)), get(1, 1, 20, 30) };
	struct lc_op fail_ok[] = { failed(put(1, 1, 0, 10)),
				   get(1, LC_ABSENT, 20, 30) };

	return GOOD(kv, took, "unanswered put took effect") &
	       GOOD(kv, not, "unanswered put did not") &
	       GOOD(kv, late, "unanswered put took effect last") &
	       BAD(kv, early, "unanswered put seen before its invocation") &
	       GOOD(kv, cas_yes, "unanswered cas swapped") &
	       GOOD(kv, cas_no, "unanswered cas did not") &
	       GOOD(kv, rd_unk, "unanswered get") &
	       BAD(kv, fail, "failed put seen") &
	       GOOD(kv, fail_ok, "failed put not seen");
}

static bool log_histories(void)
{
	struct lc_op good[] = { append(10, 0, 0, 10), rd(0, 10, 5, 5),
				append(11, 1, 20, 30), rd(1, 11, 40, 40),
				rd(0, 10, 40, 40) };
	/* A follower delivers an entry before the append answered. */
	struct lc_op early[] = { append(10, 0, 0, 100), rd(0, 10, 50, 50) };
	/* An append with no answer, delivered later at position 1. */
	struct lc_op unk[] = { append(10, 0, 0, 10),
			       unknown(append(11, 0, 20, 0)),
			       rd(1, 11, 50, 50), append(12, 2, 60, 70) };
	/* Two values at one position. */
	struct lc_op fork[] = { append(10, 0, 0, 10), rd(0, 10, 20, 20),
				rd(0, 11, 30, 30), append(11, 1, 5, 40) };
	/* An entry nobody appended. */
	struct lc_op ghost[] = { append(10, 0, 0, 10), rd(1, 99, 20, 20) };
	/* A committed append that a later reader does not find there. */
	struct lc_op lost[] = { append(10, 0, 0, 10), append(11, 1, 20, 30),
				unknown(append(12, 0, 15, 0)),
				rd(1, 12, 40, 40) };
	/* Delivered before it was proposed. */
	struct lc_op before[] = { rd(0, 10, 0, 0), append(10, 0, 10, 20) };
	/* Positions out of order. */
	struct lc_op gap[] = { append(10, 1, 0, 10) };
	/* A failed append is not delivered. */
	struct lc_op failedapp[] = { failed(append(10, 0, 0, 10)),
				     rd(0, 10, 20, 20) };

	return GOOD(lg, good, "log in order") &
	       GOOD(lg, early, "delivered while the append runs") &
	       GOOD(lg, unk, "unanswered append delivered") &
	       BAD(lg, fork, "two values at one position") &
	       BAD(lg, ghost, "entry never appended") &
	       BAD(lg, lost, "committed entry replaced") &
	       BAD(lg, before, "delivered before it was proposed") &
	       BAD(lg, gap, "append at position 1 of an empty log") &
	       BAD(lg, failedapp, "failed append delivered") &
	       check(lc_check(good, N(good), false, STEPS,
			      &(struct lc_result){}) == LC_UNDECIDED,
		     "log operations checked as a map are refused");
}

static bool bound_hit_is_undecided(void)
{
	/* Eight overlapping puts, and reads that fit only one order. */
	struct lc_op h[16];
	struct lc_result r;
	unsigned int i;
	bool ok;

	for (i = 0; i < 8; i++) {
		h[i] = put(1, i + 1, 0, 100);
		h[8 + i] = get(1, i + 1, 0, 100);
	}
	ok = check(lc_check(h, 16, false, 10, &r) == LC_UNDECIDED &&
		   r.verdict == LC_UNDECIDED, "10 steps: undecided");
	ok &= check(lc_check(h, 16, false, STEPS, &r) == LC_LINEARIZABLE,
		    "enough steps: linearizable");
	printf("# 16 overlapping ops: %llu steps\n",
	       (unsigned long long)r.steps);
	return ok;
}

/* A simulated history: every op takes effect at an instant of its own. */
struct sim {
	struct lc_op op;
	uint64_t at;		/* when it took effect; 0: it did not */
};

static int sim_cmp(const void *a, const void *b)
{
	const struct sim *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

static uint64_t ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * @clients clients, each doing ops one after the other on @keys keys,
 * a few in a thousand never answered; the results are what a register
 * per key answers in the order the instants put them in.
 */
static bool random_register_history(unsigned int nr, unsigned int clients,
				    unsigned int keys, unsigned int seed)
{
	struct sim *h = calloc(nr, sizeof(*h));
	struct lc_op *ops = calloc(nr + 1, sizeof(*ops));
	int64_t *val = calloc(keys, sizeof(*val));
	uint64_t *t = calloc(clients, sizeof(*t));
	struct timespec t0;
	struct lc_result r;
	unsigned int i, c;
	bool ok;

	if (!h || !ops || !val || !t) {
		free(h);
		free(ops);
		free(val);
		free(t);
		return check(false, "memory");
	}
	srand(seed);
	for (i = 0; i < nr; i++) {
		struct lc_op *o = &h[i].op;

		c = rand() % clients;
		o->call = t[c] + 1 + rand() % 50;
		h[i].at = o->call + 1 + rand() % 100;
		o->done = h[i].at + 1 + rand() % 100;
		t[c] = o->done;
		o->key = rand() % keys;
		o->kind = rand() % 3;
		o->val = i + 1;
		if (rand() % 1000 < 3) {
			o->outcome = LC_UNKNOWN;
			if (rand() % 2)
				h[i].at = 0;
		}
	}
	/* Apply in the order of the instants; ops never applied stay 0. */
	qsort(h, nr, sizeof(*h), sim_cmp);
	for (i = 0; i < nr; i++) {
		struct lc_op *o = &h[i].op;
		int64_t *v = &val[o->key];

		if (!h[i].at)
			continue;
		if (o->kind == LC_PUT) {
			*v = o->val;
		} else if (o->kind == LC_GET) {
			o->out = *v;
		} else {
			/* Expect the current value half the time. */
			o->expect = rand() % 2 ? *v : *v + 1;
			o->out = o->expect == *v;
			if (o->out)
				*v = o->val;
		}
	}
	for (i = 0; i < nr; i++)
		ops[i] = h[i].op;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok = check(lc_check(ops, nr, false, 20 * STEPS, &r) ==
		   LC_LINEARIZABLE, "random history linearizable");
	printf("# %u ops (%zu unanswered), %u clients, %zu keys: %s, %llu steps, %llu ms\n",
	       nr, r.unknown, clients, r.keys, lc_verdict_name(r.verdict),
	       (unsigned long long)r.steps,
	       (unsigned long long)ms_since(&t0));
	/*
	 * One get made stale: a put completes after the write it read and
	 * before the get was invoked.
	 */
	for (i = 0; i < nr && ok; i++) {
		struct lc_op *o = &ops[i];
		unsigned int w;

		if (o->kind != LC_GET || o->outcome != LC_OK ||
		    o->out == LC_ABSENT)
			continue;
		for (w = 0; w < nr; w++)
			if (ops[w].kind != LC_GET && ops[w].val == o->out)
				break;
		if (w == nr || ops[w].outcome != LC_OK ||
		    ops[w].done + 2 >= o->call)
			continue;
		ops[nr] = put(o->key, nr + 7, o->call - 2, o->call - 1);
		ok &= check(lc_check(ops, nr + 1, false, 20 * STEPS, &r) ==
			    LC_NOT_LINEARIZABLE,
			    "random history with a stale get");
		printf("# with one get made stale: %s after %llu steps\n",
		       lc_verdict_name(r.verdict),
		       (unsigned long long)r.steps);
		break;
	}
	ok &= check(i < nr, "a get to make stale");
	free(h);
	free(ops);
	free(val);
	free(t);
	return ok;
}

static bool big_random_register_history(void)
{
	return random_register_history(20000, 8, 4, 1) &
	       random_register_history(5000, 8, 1, 2);
}

/*
 * A leader appending one entry after another, three followers delivering
 * each some time after the append took effect, a few appends unanswered.
 */
static bool big_random_log_history(void)
{
	enum { NR = 300, READERS = 3 };
	static struct lc_op ops[NR * (READERS + 1)];
	struct timespec t0;
	struct lc_result r;
	uint64_t t = 0;
	unsigned int i, k, n = 0, pos = 0;
	bool ok;

	srand(3);
	for (i = 0; i < NR; i++) {
		uint64_t call = t + 1 + rand() % 20, at = call + 1 + rand() % 50;
		struct lc_op *a = &ops[n++];

		*a = append(1000 + i, pos, call, at + 1 + rand() % 50);
		t = a->done;
		if (i % 97 == 50) {
			*a = unknown(*a);
			if (i % 2)
				continue;	/* and never took effect */
		}
		for (k = 0; k < READERS; k++) {
			uint64_t when = at + rand() % 200;

			ops[n++] = rd(pos, 1000 + i, when, when);
		}
		pos++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok = check(lc_check(ops, n, true, STEPS, &r) == LC_LINEARIZABLE,
		   "random log history linearizable");
	printf("# log: %u ops (%zu unanswered): %llu steps, %llu ms\n", n,
	       r.unknown, (unsigned long long)r.steps,
	       (unsigned long long)ms_since(&t0));
	/* One reader delivers another value at position 100. */
	for (i = 0; i < n; i++)
		if (ops[i].kind == LC_READ && ops[i].val == 100) {
			ops[i].out = 1000 + 101;
			break;
		}
	ok &= check(lc_check(ops, n, true, STEPS, &r) == LC_NOT_LINEARIZABLE,
		    "random log history with a forked position");
	return ok;
}

static const struct tap_test tests[] = {
	{ "good_register_histories", good_register_histories },
	{ "stale_read_after_a_completed_write",
	  stale_read_after_a_completed_write },
	{ "read_of_a_value_never_written", read_of_a_value_never_written },
	{ "a_write_appears_and_disappears", a_write_appears_and_disappears },
	{ "lost_update", lost_update },
	{ "unknown_outcomes_go_both_ways", unknown_outcomes_go_both_ways },
	{ "log_histories", log_histories },
	{ "bound_hit_is_undecided", bound_hit_is_undecided },
	{ "big_random_register_history", big_random_register_history },
	{ "big_random_log_history", big_random_log_history },
};

int main(void)
{
	return tap_run(tests, sizeof(tests) / sizeof(tests[0]));
}
