/* SPDX-License-Identifier: GPL-2.0 */
/*
 * models/pmp.pml - Protected Memory Paxos (Aguilera et al., "The Impact
 * of RDMA on Agreement", PODC'19) over sacred memories, as lib/pmp.c is
 * to implement it. Checked by scripts/check-model; what is modelled, what
 * is abstracted and how each part maps to the library is in
 * Documentation/pmp-model.rst.
 *
 * Three processes propose 1, 2, 3 on three memories, each memory one
 * region under the exclusive-writer policy. Every RDMA operation is one
 * atomic step at its memory, and the process that issued it learns the
 * result in that step. Operations a process issued but no longer waits
 * for (a slow memory outside its majority, an abandoned attempt, a
 * process that decided, gave up or crashed) stay in flight and land at
 * any later time, or never.
 *
 * Compile-time switches (spin -D...):
 *   MAXATT=n             attempts per process (default 2)
 *   NOCRASH              no memory crash
 *   PCRASH               explicit process crash steps (at most N-1)
 *   ACK_LOST             a write may take effect and still be nacked
 *   REACH_TWO            assert that no two processes decide (expected
 *                        to FAIL: agreement is really exercised)
 *   REACH_ADOPT          assert that nobody decides another's input
 *                        (expected to FAIL: the adoption path runs)
 *   REACH_CRASHED        assert that no phase 1 leads to a decision once
 *                        a memory is down (expected to FAIL)
 *   BROKEN_SINGLE_CELL   one cell per slot: a torn write destroys the
 *                        writer's latest entry (expected to FAIL)
 *   BROKEN_LATE_PHASE2   phase 2 writes on every memory, also on one
 *                        whose phase 1 had not finished, as soon as it
 *                        granted permission (expected to FAIL)
 *   BROKEN_WAIT_ALL      wait for all memories instead of a majority
 *                        (expected to FAIL: a proposer blocks for ever
 *                        on a crashed memory, an invalid end state)
 *   ATT0, ATT1, ATT2     attempts of process 0, 1, 2 (default MAXATT;
 *                        0: the process never proposes, as if it had
 *                        crashed at once)
 *   NOSYMM               no memory symmetry reduction (see canon())
 *   RESTART              process 0 may crash and restart once, at any
 *                        step, knowing only what a read of two memories
 *                        shows it (sacred_pmp_open()), proposing 2; its
 *                        first open promised proposal number 1 on at
 *                        least two memories (pmp_mark())
 *   BROKEN_NO_MARK       with RESTART: no such promise (the library
 *                        before 56dfc33; expected to FAIL: proposal
 *                        number 1 is used with two values)
 *   SOLO=p               process p backs off after a failed attempt
 *                        until it is alone: every other process returned
 *                        (or never proposed) and its operations landed,
 *                        but on a crashed memory; then it retries
 *   SOLO_NO_DRAIN        with SOLO: the back-off ends once the others
 *                        returned, their operations may still be in
 *                        flight (expected to FAIL LIVE_DECIDE)
 *   LIVE_RETURN          the LTL property "returns": every run ends with
 *                        every process returned (decided, gave up or
 *                        crashed); checked with pan -a (acceptance
 *                        cycles). A run that stops (a blocked proposer)
 *                        or loops for ever before violates it.
 *   LIVE_DECIDE=p        the LTL property "decides": as "returns", and
 *                        process p decided
 */

#define N	3	/* processes 0..N-1, inputs 1..N */
#define M	3	/* memories 0..M-1 */
#ifndef BROKEN_WAIT_ALL
#define MAJ	2	/* a majority of M */
#else
#define MAJ	M	/* wait for every memory: blocks on a crashed one */
#endif

#ifndef MAXATT
#define MAXATT	2
#endif
/* attempts of process 0, 1, 2 (default MAXATT each) */
#ifndef ATT0
#define ATT0	MAXATT
#endif
#ifndef ATT1
#define ATT1	MAXATT
#endif
#ifndef ATT2
#define ATT2	MAXATT
#endif
#define ATTS(p)	(p == 0 -> ATT0 : (p == 1 -> ATT1 : ATT2))

/* How a write goes when it executes (write_slot()). */
#define NORMAL	0	/* lands iff the writer holds permission: (a), (b) */
#define TORN	1	/* the writer lost permission and it tore: (c) */
#define LOST	2	/* landed, but the ack was lost (ACK_LOST) */

/* RDMA operations of a process on one memory. */
#define NONE	0
#define CP	1	/* changePermission(write) */
#define W1	2	/* phase 1 write of own slot */
#define RD	3	/* read of every slot */
#define W2	4	/* phase 2 write of own slot */

#define ACK	1
#define NACK	2

/* Where a process is. */
#define P1	1	/* phase 1: permission, write, read on a majority */
#define P2	2	/* phase 2: write the value on a majority */
#define DONE	3	/* decided, gave up or crashed */
#define BACKOFF	4	/* SOLO: waits to be alone before it retries */

/* ------------------------------------------------------------------ */
/* The memories                                                       */
/* ------------------------------------------------------------------ */

/*
 * Each memory holds one exclusive-writer region with one slot per
 * process and two cells per slot. A torn cell is not valid: in lib/pmp.c
 * an entry carries a checksum, and a torn entry fails it. acc == 0 means
 * "nothing accepted yet".
 */
typedef cell_t {
	unsigned min : 5;	/* min_prop */
	unsigned acc : 5;	/* acc_prop */
	unsigned val : 2;	/* value accepted with acc */
	bool valid
};

cell_t cell[M * N * 2];
#define C(i, s, c)	cell[((i) * N + (s)) * 2 + (c)]

/* Write permission holder per memory: process 0 holds all at the start. */
byte perm[M];

byte mdown = M;		/* the crashed memory, M: none; at most one */
byte pdown;		/* crashed processes (PCRASH), at most N-1 */
bit rs;			/* process 0 restarted (RESTART) */

/*
 * What each process p knows about each memory i, at [p * M + i]. These
 * are the library's own variables; they are global only so that the
 * memory symmetry reduction (canon()) can permute them with the
 * memories.
 */
byte gpr[N * M];	/* progress of the attempt: 0, 1 CP, 2 W1, 3 RD done,
			 * 4 nothing more to do there */
bit glast[N * M] = 1;	/* cell of the latest acked entry; 1 so that the
			 * first write goes to cell 0 */
byte glo[N * M];	/* operation left behind in flight ... */
byte glmin[N * M];	/* ... and, for a write, its entry */
byte glacc[N * M];
byte glval[N * M];

#define PR(i)		gpr[p * M + (i)]
#define LASTACK(i)	glast[p * M + (i)]
#define LO(i)		glo[p * M + (i)]
#define LMIN(i)		glmin[p * M + (i)]
#define LACC(i)		glacc[p * M + (i)]
#define LVAL(i)		glval[p * M + (i)]

/*
 * Scratch variables of the atomic steps, outside the state vector
 * (hidden): every step sets them before use and clears them after.
 */
hidden byte nx, st, racc, rval, s, c, j, x, rhi, ko, tmp;

/*
 * The operation a process picked for its next step: memory and the way a
 * write goes. Not hidden: they live from the choice to the d_step that
 * uses them (and are 0 in every stored state).
 */
byte mi, how;

/* What the properties look at. */
byte decided;		/* first decided value, 0: none yet */
byte ndec;		/* processes that decided */
byte decby;		/* which processes decided: bit p */
byte nret;		/* processes done: decided, gave up or crashed */

/*
 * Which cell slot s of memory i reads as, into c: its valid cell with the
 * highest (min, acc), or 2 if it has no valid cell (an empty slot).
 */
inline slot_cell(i)
{
	if
	:: C(i, s, 0).valid && C(i, s, 1).valid ->
		if
		:: C(i, s, 1).min > C(i, s, 0).min ||
		   (C(i, s, 1).min == C(i, s, 0).min &&
		    C(i, s, 1).acc > C(i, s, 0).acc) -> c = 1
		:: else -> c = 0
		fi
	:: C(i, s, 0).valid && !C(i, s, 1).valid -> c = 0
	:: !C(i, s, 0).valid && C(i, s, 1).valid -> c = 1
	:: else -> c = 2
	fi
}

/*
 * The read of memory i by process p with proposal number rb. A slot
 * reads as its valid cell with the highest (min, acc); a slot without a
 * valid cell reads as empty. Sets rhi if some slot has min or acc above
 * rb (abort), racc/rval to the highest acc and its value (the value to
 * adopt), and raises seen to the highest number read (the next b).
 */
inline read_slots(i, rb)
{
	s = 0;
	do
	:: s < N ->
		slot_cell(i);
		if
		:: c < 2 ->
			if
			:: C(i, s, c).min > rb || C(i, s, c).acc > rb ->
				rhi = 1
			:: else
			fi;
			if
			:: C(i, s, c).acc > racc ->
				racc = C(i, s, c).acc;
				rval = C(i, s, c).val
			:: else
			fi;
			if
			:: att < ATTS(p) && C(i, s, c).min > seen ->
				seen = C(i, s, c).min
			:: else
			fi;
			if
			:: att < ATTS(p) && C(i, s, c).acc > seen ->
				seen = C(i, s, c).acc
			:: else
			fi
		:: else
		fi;
		s++
	:: else -> break
	od;
	s = 0;
	c = 0
}

/*
 * A write of (wmin, wacc, wval) by process p on memory i, going the way
 * "how" says (the process picks it nondeterministically, see STEP_OK).
 * The target is the cell that does not hold p's latest acknowledged
 * entry there, so a torn write can only destroy the older one
 * (BROKEN_SINGLE_CELL: the one cell). It takes effect iff p holds write permission at this moment:
 * (a) the whole entry lands, ack. Otherwise the write was issued before
 * or while the permission was revoked: (b) none of it landed, nack, or
 * (c) part of it did and the target cell is torn, nack. Tearing is
 * allowed whenever p lacks permission, also for a write issued long
 * after the revoke, which the NIC refuses whole: more behaviours than
 * the hardware has, which is fine for a safety check. With ACK_LOST a
 * write that took effect may still be reported failed (its ack lost
 * with the connection).
 */
inline write_slot(i, wmin, wacc, wval)
{
#ifdef BROKEN_SINGLE_CELL
	c = 0;
#else
	c = 1 - LASTACK(i);
#endif
	if
	:: perm[i] == p ->				/* (a) */
		C(i, p, c).min = wmin;
		C(i, p, c).acc = wacc;
		C(i, p, c).val = wval;
		C(i, p, c).valid = true;
		st = (how == LOST -> NACK : ACK)
	:: else ->
		if
		:: how == TORN ->			/* (c) */
			C(i, p, c).valid = false
		:: else					/* (b) */
		fi;
		st = NACK
	fi;
	/* the library only learns of the write from its completion */
	if
	:: st == ACK -> LASTACK(i) = c
	:: else
	fi;
	c = 0
}

/* ------------------------------------------------------------------ */
/* Memory symmetry reduction                                          */
/* ------------------------------------------------------------------ */

/*
 * The three memories are interchangeable: they start equal, every
 * process treats them alike and any of them may crash. So two states
 * that differ only by a renaming of the memories have the same futures,
 * and the search needs only one of them. canon() renames the memories
 * after every step so that their contents come in a fixed order (a
 * three-element sorting network on a key that covers everything indexed
 * by memory: permission, crash, cells, and each process's bookkeeping).
 * It cuts the state space about six-fold; -DNOSYMM turns it off (trails
 * then keep the memories' names, easier to read).
 */
#define CKEY(i, s, c)							\
	((C(i, s, c).valid -> 4096 : 0) + C(i, s, c).min * 128 +	\
	 C(i, s, c).acc * 4 + C(i, s, c).val)
#define PKEY(i, q)							\
	(gpr[(q) * M + (i)] * 65536 + glo[(q) * M + (i)] * 8192 +	\
	 glast[(q) * M + (i)] * 4096 + glmin[(q) * M + (i)] * 128 +	\
	 glacc[(q) * M + (i)] * 4 + glval[(q) * M + (i)])
#define SWAP(x, y)	tmp = x; x = y; y = tmp

inline swap_mem(a, e)
{
	SWAP(perm[a], perm[e]);
	if
	:: mdown == a -> mdown = e
	:: mdown == e -> mdown = a
	:: else
	fi;
	s = 0;
	do
	:: s < N ->
		c = 0;
		do
		:: c < 2 ->
			SWAP(C(a, s, c).min, C(e, s, c).min);
			SWAP(C(a, s, c).acc, C(e, s, c).acc);
			SWAP(C(a, s, c).val, C(e, s, c).val);
			SWAP(C(a, s, c).valid, C(e, s, c).valid);
			c++
		:: else -> break
		od;
		SWAP(gpr[s * M + a], gpr[s * M + e]);
		SWAP(glast[s * M + a], glast[s * M + e]);
		SWAP(glo[s * M + a], glo[s * M + e]);
		SWAP(glmin[s * M + a], glmin[s * M + e]);
		SWAP(glacc[s * M + a], glacc[s * M + e]);
		SWAP(glval[s * M + a], glval[s * M + e]);
		s++
	:: else -> break
	od;
	s = 0; c = 0; tmp = 0
}

/* One field of the key: the first that differs decides (ko). */
inline key_field(fa, fe)
{
	if
	:: ko == 0 && fa < fe -> ko = 1
	:: ko == 0 && fa > fe -> ko = 2
	:: else
	fi
}

/* Put memories a < e in key order. */
inline order_mem(a, e)
{
	ko = 0;
	key_field(perm[a], perm[e]);
	key_field(mdown == a, mdown == e);
	key_field(CKEY(a, 0, 0), CKEY(e, 0, 0));
	key_field(CKEY(a, 0, 1), CKEY(e, 0, 1));
	key_field(CKEY(a, 1, 0), CKEY(e, 1, 0));
	key_field(CKEY(a, 1, 1), CKEY(e, 1, 1));
	key_field(CKEY(a, 2, 0), CKEY(e, 2, 0));
	key_field(CKEY(a, 2, 1), CKEY(e, 2, 1));
	key_field(PKEY(a, 0), PKEY(e, 0));
	key_field(PKEY(a, 1), PKEY(e, 1));
	key_field(PKEY(a, 2), PKEY(e, 2));
	if
	:: ko == 2 -> swap_mem(a, e)
	:: else
	fi;
	ko = 0
}

inline canon()
{
#ifndef NOSYMM
	order_mem(0, 1);
	order_mem(1, 2);
	order_mem(0, 1)
#else
	skip
#endif
}

/* ------------------------------------------------------------------ */
/* A process: sacred_pmp_propose()                                    */
/* ------------------------------------------------------------------ */

/*
 * The operation the current attempt has in flight on memory i, NONE if
 * it waits for nothing there. The library posts the next operation on a
 * memory from the completion of the previous one (the write needs the
 * key the changePermission reply carries), so there is always exactly
 * one in flight per memory until it finished phase 1 (and waits for
 * phase 2) or phase 2. PR(i) == 4: nothing more on memory i in this
 * attempt (phase 2 written there, or the attempt failed there).
 */
#ifdef BROKEN_LATE_PHASE2
/*
 * "Phase 2 writes on every memory": in phase 2, a memory still in phase
 * 1 gets the phase 2 write as soon as it has granted permission; its
 * phase 1 write and read, if still to come, are skipped.
 */
#define W2_NEXT(i)	(phase == P2 && PR(i) >= 1 && PR(i) <= 3)
#else
#define W2_NEXT(i)	(phase == P2 && PR(i) == 3)
#endif

#define NEXT_OP(i)							\
	(phase >= DONE || LO(i) != NONE -> NONE :			\
	 (PR(i) == 0 -> CP :						\
	  (W2_NEXT(i) -> W2 :						\
	   (PR(i) == 1 -> W1 :						\
	    (PR(i) == 2 -> RD : NONE)))))

/*
 * The process stops waiting for the current attempt (abort, decision,
 * giving up, crash): what it has in flight is left behind, and may still
 * land (a read left behind has no effect and is dropped). At most one
 * operation per memory: a memory that still had one left behind from an
 * earlier attempt never got an operation of this one.
 */
inline leave_behind()
{
	j = 0;
	do
	:: j < M ->
		nx = NEXT_OP(j);
		if
		:: nx == CP -> LO(j) = CP
		:: nx == W1 -> LO(j) = W1; LMIN(j) = b; LACC(j) = eacc;
			       LVAL(j) = eaval
		:: nx == W2 -> LO(j) = W2; LMIN(j) = b; LACC(j) = b;
			       LVAL(j) = v2
		:: else
		fi;
		j++
	:: else -> break
	od;
	j = 0;
	nx = NONE
}

/*
 * sacred_pmp_phase1(): a new attempt. Its proposal number b = k*N + p + 1
 * is the first above every number the process has seen; its phase 1
 * entry (b, own latest accepted proposal, its value) is fixed now. Then
 * changePermission on every memory (NEXT_OP: pr == 0).
 */
inline new_attempt()
{
	att++;
	x = (b > seen -> b : seen);
	b = (x / N) * N + p + 1;
	if
	:: b <= x -> b = b + N
	:: else
	fi;
	assert(b < 32);		/* cells hold 5-bit numbers */
	x = 0;
	eacc = acc;
	eaval = aval;
	if
	:: att == ATTS(p) -> seen = 0; acc = 0; aval = 0	/* dead */
	:: else
	fi;
	phase = P1;
	nclean = 0;
	nw2 = 0;
	p1acc = 0;
	p1val = 0;
	PR(0) = 0;
	PR(1) = 0;
	PR(2) = 0
}

/*
 * The process is done (decided, gave up or crashed). Whatever it had in
 * flight is left behind; the rest of its state is dead and cleared, so
 * that the search does not tell apart states that differ only in it.
 */
inline retire()
{
	leave_behind();
	phase = DONE;
	nret++;
	b = 0; att = 0; acc = 0; aval = 0; eacc = 0; eaval = 0; seen = 0;
	v2 = 0; nclean = 0; nw2 = 0; p1acc = 0; p1val = 0
}

/*
 * Abort the attempt: retry with a higher number, or give up. With SOLO,
 * process SOLO backs off instead, until it is alone (ALONE).
 */
inline abort_attempt()
{
	if
	:: att < ATTS(p) ->
		leave_behind();
#ifdef SOLO
		if
		:: p == SOLO ->
			phase = BACKOFF;
			nclean = 0; nw2 = 0; p1acc = 0; p1val = 0; v2 = 0;
			PR(0) = 0; PR(1) = 0; PR(2) = 0
		:: else -> new_attempt()
		fi
#else
		new_attempt()
#endif
	:: else -> retire()
	fi
}

/*
 * sacred_pmp_phase2(): a majority finished phase 1 and no read saw a
 * number above b. v2 is the value of the highest acc those reads
 * returned, or the process's own input if none did. The process accepts
 * (b, v2) itself, then writes (b, b, v2) on every memory whose phase 1 is
 * complete (NEXT_OP: pr == 3 in P2); a memory still in phase 1 gets it
 * once its own read came back clean.
 */
inline start_phase2()
{
	phase = P2;
	v2 = (p1acc > 0 -> p1val : input);
	if
	:: att < ATTS(p) -> acc = b; aval = v2
	:: else		/* no attempt left to use them */
	fi;
	nclean = 0;
	p1acc = 0;
	p1val = 0
}

/* Decide v2: agreement and validity are checked here. */
inline decide()
{
	/* validity: a decided value is some process's input */
	assert(v2 >= 1 && v2 <= N);
	/* agreement: no two processes decide different values */
	assert(decided == 0 || decided == v2);
	decided = v2;
	ndec++;
	decby = decby | (1 << p);
#ifdef REACH_TWO
	assert(ndec < 2);
#endif
#ifdef REACH_ADOPT
	assert(v2 == input);
#endif
#ifdef REACH_CRASHED
	assert(mdown == M || b == 1);
#endif
	retire()
}

/*
 * Which steps process p can take: memory i is up and p has an operation
 * for it (left behind, or of the current attempt); a write may tear
 * only if p lacks permission, and lose its ack (ACK_LOST) only if it
 * landed.
 */
#define WRITE_NEXT(i)							\
	(LO(i) == W1 || LO(i) == W2 ||					\
	 (LO(i) == NONE && (NEXT_OP(i) == W1 || NEXT_OP(i) == W2)))

#define HOW_OK(i, h)							\
	(h == NORMAL ||							\
	 (h == TORN && WRITE_NEXT(i) && perm[i] != p) ||		\
	 (h == LOST && WRITE_NEXT(i) && perm[i] == p))

#ifdef SOLO
/*
 * Process p is alone: every other process is done and (but with
 * SOLO_NO_DRAIN) has nothing in flight but on a crashed memory.
 */
#define QUIET(q)							\
	((glo[(q) * M] == NONE || mdown == 0) &&			\
	 (glo[(q) * M + 1] == NONE || mdown == 1) &&			\
	 (glo[(q) * M + 2] == NONE || mdown == 2))
#ifndef SOLO_NO_DRAIN
#define ALONE	(nret == N - 1 && QUIET((p + 1) % N) && QUIET((p + 2) % N))
#else
#define ALONE	(nret == N - 1)
#endif
#endif

#define STEP_OK(i, h)							\
	(mdown != i && (LO(i) != NONE || NEXT_OP(i) != NONE) && HOW_OK(i, h))

/*
 * One operation of process p executes at memory i, the way "how" says,
 * and p handles its completion, in one atomic step. A left-behind
 * operation goes first (the connection runs its operations in order);
 * its result is of no interest any more, but for a write's ack, which
 * says which cell is now the latest.
 */
inline step(i)
{
	d_step {
		nx = NEXT_OP(i);
		if
		:: LO(i) == CP ->
			perm[i] = p;
			LO(i) = NONE
		:: LO(i) == W1 || LO(i) == W2 ->
			write_slot(i, LMIN(i), LACC(i), LVAL(i));
			LO(i) = NONE;
			LMIN(i) = 0;
			LACC(i) = 0;
			LVAL(i) = 0
		/*
		 * Phase 1, step 1: changePermission(write). exclusive-writer
		 * accepts it at once: the previous writer loses write and p
		 * gets it (the kernel fences the loser before it replies).
		 */
		:: LO(i) == NONE && nx == CP ->
			perm[i] = p;
			PR(i) = 1
		/* Phase 1, step 2: write the phase 1 entry in own slot. */
		:: LO(i) == NONE && nx == W1 ->
			write_slot(i, b, eacc, eaval);
			if
			:: st == ACK -> PR(i) = 2
			:: else ->			/* contention */
				PR(i) = 4;
				abort_attempt()
			fi
		/* Phase 1, step 3: read every slot. */
		:: LO(i) == NONE && nx == RD ->
			read_slots(i, b);
			if
			:: rhi ->			/* a higher proposal */
				PR(i) = 4;
				abort_attempt()
			:: !rhi && phase == P1 ->
				PR(i) = 3;
				nclean++;
				if
				:: racc > p1acc ->
					p1acc = racc;
					p1val = rval
				:: else
				fi;
				if
				:: nclean >= MAJ -> start_phase2()
				:: else
				fi
			:: !rhi && phase == P2 ->
				PR(i) = 3	/* a late memory: W2 next */
			fi
		/* Phase 2: write (b, b, v2) in own slot. */
		:: LO(i) == NONE && nx == W2 ->
			write_slot(i, b, b, v2);
			PR(i) = 4;
			if
			:: st == ACK ->
				nw2++;
				if
				:: nw2 >= MAJ -> decide()
				:: else
				fi
			:: else -> abort_attempt()	/* contention */
			fi
		fi;
		st = 0; rhi = 0; racc = 0; rval = 0; nx = NONE;
		how = NORMAL; mi = 0;
		canon()
	}
}

#ifdef RESTART
/*
 * sacred_pmp_open() of a process that crashed and starts again: what it
 * had in flight stays in flight, what it knew is gone. It reads every
 * slot of the two memories other than x (a quorum read; the memory left
 * out may hold what the others do not): the highest number there is
 * where its proposals go on from, its own newest accepted pair is its
 * own again, and its next writes go to the other cell than its newest
 * one read. It takes the fast path - proposal number 1, no phase 1 -
 * only if it read nothing at all and holds write on a quorum, as the
 * library does; then it proposes 2, not its first input.
 */
inline reopen(out)
{
	leave_behind();
	rs = 1;
	b = 0; att = 0; acc = 0; aval = 0; eacc = 0; eaval = 0; seen = 0;
	v2 = 0; nclean = 0; nw2 = 0; p1acc = 0; p1val = 0;
	input = 2;
	ko = 1;			/* fast path possible: nothing read yet */
	st = 0;			/* an own cell read ... */
	tmp = 1;		/* ... its cell (1: none, write cell 0 first) */
	j = 0;
	do
	:: j < M ->
		if
		:: j != out ->
			s = 0;
			do
			:: s < N ->
				slot_cell(j);
				if
				:: c < 2 ->
					ko = 0;
					if
					:: C(j, s, c).min > seen ->
						seen = C(j, s, c).min
					:: else
					fi;
					if
					:: C(j, s, c).acc > seen ->
						seen = C(j, s, c).acc
					:: else
					fi;
					if
					:: s == p && C(j, s, c).acc > acc ->
						acc = C(j, s, c).acc;
						aval = C(j, s, c).val
					:: else
					fi;
					if
					:: s == p &&
					   (!st || C(j, s, c).min > rhi ||
					    (C(j, s, c).min == rhi &&
					     C(j, s, c).acc >= rval)) ->
						st = 1;
						rhi = C(j, s, c).min;
						rval = C(j, s, c).acc;
						tmp = c
					:: else
					fi
				:: else
				fi;
				s++
			:: else -> break
			od
		:: else
		fi;
		j++
	:: else -> break
	od;
	LASTACK(0) = tmp;
	LASTACK(1) = tmp;
	LASTACK(2) = tmp;
	if
	:: ko && (perm[0] == p) + (perm[1] == p) + (perm[2] == p) >= MAJ ->
		att = 1;
		b = 1;
		phase = P2;
		if
		:: att < ATTS(p) -> acc = b; aval = input
		:: else
		fi;
		v2 = input;
		PR(0) = 3;
		PR(1) = 3;
		PR(2) = 3
	:: else -> new_attempt()
	fi;
	s = 0; c = 0; j = 0; ko = 0; tmp = 0; st = 0; rhi = 0; rval = 0
}
#endif

proctype proposer(byte p; byte input)
{
	byte b;			/* proposal number of the current attempt */
	byte att;		/* attempts started */
	byte phase;
	byte acc;		/* own latest accepted proposal ... */
	byte aval;		/* ... and its value */
	byte eacc, eaval;	/* acc, aval when the attempt started */
	byte seen;		/* highest proposal number read anywhere */
	byte v2;		/* value of the current phase 2 */
	byte nclean;		/* memories done with phase 1, reads clean */
	byte nw2;		/* phase 2 acks */
	byte p1acc, p1val;	/* highest acc and its value in phase 1 */

	d_step {
		if
		:: ATTS(p) == 0 ->
			/* this process does not propose (smaller searches) */
			phase = DONE;
			nret++
		:: ATTS(p) > 0 && p == 0 ->
			/*
			 * Fast path: process 0 holds write permission on every
			 * memory from the start, so its first attempt skips
			 * phase 1: phase 2 with b = 1 and its own input.
			 */
			att = 1;
			b = 1;
			phase = P2;
			if
			:: att < ATTS(p) -> acc = b; aval = input
			:: else
			fi;
			v2 = input;
			PR(0) = 3;
			PR(1) = 3;
			PR(2) = 3
		:: ATTS(p) > 0 && p != 0 ->
			new_attempt()
		fi
	}

	do
	/*
	 * One operation on some memory, going some way: the choice is
	 * made first, then one shared d_step executes it (one copy of the
	 * step's code instead of one per choice: pan builds much faster).
	 * No state is stored between the choice and the step.
	 */
	:: atomic {
		if
		:: STEP_OK(0, NORMAL) -> mi = 0; how = NORMAL
		:: STEP_OK(1, NORMAL) -> mi = 1; how = NORMAL
		:: STEP_OK(2, NORMAL) -> mi = 2; how = NORMAL
		:: STEP_OK(0, TORN) -> mi = 0; how = TORN
		:: STEP_OK(1, TORN) -> mi = 1; how = TORN
		:: STEP_OK(2, TORN) -> mi = 2; how = TORN
#ifdef ACK_LOST
		:: STEP_OK(0, LOST) -> mi = 0; how = LOST
		:: STEP_OK(1, LOST) -> mi = 1; how = LOST
		:: STEP_OK(2, LOST) -> mi = 2; how = LOST
#endif
		fi;
		step(mi)
	   }
#ifdef RESTART
	/* crash and restart, once: reopen reading all memories but mi */
	:: atomic {
		p == 0 && !rs && phase != DONE ->
		if
		:: mdown != 1 && mdown != 2 -> mi = 0
		:: mdown != 0 && mdown != 2 -> mi = 1
		:: mdown != 0 && mdown != 1 -> mi = 2
		fi;
		d_step { reopen(mi); mi = 0; canon() }
	   }
#endif
#ifdef SOLO
	/*
	 * The back-off ends once the others returned, or crashed, and
	 * (but with SOLO_NO_DRAIN) their operations landed.
	 */
	:: d_step { phase == BACKOFF && ALONE -> new_attempt(); canon() }
#endif
#ifdef PCRASH
	/* crash: stop at any step; what is in flight may still land */
	:: d_step { phase != DONE && pdown < N - 1 -> pdown++; retire() }
#endif
	/* done, and nothing left in flight but on a crashed memory */
	:: atomic { phase == DONE && (LO(0) == NONE || mdown == 0) &&
		    (LO(1) == NONE || mdown == 1) &&
		    (LO(2) == NONE || mdown == 2) -> break }
	od
}

#ifndef NOCRASH
/* At most one memory crashes, at any step: it executes nothing more. */
active proctype crash()
{
	d_step { mdown = 0; canon() }
}
#endif

init {
	atomic {
#if defined(RESTART) && !defined(BROKEN_NO_MARK)
		/*
		 * pmp_mark(): process 0's first open promised 1 in cell 0 of
		 * its slot on a quorum - memory 0 may lack it - before its fast
		 * path (which thus writes cell 1).
		 */
		if
		:: mi = 0
		:: mi = M
		fi;
		j = 0;
		do
		:: j < M ->
			if
			:: j != mi -> C(j, 0, 0).min = 1; C(j, 0, 0).valid = true
			:: else
			fi;
			glast[j] = 0;
			j++
		:: else -> break
		od;
		mi = 0;
		j = 0;
#endif
		run proposer(0, 1);
		run proposer(1, 2);
		run proposer(2, 3)
	}
}

/*
 * Termination. LIVE_RETURN: every run ends with every process done
 * (decided, gave up or crashed). LIVE_DECIDE=p: and p decided; with
 * SOLO=p it holds (scripts/check-model: 3x1-backoff), without the
 * back-off, or with SOLO_NO_DRAIN, it does not.
 */
#ifdef LIVE_RETURN
ltl returns { <> (nret == N) }
#endif
#ifdef LIVE_DECIDE
ltl decides { <> (nret == N && (decby & (1 << LIVE_DECIDE)) != 0) }
#endif
