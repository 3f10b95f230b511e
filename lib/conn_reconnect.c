// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - reconnecting a broken connection: sacred_conn_reconnect(),
 * sacred_conn_reconnect_async() and sacred_conn_drop().
 *
 * A reconnect drops the old rdma_cm id (the operations in flight end with
 * -ECONNRESET), connects a new one with the same process id (lib/conn.c)
 * and attaches again every region that was attached (conn_reattach()),
 * forgetting those that are gone or were made again since.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>


#include "conn_internal.h"
#include "internal.h"
#include "sacred.h"

/* After a reconnect: attach every cached region again. */
static int conn_reattach(struct sacred_conn *conn)
{
	char why[sizeof(conn->errmsg)];
	unsigned int i = 0;
	uint32_t id;
	int ret;

	while (i < conn->nr_regions) {
		id = conn->regions[i].region_id;
		ret = conn_attach(conn, id, NULL, false);
		if (ret && ret != -ENOENT && ret != -EACCES && ret != -ESTALE) {
			/*
			 * The regions not attached again still carry the old
			 * connection's keys and access: broken until the next
			 * reconnect, not half usable.
			 */
			memcpy(why, conn->errmsg, sizeof(why));
			return conn_break(conn, ret,
					  "attaching region %u again: %s", id,
					  why);
		}
		/* A region gone, or made again, was dropped: same index. */
		if (ret != -ENOENT && ret != -ESTALE)
			i++;
	}
	conn->errmsg[0] = '\0';
	return 0;
}

/*
 * Before a reconnect: operations in flight die with the QP (their results
 * stay to poll), the old connection goes (waiting a little for the
 * instance's answer if @wait), and the connection is broken until the
 * new one is made.
 */
static void conn_drop(struct sacred_conn *conn, bool wait)
{
	conn->errmsg[0] = '\0';
	conn_ops_fail(conn, NULL, -ECONNRESET);
	conn_disconnect(conn, wait);
	conn_cm_close(conn);
	conn->broken = true;
	snprintf(conn->cause, sizeof(conn->cause), "reconnecting");
}

void sacred_conn_drop(struct sacred_conn *conn)
{
	if (conn && conn->step == CONN_IDLE)
		conn_drop(conn, true);
}

/* After a reconnect attempt that ended with @ret: attach again, or why not. */
static int conn_reconnected(struct sacred_conn *conn, int ret)
{
	if (ret) {
		memcpy(conn->cause, conn->errmsg, sizeof(conn->cause));
		return ret;
	}
	conn_connected(conn);
	return conn_reattach(conn);
}

/**
 * sacred_conn_reconnect() - replace a broken connection
 * @conn: the connection
 *
 * Disconnects the current rdma_cm id, if any, and connects a new one as
 * the same process to the same address; while the instance still holds
 * the old connection (it releases it asynchronously), the attempt is
 * repeated until the timeout. Then every region that was attached is
 * attached again, refreshing its key, access and epoch: a region that is
 * gone, or was made again under its id since (another tag: its bytes are
 * not those this process knew), is forgotten and its id refused with
 * -ESTALE until sacred_attach() takes the new one; one the process is no
 * longer a member of is kept with no access. Works on a healthy
 * connection too.
 *
 * Return: 0; -ESTALE if another instance (another memory id) now answers
 * at the address; the errors of sacred_conn_create() and sacred_attach().
 * On failure the connection stays broken and the call may be repeated.
 */
int sacred_conn_reconnect(struct sacred_conn *conn)
{
	int ret;

	if (!conn)
		return -EINVAL;
	conn_drop(conn, true);
	ret = conn_connect(conn, true);
	return conn_reconnected(conn, ret);
}

/**
 * sacred_conn_reconnect_async() - sacred_conn_reconnect() without waiting
 * @conn: the connection
 *
 * The first call drops the current connection and starts a new attempt;
 * each later call takes the rdma_cm's answers that came since and moves
 * the attempt on, without waiting for more. Once the instance accepted,
 * the call that sees it attaches the regions again as
 * sacred_conn_reconnect() does (waiting for those replies: the instance
 * has just answered). An attempt takes up to the connection's timeout; a
 * memory whose host is gone costs the caller nothing meanwhile. A
 * duplicate refusal (the instance still holds the old connection) is
 * returned, not retried: the next call starts a new attempt.
 * sacred_conn_reconnect(), sacred_conn_destroy() and a blocking call on a
 * connection made with SACRED_CONN_AUTO_RECONNECT (which reconnects
 * first) abandon the attempt; other calls fail with -ECONNRESET, as on
 * any broken connection, and leave it be.
 *
 * Return: 0 when connected and attached again; -EINPROGRESS while the
 * attempt is under way: call again later; otherwise the errors of
 * sacred_conn_reconnect(), after which the next call starts anew.
 */
int sacred_conn_reconnect_async(struct sacred_conn *conn)
{
	uint64_t deadline = 0;
	int ret;

	if (!conn)
		return -EINVAL;
	if (conn->step == CONN_IDLE) {
		conn_drop(conn, false);
		ret = conn_connect_start(conn, &deadline);
		if (ret)
			return conn_reconnected(conn, ret);
	}
	ret = conn_connect_step(conn, now_ns());
	if (ret == -EINPROGRESS)
		return ret;
	return conn_reconnected(conn, ret);
}
