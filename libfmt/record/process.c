/* SPDX-License-Identifier: MIT */
/*
 * process.c - rec.Process: which program a recording is of.  The
 * background thread reads the executable's path and the command line once
 * (rec_process_info_init, at its start) and puts one rec.Process at the
 * start of every chunk that has records (rec_process_info_put), so a chunk
 * cut out of a file, or the last chunks a flight recorder keeps, still
 * names its program, as every chunk names its types.  On by default; the
 * events list turns it off like any type ("-rec.Process",
 * "rec.Process:enabled=off", or a list of
 * types to record that does not name it): the command line may hold what a
 * recording must not.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "record/recorder_internal.h"

static const rec_field process_fields[] = {
	{ "program", "Program", "the executable's file name", REC_TYPE_STRING, REC_UNIT_NONE },
	{ "executable", "Executable", "path of the executable (/proc/self/exe)", REC_TYPE_STRING,
	  REC_UNIT_NONE },
	{ "commandLine", "Command Line",
	  "the arguments (/proc/self/cmdline) joined by spaces, at most 4096 bytes", REC_TYPE_STRING,
	  REC_UNIT_NONE },
	{ "parentPid", "Parent Pid", "the parent process when the recording started", REC_TYPE_U32,
	  REC_UNIT_NONE },
};
const rec_type rec_def_process = {
	REC_TYPE_ID_PROCESS, 0, "rec.Process", "Process",
	"The recorded program, once at the start of every chunk", "rec", 4, process_fields
};

#define CMDLINE_MAX 4096

void rec_process_info_init(rec_recorder *r)
{
	r->proc_chunk = UINT64_MAX;
	if (!rec_settings_enabled(r, rec_def_process.name))
		return; /* "-rec.Process", or an events list without it */
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n < 0)
		n = 0;
	exe[n] = 0;
	char cmd[CMDLINE_MAX + 1];
	size_t len = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t k;
		while (len < CMDLINE_MAX &&
		       (k = read(fd, cmd + len, CMDLINE_MAX - len)) > 0)
			len += (size_t)k;
		close(fd);
	}
	while (len && cmd[len - 1] == 0) /* the last argument's NUL */
		len--;
	for (size_t i = 0; i < len; i++)
		if (cmd[i] == 0)
			cmd[i] = ' ';
	cmd[len] = 0;
	const char *prog = strrchr(exe, '/');
	prog = prog ? prog + 1 : exe;
	if (!*prog && len) { /* no /proc/self/exe: the first argument's name */
		char *sp = strchr(cmd, ' ');
		size_t k = sp ? (size_t)(sp - cmd) : len;
		static char first[256];
		if (k >= sizeof first)
			k = sizeof first - 1;
		memcpy(first, cmd, k);
		first[k] = 0;
		prog = strrchr(first, '/') ? strrchr(first, '/') + 1 : first;
	}
	r->proc_program = rec_intern_bg(r, prog);
	r->proc_exe = rec_intern_bg(r, exe);
	r->proc_cmdline = rec_intern_bg(r, cmd);
	r->proc_ppid = (uint32_t)getppid();
}

void rec_process_info_put(rec_recorder *r, uint64_t ticks)
{
	rec_writer_stats ws;
	rec_writer_get_stats(r->w, &ws);
	if (ws.chunks == r->proc_chunk || !r->proc_program)
		return; /* this chunk has it already (or the strings could not be kept) */
	uint8_t body[64];
	uint8_t *p = body;
	p += rec_varint_put(p, REC_TYPE_ID_PROCESS);
	p += rec_varint_put(p, ticks);
	p += rec_varint_put(p, r->proc_program);
	p += rec_varint_put(p, r->proc_exe);
	p += rec_varint_put(p, r->proc_cmdline);
	p += rec_varint_put(p, r->proc_ppid);
	size_t len = (size_t)(p - body);
	if (!rec_buf_varint(&r->staging, len) || !rec_buf_append(&r->staging, body, len)) {
		rec_report(r, REC_ERR_NOMEM, "recorder: out of memory for rec.Process");
		return;
	}
	r->proc_chunk = ws.chunks; /* not counted: the recorder's own, as rec.Dropped */
}
