// SPDX-License-Identifier: GPL-2.0
/*
 * sacred_auth - identity: with a master key on the instance, only a
 * process that proves its own key connects, and none can act as another.
 *
 * The proof travels in the connect request (uapi "Identity"); the
 * instance refuses a missing, wrong or replayed one before any queue pair
 * exists for the connection, so no key of the process can be reached. The
 * key is never sent back over netlink.
 */
#include <errno.h>
#include <endian.h>
#include <rdma/rdma_cma.h>
#include <arpa/inet.h>
#include <sodium.h>
#include <rdma/rdma_verbs.h>
#include <linux/sacred.h>

#include "kselftest_harness.h"
#include "nlraw.h"
#include "sacred.h"
#include "sacred_test.h"

static const uint8_t master[32] = "sacred selftest master key 0123";

FIXTURE(auth) {
	struct sacred_ctrl *ctrl;
	struct sacred_mem_info mem;
	uint32_t region;
	uint8_t key1[SACRED_MAC_LEN], key2[SACRED_MAC_LEN];
};

FIXTURE_SETUP(auth)
{
	struct sacred_acl_entry acl[] = {
		{ .process_id = 1, .access = SACRED_ACCESS_READ },
		{ .process_id = 2, .access = SACRED_ACCESS_READ },
	};
	struct sacred_mem_params mp = {
		.id = SACRED_MEM_ID_ANY,
		.key = master,
		.key_len = sizeof(master),
	};
	struct sacred_region_info ri;

	if (!st_open(_metadata, &self->ctrl, 1, 0))
		return;
	st_mem_new(_metadata, self->ctrl, 0, &mp, &self->mem);
	ASSERT_EQ(1, self->mem.keyed);
	st_region_new(_metadata, self->ctrl, self->mem.id, 4096,
		      SACRED_POLICY_STATIC, acl, 2, &ri);
	self->region = ri.id;
	ASSERT_EQ(0, sacred_process_key(master, sizeof(master), 1,
					self->key1));
	ASSERT_EQ(0, sacred_process_key(master, sizeof(master), 2,
					self->key2));
}

FIXTURE_TEARDOWN(auth)
{
	if (self->ctrl && self->mem.state)
		sacred_mem_del(self->ctrl, self->mem.id);
	sacred_ctrl_close(self->ctrl);
}

static int join(FIXTURE_DATA(auth) *self, uint32_t pid, const uint8_t *key,
		struct sacred_conn **c)
{
	struct sacred_conn_attr attr = {
		.addr = (struct sockaddr *)&self->mem.addr,
		.process_id = pid,
		.key = key,
	};

	*c = NULL;
	return sacred_conn_create(&attr, c);
}

TEST_F(auth, process_with_its_key_connects_and_reads)
{
	struct sacred_region_attr ra;
	struct sacred_conn *c;
	uint64_t v;

	ASSERT_EQ(0, join(self, 1, self->key1, &c));
	ASSERT_EQ(0, sacred_attach(c, self->region, &ra));
	EXPECT_EQ(0, sacred_read(c, self->region, 0, &v, sizeof(v)));
	/* A reconnection proves again, with a fresh counter. */
	EXPECT_EQ(0, sacred_conn_reconnect(c));
	EXPECT_EQ(0, sacred_read(c, self->region, 0, &v, sizeof(v)));
	sacred_conn_destroy(c);
}

TEST_F(auth, process_without_a_key_is_refused)
{
	struct sacred_conn *c;

	EXPECT_EQ(-EACCES, join(self, 1, NULL, &c));
	EXPECT_EQ(NULL, c);
}

TEST_F(auth, wrong_key_is_refused)
{
	uint8_t bad[SACRED_MAC_LEN];
	struct sacred_conn *c;

	memcpy(bad, self->key1, sizeof(bad));
	bad[0] ^= 1;
	EXPECT_EQ(-EACCES, join(self, 1, bad, &c));
}

/* Process 2's key does not make process 1, and the other way round. */
TEST_F(auth, process_cannot_act_as_another)
{
	struct sacred_conn *c;

	EXPECT_EQ(-EACCES, join(self, 1, self->key2, &c));
	EXPECT_EQ(-EACCES, join(self, 2, self->key1, &c));
	EXPECT_EQ(0, join(self, 2, self->key2, &c));
	sacred_conn_destroy(c);
}

/* A captured connect request, sent again, is refused: its counter is old. */
TEST_F(auth, replayed_request_is_refused)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct sacred_wire_conn_req req = {
		.version = htole16(SACRED_WIRE_VERSION),
		.flags = htole16(SACRED_CONN_F_PROOF),
		.process_id = htole32(1),
		.counter = htole64(1000),
	};
	struct rdma_conn_param param = {
		.private_data = &req,
		.private_data_len = sizeof(req),
	};
	struct {
		uint32_t pid;
		uint64_t counter;
	} __attribute__((packed)) msg = { htole32(1), htole64(1000) };
	const char label[] = SACRED_CONNECT_LABEL;
	char host[64], port[16];
	struct rdma_cm_id *id[2];
	int i, ok[2];

	/* The proof, built by hand the way the uapi header says. */
	{
		crypto_auth_hmacsha256_state st;

		crypto_auth_hmacsha256_init(&st, self->key1, SACRED_MAC_LEN);
		crypto_auth_hmacsha256_update(&st, (const void *)label,
					      sizeof(label) - 1);
		crypto_auth_hmacsha256_update(&st, (const void *)&msg,
					      sizeof(msg));
		crypto_auth_hmacsha256_final(&st, req.mac);
	}
	inet_ntop(AF_INET, &((struct sockaddr_in *)&self->mem.addr)->sin_addr,
		  host, sizeof(host));
	snprintf(port, sizeof(port), "%u",
		 ntohs(((struct sockaddr_in *)&self->mem.addr)->sin_port));

	/* Both endpoints first; then the same request twice. */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, rdma_getaddrinfo(host, port, &hints, &res));
		ASSERT_EQ(0, rdma_create_ep(&id[i], res, NULL, &attr))
			TH_LOG("endpoint %d: %s", i, strerror(errno));
		rdma_freeaddrinfo(res);
	}
	for (i = 0; i < 2; i++) {
		ok[i] = rdma_connect(id[i], &param) == 0;
		if (ok[i])
			rdma_disconnect(id[i]);
		usleep(200000);
	}
	for (i = 0; i < 2; i++)
		rdma_destroy_ep(id[i]);
	EXPECT_TRUE(ok[0]);
	EXPECT_FALSE(ok[1]);
}

/*
 * Without a key the instance believes the process id, and refuses a
 * proof it cannot check: the process would believe itself checked.
 */
TEST_F(auth, keyless_instance_refuses_a_proof)
{
	struct sacred_conn *c;

	ASSERT_EQ(0, sacred_mem_set_key(self->ctrl, self->mem.id, NULL, 0));
	EXPECT_EQ(-EACCES, join(self, 1, self->key1, &c));
	EXPECT_EQ(NULL, c);
	ASSERT_EQ(0, join(self, 1, NULL, &c));
	sacred_conn_destroy(c);
}

/* The key is never sent back: replies say only that there is one. */
TEST_F(auth, key_never_leaves_the_kernel)
{
	struct nlraw nl;
	struct sacred_mem_info m;

	ASSERT_EQ(0, nlraw_open(&nl, SACRED_GENL_NAME));
	nlraw_start(&nl, nl.family, SACRED_CMD_MEM_GET, 0, 1);
	nlraw_put_u32(&nl, SACRED_ATTR_MEM_ID, self->mem.id);
	ASSERT_EQ(0, nlraw_xfer(&nl));
	EXPECT_EQ(NULL, nlraw_reply_attr(&nl, SACRED_ATTR_MEM_KEY));
	EXPECT_NE(NULL, nlraw_reply_attr(&nl, SACRED_ATTR_MEM_KEYED));
	EXPECT_EQ(NULL, memmem(nl.rbuf, sizeof(nl.rbuf), master,
			       sizeof(master)));
	nlraw_close(&nl);

	/* And it can be taken away: then anyone connects again. */
	ASSERT_EQ(0, sacred_mem_set_key(self->ctrl, self->mem.id, NULL, 0));
	ASSERT_EQ(0, sacred_mem_get(self->ctrl, self->mem.id, &m));
	EXPECT_EQ(0, m.keyed);
	EXPECT_EQ(-EINVAL, sacred_mem_set_key(self->ctrl, self->mem.id,
					      master, 8));
}

TEST_HARNESS_MAIN
