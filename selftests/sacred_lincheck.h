/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sacred_lincheck.h - a linearizability checker for recorded histories of
 * a key-value map (put, get, compare-and-swap on independent keys) and of
 * a log (append, and reads of one position).
 *
 * A history is a set of operations, each with the time its client invoked
 * it and the time the answer came (one monotonic clock for every client),
 * and an outcome:
 *
 *  - LC_OK: it took effect exactly once, at some instant between its
 *    invocation and its response, and answered what it says;
 *  - LC_FAILED: it definitely did not take effect (dropped here);
 *  - LC_UNKNOWN: no answer (a timeout, a crash). It may have taken effect
 *    or not, and if it did, at any instant after its invocation - its
 *    response time is taken as infinite, and an unknown read, which
 *    changes nothing and told nothing, is dropped.
 *
 * The history is linearizable if there is one order of the operations,
 * each placed at an instant within its interval, in which every answer is
 * the one the sequential object would give. The search is Wing and Gong's:
 * walk the calls and returns in time order; a call may be linearized next
 * if the model accepts it in the current state - lift it (and its return)
 * out of the list and start over; reaching the return of an operation
 * that is not linearized means the last choice was wrong - undo it and try
 * the next call. Lowe's memoisation makes it practical: a (set of
 * linearized operations, object state) pair already explored is not
 * explored again. Operations with an unknown outcome stay candidates to
 * the end; once every answered operation is placed, the rest may take
 * effect afterwards (or never), which nobody saw, so the history passes.
 *
 * A map of independent registers is linearizable if and only if each key
 * is, so the map is checked one key at a time. A log is one object: its
 * state is the sequence of values appended.
 *
 * The search is bounded (@max_steps, and LC_MEMO_MAX bytes of visited
 * pairs): a history it cannot decide within that is LC_UNDECIDED, which a
 * test must treat as a failure.
 */
#ifndef _SACRED_LINCHECK_H
#define _SACRED_LINCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum lc_kind {
	LC_PUT,		/* key := val */
	LC_GET,		/* out: the key's value, LC_ABSENT if none */
	LC_CAS,		/* if key == expect: key := val; out: 1 swapped, 0 not */
	LC_APPEND,	/* the log gets val at its end; out: that position */
	LC_READ,	/* out: the value at position val of the log */
};

enum lc_outcome {
	LC_OK,
	LC_FAILED,
	LC_UNKNOWN,
};

enum lc_verdict {
	LC_LINEARIZABLE,
	LC_NOT_LINEARIZABLE,
	LC_UNDECIDED,	/* the step bound was hit, or memory ran out */
};

/* The value of a key never written; values written must not be it. */
#define LC_ABSENT	0

struct lc_op {
	uint64_t call;		/* invocation, ns */
	uint64_t done;		/* response, ns; for LC_OK only */
	uint64_t key;		/* LC_PUT, LC_GET, LC_CAS */
	uint8_t kind;		/* enum lc_kind */
	uint8_t outcome;	/* enum lc_outcome */
	int64_t val;
	int64_t expect;
	int64_t out;
};

struct lc_result {
	enum lc_verdict verdict;
	size_t ops;		/* operations searched (failed ones dropped) */
	size_t unknown;		/* of them, with an unknown outcome */
	size_t keys;		/* partitions searched */
	uint64_t steps;		/* search steps, all partitions */
	uint64_t bad_key;	/* the key not linearizable or undecided */
	size_t bad_ops;		/* its operations */
	size_t bad_depth;	/* the most of them placed in one order */
};

/* One call or return, in a doubly linked list ordered by time. */
struct lc_ent {
	struct lc_ent *prev, *next;
	struct lc_ent *match;	/* a call's return */
	const struct lc_op *op;
	unsigned int id;	/* the operation's bit */
	bool is_call;
	uint64_t t;
};

/* The most memory the visited pairs of one partition may take. */
#define LC_MEMO_MAX	(256UL << 20)

/* Visited (linearized set, state) pairs: open addressing over an arena. */
struct lc_memo {
	uint64_t *arena;	/* records of @words: the set, then the state */
	size_t words, used, cap;	/* records */
	uint32_t *slot;		/* record index + 1; 0 free */
	size_t nr_slots;
};

struct lc_search {
	const struct lc_op **ops;
	size_t n;
	bool log;		/* the log model; else a register */
	size_t state_len;	/* int64s */
	size_t set_words;
	uint64_t max_steps;
	uint64_t steps;
	size_t depth_max;
	struct lc_memo memo;
};

static inline uint64_t lc_hash(const uint64_t *w, size_t n)
{
	uint64_t h = 0x84222325cbf29ce4ULL;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= w[i];
		h *= 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

static inline int lc_memo_grow(struct lc_memo *m)
{
	size_t i, j, nr = m->nr_slots ? m->nr_slots * 2 : 1024;
	uint32_t *slot = calloc(nr, sizeof(*slot));
	uint64_t *arena;

	if (!slot)
		return -1;
	arena = realloc(m->arena, nr / 2 * m->words * sizeof(uint64_t));
	if (!arena) {
		free(slot);
		return -1;
	}
	m->arena = arena;
	m->cap = nr / 2;
	for (i = 0; i < m->used; i++) {
		j = lc_hash(arena + i * m->words, m->words) & (nr - 1);
		while (slot[j])
			j = (j + 1) & (nr - 1);
		slot[j] = i + 1;
	}
	free(m->slot);
	m->slot = slot;
	m->nr_slots = nr;
	return 0;
}

/* Add @rec (@m->words long): 1 if it was there, 0 if added, -1 no memory. */
static inline int lc_memo_add(struct lc_memo *m, const uint64_t *rec)
{
	size_t j;

	if (m->used >= m->cap &&
	    (m->cap * 2 * m->words * sizeof(uint64_t) > LC_MEMO_MAX ||
	     lc_memo_grow(m)))
		return -1;
	j = lc_hash(rec, m->words) & (m->nr_slots - 1);
	for (; m->slot[j]; j = (j + 1) & (m->nr_slots - 1))
		if (!memcmp(m->arena + (m->slot[j] - 1) * m->words, rec,
			    m->words * sizeof(uint64_t)))
			return 1;
	memcpy(m->arena + m->used * m->words, rec,
	       m->words * sizeof(uint64_t));
	m->slot[j] = ++m->used;
	return 0;
}

/*
 * The model: whether @o may take effect in state @s, and the state after
 * it into @ns. A register's state is its value; the log's is its length,
 * then the values at positions 0 .. length - 1.
 */
static inline bool lc_step(const struct lc_search *s, const struct lc_op *o,
			   const int64_t *st, int64_t *ns)
{
	bool known = o->outcome == LC_OK;
	int64_t len;

	memcpy(ns, st, s->state_len * sizeof(*ns));
	if (!s->log) {
		switch (o->kind) {
		case LC_PUT:
			ns[0] = o->val;
			return true;
		case LC_GET:
			return st[0] == o->out;
		case LC_CAS:
			if (known && o->out != (st[0] == o->expect))
				return false;
			if (st[0] == o->expect)
				ns[0] = o->val;
			return true;
		}
		return false;
	}
	len = st[0];
	switch (o->kind) {
	case LC_APPEND:
		if ((known && o->out != len) || len + 1 >= (int64_t)s->state_len)
			return false;
		ns[1 + len] = o->val;
		ns[0] = len + 1;
		return true;
	case LC_READ:
		return o->val >= 0 && o->val < len && st[1 + o->val] == o->out;
	}
	return false;
}

static inline int lc_ent_cmp(const void *a, const void *b)
{
	const struct lc_ent *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	/* At the same instant a call comes first: the two overlap. */
	if (x->is_call != y->is_call)
		return x->is_call ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static inline void lc_lift(struct lc_ent *e)
{
	e->prev->next = e->next;
	if (e->next)
		e->next->prev = e->prev;
	e->match->prev->next = e->match->next;
	if (e->match->next)
		e->match->next->prev = e->match->prev;
}

static inline void lc_unlift(struct lc_ent *e)
{
	e->match->prev->next = e->match;
	if (e->match->next)
		e->match->next->prev = e->match;
	e->prev->next = e;
	if (e->next)
		e->next->prev = e;
}

/* One partition: the register of one key, or the whole log. */
static inline enum lc_verdict lc_search_run(struct lc_search *s)
{
	size_t n = s->n, i, depth = 0, placed = 0, answered = 0;
	size_t words = s->set_words + s->state_len;
	struct lc_ent *ents, head = { 0 }, *e;
	struct lc_ent **stk_ent = NULL;
	uint64_t *rec = NULL, *set;
	int64_t *stk_state = NULL, *st, *ns;
	enum lc_verdict v = LC_UNDECIDED;

	ents = calloc(2 * n + 1, sizeof(*ents));
	stk_ent = calloc(n + 1, sizeof(*stk_ent));
	stk_state = calloc((n + 2) * s->state_len, sizeof(*stk_state));
	rec = calloc(words, sizeof(*rec));
	memset(&s->memo, 0, sizeof(s->memo));
	s->memo.words = words;
	if (!ents || !stk_ent || !stk_state || !rec)
		goto out;
	for (i = 0; i < n; i++) {
		const struct lc_op *o = s->ops[i];
		bool known = o->outcome == LC_OK;

		ents[2 * i] = (struct lc_ent){ .op = o, .id = i,
					       .is_call = true, .t = o->call };
		ents[2 * i + 1] = (struct lc_ent){
			.op = o, .id = i,
			.t = known ? o->done : UINT64_MAX };
		answered += known;
	}
	qsort(ents, 2 * n, sizeof(*ents), lc_ent_cmp);
	/* Pair each call with its return, then link them in order. */
	{
		struct lc_ent **call = calloc(n ? n : 1, sizeof(*call));

		if (!call)
			goto out;
		for (i = 0; i < 2 * n; i++)
			if (ents[i].is_call)
				call[ents[i].id] = &ents[i];
			else
				call[ents[i].id]->match = &ents[i];
		free(call);
	}
	e = &head;
	for (i = 0; i < 2 * n; i++) {
		e->next = &ents[i];
		ents[i].prev = e;
		e = &ents[i];
	}
	set = rec;
	st = stk_state;		/* the state now: one above the saved ones */
	memset(st, 0, s->state_len * sizeof(*st));
	e = head.next;
	while (placed < answered) {
		if (++s->steps > s->max_steps)
			goto out;
		if (e && e->is_call) {
			ns = st + s->state_len;
			if (lc_step(s, e->op, st, ns)) {
				int r;

				set[e->id / 64] |= 1ULL << (e->id % 64);
				memcpy(rec + s->set_words, ns,
				       s->state_len * sizeof(*ns));
				r = lc_memo_add(&s->memo, rec);
				if (r < 0)
					goto out;
				if (!r) {
					stk_ent[depth++] = e;
					st = ns;
					placed += e->op->outcome == LC_OK;
					if (depth > s->depth_max)
						s->depth_max = depth;
					lc_lift(e);
					e = head.next;
					continue;
				}
				set[e->id / 64] &= ~(1ULL << (e->id % 64));
			}
			e = e->next;
			continue;
		}
		/* A return not yet linearized: undo the last choice. */
		if (!depth) {
			v = LC_NOT_LINEARIZABLE;
			goto out;
		}
		e = stk_ent[--depth];
		st -= s->state_len;
		placed -= e->op->outcome == LC_OK;
		set[e->id / 64] &= ~(1ULL << (e->id % 64));
		lc_unlift(e);
		e = e->next;
	}
	v = LC_LINEARIZABLE;
out:
	free(s->memo.arena);
	free(s->memo.slot);
	free(rec);
	free(stk_state);
	free(stk_ent);
	free(ents);
	return v;
}

static inline int lc_op_key_cmp(const void *a, const void *b)
{
	const struct lc_op *x = *(const struct lc_op * const *)a;
	const struct lc_op *y = *(const struct lc_op * const *)b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Check @n operations of a map (@log false: per key) or of one log (@log
 * true: keys ignored); at most @max_steps search steps in all. The verdict,
 * and what was searched, in *@res.
 */
static inline enum lc_verdict lc_check(const struct lc_op *ops, size_t n,
				       bool log, uint64_t max_steps,
				       struct lc_result *res)
{
	const struct lc_op **v = calloc(n ? n : 1, sizeof(*v));
	size_t i, m = 0, start, appends = 0;
	struct lc_search s = { .log = log, .max_steps = max_steps };

	memset(res, 0, sizeof(*res));
	res->verdict = LC_UNDECIDED;
	if (!v)
		return res->verdict;
	for (i = 0; i < n; i++) {
		const struct lc_op *o = &ops[i];
		bool reads = o->kind == LC_GET || o->kind == LC_READ;

		if (o->kind > LC_READ || o->outcome > LC_UNKNOWN ||
		    log != (o->kind >= LC_APPEND)) {
			free(v);
			return res->verdict;	/* not an operation of it */
		}
		if (o->outcome == LC_FAILED ||
		    (o->outcome == LC_UNKNOWN && reads))
			continue;
		if (o->outcome == LC_OK && o->done < o->call) {
			free(v);
			return res->verdict;
		}
		v[m++] = o;
		res->unknown += o->outcome == LC_UNKNOWN;
		appends += o->kind == LC_APPEND;
	}
	res->ops = m;
	if (!log)
		qsort(v, m, sizeof(*v), lc_op_key_cmp);
	res->verdict = LC_LINEARIZABLE;
	for (start = 0; start < m && res->verdict == LC_LINEARIZABLE;) {
		size_t end = start + 1;

		while (!log && end < m && v[end]->key == v[start]->key)
			end++;
		if (log)
			end = m;
		s.ops = v + start;
		s.n = end - start;
		s.state_len = log ? appends + 2 : 1;
		s.set_words = (s.n + 63) / 64;
		s.depth_max = 0;
		res->verdict = lc_search_run(&s);
		res->keys++;
		if (res->verdict != LC_LINEARIZABLE) {
			res->bad_key = v[start]->key;
			res->bad_ops = s.n;
			res->bad_depth = s.depth_max;
		}
		start = end;
	}
	res->steps = s.steps;
	free(v);
	return res->verdict;
}

static inline const char *lc_verdict_name(enum lc_verdict v)
{
	switch (v) {
	case LC_LINEARIZABLE:
		return "linearizable";
	case LC_NOT_LINEARIZABLE:
		return "not linearizable";
	default:
		return "undecided (search bound hit)";
	}
}

#endif /* _SACRED_LINCHECK_H */
