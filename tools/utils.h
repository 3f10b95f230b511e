/* SPDX-License-Identifier: GPL-2.0-or-later OR BSD-2-Clause */
/*
 * utils.h - the sacred CLI's shared declarations.
 *
 * Two parts:
 *   - pure helpers in utils.c (argument parsing, name lookup, formatting)
 *     that need neither libsacred nor the kernel, so the host-side unit
 *     tests link utils.o alone;
 *   - the CLI context and its error/usage reporting, defined in sacred.c,
 *     and the per-object entry points (dev.c, mem.c, region.c).
 */
#ifndef _SACRED_UTILS_H
#define _SACRED_UTILS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * Exit status of the sacred CLI (documented in sacred(8), EXIT STATUS).
 * Usage errors exit with 255, as ip(8) does (its usage() calls exit(-1)).
 */
enum {
	SACRED_EXIT_OK = 0,	/* done */
	SACRED_EXIT_FAIL = 1,	/* the kernel or libsacred refused or failed */
	SACRED_EXIT_NOMOD = 2,	/* sacred.ko not loaded, or no control socket */
	SACRED_EXIT_USAGE = 255, /* bad command line */
};

/* ------------------------------------------------- helpers (utils.c) */

struct cli;

/**
 * struct cli_cmd - one entry of a dispatch table
 * @name: what the user types; NULL ends the table
 * @func: runs the command on the arguments after @name; returns an exit
 *	status (SACRED_EXIT_*)
 *
 * Entries with the same @func are aliases of one another.
 */
struct cli_cmd {
	const char *name;
	int (*func)(struct cli *cli, int argc, char **argv);
};

/**
 * struct cli_word - one keyword of a command's argument grammar
 * @name: the keyword; NULL ends the table
 * @id: what it means; entries with the same @id are aliases
 */
struct cli_word {
	const char *name;
	int id;
};

#define WORD_UNKNOWN	(-1)
#define WORD_AMBIGUOUS	(-2)

/** is_prefix() - true if @arg is a non-empty prefix of (or equal to) @name */
bool is_prefix(const char *arg, const char *name);

/**
 * cmd_lookup() - the entry of @cmds that @arg names
 * @cmds: table ended by a NULL name
 * @arg: what the user typed
 * @err: on failure, WORD_UNKNOWN or WORD_AMBIGUOUS
 *
 * An exact name wins. Otherwise @arg may be an abbreviation: a prefix of
 * one or more names, all of them aliases of the same command.
 *
 * Return: the entry (the first matching alias), or NULL.
 */
const struct cli_cmd *cmd_lookup(const struct cli_cmd *cmds, const char *arg,
				 int *err);

/**
 * word_lookup() - the id of the keyword @arg names, as cmd_lookup()
 *
 * Return: the id (>= 0), WORD_UNKNOWN or WORD_AMBIGUOUS.
 */
int word_lookup(const struct cli_word *words, const char *arg);

/**
 * parse_u32() - parse an unsigned number within [@min, @max]
 * @s: decimal, or hexadecimal with a 0x prefix; no sign, no blanks
 * @min: smallest accepted value
 * @max: largest accepted value
 * @val: the number, set on success only
 *
 * Return: 0, -EINVAL if @s is not a number, -ERANGE if it is out of range.
 */
int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *val);

/**
 * parse_u64() - parse an unsigned 64-bit number, as parse_u32() does
 * @s: decimal, or hexadecimal with a 0x prefix; no sign, no blanks
 * @val: the number, set on success only
 *
 * Return: 0, -EINVAL if @s is not a number, -ERANGE if it overflows.
 */
int parse_u64(const char *s, uint64_t *val);

/**
 * parse_u32_pair() - parse "A" or "A/B", as devlink's DEV/PORT handles
 * @s: one parse_u32() number, or two separated by one '/'
 * @max: largest accepted value of each
 * @first: A, set on success only
 * @second: B, set on success only and when @s has it
 *
 * Return: the count of numbers (1 or 2), -EINVAL if @s is not of that
 * form, -ERANGE if a number is above @max.
 */
int parse_u32_pair(const char *s, uint32_t max, uint32_t *first,
		   uint32_t *second);

/**
 * parse_size() - parse a size in bytes
 * @s: a parse_u32()-style number (decimal, or hex with 0x), without a
 *	unit (bytes) or with one of k, K, KiB (KiB), m, M, MiB (MiB), g, G,
 *	GiB (GiB): "4096", "64k", "1g", "2MiB"
 * @val: the size, set on success only
 *
 * Every format_size() output is accepted back.
 *
 * Return: 0, -EINVAL if @s is not a size, -ERANGE if it overflows 64 bits.
 */
int parse_size(const char *s, uint64_t *val);

#define SIZE_STR_LEN 32

/**
 * format_size() - a size as the CLI prints it: in the largest of GiB, MiB
 * and KiB that divides it ("64KiB", "1536MiB"), else in bytes ("5000");
 * 0 is "0"
 * @size: bytes
 * @buf: at least SIZE_STR_LEN bytes
 * @len: size of @buf
 *
 * Return: @buf.
 */
const char *format_size(uint64_t size, char *buf, size_t len);

/**
 * parse_addr() - parse an IPv4 or IPv6 address
 * @s: dotted quad, or IPv6 text form, optionally in brackets
 * @ss: set on success only: AF_INET or AF_INET6, port 0
 *
 * Return: 0 or -EINVAL.
 */
int parse_addr(const char *s, struct sockaddr_storage *ss);

/**
 * format_addr() - text form of the address in @ss
 *
 * Return: @buf, or NULL if @ss is neither AF_INET nor AF_INET6 (or @len
 * is too small).
 */
const char *format_addr(const struct sockaddr_storage *ss, char *buf,
			size_t len);

/** sockaddr_port() - port of an AF_INET/AF_INET6 address, host order, or -1 */
int sockaddr_port(const struct sockaddr_storage *ss);

struct sacred_acl_entry;

/**
 * parse_acl() - parse an ACL as the CLI takes it: "PID:ACCESS[,PID:ACCESS...]"
 * @s: the list; "" and "none" are the empty ACL. No blanks.
 * @access_parse: turns one ACCESS word into &enum sacred_access bits, 0 or
 *	a negative errno (sacred_access_parse(); a parameter, so that this
 *	file needs no libsacred)
 * @acl: set to a malloc()ed array of the entries (@access of each set),
 *	NULL for the empty ACL; the caller frees it. Set on success only.
 * @n: set to the number of entries, on success only
 * @bad: on -EINVAL, set to the first character of the item that is wrong;
 *	it ends at the next ',' or at the end of @s
 *
 * Processes are not checked for duplicates: the kernel refuses them, and
 * says so.
 *
 * Return: 0, -EINVAL, or -ENOMEM.
 */
int parse_acl(const char *s, int (*access_parse)(const char *, uint32_t *),
	      struct sacred_acl_entry **acl, unsigned int *n, const char **bad);

#define GUID_STR_LEN 20

/**
 * format_guid() - a GUID as `rdma dev` prints it: "5054:00ff:fe12:3456"
 * @guid: host byte order, as in %SACRED_ATTR_DEV_NODE_GUID
 * @buf: at least GUID_STR_LEN bytes
 * @len: size of @buf
 */
void format_guid(uint64_t guid, char *buf, size_t len);

/**
 * split_line() - a -batch line into words, in place, as a shell would
 * split the simple cases
 * @line: one line, continuation lines already joined; modified: each
 *	word ends up NUL-terminated inside it
 * @argv: gets up to @max words
 * @max: size of @argv
 *
 * Words are separated by blanks. '...' and "..." quote blanks (no escapes
 * inside; a quote may start or end inside a word: a"b c"d is one word);
 * outside quotes a word starting with '#' starts a comment, which ends
 * the line.
 *
 * Return: the number of words (0 for a blank or comment line), -E2BIG
 * with more than @max words, -EINVAL with an unterminated quote.
 */
int split_line(char *line, char **argv, int max);

/**
 * line_continues() - whether a -batch line goes on on the next one
 * @line: one physical line, without its newline
 *
 * Return: true if @line ends in a backslash that is not inside a comment
 * (split_line()'s: a word starting with '#' outside quotes).
 */
bool line_continues(const char *line);

/* --------------------------------------- the CLI context (sacred.c) */

struct json_writer;
struct sacred_ctrl;

/**
 * struct cli - state of one run of the CLI
 * @json: -j: JSON output, through @jw
 * @pretty: -p: indented JSON
 * @details: -d: more details
 * @jw: the JSON writer with -j, else NULL
 * @ctrl: control handle; opened by cli_open() when first needed
 * @object: canonical name of the object being run, for messages
 * @command: canonical name of its command, for messages
 */
struct cli {
	bool json;
	bool pretty;
	bool details;
	struct json_writer *jw;
	struct sacred_ctrl *ctrl;
	const char *object;
	const char *command;
	bool interrupted;	/* a signal ended a command: end a -batch too */
};

/**
 * cli_open() - connect to sacred.ko, once
 *
 * Return: SACRED_EXIT_OK, or (after printing why) SACRED_EXIT_NOMOD.
 */
int cli_open(struct cli *cli);

/**
 * cli_open_failed() - say why sacred_ctrl_open() or sacred_monitor_open()
 * failed with @err, in one line on stderr
 *
 * Return: SACRED_EXIT_NOMOD.
 */
int cli_open_failed(int err);

/**
 * cli_fail() - report a failed library call in one line on stderr:
 * "sacred: OBJECT COMMAND: strerror: kernel message"
 * @err: negative errno
 *
 * Return: SACRED_EXIT_FAIL.
 */
int cli_fail(struct cli *cli, int err);

/**
 * cli_error() - report a failure of the CLI's own in one line on stderr:
 * "sacred: OBJECT COMMAND: message"
 *
 * Return: SACRED_EXIT_FAIL.
 */
int cli_error(struct cli *cli, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * cli_usage() - report a bad command line in one line on stderr, with a
 * hint to the help of the object
 *
 * Return: SACRED_EXIT_USAGE.
 */
int cli_usage(struct cli *cli, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * enum cli_arg_type - how the value of a "KEYWORD VALUE" pair is parsed
 * @CLI_ARG_STR: the word itself, into a const char *
 * @CLI_ARG_U32: parse_u32() within @min-@max, into a uint32_t
 * @CLI_ARG_U16: the same into a uint16_t
 * @CLI_ARG_U64: parse_u64(), into a uint64_t
 * @CLI_ARG_SIZE: parse_size(), 0 refused, into a uint64_t
 * @CLI_ARG_ADDR: parse_addr(), into a struct sockaddr_storage
 * @CLI_ARG_FUNC: @parse, which reports its own usage errors
 */
enum cli_arg_type {
	CLI_ARG_STR,
	CLI_ARG_U32,
	CLI_ARG_U16,
	CLI_ARG_U64,
	CLI_ARG_SIZE,
	CLI_ARG_ADDR,
	CLI_ARG_FUNC,
};

/**
 * struct cli_arg - one keyword of a command, in a table indexed by its id
 * @name: its full name, for the messages ("\"dev\" given twice")
 * @type: how its value is parsed
 * @off: where the value goes: its offset in the caller's arguments struct
 * @min: @CLI_ARG_U32, @CLI_ARG_U16: the smallest value taken
 * @max: and the largest
 * @what: what an invalid value is called: "invalid WHAT \"VALUE\" (HINT)"
 * @hint: HINT; NULL for "MIN-MAX"
 * @parse: @CLI_ARG_FUNC: parses @val into @args, the whole struct
 *
 * An entry without @name is a keyword the command does not take.
 */
struct cli_arg {
	const char *name;
	enum cli_arg_type type;
	size_t off;
	uint32_t min, max;
	const char *what;
	const char *hint;
	int (*parse)(struct cli *cli, const char *val, void *args);
};

/**
 * cli_arg_parse() - parse one "KEYWORD VALUE" pair by a keyword table
 * @cli: context, for the usage errors
 * @words: the keywords taken here (with their aliases)
 * @table: each keyword id's entry
 * @argc: arguments left, @argv[0] the keyword
 * @argv: the arguments
 * @seen: bit (1 << id) of every keyword given so far; the new one's is set
 * @args: the struct the values go into (@table's offsets)
 *
 * An unknown, ambiguous or repeated keyword, one without a value, or an
 * invalid value is a usage error, reported here.
 *
 * Return: SACRED_EXIT_OK, or SACRED_EXIT_USAGE.
 */
int cli_arg_parse(struct cli *cli, const struct cli_word *words,
		  const struct cli_arg *table, int argc, char **argv,
		  unsigned int *seen, void *args);

/**
 * cli_args_parse() - cli_arg_parse() every pair of @argv
 *
 * Return: SACRED_EXIT_OK, or the first pair's SACRED_EXIT_USAGE.
 */
int cli_args_parse(struct cli *cli, const struct cli_word *words,
		   const struct cli_arg *table, int argc, char **argv,
		   unsigned int *seen, void *args);

/**
 * cli_required() - check that every keyword of @mask was given
 * @cli: context, for the usage error
 * @table: the keywords' table, for their names
 * @seen: the keywords given (cli_arg_parse())
 * @mask: bit (1 << id) of each keyword required
 *
 * The first missing one, by id, is a usage error: "\"NAME\" is required".
 *
 * Return: SACRED_EXIT_OK, or SACRED_EXIT_USAGE.
 */
int cli_required(struct cli *cli, const struct cli_arg *table,
		 unsigned int seen, unsigned int mask);

/* Table entries of struct cli_arg, for the arguments struct @T. */
#define CLI_STR(T, f, n) \
	{ .name = (n), .type = CLI_ARG_STR, .off = offsetof(T, f) }
#define CLI_U32(T, f, n, lo, hi, w) \
	{ .name = (n), .type = CLI_ARG_U32, .off = offsetof(T, f), \
	  .min = (lo), .max = (hi), .what = (w) }
#define CLI_U16(T, f, n, lo, hi, w) \
	{ .name = (n), .type = CLI_ARG_U16, .off = offsetof(T, f), \
	  .min = (lo), .max = (hi), .what = (w) }
#define CLI_HINTED(t, T, f, n, w, h) \
	{ .name = (n), .type = (t), .off = offsetof(T, f), .what = (w), \
	  .hint = (h) }
#define CLI_FUNC(n, fn)	{ .name = (n), .type = CLI_ARG_FUNC, .parse = (fn) }

/**
 * cli_dispatch() - run the command @argv[0] names from @cmds
 * @cli: context; its @command is set to the entry's name
 * @cmds: table ended by a NULL name
 * @dflt: run when @argc is 0 (and named @dflt_name), may be NULL
 * @dflt_name: name of the default command
 * @argc: arguments, starting with the command
 * @argv: arguments
 */
int cli_dispatch(struct cli *cli, const struct cli_cmd *cmds,
		 int (*dflt)(struct cli *cli, int argc, char **argv),
		 const char *dflt_name, int argc, char **argv);

struct bpf_object;

/**
 * struct prog_spec - an eBPF program as the command line names it
 * @file: "prog FILE.o": an object file, or NULL
 * @section: "section NAME": its program in that section (or of that
 *	name); NULL for the only one
 * @pinned: "prog pinned PATH": a program pinned in bpffs, or NULL
 */
struct prog_spec {
	const char *file;
	const char *section;
	const char *pinned;
};

/**
 * struct prog_handle - a loaded program (prog.c)
 * @obj: the libbpf object it came from, or NULL for a pinned one
 * @fd: its file descriptor
 */
struct prog_handle {
	struct bpf_object *obj;
	int fd;
};

/**
 * prog_load() - load the program @spec names, as a socket filter
 * @cli: context, for the messages
 * @spec: the program
 * @h: gets it; prog_close() it once the kernel has it
 *
 * Return: 0, or a negative errno after saying why on stderr.
 */
int prog_load(struct cli *cli, const struct prog_spec *spec,
	      struct prog_handle *h);

/** prog_close() - close what prog_load() opened */
void prog_close(struct prog_handle *h);

/* The objects. */
int cmd_dev(struct cli *cli, int argc, char **argv);
int cmd_memory(struct cli *cli, int argc, char **argv);
int cmd_region(struct cli *cli, int argc, char **argv);
int cmd_peer(struct cli *cli, int argc, char **argv);
int cmd_perm(struct cli *cli, int argc, char **argv);
int cmd_monitor(struct cli *cli, int argc, char **argv);

struct sacred_mem_info;
struct sacred_region_info;

/*
 * What "show" prints of one object, for the monitor: with -j, the members
 * of an object the caller has opened; else the line without its newline.
 */
void mem_print_body(struct cli *cli, const struct sacred_mem_info *info);
void region_print_body(struct cli *cli,
		       const struct sacred_region_info *info);

#endif /* _SACRED_UTILS_H */
