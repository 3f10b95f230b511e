// SPDX-License-Identifier: GPL-2.0
/*
 * kvbench - what sacred-kv (tools/kv/sacred-kv) serves: put and get
 * latency and throughput from one client, three replicas on a Protected
 * Memory Paxos log over three memory instances (one per rxe device).
 *
 * Starts the three replicas (fork + exec of the sacred-kv of this tree),
 * waits for a leader, then:
 *
 *   latency     put and get of one of 100 keys, in turns, each timed
 *               from the request to the answer (a Unix socket to the
 *               leader, which appends the request to the log - reads too
 *               - and answers once it is decided)
 *   throughput  rounds of 20 back-to-back puts and 20 gets, in turns,
 *               until each kind has run -t milliseconds
 *
 * and last runs `sacred-kv bench 200`, the client's own timed puts, and
 * quotes its summary. The client is tools/kv/kv_client.c, the tests'
 * (one connection per request, as sacred-kv does), so that gets can be
 * timed too. Prints a Markdown report. Run inside the VM rig: make bench.
 * Options: -n SAMPLES (default 200), -t MS (default 2000).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "sacred.h"
#include "bench.h"
#include "kv/kv_client.h"

#define MEM_PORT	7741
#define NR_MEMS		3
#define NR_REPLICAS	3
#define PID_BASE	1200
#define LOG_REGION	1
#define HB_REGION	2
#define CAPACITY	8192
#define NR_KEYS		100
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)
#define MAXN		2000

static char dir[64];
static uint64_t client_id, req_no;

/* tools/kv/sacred-kv next to this program's bench/ directory. */
static const char *kv_binary(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
	char *slash;

	if (n <= 0)
		return "tools/kv/sacred-kv";
	path[n] = '\0';
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "../tools/kv/sacred-kv");
	return path;
}

/*
 * One request through tools/kv/kv_client.c (it follows "not leader"):
 * 10 s to be answered, 5 s for one replica's answer.
 */
static int call(struct kv_cmd *cmd, struct kv_reply *rep)
{
	static struct kv_client kc = {
		.nr = NR_REPLICAS,
		.timeout_ms = 10000,
		.wait_ms = 5000,
	};
	int ret;

	kc.dir = dir;
	kc.id = client_id;
	ret = kv_client_call(&kc, cmd, rep);
	req_no = kc.req;	/* main() paces the throughput rounds by it */
	return ret;
}

static void op(int kind, int i)
{
	struct kv_cmd c = { .op = kind };
	struct kv_reply rep;
	int ret;

	c.klen = snprintf(c.key, sizeof(c.key), "key%d", i % NR_KEYS);
	if (kind == KV_PUT)
		c.vlen = snprintf(c.val, sizeof(c.val), "value %d", i);
	ret = call(&c, &rep);
	if (ret)
		die(kind == KV_PUT ? "put" : "get", ret);
	if (rep.status != KV_OK)
		die(kind == KV_PUT ? "put" : "get", -EPROTO);
}

/*
 * The memories, one per rig device, with the log's regions on each, open
 * to the replicas; their addresses into @mems as sacred-kv's -m takes
 * them (ADDR:PORT,...).
 */
static void setup(struct sacred_ctrl *ctrl, struct sacred_mem_info *mem,
		  char *mems, size_t len)
{
	int i;

	bench_mems(ctrl, NR_MEMS, MEM_PORT, 0, mem);
	for (i = 0; i < NR_MEMS; i++) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&mem[i].addr;
		char addr[64];

		inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof(addr));
		snprintf(mems + strlen(mems), len - strlen(mems), "%s%s:%u",
			 i ? "," : "", addr, ntohs(sin->sin_port));
	}
	/* entry cells of (sizeof(struct kv_cmd) + 63) & ~7 bytes */
	bench_region_everywhere(ctrl, mem, NR_MEMS, LOG_REGION, 12 << 20,
				SACRED_POLICY_EXCLUSIVE_WRITER, PID_BASE,
				NR_REPLICAS);
	bench_region_everywhere(ctrl, mem, NR_MEMS, HB_REGION, 4096,
				SACRED_POLICY_STATIC, PID_BASE, NR_REPLICAS);
}

/* The three replicas, sacred-kv @bin over the memories @mems, forked. */
static void start_replicas(const char *bin, const char *mems, pid_t *replica)
{
	int i;

	snprintf(dir, sizeof(dir), "/tmp/kvbench-%d", getpid());
	for (i = 0; i < NR_REPLICAS; i++) {
		char idx[8], nr[8], base[16], cap[16];

		replica[i] = fork();
		if (replica[i] < 0)
			die("fork", -errno);
		if (replica[i])
			continue;
		snprintf(idx, sizeof(idx), "%d", i);
		snprintf(nr, sizeof(nr), "%d", NR_REPLICAS);
		snprintf(base, sizeof(base), "%d", PID_BASE);
		snprintf(cap, sizeof(cap), "%d", CAPACITY);
		/* The replicas' own output would mix with the report. */
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execl(bin, "sacred-kv", "replica", "-i", idx, "-n", nr, "-m",
		      mems, "-d", dir, "-P", base, "-c", cap, "-L", "1", "-H",
		      "2", "-s", "300", (char *)NULL);
		_exit(127);
	}
}

/*
 * Rounds of 20 back-to-back puts and 20 gets, in turns, until each kind
 * has run @tput_ms: time spent into @us[], operations into @ops[].
 */
static void throughput(int tput_ms, double *us, long *ops)
{
	double t0;
	int i, j;

	while (us[0] < tput_ms * 1e3 || us[1] < tput_ms * 1e3) {
		if (req_no + 40 >= CAPACITY - 300)
			break;	/* leave room for sacred-kv bench */
		for (j = 0; j < 2; j++) {
			t0 = now_us();
			for (i = 0; i < 20; i++)
				op(j ? KV_GET : KV_PUT, i);
			us[j] += now_us() - t0;
			ops[j] += 20;
		}
	}
}

/* `sacred-kv bench 200` against the replicas, its summary quoted. */
static void quote_kv_bench(const char *bin)
{
	char cmd[8192], line[256];
	FILE *f;
	int ret;

	snprintf(cmd, sizeof(cmd), "%s -d %s bench 200 sacred-kv-bench 2>&1",
		 bin, dir);
	f = popen(cmd, "r");
	printf("\n`sacred-kv bench 200` (its own client, 200 puts of new keys), its summary:\n\n");
	while (f && fgets(line, sizeof(line), f)) {
		int done, of;

		/* Its progress lines ("bench: 100 of 200 puts") are no summary. */
		if (sscanf(line, "bench: %d of %d puts", &done, &of) == 2)
			continue;
		printf("    %s", line);
	}
	ret = f ? pclose(f) : -1;
	printf("\n(exit status %d)\n", ret == -1 ? -1 : WEXITSTATUS(ret));
}

int main(int argc, char **argv)
{
	static double put[MAXN], get[MAXN];
	struct sacred_mem_info mem[NR_MEMS];
	char mems[256] = "", cmd[128];
	double tp_us[2] = { 0, 0 };
	long tp_ops[2] = { 0, 0 };
	int n = 200, tput_ms = 2000, i, j;
	const struct bench_opt opts[] = {
		BENCH_INT('n', "[-n SAMPLES]", &n),
		BENCH_INT('t', "[-t MS]", &tput_ms),
	};
	pid_t replica[NR_REPLICAS];
	struct sacred_ctrl *ctrl;
	const char *bin;

	bench_args("kvbench", argc, argv, opts, 2);
	if (n < 10 || n > MAXN || tput_ms < 100 || tput_ms > 60000)
		bench_exit(2, "-n 10 to %d, -t 100 to 60000", MAXN);
	bin = kv_binary();
	if (!getenv("SACRED_RXE_DEVS") || access(bin, X_OK))
		bench_exit(1, "needs the VM rig and %s (make bench)", bin);
	ctrl = bench_ctrl();
	setup(ctrl, mem, mems, sizeof(mems));
	start_replicas(bin, mems, replica);
	srand(getpid());
	client_id = ((uint64_t)rand() << 32) ^ rand();

	/* Warm up: the first request waits for the election. */
	for (i = 0; i < 10; i++) {
		op(KV_PUT, i);
		op(KV_GET, i);
	}
	for (i = 0; i < n; i++) {
		double t0 = now_us();

		op(KV_PUT, i);
		put[i] = now_us() - t0;
		t0 = now_us();
		op(KV_GET, i);
		get[i] = now_us() - t0;
	}
	throughput(tput_ms, tp_us, tp_ops);

	printf("# kv: sacred-kv put and get, one client, three replicas\n\n");
	printf("Microseconds, from the request to the answer: a Unix socket to the leading replica, which appends the request (gets too: every request is a log entry) and answers once it is decided. %d of each, in turns, after 10 of warm-up; %d keys.\n\n",
	       n, NR_KEYS);
	stats_head();
	stats_row("put", summarize(put, n));
	stats_row("get", summarize(get, n));
	printf("\n| throughput, one client, back-to-back | ops/s | operations | seconds |\n|---|---|---|---|\n");
	for (j = 0; j < 2; j++)
		printf("| %s | %.0f | %ld | %.2f |\n", j ? "get" : "put",
		       tp_us[j] > 0 ? tp_ops[j] / (tp_us[j] / 1e6) : 0.0,
		       tp_ops[j], tp_us[j] / 1e6);
	quote_kv_bench(bin);
	bench_footer(" in the guest");

	for (i = 0; i < NR_REPLICAS; i++) {
		kill(replica[i], SIGTERM);
		waitpid(replica[i], NULL, 0);
	}
	for (i = 0; i < NR_MEMS; i++)
		sacred_mem_del(ctrl, mem[i].id);
	sacred_ctrl_close(ctrl);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	/* The sockets' directory; nothing to do if it stays. */
	return system(cmd) && 0;
}
