// SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause
/*
 * prog.c - the eBPF programs "sacred region" gives to bpf regions.
 *
 * This file owns loading a program with libbpf for "policy bpf": from an
 * object file ("prog FILE.o [ section NAME ]": the program in that
 * section, or the only one in the file) or from bpffs ("prog pinned
 * PATH"). An object file's program is loaded as a socket filter, the
 * type the module runs (Documentation/policies.rst), whatever its section
 * says; libbpf's messages, the verifier's log among them, go to stderr
 * with -d only. The caller hands the file descriptor to the kernel and then
 * closes the object: the module holds its own reference to the program,
 * and the program holds its maps.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "utils.h"

/* The program of @obj in section (or named) @section, or its only one. */
static struct bpf_program *prog_pick(struct cli *cli, struct bpf_object *obj,
				     const char *file, const char *section)
{
	struct bpf_program *p, *found = NULL;
	unsigned int n = 0;

	bpf_object__for_each_program(p, obj) {
		n++;
		if (!section ||
		    !strcmp(bpf_program__section_name(p), section) ||
		    !strcmp(bpf_program__name(p), section)) {
			if (found && section) {
				cli_error(cli, "%s: more than one program in section \"%s\"",
					  file, section);
				return NULL;
			}
			found = found ? found : p;
		}
	}
	if (!found) {
		if (section)
			cli_error(cli, "%s: no program in section \"%s\"", file,
				  section);
		else
			cli_error(cli, "%s: no program in the file", file);
		return NULL;
	}
	if (!section && n > 1) {
		cli_error(cli, "%s: %u programs: say which with \"section NAME\"",
			  file, n);
		return NULL;
	}
	return found;
}

int prog_load(struct cli *cli, const struct prog_spec *spec,
	      struct prog_handle *h)
{
	struct bpf_program *prog, *p;
	char msg[128];
	int ret;

	h->obj = NULL;
	h->fd = -1;
	/*
	 * libbpf's own messages (the verifier's log among them) only with
	 * -d: without it, a failure is the one line of cli_error().
	 */
	if (!cli->details)
		libbpf_set_print(NULL);
	if (spec->pinned) {
		h->fd = bpf_obj_get(spec->pinned);
		if (h->fd < 0) {
			ret = -errno;
			cli_error(cli, "%s: cannot open the pinned program: %s",
				  spec->pinned, strerror(-ret));
			return ret;
		}
		return 0;
	}

	h->obj = bpf_object__open_file(spec->file, NULL);
	if (!h->obj) {
		ret = -errno;
		cli_error(cli, "%s: cannot open the object file: %s",
			  spec->file, strerror(-ret));
		return ret;
	}
	prog = prog_pick(cli, h->obj, spec->file, spec->section);
	if (!prog) {
		ret = -ENOENT;
		goto err;
	}
	bpf_object__for_each_program(p, h->obj)
		bpf_program__set_autoload(p, p == prog);
	bpf_program__set_type(prog, BPF_PROG_TYPE_SOCKET_FILTER);
	ret = bpf_object__load(h->obj);
	if (ret) {
		libbpf_strerror(ret, msg, sizeof(msg));
		cli_error(cli, "%s: the kernel did not load the program: %s%s",
			  spec->file, msg,
			  cli->details ? "" : " (-d shows the verifier's log)");
		goto err;
	}
	h->fd = bpf_program__fd(prog);
	return 0;

err:
	bpf_object__close(h->obj);
	h->obj = NULL;
	return ret < 0 ? ret : -EINVAL;
}

void prog_close(struct prog_handle *h)
{
	if (h->obj)
		bpf_object__close(h->obj);
	else if (h->fd >= 0)
		close(h->fd);
	h->obj = NULL;
	h->fd = -1;
}
