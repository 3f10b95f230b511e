// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - Byzantine consensus on memory permissions: Cheap Quorum's
 * fast path, its panic, and the robust backup (Aguilera et al., "The
 * Impact of RDMA on Agreement", PODC'19; the backup after Clement et al.,
 * "On the (limited) power of non-equivocation", PODC'12). n >= 2f + 1
 * processes, f of them Byzantine; a minority of memories may crash.
 *
 * This file owns struct sacred_cheapq: the regions' layout and their setup,
 * the signed records, the fast path, the panic and the backup.
 *
 * Regions, the same ids on every memory (sacred_cheapq_setup() makes them):
 *
 *   base              the leader region: revoke-only, the leader (process
 *                     0) read-write, everyone else read. Slot 0: the
 *                     leader's signed value.
 *   base + 1 + i      process i's region: swmr, i the writer. Slot 0: i's
 *                     signed copy of the leader's value (followers, every
 *                     process but the leader, copy) - the leader's mark
 *                     in the leader's region (cheapq_leader_resume()); slot
 *                     1: i's signed panic; slot 2: "done" (i decided).
 *   base + 1 + n + i  process i's commit region: revoke-only, i
 *                     read-write. Slot 0: the unanimity certificate i saw
 *                     before it decided on the fast path (followers only:
 *                     the leader's stays empty).
 *   base + 1 + 2n + i process i's broadcast region for the backup (swmr,
 *                     lib/neb.c).
 *
 * Words used below. A value is signed when it comes with the leader's
 * valid signature; a correct leader signs one value, ever. A unanimity
 * certificate for v is the leader's signature of v and every follower's
 * signature of its copy of v; v is then certified. At most one value is
 * ever certified: if the leader is correct it signed one value, and if it
 * is not, one of the n - 1 >= 2f followers is correct and signs one copy.
 *
 * Fast path, with everyone correct and in time:
 *   the leader, input v: sign v, write (v, sig_leader(v)) into the leader
 *   region and, once a quorum of memories took it, decide v - one round
 *   trip (why that is safe: below);
 *   a follower:
 *     1. read the leader region until a signed value is there; write
 *        (value, leader's signature, own signature) into own slot 0 - the
 *        copy; a process copies at most once;
 *     2. read the leader region and every other follower's slot 0, all at
 *        once (one quorum round trip: sacred_slots_read_many()), until
 *        all n - 1 followers hold valid copies of the same value: with
 *        the leader's signature, a certificate for it;
 *     3. write the certificate into own commit region; once a quorum of
 *        memories took it, decide.
 *     Four quorum round trips one after the other: a read of the leader
 *     region, the copy, one read of the leader region and the copies, the
 *     commit.
 *
 * Panic - on a timeout, another signed value in the leader region or in a
 * copy (the leader equivocated), someone else's panic, or a refused
 * write:
 *   1. revoke the leader's write on the leader region (revoke-only: for
 *      good), and sign a panic into own slot 1;
 *   2. for every other follower j: revoke j's write on j's commit region,
 *      then read it. Once the revoke is answered at a memory no commit of
 *      j can land there any more (the kernel fences it), and the read
 *      follows the revoke on every memory it uses: the two are one
 *      sacred_slots_read_after() - a sacred_rmem_chain() that sends the
 *      read to a memory only once the revoke was answered there, and
 *      takes cells only from memories where both succeeded. (Two quorum
 *      calls would not do: a memory that missed the revoke - down, or
 *      sitting out with a changePermission in flight (lib/rmem.c) - may
 *      be reconnected by cheapq_again() in between and counted by the read,
 *      while j's commit can still land there after it.) So the read sees
 *      every commit that landed before. A correct follower decides on the
 *      fast path only after its commit reached a quorum, and that quorum
 *      meets the read's: so if any correct follower decided v on the fast
 *      path, every correct process that panics finds v's certificate;
 *   3. carry into the backup, with its proof: a certified value if one was
 *      found (or this process holds one itself); else a signed value: its
 *      copy (the leader: its own value), else the leader region's value,
 *      read after step 1's revoke - the revoke is sent again, chained
 *      before the read at each memory in the same way (repeating a revoke
 *      on a revoke-only region is accepted); else - nothing signed there -
 *      its input, with no proof (plain). A read of the leader region that
 *      fails ends the panic with its error: carrying the input instead
 *      could lose the leader's decision.
 *
 * Why the leader may decide after one write. Say the leader is correct
 * and decided v. Its write of v succeeded at a quorum Q of memories, so at
 * each of them it landed before any revoke of the leader's write there
 * (after the revoke the memory refuses it: the kernel fences the leader).
 * A correct process enters the backup either after deciding on the fast
 * path - then, a follower, it carries a certified value, which the leader
 * signed, so v - or through a panic. A panicking process carries a
 * certified value (v again), or its copy (signed, so v), or reads the
 * leader region after its revoke: at every memory that read uses, the
 * revoke was answered first (step 3: chained), so v landed there before
 * the read or never lands; the read meets Q, so at a memory where v
 * landed before it, and v is the newest cell there (the leader writes
 * once): it carries v signed. So every correct process carries v
 * certified or signed, and nobody can carry another value certified or
 * signed: both need the leader's signature. The backup's rule (below)
 * proposes a value of the highest rank in a quorum, and every quorum
 * holds a correct process: v. What a Byzantine process adds - a copy, a
 * certificate or a carried value without valid signatures - is ignored,
 * or proves its sender faulty.
 *
 * The robust backup: single-decree Paxos over non-equivocating broadcast,
 * rounds r = 0, 1, ... led by process r mod n, a quorum being a majority
 * (f + 1 of 2f + 1). Each process broadcasts exactly one message for each
 * number k, in order: k = 3r PROMISE(r) (for r = 0 with the carried
 * value and its proof: the certificate, or the leader's signature), k =
 * 3r + 1 PROPOSE(r, S, v) from the leader or SKIP, k = 3r + 2 ACCEPT(r,
 * v) or SKIP. Nobody takes a message on trust: a message is used only
 * once it and every earlier one of its sender were delivered (lib/neb.c:
 * everyone delivers the same content or nothing) and checked against the
 * sender's own history and the messages it depends on:
 *   PROPOSE(r, S, v): S is a quorum whose PROMISE(r) are valid, and v is
 *     the value of the highest round anyone in S had accepted before its
 *     PROMISE(r); if nobody had, a value carried in S at the highest rank
 *     there: certified (all the same value), else signed, else plain;
 *   ACCEPT(r, v): v is the value of the leader's valid PROPOSE(r).
 * A process decides v when a quorum's ACCEPT(r, v) are valid. Invalid
 * messages prove their sender faulty; it is ignored from then on. With
 * histories checked this way a Byzantine process can only do what a
 * correct one might (choose its input, stay silent, be slow), so Paxos'
 * argument holds with f + 1 of 2f + 1: a decided (r, v) had a quorum of
 * valid ACCEPTs; every later quorum of PROMISEs contains one of their
 * senders, whose valid PROMISE reports an accept of round >= r, so every
 * later valid PROPOSE is v. If a follower decided v on the fast path,
 * every correct process carries v certified and no other value can be;
 * if the leader did, every correct process carries v certified or signed
 * and no other value can be either: so the first valid PROPOSE - from any
 * quorum, which holds a correct process - is v too. Round r waits
 * round_ms * (r + 1) for each of its steps.
 *
 * A decided process calls sacred_cheapq_help(), which writes "done" into its
 * slot 2 (not on the way to the decision: only helpers read it) and keeps
 * it in the backup (a quorum needs it) until every process is done or
 * time runs out.
 *
 * What a Byzantine process cannot do: write into another's region, or the
 * leader region after the panic, or a commit region after its revoke (the
 * memory refuses); sign as another process; make two correct processes
 * deliver different messages; get an unjustified value accepted.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>

#include "internal.h"
#include "sacred.h"

/*
 * Signature domains. They are part of the wire format (every process must
 * sign with the same strings), so they keep the name the protocol had when
 * they were fixed: "cq" in them is Cheap Quorum.
 */
#define CHEAPQ_VALUE_DOMAIN	"sacred-cq-value-v2"
#define CHEAPQ_COPY_DOMAIN	"sacred-cq-copy-v2"
#define CHEAPQ_PANIC_DOMAIN	"sacred-cq-panic-v2"
/* Record: __le32 len, pad, leader signature, own signature, value. */
#define CHEAPQ_HDR		(8 + 2 * SACRED_BZ_SIG_LEN)
#define CHEAPQ_SIG		SACRED_BZ_SIG_LEN
/* Signed bytes start with the instance: __le32 base region, __le64 tag. */
#define CHEAPQ_SIGNED_ID	12

/* Slots of a process's region. */
#define CHEAPQ_SLOT_COPY	0
#define CHEAPQ_SLOT_MARK	0	/* the leader's region: no copy */
#define CHEAPQ_SLOT_PANIC	1
#define CHEAPQ_SLOT_DONE	2
#define CHEAPQ_NR_SLOTS	3

/* Backup messages: header, then the value, then its proof's signatures. */
#define BK_PROMISE	1
#define BK_PROPOSE	2
#define BK_ACCEPT	3
#define BK_SKIP		4
#define BK_CERT		0x1	/* flags: the carried value is certified */
#define BK_SIGNED	0x2	/* flags: it comes with the leader's signature */
#define BK_HDR		16

/* How much a carried value weighs in the backup (struct cheapq_peer.rank). */
#define CHEAPQ_PLAIN	0	/* some process's input: no proof */
#define CHEAPQ_SIGNED	1	/* the leader signed it */
#define CHEAPQ_CERTIFIED	2	/* it has a unanimity certificate */

#define CHEAPQ_DEFAULT_ROUNDS	8
#define CHEAPQ_MAX_ROUNDS		64

/*
 * Polling a slot that is not there yet: the first pause is short - the
 * peer's write is about one round trip away - and each next one twice as
 * long, up to CHEAPQ_POLL_MAX_US. Others' panics are looked for from
 * CHEAPQ_PANIC_LOOK_MS into the fast path on, every CHEAPQ_PANIC_LOOK_MS.
 */
#define CHEAPQ_POLL_MIN_US		50
#define CHEAPQ_POLL_MAX_US		1000
#define CHEAPQ_PANIC_LOOK_MS	20

/**
 * struct cheapq_peer - what the backup checked of one process's messages
 * @next: messages 0 .. @next - 1 were delivered and are valid
 * @bad: the process sent an invalid message: ignored from then on
 * @rank: what its carried value comes with: CHEAPQ_PLAIN, CHEAPQ_SIGNED or
 *	CHEAPQ_CERTIFIED (checked)
 * @carry_len: bytes of the carried value
 * @carry: the carried value (from its PROMISE(0))
 * @abal: the last round it accepted in, -1 for none
 * @aval_len: bytes of that round's value
 * @aval: the value
 * @p_abal: per round r, @abal when it promised r
 * @p_len: per round, @aval_len then
 * @p_val: per round, @aval then (value_max bytes each)
 * @prop_ok: per round it leads, its PROPOSE is valid
 * @prop_len: that proposal's bytes
 * @prop_val: its value (value_max bytes each)
 * @acc: per round, its ACCEPT is valid
 */
struct cheapq_peer {
	unsigned int next;
	bool bad;
	uint8_t rank;
	size_t carry_len;
	uint8_t *carry;
	int abal;
	size_t aval_len;
	uint8_t *aval;
	int *p_abal;
	size_t *p_len;
	uint8_t *p_val;
	bool *prop_ok;
	size_t *prop_len;
	uint8_t *prop_val;
	bool *acc;
};

/**
 * struct sacred_cheapq - one process's view of a Byzantine consensus instance
 * @a: as opened
 * @n: processes
 * @me: this process
 * @quorum: a majority of @n
 * @pids: process ids (targets of the panic's revokes)
 * @leader: the leader region's slots
 * @procs: each process's region's slots
 * @commit: each process's commit region's slots
 * @neb: the backup's broadcast
 * @rec: a record being built
 * @buf: one being read
 * @look: SACRED_RMEM_CHAIN_MAX records being read at once (cheapq_look())
 * @tag: the tag the instance's regions were made with (sacred_cheapq_setup())
 * @signed_buf: the bytes a signature covers
 * @msg: a backup message being built or read
 * @msg_max: the largest backup message
 * @stats: counters of the last propose
 * @copied: this process holds a value the leader signed, which it wrote
 *	(or tried to write) into the memory: a follower its copy, the leader
 *	its own value
 * @copy: that value
 * @copy_len: its bytes
 * @lsig: the leader's signature of it
 * @mysig: a follower's signature of its copy
 * @carry_lsig: the leader's signature of the value carried into the
 *	backup, when it is CHEAPQ_SIGNED
 * @panic_check: when to look for others' panics next (ms)
 * @stall: test hook: return after the copy
 * @cert: a unanimity certificate held: the leader's signature, then
 *	followers 1 .. n - 1's copy signatures
 * @certified: @cert and @cert_val are set
 * @cert_val: the certified value
 * @cert_len: its bytes
 * @decided: this process decided
 * @said_done: it wrote "done" (sacred_cheapq_help())
 * @dec: the decision
 * @dec_len: its bytes
 * @panicked: this process panicked (sacred_cheapq_propose() resumes there)
 * @pend: a backup message whose broadcast failed, to send again as it was
 * @pend_len: its bytes
 * @pend_k: its number, or -1 for none
 * @no_fast: opened without write on its commit region (a follower) or the
 *	leader region (the leader) - a panic revoked it: straight to the
 *	backup
 * @may_sign: the leader: it signed no value before this handle, and its
 *	mark is on a quorum (cheapq_leader_resume()): it may sign one
 * @in_backup: this process has joined the backup
 * @round: the backup round this process is in
 * @peer: the backup's view of every process
 * @bad_carry: test hook: carry this into the backup
 * @bad_carry_len: its bytes, or -1 for none
 * @forge_carry: test hook: with a made-up leader signature
 * @bad_prop: test hook: propose this as backup leader
 * @bad_prop_len: its bytes, or -1 for none
 */
struct sacred_cheapq {
	struct sacred_cheapq_attr a;
	unsigned int n, me, quorum;
	uint32_t pids[SACRED_BZ_MAX_PROCS];
	struct sacred_slots *leader;
	struct sacred_slots *procs[SACRED_BZ_MAX_PROCS];
	struct sacred_slots *commit[SACRED_BZ_MAX_PROCS];
	struct sacred_neb *neb;
	uint64_t tag;
	uint8_t *rec, *buf, *look, *signed_buf, *msg;
	size_t msg_max;
	struct sacred_cheapq_stats stats;
	bool copied;
	uint8_t *copy;
	size_t copy_len;
	uint8_t lsig[CHEAPQ_SIG];
	uint8_t mysig[CHEAPQ_SIG];
	uint8_t carry_lsig[CHEAPQ_SIG];
	uint64_t panic_check;
	bool stall;
	uint8_t cert[SACRED_BZ_MAX_PROCS * CHEAPQ_SIG];
	bool certified;
	uint8_t *cert_val;
	size_t cert_len;
	bool decided;
	bool said_done;
	uint8_t *dec;
	size_t dec_len;
	bool panicked;
	uint8_t *pend;
	size_t pend_len;
	long pend_k;
	bool no_fast;
	bool may_sign;
	bool in_backup;
	unsigned int round;
	struct cheapq_peer peer[SACRED_BZ_MAX_PROCS];
	uint8_t *bad_carry, *bad_prop;
	ssize_t bad_carry_len, bad_prop_len;
	bool forge_carry;
};

/* What the test hooks put where a leader's signature goes: not one. */
static const uint8_t cheapq_forged_sig[CHEAPQ_SIG] = { [0 ... CHEAPQ_SIG - 1] =
							       0xa5 };

struct cheapq_rec {
	uint32_t len;
	const uint8_t *lsig;
	const uint8_t *sig;
	const uint8_t *val;
};

static uint64_t cheapq_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t cheapq_msg_max(unsigned int n, size_t value_max)
{
	return BK_HDR + value_max + (n + 1) * CHEAPQ_SIG;
}

/* A commit record: __le32 len, pad, the certificate's n signatures, value. */
static size_t cheapq_commit_max(unsigned int n, size_t value_max)
{
	return 8 + n * CHEAPQ_SIG + value_max;
}

/* Bytes of a cell of @payload (lib/slots.c). */
static size_t cheapq_cell_bytes(size_t payload)
{
	return (SACRED_CELL_HDR + payload + 7) & ~(size_t)7;
}

/* Bytes of a region of @nr_slots two-cell slots of @payload (lib/slots.c). */
static uint64_t cheapq_region_bytes(size_t payload, unsigned int nr_slots)
{
	uint64_t cell = cheapq_cell_bytes(payload);

	return (2 * cell * nr_slots + 4095) & ~(uint64_t)4095;
}

/*
 * The bytes a signature covers: the instance - its base region and the
 * tag its regions were made with, so that no signature of an earlier
 * instance on the same region ids is good in this one - then @parts.
 */
static size_t cheapq_signed(struct sacred_cheapq *cheapq, const void *a,
			    size_t alen, const void *b, size_t blen)
{
	uint32_t base = htole32(cheapq->a.base_region);
	uint64_t tag = htole64(cheapq->tag);

	memcpy(cheapq->signed_buf, &base, 4);
	memcpy(cheapq->signed_buf + 4, &tag, 8);
	memcpy(cheapq->signed_buf + CHEAPQ_SIGNED_ID, a, alen);
	if (blen)
		memcpy(cheapq->signed_buf + CHEAPQ_SIGNED_ID + alen, b, blen);
	return CHEAPQ_SIGNED_ID + alen + blen;
}

static bool cheapq_leader_sig_ok(struct sacred_cheapq *cheapq, const void *v,
				 size_t len, const uint8_t *lsig)
{
	size_t n = cheapq_signed(cheapq, v, len, NULL, 0);

	return sacred_bz_verify(cheapq->a.keys, 0, CHEAPQ_VALUE_DOMAIN,
				cheapq->signed_buf, n, lsig);
}

static bool cheapq_copy_sig_ok(struct sacred_cheapq *cheapq, unsigned int who,
			   const void *v, size_t len, const uint8_t *lsig,
			   const uint8_t *sig)
{
	size_t n = cheapq_signed(cheapq, lsig, CHEAPQ_SIG, v, len);

	return sacred_bz_verify(cheapq->a.keys, who, CHEAPQ_COPY_DOMAIN,
				cheapq->signed_buf, n, sig);
}

static bool cheapq_copy_ok(struct sacred_cheapq *cheapq, unsigned int who,
		       const struct cheapq_rec *r)
{
	return cheapq_leader_sig_ok(cheapq, r->val, r->len, r->lsig) &&
	       cheapq_copy_sig_ok(cheapq, who, r->val, r->len, r->lsig, r->sig);
}

/*
 * A unanimity certificate for @v: the leader's signature, then the copy
 * signature of each follower 1 .. n - 1, CHEAPQ_SIG bytes each (follower p's
 * at @cert + p * CHEAPQ_SIG). The leader copies nothing: its signature of @v
 * is its word.
 */
static bool cheapq_cert_ok(struct sacred_cheapq *cheapq, const void *v,
			   size_t len, const uint8_t *cert)
{
	unsigned int p;

	if (!cheapq_leader_sig_ok(cheapq, v, len, cert))
		return false;
	for (p = 1; p < cheapq->n; p++)
		if (!cheapq_copy_sig_ok(cheapq, p, v, len, cert,
					cert + p * CHEAPQ_SIG))
			return false;
	return true;
}

static bool cheapq_parse(const struct sacred_cheapq *cheapq, const uint8_t *buf,
			 size_t len, struct cheapq_rec *r)
{
	uint32_t l;

	if (len < CHEAPQ_HDR)
		return false;
	memcpy(&l, buf, 4);
	r->len = le32toh(l);
	r->lsig = buf + 8;
	r->sig = buf + 8 + CHEAPQ_SIG;
	r->val = buf + CHEAPQ_HDR;
	return r->len <= cheapq->a.value_max && r->len == len - CHEAPQ_HDR;
}

/* Build a record: value, the leader's signature, and (copies) our own. */
static size_t cheapq_build(struct sacred_cheapq *cheapq, const void *v,
			   size_t len, const uint8_t *lsig, bool copy)
{
	uint32_t l = htole32((uint32_t)len);
	size_t n;

	memset(cheapq->rec, 0, CHEAPQ_HDR);
	memcpy(cheapq->rec, &l, 4);
	memmove(cheapq->rec + CHEAPQ_HDR, v, len);
	if (lsig) {
		memmove(cheapq->rec + 8, lsig, CHEAPQ_SIG);
	} else {
		n = cheapq_signed(cheapq, v, len, NULL, 0);
		sacred_bz_sign(cheapq->a.keys, CHEAPQ_VALUE_DOMAIN,
			       cheapq->signed_buf, n, cheapq->rec + 8);
	}
	if (copy) {
		n = cheapq_signed(cheapq, cheapq->rec + 8, CHEAPQ_SIG, v, len);
		sacred_bz_sign(cheapq->a.keys, CHEAPQ_COPY_DOMAIN,
			       cheapq->signed_buf, n,
			       cheapq->rec + 8 + CHEAPQ_SIG);
	}
	return CHEAPQ_HDR + len;
}

/*
 * Every panic revokes write permissions, and the kernel fences a revoked
 * process's connections (Documentation/permission-switch.rst): an
 * operation of ours may find them reset. Reconnect and try again, a few
 * times.
 */
static bool cheapq_again(struct sacred_cheapq *cheapq, int ret, int *tries)
{
	if ((ret != -ECONNRESET && ret != -ENOTCONN) || (*tries)++ >= 3)
		return false;
	sacred_rmem_revive(cheapq->a.rm);
	return true;
}

/*
 * What this process carries into the backup: @v, of @rank; @lsig, the
 * leader's signature of it, for CHEAPQ_SIGNED.
 */
static void cheapq_carry(struct sacred_cheapq *cheapq, const void *v,
			 size_t len, uint8_t rank, const uint8_t *lsig)
{
	struct cheapq_peer *me = &cheapq->peer[cheapq->me];

	memmove(me->carry, v, len);
	me->carry_len = len;
	me->rank = rank;
	if (lsig)
		memmove(cheapq->carry_lsig, lsig, CHEAPQ_SIG);
}

/*
 * Remember @v, signed by the leader with @lsig, as the value this process
 * holds and wrote (or is about to write): a follower's copy, the leader's
 * own value (cheapq->copied).
 */
static void cheapq_hold_copy(struct sacred_cheapq *cheapq, const void *v,
			     size_t len, const uint8_t *lsig)
{
	memmove(cheapq->lsig, lsig, CHEAPQ_SIG);
	memmove(cheapq->copy, v, len);
	cheapq->copy_len = len;
	cheapq->copied = true;
}

/* Remember a certificate (value and signatures) as this process's. */
static void cheapq_hold_cert(struct sacred_cheapq *cheapq, const void *v,
			     size_t len, const uint8_t *cert)
{
	memmove(cheapq->cert_val, v, len);
	cheapq->cert_len = len;
	memmove(cheapq->cert, cert, cheapq->n * CHEAPQ_SIG);
	cheapq->certified = true;
}

/**
 * sacred_cheapq_setup() - create an instance's regions on memory instances
 * @ctrl: netlink handle (as admin, on the memories' host)
 * @mem_ids: the memory instances
 * @nr_mems: how many
 * @attr: the instance: base_region, value_max, rounds, and the process
 *	ids (pids, or leader_pid + i); rm and keys are not used
 * @nr_procs: processes
 *
 * Creates the 1 + 3 * @nr_procs regions of the layout in lib/cheapq.c with
 * their policies and ACLs, each as small as it can be, all with one tag
 * (sacred_region_new_tagged()): attr->tag, or a new random one if it is
 * 0. Signatures bind it, so nothing signed for an instance set up before
 * on the same region ids is good in this one - as long as each setup
 * has a new tag (memories on several hosts: one call per host, each
 * with the same new attr->tag).
 *
 * Return: 0; -EINVAL; -errno of getrandom(2); the errors of
 * sacred_region_new() and sacred_region_set_acl() (regions made before a
 * failure stay).
 */
int sacred_cheapq_setup(struct sacred_ctrl *ctrl, const uint32_t *mem_ids,
		    unsigned int nr_mems, const struct sacred_cheapq_attr *attr,
		    unsigned int nr_procs)
{
	struct sacred_acl_entry acl[SACRED_BZ_MAX_PROCS];
	unsigned int rounds, i, j, p, kind;
	uint64_t size, tag;
	size_t rec;
	int ret;

	if (!ctrl || !mem_ids || !attr || nr_procs < 2 ||
	    nr_procs > SACRED_BZ_MAX_PROCS || attr->value_max > (1U << 16))
		return -EINVAL;
	rounds = attr->rounds ? attr->rounds : CHEAPQ_DEFAULT_ROUNDS;
	if (rounds > CHEAPQ_MAX_ROUNDS)
		return -EINVAL;
	tag = attr->tag;
	while (!tag)
		if (getrandom(&tag, sizeof(tag), 0) != sizeof(tag))
			return -errno;
	rec = CHEAPQ_HDR + attr->value_max;
	for (kind = 0; kind < 4; kind++) {
		for (p = 0; p < (kind ? nr_procs : 1); p++) {
			uint32_t id = attr->base_region;
			uint8_t policy = SACRED_POLICY_SWMR;

			switch (kind) {
			case 0:
				size = cheapq_region_bytes(rec, 1);
				policy = SACRED_POLICY_REVOKE_ONLY;
				break;
			case 1:
				id += 1 + p;
				size = cheapq_region_bytes(rec,
							   CHEAPQ_NR_SLOTS);
				break;
			case 2:
				id += 1 + nr_procs + p;
				size = cheapq_commit_max(nr_procs,
							 attr->value_max);
				size = cheapq_region_bytes(size, 1);
				policy = SACRED_POLICY_REVOKE_ONLY;
				break;
			default:
				id += 1 + 2 * nr_procs + p;
				size = cheapq_msg_max(nr_procs,
						      attr->value_max) + 88;
				size = cheapq_region_bytes(size, 3 * rounds *
							   (nr_procs + 1));
				break;
			}
			for (i = 0; i < nr_procs; i++)
				acl[i] = (struct sacred_acl_entry){
					.process_id = attr->pids ?
						attr->pids[i] :
						attr->leader_pid + i,
					.access = i == p ?
						SACRED_ACCESS_READ |
						SACRED_ACCESS_WRITE :
						SACRED_ACCESS_READ,
				};
			for (j = 0; j < nr_mems; j++) {
				ret = sacred_region_new_tagged(ctrl, mem_ids[j],
							       id, size, policy,
							       tag, NULL);
				if (!ret)
					ret = sacred_region_set_acl(ctrl,
								    mem_ids[j],
								    id, acl,
								    nr_procs);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

static void cheapq_free_peers(struct sacred_cheapq *cheapq)
{
	unsigned int p;

	for (p = 0; p < SACRED_BZ_MAX_PROCS; p++) {
		struct cheapq_peer *pe = &cheapq->peer[p];

		free(pe->carry);
		free(pe->aval);
		free(pe->p_abal);
		free(pe->p_len);
		free(pe->p_val);
		free(pe->prop_ok);
		free(pe->prop_len);
		free(pe->prop_val);
		free(pe->acc);
		memset(pe, 0, sizeof(*pe));
	}
}

static int cheapq_alloc_peers(struct sacred_cheapq *cheapq)
{
	unsigned int p, r = cheapq->a.rounds;
	size_t vm = cheapq->a.value_max + 1;

	for (p = 0; p < cheapq->n; p++) {
		struct cheapq_peer *pe = &cheapq->peer[p];

		pe->carry = malloc(vm);
		pe->aval = malloc(vm);
		pe->p_abal = calloc(r, sizeof(*pe->p_abal));
		pe->p_len = calloc(r, sizeof(*pe->p_len));
		pe->p_val = malloc(r * vm);
		pe->prop_ok = calloc(r, sizeof(*pe->prop_ok));
		pe->prop_len = calloc(r, sizeof(*pe->prop_len));
		pe->prop_val = malloc(r * vm);
		pe->acc = calloc(r, sizeof(*pe->acc));
		if (!pe->carry || !pe->aval || !pe->p_abal || !pe->p_len ||
		    !pe->p_val || !pe->prop_ok || !pe->prop_len ||
		    !pe->prop_val || !pe->acc)
			return -ENOMEM;
		pe->abal = -1;
	}
	return 0;
}

/*
 * The leader's signed value from a read of the leader region that
 * returned @ret, the cell's payload in cheapq->buf and @v: into @r. Returns
 * 0; -EAGAIN (nothing there); -EBADMSG (not a value the leader signed);
 * @ret, a replicated-memory error.
 */
static int cheapq_leader_value(struct sacred_cheapq *cheapq, int ret,
			       const struct sacred_cell_view *v,
			       struct cheapq_rec *r)
{
	if (ret == -ENODATA)
		return -EAGAIN;
	if (ret == -ENOSPC)
		return -EBADMSG;
	if (ret)
		return ret;
	if (!cheapq_parse(cheapq, cheapq->buf, v->len, r) ||
	    !cheapq_leader_sig_ok(cheapq, r->val, r->len, r->lsig))
		return -EBADMSG;
	return 0;
}

/*
 * The leader's signed value, if one is there: into cheapq->buf / @r. With
 * @revoke, at each memory the read is sent only after that
 * changePermission was answered there, and only memories where both
 * succeeded count (sacred_slots_read_after()). Returns as
 * cheapq_leader_value(); -EPERM when the policies refused @revoke.
 */
static int cheapq_read_leader(struct sacred_cheapq *cheapq,
			  const struct sacred_perm_req *revoke,
			  struct cheapq_rec *r)
{
	size_t max = CHEAPQ_HDR + cheapq->a.value_max;
	struct sacred_cell_view v;
	int ret;

	if (revoke) {
		cheapq->stats.round_trips += 2;
		ret = sacred_slots_read_after(cheapq->leader, 0, revoke,
					      cheapq->buf, max, &v);
	} else {
		cheapq->stats.round_trips++;
		ret = sacred_slots_read(cheapq->leader, 0, cheapq->buf, max,
					&v);
	}
	return cheapq_leader_value(cheapq, ret, &v, r);
}

/*
 * The leader may sign (cheapq->may_sign) once its mark is on a quorum: the
 * mark is written, in this handle, before any value is ever signed.
 */
static void cheapq_leader_mark(struct sacred_cheapq *cheapq)
{
	static const char mark[] = "leader";
	int tries = 0;
	int ret;

	do {
		cheapq->stats.round_trips++;
		ret = sacred_slots_write(cheapq->procs[0], CHEAPQ_SLOT_MARK,
					 mark, sizeof(mark));
	} while (cheapq_again(cheapq, ret, &tries));
	cheapq->may_sign = !ret;
}

/*
 * The leader, before it signs anything. It signs only after its mark
 * reached a quorum (cheapq_leader_mark()), so a quorum read that finds no
 * mark proves it never signed: it marks, and may sign - one write at its
 * first open, even with a memory down. With the mark there, a value it
 * signed with an earlier handle is the one it proposes (cheapq_hold_copy()).
 * That write may have reached a single memory before a crash, which a
 * quorum read can miss: so the leader region is read from every memory,
 * and only if all of them answer and none holds a signed value may it
 * sign. Returns 0 or a read's error.
 */
static int cheapq_leader_resume(struct sacred_cheapq *cheapq)
{
	size_t max = CHEAPQ_HDR + cheapq->a.value_max;
	struct sacred_cell_view v;
	bool every = false;
	struct cheapq_rec lr;
	int tries = 0;
	int ret;

	do {
		cheapq->stats.round_trips++;
		ret = sacred_slots_read(cheapq->procs[0], CHEAPQ_SLOT_MARK,
					cheapq->buf, max, &v);
	} while (cheapq_again(cheapq, ret, &tries));
	if (ret == -ENODATA) {
		cheapq_leader_mark(cheapq);
		return 0;
	}
	if (ret && ret != -ENOSPC) /* -ENOSPC: not ours, but a cell */
		return ret;

	tries = 0;
	do {
		cheapq->stats.round_trips++;
		ret = sacred_slots_read_every(cheapq->leader, 0, cheapq->buf,
					      max, &v, &every);
		ret = cheapq_leader_value(cheapq, ret, &v, &lr);
	} while (cheapq_again(cheapq, ret, &tries));
	if (!ret) {
		cheapq_hold_copy(cheapq, lr.val, lr.len, lr.lsig);
		return 0;
	}
	if (ret != -EAGAIN && ret != -EBADMSG)
		return ret;
	if (every)
		cheapq_leader_mark(cheapq);
	return 0;
}

/* @cheapq's fields from @attr, for @n processes, and its buffers. */
static int cheapq_init(struct sacred_cheapq *cheapq,
		       const struct sacred_cheapq_attr *attr, unsigned int n)
{
	unsigned int p;
	size_t rec;

	cheapq->a = *attr;
	if (!cheapq->a.timeout_ms)
		cheapq->a.timeout_ms = 1000;
	if (!cheapq->a.round_ms)
		cheapq->a.round_ms = cheapq->a.timeout_ms;
	if (!cheapq->a.rounds)
		cheapq->a.rounds = CHEAPQ_DEFAULT_ROUNDS;
	cheapq->a.pids = NULL;
	cheapq->n = n;
	cheapq->quorum = n / 2 + 1;
	cheapq->me = sacred_bz_me(attr->keys);
	for (p = 0; p < n; p++)
		cheapq->pids[p] = attr->pids ? attr->pids[p] :
					       attr->leader_pid + p;
	cheapq->bad_carry_len = -1;
	cheapq->bad_prop_len = -1;
	cheapq->msg_max = cheapq_msg_max(n, attr->value_max);
	rec = CHEAPQ_HDR + attr->value_max;
	cheapq->rec = malloc(rec + n * CHEAPQ_SIG);
	cheapq->buf = malloc(rec + n * CHEAPQ_SIG);
	cheapq->look = malloc(SACRED_RMEM_CHAIN_MAX * rec);
	cheapq->signed_buf =
		malloc(CHEAPQ_SIGNED_ID + CHEAPQ_SIG + attr->value_max);
	cheapq->msg = malloc(cheapq->msg_max);
	cheapq->pend = malloc(cheapq->msg_max);
	cheapq->pend_k = -1;
	cheapq->copy = malloc(attr->value_max + 1);
	cheapq->cert_val = malloc(attr->value_max + 1);
	cheapq->dec = malloc(attr->value_max + 1);
	cheapq->bad_carry = malloc(attr->value_max + 1);
	cheapq->bad_prop = malloc(attr->value_max + 1);
	if (!cheapq->rec || !cheapq->buf || !cheapq->look ||
	    !cheapq->signed_buf || !cheapq->msg || !cheapq->pend ||
	    !cheapq->copy || !cheapq->cert_val || !cheapq->dec ||
	    !cheapq->bad_carry || !cheapq->bad_prop)
		return -ENOMEM;
	return 0;
}

/*
 * Open the instance's regions: the leader's, each process's slots and
 * commit region, the broadcast's; and learn their common tag (which must
 * be attr->tag if that is set).
 */
static int cheapq_open_regions(struct sacred_cheapq *cheapq,
			       const struct sacred_cheapq_attr *attr)
{
	struct sacred_neb_attr na;
	unsigned int p, n = cheapq->n;
	size_t rec = CHEAPQ_HDR + attr->value_max;
	int ret;

	ret = sacred_slots_open(attr->rm, attr->base_region, rec, 1, 0,
				&cheapq->leader);
	if (ret)
		return ret;
	for (p = 0; p < n; p++) {
		ret = sacred_slots_open(attr->rm, attr->base_region + 1 + p,
					rec, CHEAPQ_NR_SLOTS, 0,
					&cheapq->procs[p]);
		if (ret)
			return ret;
		ret = sacred_slots_open(attr->rm, attr->base_region + 1 + n + p,
					cheapq_commit_max(n, attr->value_max),
					1, 0, &cheapq->commit[p]);
		if (ret)
			return ret;
	}
	na = (struct sacred_neb_attr){
		.rm = attr->rm,
		.keys = attr->keys,
		.base_region = attr->base_region + 1 + 2 * n,
		.nr_msgs = 3 * cheapq->a.rounds,
		.msg_max = cheapq->msg_max,
	};
	ret = sacred_neb_open(&na, &cheapq->neb);
	if (ret)
		return ret;
	/* Attached by now: the memories told the regions' tag. */
	ret = sacred_rmem_span_tag(attr->rm, attr->base_region, 1 + 3 * n,
				   &cheapq->tag);
	if (!ret && attr->tag && cheapq->tag != attr->tag)
		ret = -EPROTO;
	return ret;
}

/**
 * sacred_cheapq_open() - join a Byzantine consensus instance
 * @attr: see &struct sacred_cheapq_attr
 * @cheapqp: on success, the handle
 *
 * The leader looks for its mark (cheapq_leader_resume()): at its first open it
 * writes it, and may sign; opened again, it reads the leader region from
 * every memory: a value it signed there with an earlier handle (before a
 * crash and restart) is the one it proposes - it never signs a second;
 * with a memory silent and nothing on the others it cannot tell, and
 * sacred_cheapq_propose() asks again. Like sacred_pmp_open()'s read and the
 * panic's, it brings connections fenced by an earlier instance back
 * (cheapq_again()).
 *
 * A process whose write on its commit region (the leader: on the leader
 * region) was revoked already - someone panicked before it opened - still
 * joins: it cannot take the fast path, and its propose goes straight to
 * the panic and the backup, which need only its own swmr regions.
 *
 * Return: 0; -EINVAL; -ENOMEM; -EPERM when this process cannot write its
 * own region; -EPROTO when the regions were not made with one tag (see
 * sacred_cheapq_setup()), or not with attr->tag if it is set; the errors of
 * sacred_slots_open() and
 * sacred_neb_open(); as
 * the leader, the errors of reading the leader region (a quorum must
 * answer).
 */
int sacred_cheapq_open(const struct sacred_cheapq_attr *attr,
		       struct sacred_cheapq **cheapqp)
{
	struct sacred_cheapq *cheapq;
	unsigned int n;
	int ret;

	if (!attr || !cheapqp || !attr->rm || !attr->keys ||
	    attr->value_max > (1U << 16) || attr->timeout_ms < 0 ||
	    attr->round_ms < 0 || attr->rounds > CHEAPQ_MAX_ROUNDS)
		return -EINVAL;
	n = sacred_bz_nr_procs(attr->keys);
	if (n < 2)
		return -EINVAL;
	cheapq = calloc(1, sizeof(*cheapq));
	if (!cheapq)
		return -ENOMEM;
	ret = cheapq_init(cheapq, attr, n);
	if (ret)
		goto err;
	ret = cheapq_alloc_peers(cheapq);
	if (ret)
		goto err;
	ret = cheapq_open_regions(cheapq, attr);
	if (ret)
		goto err;
	ret = -EPERM;
	if (!sacred_slots_writer(cheapq->procs[cheapq->me]))
		goto err;
	/* Revoke-only regions: a panic may have taken these already. */
	cheapq->no_fast = !sacred_slots_writer(
		cheapq->me ? cheapq->commit[cheapq->me] : cheapq->leader);
	if (cheapq->me == 0) {
		/* Connections fenced by an earlier instance come back too. */
		ret = cheapq_leader_resume(cheapq);
		if (ret)
			goto err;
	}
	*cheapqp = cheapq;
	return 0;

err:
	sacred_cheapq_close(cheapq);
	return ret;
}

/** sacred_cheapq_close() - free @cheapq; NULL is ok */
void sacred_cheapq_close(struct sacred_cheapq *cheapq)
{
	unsigned int p;

	if (!cheapq)
		return;
	sacred_neb_close(cheapq->neb);
	sacred_slots_close(cheapq->leader);
	for (p = 0; p < SACRED_BZ_MAX_PROCS; p++) {
		sacred_slots_close(cheapq->procs[p]);
		sacred_slots_close(cheapq->commit[p]);
	}
	cheapq_free_peers(cheapq);
	free(cheapq->rec);
	free(cheapq->buf);
	free(cheapq->look);
	free(cheapq->signed_buf);
	free(cheapq->msg);
	free(cheapq->pend);
	free(cheapq->copy);
	free(cheapq->cert_val);
	free(cheapq->dec);
	free(cheapq->bad_carry);
	free(cheapq->bad_prop);
	free(cheapq);
}

/* Has anyone panicked? */
static bool cheapq_someone_panicked(struct sacred_cheapq *cheapq)
{
	struct sacred_cell_view v;
	unsigned int p;
	size_t n;

	for (p = 0; p < cheapq->n; p++) {
		if (p == cheapq->me)
			continue;
		cheapq->stats.round_trips++;
		if (sacred_slots_read(cheapq->procs[p], CHEAPQ_SLOT_PANIC,
				      cheapq->buf,
				      CHEAPQ_HDR + cheapq->a.value_max, &v) ||
		    v.len < CHEAPQ_HDR)
			continue;
		n = cheapq_signed(cheapq, "panic", 5, NULL, 0);
		if (sacred_bz_verify(cheapq->a.keys, p, CHEAPQ_PANIC_DOMAIN,
				     cheapq->signed_buf, n,
				     cheapq->buf + 8 + CHEAPQ_SIG))
			return true;
	}
	return false;
}

/*
 * Time to panic: @deadline passed, or (looked for every CHEAPQ_PANIC_LOOK_MS:
 * each look is n - 1 reads) someone else panicked.
 */
static bool cheapq_should_panic(struct sacred_cheapq *cheapq, uint64_t deadline)
{
	uint64_t now = cheapq_now_ms();

	if (now >= deadline)
		return true;
	if (now < cheapq->panic_check)
		return false;
	cheapq->panic_check = now + CHEAPQ_PANIC_LOOK_MS;
	return cheapq_someone_panicked(cheapq);
}

/*
 * Pause before polling again: *@us, which then doubles up to
 * CHEAPQ_POLL_MAX_US. The caller checks its deadline between polls, so a peer
 * that never writes still ends in a panic.
 */
static void cheapq_pause(unsigned int *us)
{
	usleep(*us);
	*us = *us * 2 < CHEAPQ_POLL_MAX_US ? *us * 2 : CHEAPQ_POLL_MAX_US;
}

/*
 * Revoke process @p's write on its commit region, then read it, the two
 * chained at each memory (sacred_slots_read_after()): the read counts
 * only memories that answered the revoke first, where no commit of @p can
 * land any more. A valid certificate there becomes ours.
 */
static int cheapq_freeze_commit(struct sacred_cheapq *cheapq, unsigned int p)
{
	struct sacred_perm_req req = {
		.region_id = cheapq->a.base_region + 1 + cheapq->n + p,
		.access = 0,
		.target = cheapq->pids[p],
	};
	size_t max = cheapq_commit_max(cheapq->n, cheapq->a.value_max);
	struct sacred_cell_view v;
	struct cheapq_rec r;
	int tries = 0;
	int ret;

	cheapq->stats.round_trips += 2;
	/* Each attempt revokes again, then reads, at every memory. */
	do {
		ret = sacred_slots_read_after(cheapq->commit[p], 0, &req,
					      cheapq->buf, max, &v);
	} while (cheapq_again(cheapq, ret, &tries));
	if (ret == -ENODATA || ret == -ENOSPC)
		return 0;
	if (ret)
		return ret;
	/* Commit record: __le32 len, pad, n signatures, value. */
	if (v.len < 8 + cheapq->n * CHEAPQ_SIG)
		return 0;
	memcpy(&r.len, cheapq->buf, 4);
	r.len = le32toh(r.len);
	if (r.len > cheapq->a.value_max ||
	    r.len != v.len - 8 - cheapq->n * CHEAPQ_SIG)
		return 0;
	r.val = cheapq->buf + 8 + cheapq->n * CHEAPQ_SIG;
	if (!cheapq->certified &&
	    cheapq_cert_ok(cheapq, r.val, r.len, cheapq->buf + 8))
		cheapq_hold_cert(cheapq, r.val, r.len, cheapq->buf + 8);
	return 0;
}

/*
 * The panic's first steps: revoke the leader's write (@req) on a quorum,
 * then say so, signed, in this process's panic slot.
 */
static int cheapq_announce_panic(struct sacred_cheapq *cheapq,
				 const struct sacred_perm_req *req)
{
	uint8_t sig[CHEAPQ_SIG];
	int tries = 0;
	size_t n;
	int ret;

	/* The leader's own connections are fenced by the revoke: back. */
	sacred_rmem_revive(cheapq->a.rm);
	cheapq->stats.round_trips++;
	do {
		ret = sacred_rmem_change_perm(cheapq->a.rm, req, NULL);
	} while (cheapq_again(cheapq, ret, &tries));
	/*
	 * A repeated revoke is accepted; -EPERM means the leader region is
	 * not revoke-only (or this process no member): the leader keeps
	 * write, so there is nothing safe to carry on with.
	 */
	if (ret)
		return ret;

	n = cheapq_signed(cheapq, "panic", 5, NULL, 0);
	sacred_bz_sign(cheapq->a.keys, CHEAPQ_PANIC_DOMAIN, cheapq->signed_buf,
		       n, sig);
	memset(cheapq->rec, 0, CHEAPQ_HDR);
	memcpy(cheapq->rec + 8 + CHEAPQ_SIG, sig, sizeof(sig));
	cheapq->stats.round_trips++;
	tries = 0;
	do {
		ret = sacred_slots_write(cheapq->procs[cheapq->me],
					 CHEAPQ_SLOT_PANIC, cheapq->rec,
					 CHEAPQ_HDR);
	} while (cheapq_again(cheapq, ret, &tries));
	return ret;
}

/*
 * The panic's last step: pick the value to carry into the backup, from
 * what this process holds or reads (@req: the revoke, again), else its
 * input @v.
 */
static int cheapq_pick_carry(struct sacred_cheapq *cheapq,
			     const struct sacred_perm_req *req, const void *v,
			     size_t len)
{
	struct sacred_cell_view view;
	struct cheapq_rec r;
	int tries;
	int ret;

	/*
	 * What to carry. A certificate first; then a value the leader
	 * signed: our copy (the leader: its own value) - what we tried to
	 * write counts even if the write failed: it may have landed where
	 * someone else saw it - or the leader region's value, read after the
	 * revoke; then our input.
	 */
	tries = 0;
	if (cheapq->certified) {
		cheapq_carry(cheapq, cheapq->cert_val, cheapq->cert_len,
			     CHEAPQ_CERTIFIED, NULL);
		cheapq->stats.carried = SACRED_CHEAPQ_CARRY_CERTIFIED;
	} else if (cheapq->copied) {
		cheapq_carry(cheapq, cheapq->copy, cheapq->copy_len,
			     CHEAPQ_SIGNED, cheapq->lsig);
		cheapq->stats.carried = cheapq->me ? SACRED_CHEAPQ_CARRY_COPY :
						     SACRED_CHEAPQ_CARRY_LEADER;
	} else if (cheapq->me &&
		   !sacred_slots_read(cheapq->procs[cheapq->me],
				      CHEAPQ_SLOT_COPY, cheapq->buf,
				      CHEAPQ_HDR + cheapq->a.value_max,
				      &view) &&
		   cheapq_parse(cheapq, cheapq->buf, view.len, &r) &&
		   cheapq_copy_ok(cheapq, cheapq->me, &r)) {
		cheapq_carry(cheapq, r.val, r.len, CHEAPQ_SIGNED, r.lsig);
		cheapq->stats.carried = SACRED_CHEAPQ_CARRY_COPY;
	} else {
		/*
		 * The revoke again, chained before the read at each memory:
		 * a memory that missed the first one (down, or sitting out)
		 * and was reconnected since may be read only after the
		 * leader's write is revoked there too. Repeating a revoke is
		 * accepted.
		 */
		do {
			ret = cheapq_read_leader(cheapq, req, &r);
		} while (cheapq_again(cheapq, ret, &tries));
		/*
		 * The leader may have decided its value after one write: this
		 * read is what carries it (this file's header). Nothing signed
		 * there (-EAGAIN: no complete write; -EBADMSG: not the
		 * leader's signature - a faulty leader) lets the input go in;
		 * a read that failed does not.
		 */
		if (!ret) {
			cheapq_carry(cheapq, r.val, r.len, CHEAPQ_SIGNED,
				     r.lsig);
			cheapq->stats.carried = SACRED_CHEAPQ_CARRY_LEADER;
		} else if (ret == -EAGAIN || ret == -EBADMSG) {
			cheapq_carry(cheapq, v, len, CHEAPQ_PLAIN, NULL);
			cheapq->stats.carried = SACRED_CHEAPQ_CARRY_INPUT;
		} else {
			return ret;
		}
	}
	if (cheapq->bad_carry_len >= 0) {
		/* test hook: a Byzantine process carries what it likes */
		cheapq_carry(cheapq, cheapq->bad_carry, cheapq->bad_carry_len,
			 cheapq->forge_carry ? CHEAPQ_SIGNED : CHEAPQ_PLAIN,
			 cheapq->forge_carry ? cheapq_forged_sig : NULL);
	}
	return 0;
}

/*
 * Panic: revoke the leader's write for good, tell the others, freeze
 * every commit region and pick the value to carry into the backup.
 */
static int cheapq_panic(struct sacred_cheapq *cheapq, const void *v, size_t len)
{
	struct sacred_perm_req req = {
		.region_id = cheapq->a.base_region,
		.access = 0,
		.target = cheapq->pids[0],
	};
	unsigned int p;
	int ret;

	cheapq->stats.panicked = true;
	cheapq->panicked = true;
	ret = cheapq_announce_panic(cheapq, &req);
	if (ret)
		return ret;

	/* Only followers commit: the leader decides without a certificate. */
	for (p = 1; p < cheapq->n; p++) {
		if (p == cheapq->me)
			continue;
		ret = cheapq_freeze_commit(cheapq, p);
		if (ret)
			return ret;
	}

	return cheapq_pick_carry(cheapq, &req, v, len);
}

/* ---------------------------------------------------------------- */
/* The robust backup                                                 */
/* ---------------------------------------------------------------- */

static unsigned int bk_leader(const struct sacred_cheapq *cheapq,
			      unsigned int r)
{
	return r % cheapq->n;
}

static uint8_t *bk_val(const struct sacred_cheapq *cheapq, uint8_t *base,
		       unsigned int r)
{
	return base + (size_t)r * (cheapq->a.value_max + 1);
}

/*
 * Build a backup message in cheapq->msg: @v, then @nsigs signatures from
 * @sigs; returns its bytes.
 */
static size_t bk_build(struct sacred_cheapq *cheapq, uint8_t type,
		       uint8_t flags, unsigned int r, const void *v, size_t len,
		       uint32_t set, const uint8_t *sigs, unsigned int nsigs)
{
	uint32_t x;

	memset(cheapq->msg, 0, BK_HDR);
	cheapq->msg[0] = type;
	cheapq->msg[1] = flags;
	x = htole32(r);
	memcpy(cheapq->msg + 4, &x, 4);
	x = htole32((uint32_t)len);
	memcpy(cheapq->msg + 8, &x, 4);
	x = htole32(set);
	memcpy(cheapq->msg + 12, &x, 4);
	memmove(cheapq->msg + BK_HDR, v, len);
	if (nsigs)
		memcpy(cheapq->msg + BK_HDR + len, sigs, nsigs * CHEAPQ_SIG);
	return BK_HDR + len + nsigs * CHEAPQ_SIG;
}

/*
 * The value PROPOSE(r, S) must carry, from the promises of S: into @v;
 * false if S does not justify any (a member's promise is not valid). The
 * value accepted in the highest round, if anyone in S accepted one; else
 * a value carried at the highest rank in S (certified, then signed by the
 * leader, then plain), ours if ours is one of them.
 */
static bool bk_choose(struct sacred_cheapq *cheapq, unsigned int r,
		      uint32_t set, const uint8_t **v, size_t *len)
{
	int best = -1, top = -1;
	unsigned int q;

	for (q = 0; q < cheapq->n; q++) {
		struct cheapq_peer *pe = &cheapq->peer[q];

		if (!(set & (1U << q)))
			continue;
		if (pe->next <= 3 * r)
			return false;
		if (pe->p_abal[r] >= 0 &&
		    (best < 0 ||
		     pe->p_abal[r] > cheapq->peer[best].p_abal[r]))
			best = q;
		if (top < 0 || pe->rank > cheapq->peer[top].rank ||
		    (pe->rank == cheapq->peer[top].rank && q == cheapq->me))
			top = q;
	}
	if (best >= 0) {
		*v = bk_val(cheapq, cheapq->peer[best].p_val, r);
		*len = cheapq->peer[best].p_len[r];
	} else if (top >= 0) {
		*v = cheapq->peer[top].carry;
		*len = cheapq->peer[top].carry_len;
	} else {
		return false;
	}
	return true;
}

/* Is @v what some member of @set carries at @rank? */
static bool bk_carried(struct sacred_cheapq *cheapq, uint32_t set, uint8_t rank,
		       const void *v, size_t len)
{
	unsigned int q;

	for (q = 0; q < cheapq->n; q++)
		if ((set & (1U << q)) && cheapq->peer[q].rank == rank &&
		    cheapq->peer[q].carry_len == len &&
		    !memcmp(cheapq->peer[q].carry, v, len))
			return true;
	return false;
}

static int bk_validate(struct sacred_cheapq *cheapq, unsigned int p,
		       unsigned int k);

/* A promise (step 0 of round @r): in round 0 with the value @p carries. */
static int bk_apply_promise(struct sacred_cheapq *cheapq, unsigned int p,
			    unsigned int r, const uint8_t *m, size_t len,
			    uint32_t vlen, uint32_t set)
{
	struct cheapq_peer *pe = &cheapq->peer[p];

	if (m[0] != BK_PROMISE || set || (r && (vlen || m[1])))
		return -EPROTO;
	if (!r) {
		/* The carried value, and its proof if it has one. */
		unsigned int nsigs = m[1] == BK_CERT   ? cheapq->n :
				     m[1] == BK_SIGNED ? 1 :
							 0;

		if ((m[1] && !nsigs) ||
		    len != BK_HDR + vlen + nsigs * CHEAPQ_SIG)
			return -EPROTO;
		if (m[1] == BK_CERT &&
		    !cheapq_cert_ok(cheapq, m + BK_HDR, vlen,
				    m + BK_HDR + vlen))
			return -EPROTO;
		if (m[1] == BK_SIGNED &&
		    !cheapq_leader_sig_ok(cheapq, m + BK_HDR, vlen,
					  m + BK_HDR + vlen))
			return -EPROTO;
		memcpy(pe->carry, m + BK_HDR, vlen);
		pe->carry_len = vlen;
		pe->rank = m[1] == BK_CERT   ? CHEAPQ_CERTIFIED :
			   m[1] == BK_SIGNED ? CHEAPQ_SIGNED :
					       CHEAPQ_PLAIN;
	} else if (len != BK_HDR) {
		return -EPROTO;
	}
	pe->p_abal[r] = pe->abal;
	pe->p_len[r] = pe->aval_len;
	memcpy(bk_val(cheapq, pe->p_val, r), pe->aval, pe->aval_len);
	return 0;
}

/*
 * A proposal (step 1): valid only from the round's leader, for a quorum S
 * (@set) of valid promises, with the value they allow.
 */
static int bk_apply_propose(struct sacred_cheapq *cheapq, unsigned int p,
			    unsigned int r, const uint8_t *m, size_t len,
			    uint32_t vlen, uint32_t set)
{
	struct cheapq_peer *pe = &cheapq->peer[p];
	unsigned int q, cnt = 0;
	const uint8_t *want;
	size_t wlen;
	int ret;

	if (m[0] == BK_SKIP)
		return vlen || set || m[1] || len != BK_HDR ? -EPROTO :
								0;
	if (m[0] != BK_PROPOSE || m[1] || p != bk_leader(cheapq, r) ||
	    len != BK_HDR + vlen || set >> cheapq->n)
		return -EPROTO;
	for (q = 0; q < cheapq->n; q++) {
		if (!(set & (1U << q)))
			continue;
		cnt++;
		ret = bk_validate(cheapq, q, 3 * r);
		/*
		 * A member we hold faulty: the leader may not have
		 * seen what we saw. Not valid here, not proof.
		 */
		if (ret == -EPROTO)
			return 0;
		if (ret)
			return ret;
	}
	if (cnt < cheapq->quorum ||
	    !bk_choose(cheapq, r, set, &want, &wlen))
		return -EPROTO;
	/*
	 * With something accepted in S, exactly the chosen value;
	 * otherwise any value carried at the highest rank in S (the
	 * certified values are all the same one).
	 */
	if (!(wlen == vlen && !memcmp(want, m + BK_HDR, vlen))) {
		uint8_t top = CHEAPQ_PLAIN;

		for (q = 0; q < cheapq->n; q++) {
			if (!(set & (1U << q)))
				continue;
			if (cheapq->peer[q].p_abal[r] >= 0)
				return -EPROTO;
			if (cheapq->peer[q].rank > top)
				top = cheapq->peer[q].rank;
		}
		if (!bk_carried(cheapq, set, top, m + BK_HDR, vlen))
			return -EPROTO;
	}
	pe->prop_ok[r] = true;
	pe->prop_len[r] = vlen;
	memcpy(bk_val(cheapq, pe->prop_val, r), m + BK_HDR, vlen);
	return 0;
}

/* An accept (step 2): of exactly what the leader validly proposed. */
static int bk_apply_accept(struct sacred_cheapq *cheapq, unsigned int p,
			   unsigned int r, const uint8_t *m, size_t len,
			   uint32_t vlen, uint32_t set)
{
	struct cheapq_peer *pe = &cheapq->peer[p];
	unsigned int q;
	int ret;

	if (m[0] == BK_SKIP)
		return vlen || set || m[1] || len != BK_HDR ? -EPROTO :
								0;
	if (m[0] != BK_ACCEPT || m[1] || set || len != BK_HDR + vlen)
		return -EPROTO;
	q = bk_leader(cheapq, r);
	ret = bk_validate(cheapq, q, 3 * r + 1);
	if (ret == -EAGAIN)
		return ret;
	/* Accepting what the leader did not validly propose. */
	if (ret || !cheapq->peer[q].prop_ok[r] ||
	    cheapq->peer[q].prop_len[r] != vlen ||
	    memcmp(bk_val(cheapq, cheapq->peer[q].prop_val, r),
		   m + BK_HDR, vlen))
		return -EPROTO;
	pe->acc[r] = true;
	pe->abal = (int)r;
	pe->aval_len = vlen;
	memcpy(pe->aval, m + BK_HDR, vlen);
	return 0;
}

/*
 * Apply process @p's message @k (in cheapq->msg, @len bytes) to what we know
 * of @p, after checking it. 0: valid; -EPROTO: invalid, @p is faulty;
 * -EAGAIN: it depends on messages not delivered yet.
 */
static int bk_apply(struct sacred_cheapq *cheapq, unsigned int p,
		    unsigned int k, const uint8_t *m, size_t len)
{
	unsigned int r = k / 3;
	uint32_t x, mr, vlen, set;

	if (len < BK_HDR)
		return -EPROTO;
	memcpy(&x, m + 4, 4);
	mr = le32toh(x);
	memcpy(&x, m + 8, 4);
	vlen = le32toh(x);
	memcpy(&x, m + 12, 4);
	set = le32toh(x);
	if (mr != r || vlen > cheapq->a.value_max || m[2] || m[3])
		return -EPROTO;

	switch (k % 3) {
	case 0:
		return bk_apply_promise(cheapq, p, r, m, len, vlen, set);
	case 1:
		return bk_apply_propose(cheapq, p, r, m, len, vlen, set);
	default:
		return bk_apply_accept(cheapq, p, r, m, len, vlen, set);
	}
}

/*
 * Deliver and check @p's messages up to number @k. 0: all valid;
 * -EAGAIN: not there yet; -EPROTO: @p is faulty; replicated-memory
 * errors.
 */
static int bk_validate(struct sacred_cheapq *cheapq, unsigned int p,
		       unsigned int k)
{
	struct cheapq_peer *pe = &cheapq->peer[p];
	int tries, ret;
	uint8_t *m;
	size_t len;

	if (k >= 3 * cheapq->a.rounds)
		return -EINVAL;
	while (pe->next <= k) {
		if (pe->bad)
			return -EPROTO;
		/* Our own messages are applied when sent. */
		if (p == cheapq->me)
			return -EAGAIN;
		m = malloc(cheapq->msg_max);
		if (!m)
			return -ENOMEM;
		tries = 0;
		do {
			ret = sacred_neb_deliver(cheapq->neb, p, pe->next, m,
						 cheapq->msg_max, &len);
		} while (cheapq_again(cheapq, ret, &tries));
		if (!ret)
			ret = bk_apply(cheapq, p, pe->next, m, len);

		free(m);
		if (ret == -EPROTO || ret == -ENOSPC) {
			pe->bad = true;
			return -EPROTO;
		}
		if (ret)
			return ret;
		pe->next++;
	}
	return pe->bad && pe->next <= k ? -EPROTO : 0;
}

/* Broadcast our message @k (built in cheapq->msg) and apply it. */
static int bk_send(struct sacred_cheapq *cheapq, unsigned int k, size_t len)
{
	struct cheapq_peer *pe = &cheapq->peer[cheapq->me];
	int tries = 0;
	int ret;

	if (pe->next != k)
		return -EINVAL;
	/*
	 * Message k is kept in cheapq->pend until it is applied here too. A
	 * broadcast that failed may be on some memories already: resumed
	 * (sacred_cheapq_propose() again), the backup may build message k
	 * differently by now, but only the kept bytes may follow.
	 */
	if (cheapq->pend_k != (long)k) {
		memcpy(cheapq->pend, cheapq->msg, len);
		cheapq->pend_len = len;
		cheapq->pend_k = k;
	}
	do {
		ret = sacred_neb_broadcast(cheapq->neb, k, cheapq->pend,
					   cheapq->pend_len);
	} while (cheapq_again(cheapq, ret, &tries));
	if (ret)
		return ret;
	/*
	 * Applied from cheapq->pend: applying may validate others, reusing
	 * cheapq->msg.
	 */
	ret = bk_apply(cheapq, cheapq->me, k, cheapq->pend, cheapq->pend_len);
	/* Our own messages are valid by construction: anything else is a bug. */
	if (ret)
		return ret == -EAGAIN ? -EIO : ret;
	cheapq->pend_k = -1;
	pe->next++;
	return 0;
}

/* Try to get every other process's messages up to @k checked. */
static int bk_poll(struct sacred_cheapq *cheapq, unsigned int k)
{
	unsigned int p;
	int ret;

	for (p = 0; p < cheapq->n; p++) {
		if (p == cheapq->me || cheapq->peer[p].bad)
			continue;
		ret = bk_validate(cheapq, p, k);
		if (ret && ret != -EAGAIN && ret != -EPROTO)
			return ret;
	}
	return 0;
}

/* A round up to @upto with a quorum of valid accepts: its value. */
static bool bk_decided(struct sacred_cheapq *cheapq, unsigned int upto,
		       const uint8_t **v, size_t *len)
{
	unsigned int r, p, cnt;

	for (r = 0; r <= upto && r < cheapq->a.rounds; r++) {
		struct cheapq_peer *l = &cheapq->peer[bk_leader(cheapq, r)];

		for (p = 0, cnt = 0; p < cheapq->n; p++)
			cnt += cheapq->peer[p].acc[r];
		if (cnt >= cheapq->quorum && l->prop_ok[r]) {
			*v = bk_val(cheapq, l->prop_val, r);
			*len = l->prop_len[r];
			return true;
		}
	}
	return false;
}

/* Has every process written "done"? */
static bool cheapq_all_done(struct sacred_cheapq *cheapq)
{
	struct sacred_cell_view v;
	unsigned int p;
	int ret, tries = 0;

	for (p = 0; p < cheapq->n; p++) {
		do {
			ret = sacred_slots_read(
				cheapq->procs[p], CHEAPQ_SLOT_DONE, cheapq->buf,
				CHEAPQ_HDR + cheapq->a.value_max, &v);
		} while (cheapq_again(cheapq, ret, &tries));
		if (ret || v.len != 4 || memcmp(cheapq->buf, "done", 4))
			return false;
	}
	return true;
}

/* Take @v as this process's decision. */
static void cheapq_decide(struct sacred_cheapq *cheapq, const void *v,
			  size_t len)
{
	memmove(cheapq->dec, v, len);
	cheapq->dec_len = len;
	cheapq->decided = true;
}

/*
 * Tell the others this process decided: "done" into its slot 2, once.
 * sacred_cheapq_help() does it, first thing: only helpers read it.
 */
static int cheapq_say_done(struct sacred_cheapq *cheapq)
{
	int ret, tries = 0;

	if (cheapq->said_done)
		return 0;
	do {
		ret = sacred_slots_write(cheapq->procs[cheapq->me],
					 CHEAPQ_SLOT_DONE, "done", 4);
	} while (cheapq_again(cheapq, ret, &tries));
	cheapq->said_done = !ret;
	return ret;
}

/* Wait for @cond, polling messages up to @k, until @deadline. */
#define BK_WAIT(cheapq, k, deadline, cond)                   \
	({                                                   \
		int __ret = 0;                               \
		while (!(cond)) {                            \
			__ret = bk_poll(cheapq, k);          \
			if (__ret || (cond))                 \
				break;                       \
			if (cheapq_now_ms() >= (deadline)) { \
				__ret = -ETIMEDOUT;          \
				break;                       \
			}                                    \
			usleep(500);                         \
		}                                            \
		__ret;                                       \
	})

static unsigned int bk_promised(struct sacred_cheapq *cheapq, unsigned int r,
				uint32_t *set)
{
	unsigned int p, cnt = 0;

	*set = 0;
	/* Ourselves first, then the lowest ids. */
	if (cheapq->peer[cheapq->me].next > 3 * r) {
		*set |= 1U << cheapq->me;
		cnt++;
	}
	for (p = 0; p < cheapq->n && cnt < cheapq->quorum; p++) {
		if (p == cheapq->me || cheapq->peer[p].next <= 3 * r)
			continue;
		*set |= 1U << p;
		cnt++;
	}
	return cnt;
}

/*
 * Enter the backup: promise round 0, with the value this process carries
 * and its proof, if it has one.
 */
static int bk_enter(struct sacred_cheapq *cheapq)
{
	struct cheapq_peer *me = &cheapq->peer[cheapq->me];
	size_t len;
	int ret;

	cheapq->in_backup = true;
	if (me->rank == CHEAPQ_CERTIFIED)
		len = bk_build(cheapq, BK_PROMISE, BK_CERT, 0, me->carry,
			       me->carry_len, 0, cheapq->cert, cheapq->n);
	else if (me->rank == CHEAPQ_SIGNED)
		len = bk_build(cheapq, BK_PROMISE, BK_SIGNED, 0, me->carry,
			       me->carry_len, 0, cheapq->carry_lsig, 1);
	else
		len = bk_build(cheapq, BK_PROMISE, 0, 0, me->carry,
			       me->carry_len, 0, NULL, 0);
	ret = bk_send(cheapq, 0, len);
	if (ret)
		return ret;
	cheapq->round = 0;
	return 0;
}

/*
 * Phase 1 of round @r: the leader waits (until @dl) for a quorum's
 * promises and proposes; the others skip.
 */
static int bk_phase1(struct sacred_cheapq *cheapq, unsigned int r,
		     uint64_t dl)
{
	struct cheapq_peer *me = &cheapq->peer[cheapq->me];
	uint32_t set = 0;
	const uint8_t *v;
	size_t len;
	int ret;

	len = bk_build(cheapq, BK_SKIP, 0, r, NULL, 0, 0, NULL, 0);
	if (bk_leader(cheapq, r) == cheapq->me) {
		ret = BK_WAIT(cheapq, 3 * r, dl,
			      bk_promised(cheapq, r, &set) >= cheapq->quorum);
		if (ret && ret != -ETIMEDOUT)
			return ret;
		if (!ret && cheapq->bad_prop_len >= 0)
			len = bk_build(cheapq, BK_PROPOSE, 0, r,
				       cheapq->bad_prop, cheapq->bad_prop_len,
				       set, NULL, 0);
		else if (!ret && bk_choose(cheapq, r, set, &v, &len))
			len = bk_build(cheapq, BK_PROPOSE, 0, r, v, len, set,
				       NULL, 0);
	}
	ret = bk_send(cheapq, 3 * r + 1, len);
	/* the test hook's proposal is ours alone to reject */
	if (ret == -EPROTO && cheapq->bad_prop_len >= 0) {
		me->next++;
		ret = 0;
	}
	return ret;
}

/* Phase 2 of round @r: accept the leader's valid proposal, or skip. */
static int bk_phase2(struct sacred_cheapq *cheapq, unsigned int r,
		     uint64_t dl)
{
	struct cheapq_peer *l = &cheapq->peer[bk_leader(cheapq, r)];
	size_t len;
	int ret;

	ret = BK_WAIT(cheapq, 3 * r + 1, dl, l->next > 3 * r + 1 || l->bad);
	if (ret && ret != -ETIMEDOUT)
		return ret;
	if (l->next > 3 * r + 1 && l->prop_ok[r])
		len = bk_build(cheapq, BK_ACCEPT, 0, r,
			       bk_val(cheapq, l->prop_val, r),
			       l->prop_len[r], 0, NULL, 0);
	else
		len = bk_build(cheapq, BK_SKIP, 0, r, NULL, 0, 0, NULL, 0);
	return bk_send(cheapq, 3 * r + 2, len);
}

/*
 * Run the backup from round cheapq->round on. @help: a decided process that
 * keeps taking part until every process is done or @until passes.
 * Returns 0 with cheapq->dec set (not @help), 0 when everyone is done
 * (@help), -ETIMEDOUT, or an error.
 */
static int bk_run(struct sacred_cheapq *cheapq, bool help, uint64_t until)
{
	struct cheapq_peer *me = &cheapq->peer[cheapq->me];
	const uint8_t *v;
	unsigned int r;
	uint64_t dl;
	size_t len;
	int ret;

	if (!cheapq->in_backup) {
		ret = bk_enter(cheapq);
		if (ret)
			return ret;
	}
	for (r = cheapq->round; r < cheapq->a.rounds; r++) {
		if (help)
			cheapq_say_done(cheapq);
		cheapq->round = r;
		cheapq->stats.backup_rounds = r + 1;
		dl = cheapq_now_ms() + (uint64_t)cheapq->a.round_ms * (r + 1);
		if (help && dl > until)
			dl = until;
		if (me->next == 3 * r) {
			len = bk_build(cheapq, BK_PROMISE, 0, r, NULL, 0, 0,
				       NULL, 0);
			ret = bk_send(cheapq, 3 * r, len);
			if (ret)
				return ret;
		}
		/* Phase 1: the leader waits for a quorum's promises. */
		if (me->next == 3 * r + 1) {
			ret = bk_phase1(cheapq, r, dl);
			if (ret)
				return ret;
		}
		/* Phase 2: accept the leader's valid proposal. */
		if (me->next == 3 * r + 2) {
			ret = bk_phase2(cheapq, r, dl);
			if (ret)
				return ret;
		}
		/*
		 * A quorum of accepts in any round so far decides. A helper
		 * has decided already: it stays in this round until its end,
		 * unless everyone is done.
		 */
		ret = BK_WAIT(cheapq, 3 * r + 2, dl,
			      help ? cheapq_all_done(cheapq) :
				     bk_decided(cheapq, r, &v, &len));
		if (ret && ret != -ETIMEDOUT)
			return ret;
		if (bk_decided(cheapq, r, &v, &len)) {
			/* Never two decisions: that would be a bug here. */
			if (cheapq->decided && (len != cheapq->dec_len ||
						memcmp(v, cheapq->dec, len)))
				return -EPROTO;
			if (!cheapq->decided)
				cheapq_decide(cheapq, v, len);
			if (!help)
				return 0;
		}
		if (help &&
		    (cheapq_all_done(cheapq) || cheapq_now_ms() >= until))
			return cheapq_all_done(cheapq) ? 0 : -ETIMEDOUT;
	}
	return -ETIMEDOUT;
}

static int cheapq_out(struct sacred_cheapq *cheapq, void *out, size_t max,
		      size_t *out_len)
{
	if (cheapq->dec_len > max)
		return -ENOSPC;
	memcpy(out, cheapq->dec, cheapq->dec_len);
	*out_len = cheapq->dec_len;
	return 0;
}

/* Panic, then run the backup to a decision. */
static int cheapq_backup(struct sacred_cheapq *cheapq, const void *v,
			 size_t len, void *out, size_t max, size_t *out_len)
{
	/* Resumed after an error: in the backup already, just go on. */
	int ret = cheapq->in_backup ? 0 : cheapq_panic(cheapq, v, len);

	if (!ret)
		ret = bk_run(cheapq, false, 0);
	return ret ? ret : cheapq_out(cheapq, out, max, out_len);
}

/*
 * The leader's fast path: sign @v, write it into the leader region, and
 * decide it once a quorum of memories took it (lib/cheapq.c's header says why
 * that is enough). A leader signs one value, ever: if it signed one
 * before (a propose that failed), it writes that one again and decides
 * it.
 */
static int cheapq_lead(struct sacred_cheapq *cheapq, const void *v, size_t len,
		       void *out, size_t max, size_t *out_len)
{
	size_t n;
	int ret;

	if (!cheapq->copied && !cheapq->may_sign) {
		/* A memory was silent at the open: look again. */
		ret = cheapq_leader_resume(cheapq);
		if (ret || (!cheapq->copied && !cheapq->may_sign))
			return cheapq_backup(cheapq, v, len, out, max, out_len);
	}
	if (!cheapq->copied) {
		n = cheapq_build(cheapq, v, len, NULL, false);
		cheapq_hold_copy(cheapq, v, len, cheapq->rec + 8);
	} else {
		n = cheapq_build(cheapq, cheapq->copy, cheapq->copy_len,
				 cheapq->lsig, false);
	}
	cheapq->stats.round_trips++;
	ret = sacred_slots_write(cheapq->leader, 0, cheapq->rec, n);
	/*
	 * Revoked by someone's panic: decide in the backup. Opened again
	 * and unsure which cell holds its write (-ENOTCONN, nothing sent),
	 * it would not learn of a panic from the memory: it looks.
	 */
	if (ret == -EACCES || ret == -ECONNRESET ||
	    (ret == -ENOTCONN && cheapq_someone_panicked(cheapq)))
		return cheapq_backup(cheapq, v, len, out, max, out_len);
	if (ret)
		return ret;
	cheapq->stats.fast = true;
	cheapq_decide(cheapq, cheapq->copy, cheapq->copy_len);
	return cheapq_out(cheapq, out, max, out_len);
}

/*
 * A follower's look at the leader region and at every other follower's
 * copy it has not checked yet, all in one quorum read (in chunks of what
 * sacred_slots_read_many() takes at once, for large n). A valid copy of
 * our value and leader signature goes into the certificate @cert
 * (follower p's signature at @cert + p * CHEAPQ_SIG, bit p of *@have) and is
 * never read again: its signatures are all the certificate needs,
 * whatever its writer does later. Only signatures over bytes we have not
 * checked are verified.
 *
 * Return: -EPROTO when the leader region, or a copy, holds another value
 * the leader signed (it equivocated); 0 otherwise (slots that could not be
 * read are looked at next time).
 */
static int cheapq_look(struct sacred_cheapq *cheapq, uint8_t *cert,
		       uint32_t *have)
{
	struct sacred_slots *sl[SACRED_RMEM_CHAIN_MAX];
	struct sacred_cell_view views[SACRED_RMEM_CHAIN_MAX];
	unsigned int slots[SACRED_RMEM_CHAIN_MAX] = { 0 };
	void *data[SACRED_RMEM_CHAIN_MAX];
	int rets[SACRED_RMEM_CHAIN_MAX];
	unsigned int who[SACRED_BZ_MAX_PROCS], nr = 0, at, k, chunk, p;
	size_t rec = CHEAPQ_HDR + cheapq->a.value_max;
	struct cheapq_rec r;

	/* 0 stands for the leader region, p > 0 for follower p's copy. */
	who[nr++] = 0;
	for (p = 1; p < cheapq->n; p++)
		if (!(*have & (1U << p)))
			who[nr++] = p;
	chunk = sacred_rmem_max_io(cheapq->a.rm) / (2 * cheapq_cell_bytes(rec));
	if (chunk > SACRED_RMEM_CHAIN_MAX)
		chunk = SACRED_RMEM_CHAIN_MAX;
	if (!chunk)	/* sacred_slots_open() made sure one slot fits */
		chunk = 1;
	for (at = 0; at < nr; at += chunk) {
		unsigned int m = nr - at < chunk ? nr - at : chunk;

		for (k = 0; k < m; k++) {
			sl[k] = who[at + k] ? cheapq->procs[who[at + k]] :
					      cheapq->leader;
			data[k] = cheapq->look + k * rec;
		}
		cheapq->stats.round_trips++;
		if (sacred_slots_read_many(sl, slots, m, data, rec, views,
					   rets))
			continue;
		for (k = 0; k < m; k++) {
			p = who[at + k];
			if (rets[k] ||
			    !cheapq_parse(cheapq, data[k], views[k].len, &r))
				continue;
			if (!p) {
				if ((r.len != cheapq->copy_len ||
				     memcmp(r.val, cheapq->copy, r.len)) &&
				    cheapq_leader_sig_ok(cheapq, r.val, r.len,
							 r.lsig))
					return -EPROTO;
				continue;
			}
			if (r.len == cheapq->copy_len &&
			    !memcmp(r.val, cheapq->copy, r.len) &&
			    !memcmp(r.lsig, cheapq->lsig, CHEAPQ_SIG)) {
				if (!cheapq_copy_sig_ok(cheapq, p, r.val, r.len,
							r.lsig, r.sig))
					continue;
				memcpy(cert + p * CHEAPQ_SIG, r.sig,
				       CHEAPQ_SIG);
				*have |= 1U << p;
			} else if ((r.len != cheapq->copy_len ||
				    memcmp(r.val, cheapq->copy, r.len)) &&
				   cheapq_copy_ok(cheapq, p, &r)) {
				return -EPROTO;
			}
		}
	}
	return 0;
}

/*
 * A follower's first step on the fast path: read the leader's value and
 * write this process's signed copy of it. 0, -EINPROGRESS
 * (SACRED_CHEAPQ_STALL_AFTER_COPY), or 1: panic, decide in the backup.
 */
static int cheapq_copy_leader(struct sacred_cheapq *cheapq, uint64_t deadline)
{
	unsigned int pause = CHEAPQ_POLL_MIN_US;
	struct cheapq_rec lr;
	size_t n;
	int ret;

	/* The leader's value, then our copy of it. */
	for (;;) {
		ret = cheapq_read_leader(cheapq, NULL, &lr);
		if (!ret)
			break;
		if ((ret != -EAGAIN && ret != -EBADMSG) ||
		    cheapq_should_panic(cheapq, deadline))
			return 1;
		cheapq_pause(&pause);
	}
	n = cheapq_build(cheapq, lr.val, lr.len, lr.lsig, true);
	cheapq_hold_copy(cheapq, lr.val, lr.len, cheapq->rec + 8);
	memcpy(cheapq->mysig, cheapq->rec + 8 + CHEAPQ_SIG, CHEAPQ_SIG);
	cheapq->stats.round_trips++;
	ret = sacred_slots_write(cheapq->procs[cheapq->me], CHEAPQ_SLOT_COPY,
				 cheapq->rec, n);
	if (ret)
		return 1;
	if (cheapq->stall) {
		cheapq->stall = false;
		return -EINPROGRESS;
	}
	return 0;
}

/*
 * Every follower's copy of the same value: with the leader's signature,
 * a certificate (cheapq_cert_ok()'s layout), held in @cheapq. 0, or 1:
 * the leader lied or time ran out, panic.
 */
static int cheapq_gather_copies(struct sacred_cheapq *cheapq,
				uint64_t deadline)
{
	uint8_t cert[SACRED_BZ_MAX_PROCS * CHEAPQ_SIG];
	unsigned int pause = CHEAPQ_POLL_MIN_US;
	uint32_t have;

	memcpy(cert, cheapq->lsig, CHEAPQ_SIG);
	memcpy(cert + cheapq->me * CHEAPQ_SIG, cheapq->mysig, CHEAPQ_SIG);
	have = 1U | 1U << cheapq->me;
	for (;;) {
		if (cheapq_look(cheapq, cert, &have))
			/* The leader signed two values: it lied. */
			return 1;
		if (have == (1U << cheapq->n) - 1) {
			cheapq_hold_cert(cheapq, cheapq->copy, cheapq->copy_len,
					 cert);
			return 0;
		}
		if (cheapq_should_panic(cheapq, deadline))
			return 1;
		cheapq_pause(&pause);
	}
}

/*
 * Commit: the certificate on a quorum. 0, or the write's error: frozen by
 * someone's panic, decide in the backup.
 */
static int cheapq_commit_cert(struct sacred_cheapq *cheapq)
{
	uint32_t l32;

	memset(cheapq->rec, 0, 8);
	l32 = htole32((uint32_t)cheapq->cert_len);
	memcpy(cheapq->rec, &l32, 4);
	memcpy(cheapq->rec + 8, cheapq->cert, cheapq->n * CHEAPQ_SIG);
	memcpy(cheapq->rec + 8 + cheapq->n * CHEAPQ_SIG, cheapq->cert_val,
	       cheapq->cert_len);
	cheapq->stats.round_trips++;
	return sacred_slots_write(cheapq->commit[cheapq->me], 0, cheapq->rec,
				  8 + cheapq->n * CHEAPQ_SIG +
				  cheapq->cert_len);
}

/**
 * sacred_cheapq_propose() - propose @v and decide
 * @cheapq: the instance; one propose per instance
 * @v: this process's input
 * @len: its bytes, at most value_max
 * @out: the decision
 * @max: room in @out
 * @out_len: gets its bytes
 *
 * Decides on the fast path when every process is correct and in time -
 * the leader as soon as its signed value is on a quorum of memories, a
 * follower once it committed a unanimity certificate; otherwise panics
 * (revoking the leader for good) and decides in the robust backup. Either
 * way the decision is the same at every correct process. The leader
 * signs one value, ever: after a failed call it proposes the value it
 * signed before, whatever @v is. Afterwards call sacred_cheapq_help(): the
 * others may need this process for a quorum.
 *
 * An error is not final: called again (with the same input), it goes on
 * where the last call stopped - in the panic, or in the backup, where a
 * message whose broadcast failed is sent again as it was.
 *
 * Return: 0 with the decision (sacred_cheapq_stats() says which path);
 * -EALREADY (decided already); -EINPROGRESS (stopped after the copy:
 * SACRED_CHEAPQ_STALL_AFTER_COPY); -ETIMEDOUT (the backup ran out of rounds:
 * too few correct processes answered); -EINVAL, -EMSGSIZE, -ENOSPC;
 * replicated-memory errors (also from a panic's read of the leader
 * region, which it cannot do without).
 */
int sacred_cheapq_propose(struct sacred_cheapq *cheapq, const void *v,
			  size_t len, void *out, size_t max, size_t *out_len)
{
	uint64_t deadline;
	int ret;

	if (!cheapq || (!v && len) || !out_len || (!out && max))
		return -EINVAL;
	if (len > cheapq->a.value_max)
		return -EMSGSIZE;
	if (cheapq->decided)
		return -EALREADY;
	/* An error after the panic ended the last call: go on from there. */
	if (cheapq->panicked)
		return cheapq_backup(cheapq, v, len, out, max, out_len);
	deadline = cheapq_now_ms() + cheapq->a.timeout_ms;
	cheapq->panic_check = cheapq_now_ms() + CHEAPQ_PANIC_LOOK_MS;
	/* Resuming after SACRED_CHEAPQ_STALL_AFTER_COPY: go on from the copy */
	if (cheapq->me && cheapq->copied)
		goto copies;
	memset(&cheapq->stats, 0, sizeof(cheapq->stats));
	if (cheapq->no_fast)
		return cheapq_backup(cheapq, v, len, out, max, out_len);
	if (cheapq->me == 0)
		return cheapq_lead(cheapq, v, len, out, max, out_len);

	ret = cheapq_copy_leader(cheapq, deadline);
	if (ret == -EINPROGRESS)
		return ret;
	if (ret)
		return cheapq_backup(cheapq, v, len, out, max, out_len);
copies:
	if (cheapq_gather_copies(cheapq, deadline) ||
	    cheapq_commit_cert(cheapq))
		return cheapq_backup(cheapq, v, len, out, max, out_len);
	cheapq->stats.fast = true;
	cheapq_decide(cheapq, cheapq->cert_val, cheapq->cert_len);
	return cheapq_out(cheapq, out, max, out_len);
}

/**
 * sacred_cheapq_help() - after deciding, take part in the backup until
 * every process is done
 * @cheapq: the instance
 * @timeout_ms: how long at most
 *
 * A process that decided - on the fast path or in the backup - may still
 * be needed for a quorum by those that have not. This says "done" (in
 * its slot 2: deciding does not write it, so that it costs no round trip
 * on the way to a decision), answers them - joins the backup if someone
 * panicked (carrying its certificate, or as the leader its signed value)
 * - and returns once every process wrote "done".
 *
 * Return: 0 everyone is done; -ETIMEDOUT (some process is not: crashed,
 * Byzantine or slow); -EINVAL (not decided yet); replicated-memory
 * errors.
 */
int sacred_cheapq_help(struct sacred_cheapq *cheapq, int timeout_ms)
{
	uint64_t until;
	int ret;

	if (!cheapq || !cheapq->decided || timeout_ms < 0)
		return -EINVAL;
	until = cheapq_now_ms() + timeout_ms;
	for (;;) {
		/* Until it lands, cheapq_all_done() cannot be true: again */
		cheapq_say_done(cheapq);
		if (cheapq_all_done(cheapq))
			return 0;
		if (cheapq->in_backup || cheapq_someone_panicked(cheapq))
			break;
		if (cheapq_now_ms() >= until)
			return -ETIMEDOUT;
		usleep(1000);
	}
	if (!cheapq->in_backup) {
		/*
		 * Decided on the fast path: a follower carries its
		 * certificate, the leader its value and signature.
		 */
		if (cheapq->certified)
			cheapq_carry(cheapq, cheapq->cert_val, cheapq->cert_len,
				     CHEAPQ_CERTIFIED, NULL);
		else
			cheapq_carry(cheapq, cheapq->copy, cheapq->copy_len,
				     CHEAPQ_SIGNED, cheapq->lsig);
	}
	ret = bk_run(cheapq, true, until);
	return ret;
}

/**
 * sacred_cheapq_lead_value() - as the leader, write a signed @v into the
 * leader region outside the protocol (test harness: an equivocating
 * leader writes twice)
 *
 * Return: 0; -EPERM if this process is not the leader; -EACCES once its
 * write permission was revoked; replicated-memory errors.
 */
int sacred_cheapq_lead_value(struct sacred_cheapq *cheapq, const void *v,
			     size_t len)
{
	size_t n;

	if (!cheapq || (!v && len))
		return -EINVAL;
	if (len > cheapq->a.value_max)
		return -EMSGSIZE;
	if (cheapq->me != 0)
		return -EPERM;
	n = cheapq_build(cheapq, v, len, NULL, false);
	return sacred_slots_write(cheapq->leader, 0, cheapq->rec, n);
}

/**
 * sacred_cheapq_misbehave() - act as a Byzantine process would (test harness)
 * @cheapq: this process's instance
 * @how: &enum sacred_cheapq_misbehave
 * @v: the value
 * @len: its bytes
 *
 * A follower (any process but the leader) writes into its own copy slot,
 * now, over whatever it copied: SACRED_CHEAPQ_BAD_COPY a copy of @v, signed
 * by it as copier, with a made-up leader signature; SACRED_CHEAPQ_GARBAGE_COPY
 * the bytes of @v as they are; SACRED_CHEAPQ_REPLAY_COPY (@v unused) the
 * record, signatures and all, that the lowest other follower wrote as
 * its copy. SACRED_CHEAPQ_BAD_CARRY makes a later panic carry @v, with no
 * proof, into the backup; SACRED_CHEAPQ_FORGED_CARRY carries @v as signed by
 * the leader, with a made-up signature; SACRED_CHEAPQ_BAD_PROPOSE makes this
 * process, as a backup round's leader, propose @v whatever the promises
 * justify. SACRED_CHEAPQ_STALL_AFTER_COPY (a follower) is no fault but
 * slowness: the next sacred_cheapq_propose() stops right after its copy and
 * returns -EINPROGRESS; the one after resumes there. Everything goes
 * through this process's own regions and signatures.
 *
 * Return: 0; -EPERM (a follower's hook called by the leader, which copies
 * nothing); -ENOENT (SACRED_CHEAPQ_REPLAY_COPY: no other follower, or no copy
 * to replay); -EINVAL, -EMSGSIZE; replicated-memory errors.
 */
int sacred_cheapq_misbehave(struct sacred_cheapq *cheapq, int how,
			    const void *v, size_t len)
{
	struct sacred_cell_view view;
	unsigned int p;
	size_t n;
	int ret;

	if (!cheapq || (!v && len))
		return -EINVAL;
	if (len > cheapq->a.value_max)
		return -EMSGSIZE;
	if (cheapq->me == 0 && (how == SACRED_CHEAPQ_BAD_COPY ||
				how == SACRED_CHEAPQ_GARBAGE_COPY ||
				how == SACRED_CHEAPQ_REPLAY_COPY ||
				how == SACRED_CHEAPQ_STALL_AFTER_COPY))
		return -EPERM;
	switch (how) {
	case SACRED_CHEAPQ_BAD_COPY:
		n = cheapq_build(cheapq, v, len, cheapq_forged_sig, true);
		return sacred_slots_write(cheapq->procs[cheapq->me],
					  CHEAPQ_SLOT_COPY, cheapq->rec, n);
	case SACRED_CHEAPQ_GARBAGE_COPY:
		return sacred_slots_write(cheapq->procs[cheapq->me],
					  CHEAPQ_SLOT_COPY, v, len);
	case SACRED_CHEAPQ_REPLAY_COPY:
		for (p = 1; p < cheapq->n && p == cheapq->me; p++)
			;
		if (p >= cheapq->n)
			return -ENOENT;
		ret = sacred_slots_read(cheapq->procs[p], CHEAPQ_SLOT_COPY,
					cheapq->buf,
					CHEAPQ_HDR + cheapq->a.value_max,
					&view);
		if (ret)
			return ret == -ENODATA ? -ENOENT : ret;
		return sacred_slots_write(cheapq->procs[cheapq->me],
					  CHEAPQ_SLOT_COPY, cheapq->buf,
					  view.len);
	case SACRED_CHEAPQ_BAD_CARRY:
	case SACRED_CHEAPQ_FORGED_CARRY:
		memcpy(cheapq->bad_carry, v, len);
		cheapq->bad_carry_len = len;
		cheapq->forge_carry = how == SACRED_CHEAPQ_FORGED_CARRY;
		return 0;
	case SACRED_CHEAPQ_BAD_PROPOSE:
		memcpy(cheapq->bad_prop, v, len);
		cheapq->bad_prop_len = len;
		return 0;
	case SACRED_CHEAPQ_STALL_AFTER_COPY:
		cheapq->stall = true;
		return 0;
	default:
		return -EINVAL;
	}
}

/** sacred_cheapq_stats() - counters of the last sacred_cheapq_propose() */
void sacred_cheapq_stats(const struct sacred_cheapq *cheapq,
			 struct sacred_cheapq_stats *st)
{
	unsigned int p;

	*st = cheapq->stats;
	st->faulty = 0;
	for (p = 0; p < cheapq->n; p++)
		if (cheapq->peer[p].bad)
			st->faulty |= 1U << p;
}
