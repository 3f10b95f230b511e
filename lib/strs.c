// SPDX-License-Identifier: LGPL-2.1-or-later OR BSD-2-Clause
/*
 * libsacred - names of the enumerations carried in netlink attributes.
 *
 * The port state and physical state names are the ones `rdma link` prints
 * (iproute2 rdma/link.c), including its quirks, so that the output of
 * `sacred dev show` can be compared with `rdma link show` word for word.
 * Access sets ("none", "r", "rw", "rwa") and refusal reasons ("stale-ballot")
 * have the names sacred(8) takes and prints.
 */
#include <errno.h>
#include <string.h>

#include "sacred.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *const port_state_names[] = {
	[SACRED_PORT_NOP] = "NOP",
	[SACRED_PORT_DOWN] = "DOWN",
	[SACRED_PORT_INIT] = "INIT",
	[SACRED_PORT_ARMED] = "ARMED",
	[SACRED_PORT_ACTIVE] = "ACTIVE",
	[SACRED_PORT_ACTIVE_DEFER] = "ACTIVE_DEFER",
};

/*
 * IBTA PortPhysicalState, as `rdma link` names it: 4 is really
 * "PortConfigurationTraining", but rdma prints "ARMED" and so do we.
 */
static const char *const phys_state_names[] = {
	[0] = "NOP",
	[1] = "SLEEP",
	[2] = "POLLING",
	[3] = "DISABLED",
	[4] = "ARMED",
	[5] = "LINK_UP",
	[6] = "LINK_ERROR_RECOVER",
	[7] = "PHY_TEST",
	[8] = "UNKNOWN",
	[9] = "OPA_OFFLINE",
	[10] = "UNKNOWN",
	[11] = "OPA_TEST",
};

static const char *const link_layer_names[] = {
	[SACRED_LINK_UNSPECIFIED] = "unspecified",
	[SACRED_LINK_INFINIBAND] = "InfiniBand",
	[SACRED_LINK_ETHERNET] = "Ethernet",
};

static const char *const mem_state_names[] = {
	[SACRED_MEM_UNSPEC] = "unknown",
	[SACRED_MEM_UP] = "up",
	[SACRED_MEM_DOWN] = "down",
};

/* The four access sets an ACL entry may hold, by their CLI names. */
static const struct {
	const char *name;
	uint32_t access;
} access_names[] = {
	{ "none", 0 },
	{ "r", SACRED_ACCESS_READ },
	{ "rw", SACRED_ACCESS_READ | SACRED_ACCESS_WRITE },
	{ "rwa", SACRED_ACCESS_ALL },
};

static const char *const refuse_names[] = {
	[SACRED_REFUSE_NONE] = "none",
	[SACRED_REFUSE_STATIC] = "static",
	[SACRED_REFUSE_NOT_MEMBER] = "not-member",
	[SACRED_REFUSE_SWMR] = "swmr",
	[SACRED_REFUSE_NO_GRANT] = "no-grant",
	[SACRED_REFUSE_STALE_BALLOT] = "stale-ballot",
};

static const char *const policy_names[] = {
	[SACRED_POLICY_STATIC] = "static",
	[SACRED_POLICY_EXCLUSIVE_WRITER] = "exclusive-writer",
	[SACRED_POLICY_SWMR] = "swmr",
	[SACRED_POLICY_REVOKE_ONLY] = "revoke-only",
	[SACRED_POLICY_FENCED] = "fenced",
	[SACRED_POLICY_BPF] = "bpf",
};

const char *sacred_port_state_str(uint8_t state)
{
	if (state < ARRAY_SIZE(port_state_names))
		return port_state_names[state];
	return "UNKNOWN";
}

const char *sacred_phys_state_str(uint8_t phys_state)
{
	if (phys_state < ARRAY_SIZE(phys_state_names))
		return phys_state_names[phys_state];
	return "UNKNOWN";
}

const char *sacred_link_layer_str(uint8_t link_layer)
{
	if (link_layer < ARRAY_SIZE(link_layer_names))
		return link_layer_names[link_layer];
	return "unspecified";
}

const char *sacred_mem_state_str(uint8_t state)
{
	if (state < ARRAY_SIZE(mem_state_names) && mem_state_names[state])
		return mem_state_names[state];
	return "unknown";
}

const char *sacred_policy_str(uint8_t policy)
{
	if (policy < ARRAY_SIZE(policy_names) && policy_names[policy])
		return policy_names[policy];
	return "unknown";
}

int sacred_policy_parse(const char *name, uint8_t *policy)
{
	unsigned int i;

	if (!name || !policy)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(policy_names); i++) {
		if (policy_names[i] && !strcmp(name, policy_names[i])) {
			*policy = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *sacred_access_str(uint32_t access)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(access_names); i++)
		if (access_names[i].access == access)
			return access_names[i].name;
	return "unknown";
}

int sacred_access_parse(const char *name, uint32_t *access)
{
	unsigned int i;

	if (!name || !access)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(access_names); i++) {
		if (!strcmp(name, access_names[i].name)) {
			*access = access_names[i].access;
			return 0;
		}
	}
	return -EINVAL;
}

const char *sacred_refuse_str(uint32_t reason)
{
	if (reason < ARRAY_SIZE(refuse_names) && refuse_names[reason])
		return refuse_names[reason];
	return "unknown";
}
