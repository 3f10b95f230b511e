// SPDX-License-Identifier: GPL-2.0
/*
 * scale - how the permission switch and the module's memory grow with the
 * number of peers and regions of one memory instance (issue 7, part 2).
 *
 *   peers       revoke+grant (the requester takes write from a connected
 *               writer, as bench/permswitch times it) while P other
 *               processes hold grants on the region: the writer that is
 *               fenced and P - 1 readers, each connected, attached and
 *               holding read; P = 1, 4, 16, 64
 *   regions     the same switch on one region while the instance has R
 *               regions (4 KiB each) and both processes are attached to
 *               every one of them: 2 R grants; R = 1, 4, 16, 64, 256
 *   memory      kernel memory per peer (a connected process) and per
 *               (peer, region) grant, around creating 64 peers and then
 *               64 x 256 grants, divided by the count: first from the
 *               module's own counters (MEM_GET: the bytes sacred.ko holds
 *               for the instance, and the driver objects it has: QPs and
 *               CQs, MRs and their page-list entries), then from the
 *               guest's accounting, which also sees what the RDMA driver
 *               and the client side allocate (/proc/meminfo Slab,
 *               SUnreclaim, VmallocUsed, MemFree and the /proc/slabinfo
 *               caches that grew)
 *
 * Prints a Markdown report: min, median, p99 and count in microseconds
 * per point, the ratios against the smallest point, and the memory
 * table. Run inside the VM rig: make bench. Options: -n SAMPLES (default
 * 100), -p PEERS and -r REGIONS (comma lists), -m (memory only), -M (no
 * memory phase).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sacred.h"
#include "bench.h"

#define MEM_PORT	7721
#define RW		(SACRED_ACCESS_READ | SACRED_ACCESS_WRITE)
#define MAXN		10000
#define MAX_PEERS	64
#define MAX_REGIONS	256
#define PID_A		1
#define PID_B		2
#define PID_R(i)	(100 + (i))	/* readers and memory-phase peers */
#define REGION_BASE	1
#define MAX_CACHES	512

static double v[MAXN];
static double peers_ratio, regions_ratio;	/* last point / first */

static struct sacred_conn *conn_open(const struct sacred_mem_info *m,
				     uint32_t pid)
{
	struct sacred_conn_attr attr = {
		.addr = (const struct sockaddr *)&m->addr,
		.process_id = pid,
		.timeout_ms = 10000,
	};
	struct sacred_conn *c;
	int ret;

	ret = sacred_conn_create(&attr, &c);
	if (ret)
		die("connecting", ret);
	return c;
}

static int ask(struct sacred_conn *c, uint32_t region, uint32_t access)
{
	struct sacred_perm_req req = { .region_id = region, .access = access };
	struct sacred_perm_result res;

	return sacred_change_perm(c, &req, &res);
}

static void attach(struct sacred_conn *c, uint32_t region)
{
	struct sacred_region_attr ra;
	int ret;

	ret = sacred_attach(c, region, &ra);
	/* A writer fenced by the last switch learns of it here. */
	if (ret == -ECONNRESET || ret == -ENOTCONN) {
		ret = sacred_conn_reconnect(c);
		if (!ret)
			ret = sacred_attach(c, region, &ra);
	}
	if (ret)
		die("attach", ret);
}

/* A 4 KiB exclusive-writer region; A, B and every reader may read-write. */
static void region_new(struct sacred_ctrl *ctrl, uint32_t mem, uint32_t id)
{
	static struct sacred_acl_entry acl[MAX_PEERS + 2];
	unsigned int i, n = 0;
	int ret;

	acl[n++] = (struct sacred_acl_entry){ .process_id = PID_A,
					      .access = RW };
	acl[n++] = (struct sacred_acl_entry){ .process_id = PID_B,
					      .access = RW };
	for (i = 0; i < MAX_PEERS; i++)
		acl[n++] = (struct sacred_acl_entry){
			.process_id = PID_R(i),
			.access = RW,
		};
	ret = sacred_region_new(ctrl, mem, id, 4096,
				SACRED_POLICY_EXCLUSIVE_WRITER, NULL);
	if (!ret)
		ret = sacred_region_set_acl(ctrl, mem, id, acl, n);
	if (ret)
		die("region add", ret);
}

/*
 * revoke+grant on @region, timed as bench/permswitch does: b takes write
 * (fencing a) and writes; a reconnects; then a takes write from b.
 */
static struct stats switch_samples(struct sacred_conn *a,
				   struct sacred_conn *b, uint32_t region,
				   int n)
{
	uint64_t word = 1;
	int i, ret;

	for (i = 0; i < n + 5; i++) {
		double t0;

		while (ask(b, region, RW) ||
		       sacred_write(b, region, 8, &word, sizeof(word)))
			if (sacred_conn_reconnect(b))
				usleep(1000);
		ret = sacred_conn_reconnect(a);
		if (ret)
			die("reconnect", ret);
		t0 = now_us();
		ret = ask(a, region, RW);
		if (ret)
			die("revoke+grant", ret);
		if (i >= 5)	/* warm-up */
			v[i - 5] = now_us() - t0;
	}
	return summarize(v, n);
}

static void row(const char *what, int x, struct stats s, double base)
{
	printf("| %s | %d | %.1f | %.1f | %.1f | %d | %.2f |\n", what, x,
	       s.min, s.med, s.p99, s.n, base > 0 ? s.med / base : 1.0);
}

static int parse_list(const char *s, int *out, int max, int hi)
{
	char *dup = strdup(s), *tok, *save;
	int n = 0;

	if (!dup)
		return -1;
	for (tok = strtok_r(dup, ",", &save); tok && n < max;
	     tok = strtok_r(NULL, ",", &save)) {
		out[n] = atoi(tok);
		if (out[n] < 1 || out[n] > hi || (n && out[n] <= out[n - 1])) {
			free(dup);
			return -1;
		}
		n++;
	}
	free(dup);
	return n;
}

static void bench_peers(struct sacred_ctrl *ctrl, const int *pts, int npts,
			int n)
{
	static struct sacred_conn *readers[MAX_PEERS];
	struct sacred_conn *a, *b;
	struct sacred_mem_info m;
	int have = 0, k, ret;
	double base = 0;

	bench_mem(ctrl, MEM_PORT, 1ULL << 30, &m);
	region_new(ctrl, m.id, REGION_BASE);
	a = conn_open(&m, PID_A);
	b = conn_open(&m, PID_B);
	attach(a, REGION_BASE);
	attach(b, REGION_BASE);
	for (k = 0; k < npts; k++) {
		struct stats s;

		/* P other peers: b and P - 1 readers holding read. */
		while (have < pts[k] - 1) {
			readers[have] = conn_open(&m, PID_R(have));
			attach(readers[have], REGION_BASE);
			ret = ask(readers[have], REGION_BASE,
				  SACRED_ACCESS_READ);
			if (ret)
				die("reader grant", ret);
			have++;
		}
		s = switch_samples(a, b, REGION_BASE, n);
		if (!k)
			base = s.med;
		row("revoke+grant, P other peers hold grants", pts[k], s,
		    base);
		peers_ratio = s.med / base;
		fflush(stdout);
	}
	for (k = 0; k < have; k++)
		sacred_conn_destroy(readers[k]);
	sacred_conn_destroy(a);
	sacred_conn_destroy(b);
	sacred_mem_del(ctrl, m.id);
}

static void bench_regions(struct sacred_ctrl *ctrl, const int *pts, int npts,
			  int n)
{
	struct sacred_conn *a, *b;
	struct sacred_mem_info m;
	int have = 0, k;
	double base = 0;

	bench_mem(ctrl, MEM_PORT, 1ULL << 30, &m);
	a = conn_open(&m, PID_A);
	b = conn_open(&m, PID_B);
	for (k = 0; k < npts; k++) {
		struct stats s;

		while (have < pts[k]) {
			region_new(ctrl, m.id, REGION_BASE + have);
			attach(a, REGION_BASE + have);
			attach(b, REGION_BASE + have);
			have++;
		}
		/* The switch on the first region, with 2 R grants around. */
		s = switch_samples(a, b, REGION_BASE, n);
		if (!k)
			base = s.med;
		row("revoke+grant, R regions, both attached to all", pts[k],
		    s, base);
		regions_ratio = s.med / base;
		fflush(stdout);
	}
	sacred_conn_destroy(a);
	sacred_conn_destroy(b);
	sacred_mem_del(ctrl, m.id);
}

/* ------------------------------------------------------------- memory */

struct snap {
	long long memfree, slab, sunreclaim, vmalloc;	/* kB */
	int nr;
	char name[MAX_CACHES][64];
	long long bytes[MAX_CACHES];	/* active objects x object size */
};

static long long meminfo(const char *key)
{
	char line[256];
	size_t len = strlen(key);
	long long val = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':') {
			val = atoll(line + len + 1);
			break;
		}
	fclose(f);
	return val;
}

static void snapshot(struct snap *s)
{
	char line[512];
	FILE *f;

	/* Let RCU-freed and deferred objects go before reading. */
	sync();
	usleep(200000);
	s->nr = 0;
	f = fopen("/proc/slabinfo", "r");
	while (f && fgets(line, sizeof(line), f) && s->nr < MAX_CACHES) {
		char name[64];
		long long active, total, size;

		if (sscanf(line, "%63s %lld %lld %lld", name, &active, &total,
			   &size) != 4)
			continue;	/* the two header lines */
		snprintf(s->name[s->nr], sizeof(s->name[0]), "%s", name);
		s->bytes[s->nr++] = active * size;
	}
	if (f)
		fclose(f);
	s->memfree = meminfo("MemFree");
	s->slab = meminfo("Slab");
	s->sunreclaim = meminfo("SUnreclaim");
	s->vmalloc = meminfo("VmallocUsed");
}

struct peer_count {
	uint32_t mem;
	unsigned int connected;
	unsigned long long mrs;
};

static int count_peer(const struct sacred_peer_info *p, void *arg)
{
	struct peer_count *c = arg;

	if (p->mem_id != c->mem)
		return 0;
	c->connected += p->connected;
	c->mrs += p->mrs;
	return 0;
}

/* The slab caches that grew most from @a to @b, bytes per object. */
static void slab_growth(const struct snap *a, const struct snap *b, int count,
			const char *what)
{
	int i, j, shown = 0;
	bool used[MAX_CACHES] = { false };

	printf("\nSlab caches that grew most around %s (bytes per object, active objects x object size):\n\n",
	       what);
	while (shown < 6) {
		long long best = 0;
		int at = -1;

		for (i = 0; i < b->nr; i++) {
			long long before = 0, d;

			if (used[i])
				continue;
			for (j = 0; j < a->nr; j++)
				if (!strcmp(a->name[j], b->name[i]))
					before = a->bytes[j];
			d = b->bytes[i] - before;
			if (d > best) {
				best = d;
				at = i;
			}
		}
		if (at < 0)
			break;
		used[at] = true;
		printf("%s %s %.0f", shown ? "," : "-", b->name[at],
		       (double)best / count);
		shown++;
	}
	printf("%s\n", shown ? "" : "- (no /proc/slabinfo)");
}

static void mem_row(const char *what, const struct snap *a,
		    const struct snap *b, int count)
{
	printf("| %s | %d | %.0f | %.0f | %.0f | %.0f |\n", what, count,
	       (b->slab - a->slab) * 1024.0 / count,
	       (b->sunreclaim - a->sunreclaim) * 1024.0 / count,
	       (b->vmalloc - a->vmalloc) * 1024.0 / count,
	       (a->memfree - b->memfree) * 1024.0 / count);
}

/* The instance's counters, as a snapshot is taken. */
static void mem_counters(struct sacred_ctrl *ctrl, uint32_t id,
			 struct sacred_mem_info *m)
{
	int ret = sacred_mem_get(ctrl, id, m);

	if (ret)
		die("memory show", ret);
}

static void counter_row(const char *what, int count,
			const struct sacred_mem_info *a,
			const struct sacred_mem_info *b, const char *driver)
{
	printf("| %s | %d | %.1f | %s |\n", what, count,
	       (double)(b->meta_bytes - a->meta_bytes) / count, driver);
}

static void bench_memory(struct sacred_ctrl *ctrl, int peers, int regions)
{
	static struct sacred_conn *c[MAX_PEERS];
	static struct snap s0, s1, s2, s3;
	struct sacred_mem_info k0, k1, k2, k3;
	char per_peer[128], per_grant[128];
	struct peer_count pc1, pc3;
	struct sacred_mem_info m;
	int i, r;

	bench_mem(ctrl, MEM_PORT, 1ULL << 30, &m);
	/* Warm the caches and the connection path with one peer, then go. */
	region_new(ctrl, m.id, REGION_BASE + regions);
	c[0] = conn_open(&m, PID_A);
	attach(c[0], REGION_BASE + regions);
	sacred_conn_destroy(c[0]);

	snapshot(&s0);
	mem_counters(ctrl, m.id, &k0);
	for (i = 0; i < peers; i++)
		c[i] = conn_open(&m, PID_R(i));
	snapshot(&s1);
	mem_counters(ctrl, m.id, &k1);
	pc1 = (struct peer_count){ .mem = m.id };
	sacred_peer_list(ctrl, m.id, count_peer, &pc1);
	for (r = 0; r < regions; r++)
		region_new(ctrl, m.id, REGION_BASE + r);
	snapshot(&s2);
	mem_counters(ctrl, m.id, &k2);
	for (i = 0; i < peers; i++)
		for (r = 0; r < regions; r++)
			attach(c[i], REGION_BASE + r);
	snapshot(&s3);
	mem_counters(ctrl, m.id, &k3);
	pc3 = (struct peer_count){ .mem = m.id };
	sacred_peer_list(ctrl, m.id, count_peer, &pc3);

	printf("\n## Kernel memory per object (the module's counters)\n\n");
	printf("From `sacred -d memory show` (MEM_GET) before and after creating the objects, divided by their count: the bytes sacred.ko holds for the instance besides region memory (its descriptors, scatterlists, ACL entries, processes, connections with their message buffers, and grants, each as the slab allocator sized it; xarray index nodes are not counted), and the RDMA driver objects it made for them, which the driver sizes and the module cannot weigh. Peers: %u to %u processes known, %u to %u connections. Grants: %u to %u MRs, %llu page-list entries.\n\n",
	       k0.nr_peers, k1.nr_peers, k0.nr_conns, k1.nr_conns, k2.nr_mrs,
	       k3.nr_mrs, (unsigned long long)(k3.mr_pages - k2.mr_pages));
	snprintf(per_peer, sizeof(per_peer),
		 "%.2f PD, %.2f RC QP + CQ (memory side)",
		 (double)(k1.nr_peers - k0.nr_peers) / peers,
		 (double)(k1.nr_conns - k0.nr_conns) / peers);
	snprintf(per_grant, sizeof(per_grant),
		 "%.2f MR of %.2f page-list entries",
		 (double)(k3.nr_mrs - k2.nr_mrs) / (peers * regions),
		 k3.nr_mrs > k2.nr_mrs ? (double)(k3.mr_pages - k2.mr_pages) /
					 (k3.nr_mrs - k2.nr_mrs) : 0.0);
	printf("| object | count | sacred.ko bytes per object | driver objects per object |\n");
	printf("|---|---|---|---|\n");
	counter_row("peer (a connected process)", peers, &k0, &k1, per_peer);
	counter_row("region of 4 KiB (besides its 4 KiB)", regions, &k1, &k2,
		    "-");
	counter_row("(peer, region) grant", peers * regions, &k2, &k3,
		    per_grant);

	printf("\n## Kernel memory per object (guest accounting)\n\n");
	printf("Bytes per object: the change of each /proc/meminfo figure across creating the objects, divided by their count. Peers: %d processes connected (%u connected per the module's peer counters); grants: each of them attached to %d regions of 4 KiB (%llu MRs per the module's counters, %d expected). The client side of each connection (its QP and CQ in rxe, its buffers) lives in the same guest and is in the peer figures; a grant has no client-side kernel object.\n\n",
	       peers, pc1.connected, regions, pc3.mrs - pc1.mrs,
	       peers * regions);
	printf("| object | count | Slab | SUnreclaim | VmallocUsed | MemFree drop |\n");
	printf("|---|---|---|---|---|---|\n");
	mem_row("peer (connection, both sides)", &s0, &s1, peers);
	mem_row("region of 4 KiB (for reference)", &s1, &s2, regions);
	mem_row("(peer, region) grant", &s2, &s3, peers * regions);
	slab_growth(&s0, &s1, peers, "the peers");
	slab_growth(&s2, &s3, peers * regions, "the grants");

	for (i = 0; i < peers; i++)
		sacred_conn_destroy(c[i]);
	sacred_mem_del(ctrl, m.id);
}

int main(int argc, char **argv)
{
	int peers[8] = { 1, 4, 16, 64 }, regions[8] = { 1, 4, 16, 64, 256 };
	int npeers = 4, nregions = 5, n = 100;
	const char *p = NULL, *r = NULL;
	bool mem = true, sw = true;
	const struct bench_opt opts[] = {
		BENCH_INT('n', "[-n SAMPLES]", &n),
		BENCH_STR('p', "[-p PEERS]", &p),
		BENCH_STR('r', "[-r REGIONS]", &r),
		BENCH_FLAG('m', "[-m|-M]", &sw, false),
		BENCH_FLAG('M', NULL, &mem, false),
	};
	struct sacred_ctrl *ctrl;

	bench_args("scale", argc, argv, opts, 5);
	if (p)
		npeers = parse_list(p, peers, 8, MAX_PEERS);
	if (r)
		nregions = parse_list(r, regions, 8, MAX_REGIONS);
	if (n < 10 || n > MAXN || npeers <= 0 || nregions <= 0)
		bench_exit(2, "-n 10 to %d; -p 1 to %d and -r 1 to %d, increasing",
			   MAXN, MAX_PEERS, MAX_REGIONS);
	ctrl = bench_ctrl();

	printf("# scale: the switch against peers and regions, one instance on %s\n\n",
	       bench_dev());
	if (sw) {
		printf("Microseconds, client-observed revoke+grant (the requester takes write from a connected writer, which is fenced; spin 1 ms then sleep), %d samples per point after 5 of warm-up. x is P (other peers holding grants on the region: the fenced writer and P - 1 readers) or R (regions of the instance). \"/ first\" is the median over the first point's median.\n\n",
		       n);
		printf("| operation | x | min | median | p99 | n | / first |\n");
		printf("|---|---|---|---|---|---|---|\n");
		bench_peers(ctrl, peers, npeers, n);
		bench_regions(ctrl, regions, nregions, n);
		printf("\n| ratio (medians) | measured | target |\n|---|---|---|\n");
		printf("| revoke+grant, P = %d / P = %d | %.2f | <= 1.2 (flat) |\n",
		       peers[npeers - 1], peers[0], peers_ratio);
		printf("| revoke+grant, R = %d / R = %d | %.2f | <= 1.2 (flat) |\n",
		       regions[nregions - 1], regions[0], regions_ratio);
	}
	if (mem)
		bench_memory(ctrl, MAX_PEERS, MAX_REGIONS);
	bench_footer("");
	sacred_ctrl_close(ctrl);
	return 0;
}
