/* The Seatbelt profiles macOS's sandbox enters (src/eval/sandbox_sbpl.c), read as text here
 * where no Seatbelt runs: everything denied by default, writes only under scratch (and the
 * backend's rw paths), the kernel alone or its folder, the input cache read-only, no network
 * and no new processes for the runner; the compiler's paths, its own stages, local sockets
 * unless no_sockets; paths resolved and quoted so that no path can end a string and add a
 * rule; and the parentheses balanced outside strings. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eval/sandbox_impl.h"
#include "ksearch/backend.h"
#include "tap.h"

/* 1 when every string is closed and the parentheses outside strings balance */
static int balanced(const char *p)
{
	int depth = 0, in = 0;
	for (; *p; p++) {
		if (in && *p == '\\' && p[1])
			p++;
		else if (*p == '"')
			in = !in;
		else if (!in && (*p == '(' || *p == ')'))
			depth += *p == '(' ? 1 : -1;
		if (depth < 0)
			return 0;
	}
	return !in && depth == 0;
}

/* the rule (one line) holding needle, "" when none */
static const char *rule_with(const char *text, const char *needle, char *line, size_t n)
{
	const char *hit = strstr(text, needle);
	line[0] = '\0';
	if (!hit)
		return line;
	while (hit > text && hit[-1] != '\n')
		hit--;
	snprintf(line, n, "%.*s", (int)strcspn(hit, "\n"), hit);
	return line;
}

/* the number of lines of text holding needle */
static int lines_with(const char *text, const char *needle)
{
	int count = 0;
	char line[8192];
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		count += strstr(line, needle) != NULL;
		p += len + (p[len] == '\n');
	}
	return count;
}

static void runner_profile(const char *root)
{
	char scratch[PATH_MAX], kernel[PATH_MAX], inputs[PATH_MAX], line[8192], want[PATH_MAX + 64];
	snprintf(scratch, sizeof(scratch), "%s/scratch", root);
	snprintf(kernel, sizeof(kernel), "%s/kernels/k.so", root);
	snprintf(inputs, sizeof(inputs), "%s/inputs", root);
	struct ks_buf b;
	ks_buf_init(&b, 1 << 20);
	ks_sbpl_runner(&b, scratch, kernel, inputs, NULL);
	const char *t = ks_buf_str(&b);
	ok(!strncmp(t, "(version 1)\n(deny default)\n", 27), "the runner's profile denies by default");
	ok(balanced(t), "strings closed, parentheses balanced");
	ok(!strstr(t, "\" \""), "one string per filter, as SBPL's filters take");
	snprintf(want, sizeof(want), "(subpath \"%s\")", scratch);
	ok(strstr(rule_with(t, want, line, sizeof(line)), "(allow file-read* file-write*") != NULL,
	   "scratch is read and written: %s", line);
	is_int(lines_with(t, "file-write*"), 1, "one rule writes files: scratch's");
	snprintf(want, sizeof(want), "(subpath \"%s\")", kernel);
	ok(strstr(rule_with(t, want, line, sizeof(line)), "file-map-executable") != NULL &&
		   !strstr(line, "write"),
	   "the kernel is read and mapped as code, never written: %s", line);
	snprintf(want, sizeof(want), "(subpath \"%s/kernels\")", root);
	ok(!strstr(t, want), "the kernel alone, not its folder, without artifact_folder");
	snprintf(want, sizeof(want), "(subpath \"%s\")", inputs);
	rule_with(t, want, line, sizeof(line));
	ok(!strncmp(line, "(allow file-read* ", 18) && !strstr(line, "write"),
	   "the input cache is read only: %s", line);
	ok(strstr(t, "(deny network-outbound (remote ip))") && strstr(t, "(deny process-fork process-exec)"),
	   "no network, no new processes, as the last rules");
	ok(!strstr(t, "(allow network") && !strstr(t, "system-socket") && !strstr(t, "mach-lookup") &&
		   !strstr(t, "iokit"),
	   "the base rules allow no socket, Mach service or IOKit class");
	ks_buf_release(&b);
}

static void runner_needs(const char *root)
{
	static const char *const services[] = {"com.apple.MTLCompilerService", NULL};
	static const char *const classes[] = {"AGXDeviceUserClient", NULL};
	static const char *const rw[] = {"/dev/shm", NULL};
	struct ks_sandbox_needs needs = {.artifact_folder = 1, .unix_sockets = 1, .rw_paths = rw,
					 .mach_services = services, .iokit_classes = classes};
	char kernel[PATH_MAX], want[PATH_MAX + 64];
	snprintf(kernel, sizeof(kernel), "%s/kernels/k.mlx", root);
	struct ks_buf b;
	ks_buf_init(&b, 1 << 20);
	ks_sbpl_runner(&b, root, kernel, NULL, &needs);
	const char *t = ks_buf_str(&b);
	snprintf(want, sizeof(want), "(subpath \"%s/kernels\")", root);
	ok(strstr(t, want) != NULL, "artifact_folder: the kernel's whole folder is read");
	ok(strstr(t, "(allow mach-lookup (global-name \"com.apple.MTLCompilerService\"))") &&
		   strstr(t, "(allow iokit-open (iokit-user-client-class \"AGXDeviceUserClient\"))"),
	   "the backend's Mach services and IOKit classes");
	ok(strstr(t, "(allow system-socket (socket-domain AF_UNIX))") &&
		   strstr(t, "(remote unix-socket)") &&
		   strstr(t, "(deny network-outbound (remote ip))") >
			   strstr(t, "(remote unix-socket)"),
	   "unix_sockets: local sockets, and the network denied after them");
	is_int(lines_with(t, "file-write*"), 2, "writes: scratch and the backend's rw path");
	ks_buf_release(&b);
}

static void quoting(const char *root)
{
	char evil[PATH_MAX];
	snprintf(evil, sizeof(evil), "%s/a\") (allow default) (x \"\\", root);
	struct ks_buf b;
	ks_buf_init(&b, 1 << 20);
	ks_sbpl_runner(&b, evil, NULL, NULL, NULL);
	const char *t = ks_buf_str(&b);
	ok(balanced(t), "a path with quotes, parentheses and a backslash stays one string");
	ok(strstr(t, "/a\\\") (allow default) (x \\\"\\\\\"") != NULL, "... escaped as SBPL reads it");
	ks_buf_release(&b);
	char link[PATH_MAX], real[PATH_MAX];
	snprintf(link, sizeof(link), "%s/link", root);
	snprintf(real, sizeof(real), "%s/real", root);
	ks_buf_init(&b, 1 << 20);
	ks_sbpl_runner(&b, link, NULL, NULL, NULL);
	char want[PATH_MAX + 16];
	snprintf(want, sizeof(want), "\"%s\"", real);
	ok(strstr(ks_buf_str(&b), want) != NULL, "a symlinked scratch is written as its real path");
	ks_buf_release(&b);
	ks_buf_init(&b, 64);
	ks_sbpl_runner(&b, root, NULL, NULL, NULL);
	ok(ks_buf_failed(&b), "a profile beyond its buffer's cap fails, never a cut profile");
	ks_buf_release(&b);
}

static void compiler_profile(const char *root)
{
	const char *ro[] = {"/usr/include", root, NULL}, *rw[] = {"/tmp/out-dir", NULL};
	char line[8192];
	struct ks_buf b;
	for (int no_sockets = 0; no_sockets < 2; no_sockets++) {
		ks_buf_init(&b, 1 << 20);
		ks_sbpl_compiler(&b, ro, rw, no_sockets);
		const char *t = ks_buf_str(&b);
		if (!no_sockets) {
			ok(!strncmp(t, "(version 1)\n(deny default)\n", 27) && balanced(t),
			   "the compiler's profile denies by default");
			rule_with(t, "(subpath \"/usr/include\")", line, sizeof(line));
			ok(strstr(line, "process-exec") && !strstr(line, "write"),
			   "ro paths are read and run, never written: %s", line);
			rule_with(t, "(subpath \"/tmp/out-dir\")", line, sizeof(line));
			ok(strstr(line, "file-write*") != NULL, "rw paths are written: %s", line);
			ok(strstr(t, "(allow process-fork)") != NULL, "the driver starts its stages");
			ok(!strstr(t, "\" \""), "one string per filter, as SBPL's filters take");
			ok(strstr(t, "(allow system-socket (socket-domain AF_UNIX))") != NULL,
			   "local sockets without no_sockets");
		} else {
			ok(!strstr(t, "system-socket"), "no_sockets: no socket at all");
		}
		ok(strstr(t, "(deny network*)") != NULL, "no network (no_sockets %d)", no_sockets);
		ks_buf_release(&b);
	}
}

int main(void)
{
	char root[] = "/tmp/ks-sbpl-XXXXXX", real[PATH_MAX], link[PATH_MAX + 8];
	if (!mkdtemp(root) || !realpath(root, real))
		return tap_skip_all("mkdtemp");
	snprintf(link, sizeof(link), "%s/link", real);
	char target[PATH_MAX + 8];
	snprintf(target, sizeof(target), "%s/real", real);
	ok(mkdir(target, 0700) == 0 && symlink(target, link) == 0, "a folder and a link to it");
	runner_profile(real);
	runner_needs(real);
	quoting(real);
	compiler_profile(real);
	unlink(link);
	rmdir(target);
	rmdir(real);
	return tap_done();
}
