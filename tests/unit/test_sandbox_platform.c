/* The sandbox's platform seam (src/eval/sandbox.h): this build's own platform confines
 * candidates (ks_sandbox_check passes), while a system without a sandbox
 * (ks_sandbox_none, made this process's platform) refuses them, saying why and naming
 * --no-sandbox, unless the user passed it; the evaluator asks before it compiles anything. */
#include <stdio.h>
#include <string.h>

#include "eval/sandbox.h"
#include "ksearch/eval.h"
#include "ksearch/task.h"
#include "tap.h"
#include "util/os.h"

int main(void)
{
	struct ks_error e = {0};
	const char *os = ks_os_name;
	is_str(ks_sandbox_platform()->name, os, "the native platform is this system's");
	is_int(ks_sandbox_check(0, &e), 0, "this build's platform confines candidates");

	ks_sandbox_platform_set(&ks_sandbox_none);
	is_int(ks_sandbox_check(0, &e), KS_EUNAVAILABLE, "without a sandbox: refused");
	ok(strstr(e.msg, "no sandbox") && strstr(e.msg, "--no-sandbox") &&
		   strstr(e.msg, ks_os_name),
	   "... saying why and what to do (%s)", e.msg);
	memset(&e, 0, sizeof(e));
	is_int(ks_sandbox_check(1, &e), 0, "... unless --no-sandbox");
	ok(strstr(ks_sandbox_describe(), "none") != NULL, "the record says none: %s",
	   ks_sandbox_describe());
	char why[256] = "";
	ok(ks_sandbox_enter("/tmp", NULL, NULL, NULL, NULL, why, sizeof(why)) != 0 && why[0],
	   "a runner asked to enter no sandbox fails: %s", why);

	struct ks_task *t = NULL;
	if (ok(ks_task_load("tests/fixtures/tasks/softmax", &t, &e) == 0, "load softmax (%s)", e.msg)) {
		struct ks_eval_opts o;
		ks_eval_opts_init(&o);
		struct ks_evaluator *ev = NULL;
		is_int(ks_evaluator_new(t, &o, &ev, &e), KS_EUNAVAILABLE,
		       "the evaluator refuses before compiling anything");
		ok(ev == NULL && strstr(e.msg, "--no-sandbox"), "... with the message (%s)", e.msg);
		ks_task_free(t);
	}
	ks_sandbox_platform_set(NULL);
	is_str(ks_sandbox_platform()->name, os, "set(NULL): the native one again");
	return tap_done();
}
