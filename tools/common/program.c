/* SPDX-License-Identifier: MIT */
/*
 * program.c - the program a tool is about to run (cli.h, "programs to
 * run"): found on PATH as execvp(3) would find it, and checked for what
 * makes preloading impossible before it starts: a static executable (no
 * PT_INTERP program header: no dynamic loader, so no LD_PRELOAD) and a
 * set-uid or set-gid file (the loader runs it in secure-execution mode and
 * ignores LD_PRELOAD).
 */
#include "cli.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* path if it names an executable regular file; errno set otherwise. */
static bool is_executable(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return false;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return false;
	}
	if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0) {
		errno = EACCES;
		return false;
	}
	return true;
}

char *rec_cli_program_find(const char *name, int *err)
{
	if (!name || !*name) {
		*err = ENOENT;
		return NULL;
	}
	if (strchr(name, '/')) {
		if (!is_executable(name)) {
			*err = errno;
			return NULL;
		}
		return rec_cli_xstrdup(name);
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	/* As execvp: a candidate that exists but is not executable is
	 * remembered (EACCES) if nothing later is found. */
	int first_err = ENOENT;
	size_t nlen = strlen(name);
	for (const char *p = path;; p++) {
		const char *end = strchr(p, ':');
		size_t dlen = end ? (size_t)(end - p) : strlen(p);
		/* an empty directory in PATH is the current one */
		char *cand = rec_cli_xmalloc(dlen + nlen + 3);
		if (dlen == 0)
			snprintf(cand, nlen + 3, "./%s", name);
		else
			snprintf(cand, dlen + nlen + 2, "%.*s/%s", (int)dlen, p, name);
		if (is_executable(cand))
			return cand;
		if (errno != ENOENT && errno != ENOTDIR)
			first_err = errno == EISDIR ? EACCES : errno;
		free(cand);
		if (!end)
			break;
		p = end;
	}
	*err = first_err;
	return NULL;
}

/* Reads the ELF header and program headers of fd: whether it is an ELF
 * file and has a PT_INTERP header. */
static rec_cli_program_kind elf_kind(int fd)
{
	unsigned char ident[EI_NIDENT];
	if (pread(fd, ident, sizeof ident, 0) != (ssize_t)sizeof ident ||
	    memcmp(ident, ELFMAG, SELFMAG) != 0)
		return REC_PROGRAM_NOT_ELF;
	uint64_t phoff, phnum, phentsize;
	if (ident[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;
		if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh)
			return REC_PROGRAM_NOT_ELF;
		phoff = eh.e_phoff;
		phnum = eh.e_phnum;
		phentsize = eh.e_phentsize;
	} else if (ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;
		if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh)
			return REC_PROGRAM_NOT_ELF;
		phoff = eh.e_phoff;
		phnum = eh.e_phnum;
		phentsize = eh.e_phentsize;
	} else {
		return REC_PROGRAM_NOT_ELF;
	}
	/* p_type is the first 32-bit word of a program header in both classes
	 * (the file's byte order, which is the host's for a runnable file). */
	if (phentsize < 4 || phnum > 65535)
		return REC_PROGRAM_NOT_ELF;
	for (uint64_t i = 0; i < phnum; i++) {
		uint32_t type;
		if (pread(fd, &type, sizeof type, (off_t)(phoff + i * phentsize)) != (ssize_t)sizeof type)
			return REC_PROGRAM_NOT_ELF;
		if (type == PT_INTERP)
			return REC_PROGRAM_DYNAMIC;
	}
	return REC_PROGRAM_STATIC;
}

rec_cli_program_kind rec_cli_program_check(const char *path, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = errno;
		return REC_PROGRAM_UNREADABLE;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		*err = errno;
		close(fd);
		return REC_PROGRAM_UNREADABLE;
	}
	rec_cli_program_kind k;
	if (st.st_mode & S_ISUID)
		k = REC_PROGRAM_SETUID;
	else if (st.st_mode & S_ISGID)
		k = REC_PROGRAM_SETGID;
	else
		k = elf_kind(fd);
	close(fd);
	return k;
}
