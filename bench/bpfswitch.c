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

static void die(const char *what, int ret)
{
	fprintf(stderr, "bpfswitch: %s: %s\n", what, strerror(-ret));
	exit(1);
}

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

int main(int argc, char **argv)
{
	static double sw[NR_KINDS][MAXN], own[NR_KINDS][MAXN];
	struct sacred_mem_params mp = { .id = SACRED_MEM_ID_ANY,
					.cm_port = MEM_PORT };
	char path_buf[512];
	const char *path = path_buf;
	struct sacred_acl_entry acl[2] = {
		{ .process_id = 1, .access = RW },
		{ .process_id = 2, .access = RW },
	};
	struct stats s[NR_KINDS][2];
	struct side side[NR_KINDS] = {};
	struct sacred_region_info ri;
	struct sacred_ctrl *ctrl;
	struct bpf_object *obj;
	struct sacred_mem_info m;
	int n = 300, opt, i, j, k, ret, fd;

	/* By default the example next to this program's tree. */
	snprintf(path_buf, sizeof(path_buf),
		 "%.*s../examples/policies/ballot.bpf.o",
		 (int)(strrchr(argv[0], '/') ? strrchr(argv[0], '/') - argv[0] + 1 : 0),
		 argv[0]);
	while ((opt = getopt(argc, argv, "n:p:h")) != -1) {
		switch (opt) {
		case 'n':
			n = atoi(optarg);
			break;
		case 'p':
			path = optarg;
			break;
		default:
			fprintf(stderr, "usage: bpfswitch [-n SAMPLES] [-p PROGRAM.bpf.o]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (n < 10 || n > MAXN) {
		fprintf(stderr, "bpfswitch: -n between 10 and %d\n", MAXN);
		return 2;
	}

	ret = sacred_ctrl_open(&ctrl);
	if (ret)
		die("sacred_ctrl_open", ret);
	mp.dev_name = getenv("SACRED_BENCH_DEV") ?: "rxe0";
	ret = sacred_mem_new(ctrl, &mp, &m);
	if (ret)
		die("memory add", ret);
	fd = load_prog(path, &obj);
	if (fd < 0)
		die(path, fd);

	for (k = 0; k < NR_KINDS; k++) {
		ret = k == PROG ?
		      sacred_region_new_prog(ctrl, m.id, SACRED_REGION_ID_ANY,
					     RSIZE, fd, NULL, &ri) :
		      sacred_region_new(ctrl, m.id, SACRED_REGION_ID_ANY,
					RSIZE, SACRED_POLICY_FENCED, &ri);
		if (ret)
			die("region add", ret);
		side[k].region = ri.id;
		acl[0].process_id = 1 + 2 * k;
		acl[1].process_id = 2 + 2 * k;
		ret = sacred_region_set_acl(ctrl, m.id, ri.id, acl, 2);
		if (!ret)
			ret = bench_conn_open(&m.addr, acl[0].process_id,
					      ri.id, &side[k].a);
		if (!ret)
			ret = bench_conn_open(&m.addr, acl[1].process_id,
					      ri.id, &side[k].b);
		if (ret)
			die("region set up", ret);
	}
	/* The regions hold the program now. */
	bpf_object__close(obj);

	for (i = 0; i < n + 10; i++) {
		for (j = 0; j < NR_KINDS; j++) {
			struct side *sd;
			uint64_t word = 1;
			double t0;

			/*
			 * Which goes first alternates: the second of a pair
			 * meets the first's fenced connection being torn
			 * down in the kernel's workqueue.
			 */
			k = (i + j) % NR_KINDS;
			sd = &side[k];

			/* b takes write (fencing a) and writes; a comes back. */
			while (ask(sd->b, sd, RW) ||
			       sacred_write(sd->b, sd->region, 8, &word,
					    sizeof(word)))
				if (sacred_conn_reconnect(sd->b))
					usleep(1000);
			ret = sacred_conn_reconnect(sd->a);
			if (ret)
				die("reconnect", ret);

			t0 = now_us();
			ret = ask(sd->a, sd, RW);
			if (ret)
				die("revoke+grant", ret);
			if (i >= 10)
				sw[k][i - 10] = now_us() - t0;

			ret = ask(sd->a, sd, SACRED_ACCESS_READ);
			if (ret)
				die("give write up", ret);
			t0 = now_us();
			ret = ask(sd->a, sd, RW);
			if (ret)
				die("own grant", ret);
			if (i >= 10)
				own[k][i - 10] = now_us() - t0;
		}
	}

	printf("# the switch decided by a program against the built-in policy, one run on %s\n\n",
	       mp.dev_name);
	printf("Microseconds, client-observed; the two regions of one instance measured in turns, %d samples per row after warm-up; 4 KiB regions.\n\n",
	       n);
	printf("| operation | policy | min | median | p99 | n |\n");
	printf("|---|---|---|---|---|---|\n");
	for (k = 0; k < NR_KINDS; k++) {
		s[k][0] = summarize(sw[k], n);
		s[k][1] = summarize(own[k], n);
		printf("| revoke+grant (writer fenced) | %s | %.1f | %.1f | %.1f | %d |\n",
		       kind_name[k], s[k][0].min, s[k][0].med, s[k][0].p99,
		       s[k][0].n);
		printf("| grant (own access) | %s | %.1f | %.1f | %.1f | %d |\n",
		       kind_name[k], s[k][1].min, s[k][1].med, s[k][1].p99,
		       s[k][1].n);
	}
	printf("\n## Ratios (medians)\n\n");
	printf("| ratio | value | target |\n|---|---|---|\n");
	printf("| revoke+grant, bpf / built-in | %.3f | <= 1.05 |\n",
	       s[PROG][0].med / s[BUILTIN][0].med);
	printf("| own grant, bpf / built-in | %.3f | <= 1.05 |\n",
	       s[PROG][1].med / s[BUILTIN][1].med);

	for (k = 0; k < NR_KINDS; k++) {
		sacred_conn_destroy(side[k].a);
		sacred_conn_destroy(side[k].b);
	}
	sacred_mem_del(ctrl, m.id);
	sacred_ctrl_close(ctrl);
	return 0;
}
