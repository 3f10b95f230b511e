// SPDX-License-Identifier: GPL-2.0
/*
 * bpfswitch - the permission switch decided by an eBPF program against the
 * same switch decided by the built-in policy, in one run.
 *
 * Two regions of one instance, the same rule on both: "fenced" (built
 * in: write only above the highest ballot granted) and "bpf" running
 * examples/policies/ballot.bpf.o (the same rule as a program). Each
 * region has two processes. A sample, on each region in turns, so that
 * a slow spell of the host weighs on both alike:
 *   revoke+grant: b holds write; a asks for write with a higher ballot,
 *                 timed - the policy decides, b is fenced, a is granted;
 *   own grant:    a asks for read, then for write again, timed - no one
 *                 else is revoked.
 * The ratios bpf / built-in of the medians are what bench/targets holds.
 *
 * Usage: bpfswitch [-n SAMPLES] [-p PROGRAM.bpf.o]
 *   -p  the program (default: examples/policies/ballot.bpf.o of the tree
 *       this program is in)
 * Environment: SACRED_BENCH_DEV (default rxe0).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <linux/sacred.h>
#include <bpf/libbpf.h>

#include "sacred.h"
#include "bench.h"

#define MAXN		20000
#define MEM_PORT	7490
#define RSIZE		4096
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)

enum { BUILTIN, PROG, NR_KINDS };

static const char *const kind_name[NR_KINDS] = {
	[BUILTIN] = "fenced (built-in)",
	[PROG] = "bpf (ballot.bpf.o)",
};

/* One region under test, with its two processes and its next ballot. */
struct side {
	uint32_t region;
	struct sacred_conn *a, *b;
	uint64_t ballot;
};

static int ask(struct sacred_conn *c, struct side *s, uint32_t access)
{
	struct sacred_perm_req req = {
		.region_id = s->region,
		.access = access,
		.ballot = access & SACRED_ACCESS_WRITE ? ++s->ballot : 0,
	};
	struct sacred_perm_result res;

	return sacred_change_perm(c, &req, &res);
}

/* The ballot program, loaded as a socket filter; its fd. */
static int load_prog(const char *path, struct bpf_object **obj)
{
	struct bpf_program *prog;

	*obj = bpf_object__open_file(path, NULL);
	if (!*obj)
		return -errno;
	prog = bpf_object__next_program(*obj, NULL);
	if (!prog)
		return -ENOENT;
	bpf_program__set_type(prog, BPF_PROG_TYPE_SOCKET_FILTER);
	if (bpf_object__load(*obj))
		return -EINVAL;
	return bpf_program__fd(prog);
}

/*
 * The regions under test, one per kind on instance @m, each with its two
 * connected processes; @fd is the program the PROG kind's region runs.
 */
static void setup(struct sacred_ctrl *ctrl, const struct sacred_mem_info *m,
		  int fd, struct side *side)
{
	struct sacred_acl_entry acl[2] = {
		{ .process_id = 1, .access = RW },
		{ .process_id = 2, .access = RW },
	};
	struct sacred_region_info ri;
	int k, ret;

	for (k = 0; k < NR_KINDS; k++) {
		ret = k == PROG ?
		      sacred_region_new_prog(ctrl, m->id, SACRED_REGION_ID_ANY,
					     RSIZE, fd, NULL, &ri) :
		      sacred_region_new(ctrl, m->id, SACRED_REGION_ID_ANY,
					RSIZE, SACRED_POLICY_FENCED, &ri);
		if (ret)
			die("region add", ret);
		side[k].region = ri.id;
		acl[0].process_id = 1 + 2 * k;
		acl[1].process_id = 2 + 2 * k;
		ret = sacred_region_set_acl(ctrl, m->id, ri.id, acl, 2);
		if (!ret)
			ret = bench_conn_open(&m->addr, acl[0].process_id,
					      ri.id, &side[k].a);
		if (!ret)
			ret = bench_conn_open(&m->addr, acl[1].process_id,
					      ri.id, &side[k].b);
		if (ret)
			die("region set up", ret);
	}
}

/*
 * One sample of each row on @sd: b takes write (fencing a) and writes; a
 * comes back; a's revoke+grant into *@sw, then its own grant into *@own.
 */
static void sample(struct side *sd, double *sw, double *own)
{
	uint64_t word = 1;
	double t0;
	int ret;

	while (ask(sd->b, sd, RW) ||
	       sacred_write(sd->b, sd->region, 8, &word, sizeof(word)))
		if (sacred_conn_reconnect(sd->b))
			usleep(1000);
	ret = sacred_conn_reconnect(sd->a);
	if (ret)
		die("reconnect", ret);

	t0 = now_us();
	ret = ask(sd->a, sd, RW);
	if (ret)
		die("revoke+grant", ret);
	*sw = now_us() - t0;

	ret = ask(sd->a, sd, SACRED_ACCESS_READ);
	if (ret)
		die("give write up", ret);
	t0 = now_us();
	ret = ask(sd->a, sd, RW);
	if (ret)
		die("own grant", ret);
	*own = now_us() - t0;
}

static void report(const char *dev, int n, double sw[][MAXN],
		   double own[][MAXN])
{
	struct stats s[NR_KINDS][2];
	int k;

	printf("# the switch decided by a program against the built-in policy, one run on %s\n\n",
	       dev);
	printf("Microseconds, client-observed; the two regions of one instance measured in turns, %d samples per row after warm-up; 4 KiB regions.\n\n",
	       n);
	printf("| operation | policy | min | median | p99 | n |\n");
	printf("|---|---|---|---|---|---|\n");
	for (k = 0; k < NR_KINDS; k++) {
		s[k][0] = summarize(sw[k], n);
		s[k][1] = summarize(own[k], n);
		stats_row2("revoke+grant (writer fenced)", kind_name[k],
			   s[k][0]);
		stats_row2("grant (own access)", kind_name[k], s[k][1]);
	}
	printf("\n## Ratios (medians)\n\n");
	printf("| ratio | value | target |\n|---|---|---|\n");
	printf("| revoke+grant, bpf / built-in | %.3f | <= 1.05 |\n",
	       s[PROG][0].med / s[BUILTIN][0].med);
	printf("| own grant, bpf / built-in | %.3f | <= 1.05 |\n",
	       s[PROG][1].med / s[BUILTIN][1].med);
}

int main(int argc, char **argv)
{
	static double sw[NR_KINDS][MAXN], own[NR_KINDS][MAXN];
	char path_buf[512];
	const char *path = path_buf;
	struct side side[NR_KINDS] = {};
	int n = 300, i, j, k, fd;
	const struct bench_opt opts[] = {
		BENCH_INT('n', "[-n SAMPLES]", &n),
		BENCH_STR('p', "[-p PROGRAM.bpf.o]", &path),
	};
	struct sacred_ctrl *ctrl;
	struct bpf_object *obj;
	struct sacred_mem_info m;
	double t_sw, t_own;

	/* By default the example next to this program's tree. */
	snprintf(path_buf, sizeof(path_buf),
		 "%.*s../examples/policies/ballot.bpf.o",
		 (int)(strrchr(argv[0], '/') ? strrchr(argv[0], '/') - argv[0] + 1 : 0),
		 argv[0]);
	bench_args("bpfswitch", argc, argv, opts, 2);
	if (n < 10 || n > MAXN)
		bench_exit(2, "-n between 10 and %d", MAXN);

	ctrl = bench_ctrl();
	bench_mem(ctrl, MEM_PORT, 0, &m);
	fd = load_prog(path, &obj);
	if (fd < 0)
		die(path, fd);
	setup(ctrl, &m, fd, side);
	/* The regions hold the program now. */
	bpf_object__close(obj);

	/*
	 * Which goes first alternates: the second of a pair meets the
	 * first's fenced connection being torn down in the kernel's
	 * workqueue. The first 10 rounds are warm-up.
	 */
	for (i = 0; i < n + 10; i++) {
		for (j = 0; j < NR_KINDS; j++) {
			k = (i + j) % NR_KINDS;
			sample(&side[k], &t_sw, &t_own);
			if (i >= 10) {
				sw[k][i - 10] = t_sw;
				own[k][i - 10] = t_own;
			}
		}
	}
	report(bench_dev(), n, sw, own);

	for (k = 0; k < NR_KINDS; k++) {
		sacred_conn_destroy(side[k].a);
		sacred_conn_destroy(side[k].b);
	}
	sacred_mem_del(ctrl, m.id);
	sacred_ctrl_close(ctrl);
	return 0;
}
