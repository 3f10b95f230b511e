// SPDX-License-Identifier: GPL-2.0
/*
 * failover - how long the replicated log (lib/log.c) is without a leader
 * when its leader process dies: from SIGKILL of the leader to the first
 * entry the new leader commits, over many trials (issue 7, part 3).
 *
 * Each trial: three processes (fork, each with its own connections to
 * the three memory instances, one per rxe device) open a fresh log; P0
 * leads and appends an entry every 0.5 ms; once it has committed 20 and
 * both followers have applied 10, the parent SIGKILLs P0 and notes the
 * time. The followers keep polling (every 1 ms); the one that becomes
 * leader appends at once and reports three times, all measured from the
 * kill on CLOCK_MONOTONIC (one clock for every process of the guest):
 *
 *   suspect     the start of the poll in which its failure detector
 *               first names it leader (P0's heartbeat stood still for
 *               suspect_ms); the takeover runs in that same poll
 *   leader      its takeover is done (write permission taken from P0 on
 *               a quorum, metas written and read, the tail recovered)
 *   commit      its first append is decided: the fail-over time
 *
 * Prints a Markdown report: min, median, p99, max and count per phase in
 * milliseconds. A trial with no new commit within 60 s is counted and
 * reported, and another is run in its place, up to twice -t trials in
 * all.
 *
 * Then the kill/restart cycle (issue 28): one log for all its rounds, in
 * which the same process, P0, is SIGKILLed every -p PERIOD_MS (or once
 * it leads again, if that is later) and started again as soon as a
 * follower committed: a restarted process is found alive after it was
 * suspected, as a slow one is, and its timeout is raised; it must come
 * back down before the next kill, or each fail-over takes longer than
 * the last. The leader appends every 100 ms (the log holds every entry
 * of the cycle, no snapshots); the new leader's first append goes at
 * once. Per round: the same three times, the timeout its failure
 * detector had for P0, and that detector's counters so far; then the
 * worst fail-over over the first, the ratio bench/targets guards.
 *
 * Run inside the VM rig: make bench. Options: -t TRIALS (default 20
 * with a new commit; 0: the cycle only), -s SUSPECT_MS (default 200,
 * lib/log.c's default), -b HB_PERIOD_MS (default 10, its default too),
 * -c ROUNDS of the cycle (default 8; 0: none), -p PERIOD_MS (default
 * 18000), -C CALM_TIMEOUTS (struct sacred_log_attr; default 0, the
 * library's).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "sacred.h"
#include "bench.h"

#define MEM_PORT	7731
#define NR_MEMS		3
#define NR_PROCS	3
#define PID(i)		(2101 + (i))
#define REGION_BASE	100
#define CAPACITY	4096
#define ENTRY_MAX	64
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)
#define MAX_TRIALS	1000
#define LEADER_READY	20	/* entries P0 commits before the kill */
#define FOLLOWER_READY	10	/* entries each follower applies first */
#define CYCLE_REGION	90	/* the cycle's log; 91: its heartbeats */
#define CYCLE_APPEND_US	100000	/* a leader's appends in the cycle */
#define MAX_ROUNDS	100

/* How the processes of a trial or of the cycle run. */
struct cfg {
	int suspect_ms;
	int hb_ms;
	int calm;
	int append_us;	/* between a leader's appends */
};

struct msg {
	int who;
	int kind;	/* 0: ready; 1: took over */
	double suspect, leader, commit;	/* absolute, us */
	uint64_t timeout;	/* kind 1: its timeout for P0 (ms) then */
	/* kind 1: its failure detector's counters (sacred_log_stats()) */
	uint64_t raised, half, lowered;
};

/* A region on every memory, read-write for the three processes. */
#define region_everywhere(ctrl, mem, id, size, policy) \
	bench_region_everywhere(ctrl, mem, NR_MEMS, id, size, policy, \
				PID(0), NR_PROCS)

static void send_msg(int fd, const struct msg *m)
{
	if (write(fd, m, sizeof(*m)) != sizeof(*m))
		_exit(3);
}

/*
 * One process of a trial or of the cycle; never returns. P0 reports
 * ready once it committed LEADER_READY entries (in the cycle: every
 * incarnation, once it leads again); a follower once it applied
 * FOLLOWER_READY. A follower that takes over from another leader reports
 * when it was elected, led and committed; then it reports again only
 * after it saw another process lead.
 */
/* What one process of a trial or of the cycle goes by (proc()). */
struct proc {
	unsigned int me;
	int fd;			/* to the parent */
	const struct cfg *cfg;
	struct sacred_log *log;
	struct msg msg;		/* what it will report */
	bool ready;		/* a follower: it reported ready */
	bool armed;		/* a follower that saw another leader */
	uint64_t appended;
	double next_append;
};

/*
 * Process @me's log at @log_region (heartbeats at the next region), with
 * connections of its own to the memories. Static: a process has one.
 */
static struct sacred_log *proc_open(const struct sacred_mem_info *mem,
				    unsigned int me, uint32_t log_region,
				    const struct cfg *cfg)
{
	static struct sacred_rmem_member m[NR_MEMS];
	static struct sacred_rmem_attr ra = {
		.nr_mems = NR_MEMS,
		.mems = m,
		.max_io = 65536,
	};
	static struct sacred_log_attr la = {
		.nr_procs = NR_PROCS,
		.capacity = CAPACITY,
		.entry_max = ENTRY_MAX,
	};
	struct sacred_rmem *rm;
	struct sacred_log *log;
	int i, ret;

	for (i = 0; i < NR_MEMS; i++)
		m[i] = (struct sacred_rmem_member){
			.addr = (struct sockaddr *)&mem[i].addr,
		};
	ra.process_id = PID(me);
	ret = sacred_rmem_create(&ra, &rm);
	if (ret)
		die("sacred_rmem_create", ret);
	la.log_region = log_region;
	la.hb_region = log_region + 1;
	la.me = me;
	la.hb_period_ms = cfg->hb_ms;
	la.suspect_ms = cfg->suspect_ms;
	la.calm_timeouts = cfg->calm;
	la.rm = rm;
	ret = sacred_log_open(&la, &log);
	if (ret)
		die("sacred_log_open", ret);
	return log;
}

/*
 * A follower, after the poll that began at @t_poll: armed once it saw
 * another leader; the poll in which its detector names it leader is when
 * it suspected (the takeover runs in that same poll).
 */
static void proc_watch(struct proc *p, double t_poll)
{
	int leader = sacred_log_leader(p->log);

	if (!p->me)
		return;
	if (p->ready && leader >= 0 && leader != (int)p->me)
		p->armed = true;
	if (p->armed && !p->msg.suspect && leader == (int)p->me) {
		p->msg.suspect = t_poll;
		p->msg.timeout = sacred_log_suspect_ms(p->log, 0);
	}
}

/* The first commit of a follower that took over: report it, disarm. */
static void proc_report_takeover(struct proc *p)
{
	struct sacred_log_stats st;

	p->msg.commit = now_us();
	p->msg.kind = 1;
	if (!p->msg.suspect) {
		p->msg.suspect = p->msg.leader;
		p->msg.timeout = sacred_log_suspect_ms(p->log, 0);
	}
	sacred_log_stats(p->log, &st);
	p->msg.raised = st.timeouts_raised;
	p->msg.half = st.half_stills;
	p->msg.lowered = st.timeouts_lowered;
	send_msg(p->fd, &p->msg);
	p->msg = (struct msg){ .who = p->me };
	p->armed = false;
}

/* The leader's next append; false if it failed. */
static bool proc_append(struct proc *p)
{
	char entry[ENTRY_MAX];

	snprintf(entry, sizeof(entry), "P%u#%llu", p->me,
		 (unsigned long long)p->appended);
	if (sacred_log_propose(p->log, entry, strlen(entry), NULL))
		return false;
	p->appended++;
	if (!p->me && p->appended == LEADER_READY)
		send_msg(p->fd, &p->msg);
	if (p->me && p->armed && !p->msg.commit)
		proc_report_takeover(p);
	p->next_append = now_us() + p->cfg->append_us;
	return true;
}

static void proc(const struct sacred_mem_info *mem, unsigned int me,
		 uint32_t log_region, const struct cfg *cfg, int fd)
{
	struct proc p = {
		.me = me,
		.fd = fd,
		.cfg = cfg,
		.log = proc_open(mem, me, log_region, cfg),
		.msg = { .who = me },
	};

	for (;;) {
		double t_poll = now_us();

		sacred_log_poll(p.log);
		proc_watch(&p, t_poll);
		if (!sacred_log_is_leader(p.log)) {
			if (me && !p.ready &&
			    sacred_log_applied(p.log) >= FOLLOWER_READY) {
				p.ready = true;
				send_msg(fd, &p.msg);
			}
			usleep(1000);
			continue;
		}
		if (me && p.armed && !p.msg.leader)
			p.msg.leader = now_us();
		/*
		 * Between appends a leader polls on, as a follower does: its
		 * heartbeat must not wait for the next append.
		 */
		if (now_us() < p.next_append &&
		    !(me && p.armed && !p.msg.commit)) {
			usleep(500);
			continue;
		}
		if (!proc_append(&p))
			usleep(1000);
	}
}

/* In milliseconds; the last column is the slowest trial. */
static void report(const char *what, double *v, int n)
{
	struct stats s = summarize(v, n);

	printf("| %s | %.1f | %.1f | %.1f | %.1f | %d |\n", what, s.min / 1e3,
	       s.med / 1e3, s.p99 / 1e3, v[n - 1] / 1e3, n);
}

/* Process @me of the log at @region, forked; the child never returns. */
static pid_t spawn(const struct sacred_mem_info *mem, unsigned int me,
		   uint32_t region, const struct cfg *cfg, const int fds[2])
{
	pid_t pid = fork();

	if (pid < 0)
		die("fork", -errno);
	if (!pid) {
		close(fds[0]);
		proc(mem, me, region, cfg, fds[1]);
	}
	return pid;
}

/* The next message before @deadline (us): true, or false on none. */
static bool next_msg(int fd, double deadline, struct msg *m)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (now_us() < deadline) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		return read(fd, m, sizeof(*m)) == sizeof(*m);
	}
	return false;
}

/* A round of the kill/restart cycle, as the new leader saw it. */
struct round {
	int who;
	double kill;	/* since the cycle's first kill, us */
	double suspect, leader, commit;	/* since this round's kill, us */
	uint64_t timeout;	/* the new leader's timeout for P0, ms */
	uint64_t raised, half, lowered;	/* its detector's counters */
};

/*
 * The kill/restart cycle: @rounds kills of P0 on one log, @period_ms
 * apart at least; P0 is started again after each fail-over. Returns the
 * rounds done, each in @r; the first without a new commit (or without
 * P0 leading again) within 60 s ends the cycle.
 */
static int cycle(struct sacred_ctrl *ctrl, const struct sacred_mem_info *mem,
		 const struct cfg *cfg, int rounds, int period_ms,
		 struct round *r)
{
	struct cfg c = *cfg;
	pid_t pid[NR_PROCS];
	int fds[2], i, done, followers = 0;
	double t_first = 0, t_kill = 0, deadline, wait;
	bool p0_ready = false;
	struct msg m;

	c.append_us = CYCLE_APPEND_US;

	region_everywhere(ctrl, mem, CYCLE_REGION, 4 << 20,
			  SACRED_POLICY_EXCLUSIVE_WRITER);
	region_everywhere(ctrl, mem, CYCLE_REGION + 1, 4096,
			  SACRED_POLICY_STATIC);
	if (pipe(fds))
		die("pipe", -errno);
	for (i = 0; i < NR_PROCS; i++)
		pid[i] = spawn(mem, i, CYCLE_REGION, &c, fds);
	for (done = 0; done < rounds; done++) {
		/* P0 leads (again), and both followers applied some. */
		deadline = now_us() + 60e6;
		while (!p0_ready || followers < NR_PROCS - 1) {
			if (!next_msg(fds[0], deadline, &m)) {
				fprintf(stderr, "failover: cycle round %d: P0 does not lead (%d followers ready)\n",
					done + 1, followers);
				goto out;
			}
			if (m.kind)
				continue;	/* a takeover before the kill */
			if (m.who)
				followers++;
			else
				p0_ready = true;
		}
		wait = t_kill + period_ms * 1e3 - now_us();
		if (done && wait > 0)
			usleep(wait);
		t_kill = now_us();
		if (!done)
			t_first = t_kill;
		kill(pid[0], SIGKILL);
		waitpid(pid[0], NULL, 0);
		p0_ready = false;
		deadline = t_kill + 60e6;
		do {
			if (!next_msg(fds[0], deadline, &m)) {
				fprintf(stderr, "failover: cycle round %d: no new commit within 60 s\n",
					done + 1);
				goto out;
			}
		} while (!m.kind || m.commit < t_kill);
		r[done] = (struct round){
			.who = m.who,
			.kill = t_kill - t_first,
			.suspect = m.suspect - t_kill,
			.leader = m.leader - t_kill,
			.commit = m.commit - t_kill,
			.timeout = m.timeout,
			.raised = m.raised,
			.half = m.half,
			.lowered = m.lowered,
		};
		pid[0] = spawn(mem, 0, CYCLE_REGION, &c, fds);
	}
out:
	for (i = 0; i < NR_PROCS; i++) {
		kill(pid[i], SIGKILL);
		waitpid(pid[i], NULL, 0);
	}
	close(fds[0]);
	close(fds[1]);
	for (i = 0; i < NR_MEMS; i++) {
		sacred_region_del(ctrl, mem[i].id, CYCLE_REGION);
		sacred_region_del(ctrl, mem[i].id, CYCLE_REGION + 1);
	}
	return done;
}

/* The cycle's report: every round, then the ratio bench/targets holds. */
static void report_cycle(const struct round *r, int done, int rounds,
			 int period_ms, const struct cfg *cfg)
{
	double worst = 0;
	int i;

	printf("\n## Kill/restart cycle\n\n");
	printf("One log for the whole cycle: P0 (the leader) is SIGKILLed every %d ms (later if it does not lead again by then) and started again as soon as a follower committed; it catches up, is found alive after it was suspected (the others raise their timeout for it) and leads again. The leader appends every %d ms. Heartbeat every %d ms, first timeout %d ms, calm_timeouts %d (0: the library's). %d of %d rounds done. Times in ms from each kill.\n\n",
	       period_ms, CYCLE_APPEND_US / 1000, cfg->hb_ms, cfg->suspect_ms,
	       cfg->calm, done, rounds);
	if (done) {
		printf("| round | kill (s into the cycle) | new leader | its timeout for P0 | suspected | leader | first new commit | its timeouts raised / half-still / lowered so far |\n");
		printf("|---|---|---|---|---|---|---|---|\n");
	}
	for (i = 0; i < done; i++) {
		printf("| %d | %.1f | P%d | %llu | %.1f | %.1f | %.1f | %llu / %llu / %llu |\n",
		       i + 1, r[i].kill / 1e6, r[i].who,
		       (unsigned long long)r[i].timeout, r[i].suspect / 1e3,
		       r[i].leader / 1e3, r[i].commit / 1e3,
		       (unsigned long long)r[i].raised,
		       (unsigned long long)r[i].half,
		       (unsigned long long)r[i].lowered);
		if (r[i].commit > worst)
			worst = r[i].commit;
	}
	printf("\n| ratio | measured |\n|---|---|\n");
	if (done == rounds && done)
		printf("| %d-round kill/restart: worst fail-over / first | %.2f |\n",
		       rounds, worst / r[0].commit);
	else
		printf("| %d-round kill/restart: worst fail-over / first | - |\n",
		       rounds);
}

/* The trials: times from the kill, microseconds, one per trial done. */
struct trials {
	int want;	/* -t */
	int run, done, failed;
	double sus[2 * MAX_TRIALS], lead[2 * MAX_TRIALS],
	       com[2 * MAX_TRIALS];
	int who[2 * MAX_TRIALS];
	int by[NR_PROCS];	/* how often each became the new leader */
};

/*
 * Trial @t on fresh regions: spawn the three processes, kill P0 once all
 * are ready, note what the one that took over reports. False if none did
 * within 60 s.
 */
static bool trial(struct sacred_ctrl *ctrl, const struct sacred_mem_info *mem,
		  const struct cfg *cfg, int t, struct trials *tr)
{
	uint32_t region = REGION_BASE + 2 * t;
	pid_t pid[NR_PROCS];
	struct pollfd pfd;
	struct msg msg;
	int fds[2], ready = 0, i;
	double t_kill = 0, deadline;
	bool got = false;

	region_everywhere(ctrl, mem, region, 4 << 20,
			  SACRED_POLICY_EXCLUSIVE_WRITER);
	region_everywhere(ctrl, mem, region + 1, 4096, SACRED_POLICY_STATIC);
	if (pipe(fds))
		die("pipe", -errno);
	for (i = 0; i < NR_PROCS; i++)
		pid[i] = spawn(mem, i, region, cfg, fds);
	close(fds[1]);
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	deadline = now_us() + 60e6;
	while (!got && now_us() < deadline) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (read(fds[0], &msg, sizeof(msg)) != sizeof(msg))
			break;
		if (!msg.kind && !t_kill && ++ready == NR_PROCS) {
			t_kill = now_us();
			kill(pid[0], SIGKILL);
		} else if (msg.kind && t_kill) {
			tr->sus[tr->done] = msg.suspect - t_kill;
			tr->lead[tr->done] = msg.leader - t_kill;
			tr->com[tr->done] = msg.commit - t_kill;
			tr->who[tr->done] = msg.who;
			tr->by[msg.who]++;
			tr->done++;
			got = true;
		}
	}
	if (!got)
		fprintf(stderr, "failover: trial %d: no new commit (%d of %d ready)\n",
			t, ready, NR_PROCS);
	for (i = 0; i < NR_PROCS; i++) {
		kill(pid[i], SIGKILL);
		waitpid(pid[i], NULL, 0);
	}
	close(fds[0]);
	for (i = 0; i < NR_MEMS; i++) {
		sacred_region_del(ctrl, mem[i].id, region);
		sacred_region_del(ctrl, mem[i].id, region + 1);
	}
	return got;
}

/* The phases' tables, in milliseconds. */
static void report_trials(struct trials *tr, const struct cfg *cfg)
{
	static double dlead[2 * MAX_TRIALS], dcom[2 * MAX_TRIALS];
	int i;

	printf("Three processes, three memories; the leader (P0, appending every 0.5 ms) is SIGKILLed; times from the kill to what the process that took over saw. Heartbeat every %d ms, suspicion after %d ms without one (struct sacred_log_attr); followers poll every 1 ms. %d trials, %d of them without a new commit within 60 s (not in the table); new leader P1 %d times, P2 %d times.\n\n",
	       cfg->hb_ms, cfg->suspect_ms, tr->run, tr->failed, tr->by[1],
	       tr->by[2]);
	if (!tr->done)
		return;
	for (i = 0; i < tr->done; i++) {
		dlead[i] = tr->lead[i] - tr->sus[i];
		dcom[i] = tr->com[i] - tr->sus[i];
	}
	printf("| phase (from the kill) | min | median | p99 | max | n |\n");
	printf("|---|---|---|---|---|---|\n");
	report("suspected: the poll that names it leader begins", tr->sus,
	       tr->done);
	report("leader: takeover done", tr->lead, tr->done);
	report("first new commit (fail-over time)", tr->com, tr->done);
	printf("\n| after the suspicion | min | median | p99 | max | n |\n");
	printf("|---|---|---|---|---|---|\n");
	report("takeover (suspected to leader)", dlead, tr->done);
	report("takeover and first commit", dcom, tr->done);
}

/*
 * Every trial, in the order run, from @each (copied before report()
 * sorted the series): the distribution scripts/bench-report plots
 * (failover.png).
 */
static void report_each_trial(const struct trials *tr, double each[][3])
{
	int i;

	printf("\n## Each trial\n\n");
	printf("| trial | new leader | suspected | leader | first new commit |\n");
	printf("|---|---|---|---|---|\n");
	for (i = 0; i < tr->done; i++)
		printf("| %d | P%d | %.1f | %.1f | %.1f |\n", i + 1,
		       tr->who[i], each[i][0] / 1e3, each[i][1] / 1e3,
		       each[i][2] / 1e3);
}

int main(int argc, char **argv)
{
	static struct trials tr = { .want = 20 };
	static double each[2 * MAX_TRIALS][3];
	static struct round rnd[MAX_ROUNDS];
	struct sacred_mem_info mem[NR_MEMS];
	struct cfg cfg = { .suspect_ms = 200, .hb_ms = 10, .append_us = 500 };
	int rounds = 8, period_ms = 18000, cycled = 0, i;
	const struct bench_opt opts[] = {
		BENCH_INT('t', "[-t TRIALS]", &tr.want),
		BENCH_INT('s', "[-s SUSPECT_MS]", &cfg.suspect_ms),
		BENCH_INT('b', "[-b HB_PERIOD_MS]", &cfg.hb_ms),
		BENCH_INT('c', "[-c ROUNDS]", &rounds),
		BENCH_INT('p', "[-p PERIOD_MS]", &period_ms),
		BENCH_INT('C', "[-C CALM_TIMEOUTS]", &cfg.calm),
	};
	struct sacred_ctrl *ctrl;

	bench_args("failover", argc, argv, opts, 6);
	/* The cycle's entries (one every CYCLE_APPEND_US) fit the log. */
	if (tr.want < 0 || tr.want > MAX_TRIALS || cfg.suspect_ms < 1 ||
	    cfg.hb_ms < 1 || cfg.hb_ms >= cfg.suspect_ms || rounds < 0 ||
	    rounds > MAX_ROUNDS || (!tr.want && !rounds) || cfg.calm < 0 ||
	    period_ms < 1000 || period_ms > 600000 ||
	    (double)rounds * (period_ms * 1e3 + 2e6) / CYCLE_APPEND_US >
	    CAPACITY / 2)
		bench_exit(2, "-t 0 to %d, -c 0 to %d (not both 0), 0 < -b < -s, -C >= 0, -p 1000 to 600000, -c x (-p + 2000) <= %d s",
			   MAX_TRIALS, MAX_ROUNDS,
			   CAPACITY / 2 * (CYCLE_APPEND_US / 1000) / 1000);
	bench_rig_devs();
	ctrl = bench_ctrl();
	bench_mems(ctrl, NR_MEMS, MEM_PORT, 1ULL << 30, mem);
	fflush(stdout);

	for (tr.run = 0; tr.done < tr.want && tr.run < 2 * tr.want; tr.run++)
		if (!trial(ctrl, mem, &cfg, tr.run, &tr))
			tr.failed++;
	if (rounds)
		cycled = cycle(ctrl, mem, &cfg, rounds, period_ms, rnd);

	/* Per trial, before report() sorts each series on its own. */
	for (i = 0; i < tr.done; i++) {
		each[i][0] = tr.sus[i];
		each[i][1] = tr.lead[i];
		each[i][2] = tr.com[i];
	}
	printf("# failover: leader crash to first new commit, milliseconds\n\n");
	if (tr.want)
		report_trials(&tr, &cfg);
	if (rounds)
		report_cycle(rnd, cycled, rounds, period_ms, &cfg);
	/* "Run:" ends what scripts/bench-report copies: each trial after. */
	bench_footer("");
	if (tr.done)
		report_each_trial(&tr, each);
	for (i = 0; i < NR_MEMS; i++)
		sacred_mem_del(ctrl, mem[i].id);
	sacred_ctrl_close(ctrl);
	return tr.done < tr.want || cycled < rounds;
}
