/* ksearch prompt TASK [--backend B] [--purpose P|all] [--flavour F] [--context L] [--sizes]
 * [--reply FILE] */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ksearch/llm.h"
#include "ksearch/prompt.h"
#include "util/fs.h"

static const char usage[] =
	"ksearch prompt TASK [--backend cpu|cuda|mlx] [--purpose init|action|improve|debug|repeat|"
	"edit|direct|all]\n"
	"                    [--flavour cuda|metal] [--context none|spec|full] [--spec NAME] "
	"[--sizes]\n"
	"       ksearch prompt TASK [--backend B] [--purpose P] [--flavour F] --reply FILE";
static const char about[] =
	"Print what a run with a model (--policy llm, cmd or files) would send it, without a\n"
	"run and without a model: the system message and the prompt of one purpose, exactly as\n"
	"a run builds them (the same templates, task text, hardware facts, knowledge and token\n"
	"budget), with a placeholder '<run state: ...>' wherever a run puts what it has measured\n"
	"so far.  The output is what --policy cmd gives a command on stdin and what --policy\n"
	"files writes to RUN_DIR/llm/NNNN-PURPOSE.prompt.md.\n\n"
	"Purposes, in the order a run asks for them:\n"
	"  init     build the world model: classify the kernel, propose the first actions (JSON)\n"
	"  action   implement one node of the tree on the best code of its path (a kernel)\n"
	"  debug    fix the cycle's kernel that failed, from its log (a kernel)\n"
	"  improve  make the cycle's best kernel faster, given the cycle's attempts (a kernel)\n"
	"  repeat   the last kernel repeated a candidate: write a different one (a kernel)\n"
	"  edit     reflect on the cycle, edit the tree, name the next node (notes and JSON)\n"
	"  direct   no open action is left: beat the best kernel so far (a kernel)\n"
	"  all      every purpose in turn, each after a '==== PURPOSE ====' line\n\n"
	"--flavour picks the kernel language of a backend that has several (mlx: cuda on MLX's\n"
	"CUDA build, metal on Apple silicon; default: what this machine's MLX runs, else cuda).\n"
	"--context is the run's: none (the task only), spec (+ the hardware's facts), full\n"
	"(+ patterns and assertions; for mlx also the CUDA concept map, the task's best CUDA\n"
	"kernel and its translation).  The hardware is detected as a run detects it (--spec auto);\n"
	"--spec NAME shows a shipped spec instead.  --sizes prints only each prompt's size.\n\n"
	"--reply FILE prints, instead of the prompt, the kernel a run takes from FILE, a model's\n"
	"reply to that prompt (a kernel purpose): the code block in the flavour's language,\n"
	"byte for byte, as the run extracts it.  Exit status 1 when the reply holds no usable\n"
	"kernel, with the reason a run would tell the model.\n\n"
	"Examples:\n"
	"  ksearch prompt softmax --purpose improve\n"
	"  ksearch prompt attention --backend mlx --flavour cuda --purpose action\n"
	"  ksearch prompt softmax --purpose all --sizes\n"
	"  ksearch prompt softmax --backend mlx --flavour cuda --reply RUN/llm/0002.reply.md\n"
	"Exit status 2 for an unknown task, backend, purpose, flavour or context.";

/* one purpose: the prompt (or its size line) on stdout */
static int show(struct ks_prompt_preview *p, const char *purpose, int sizes, int many)
{
	struct ks_buf sys = KS_BUF_INIT, user = KS_BUF_INIT, text = KS_BUF_INIT;
	struct ks_error e = {0};
	p->purpose = purpose;
	int rc = ks_prompt_preview(p, &sys, &user, &e);
	if (rc) {
		fprintf(stderr, "ksearch prompt: %s\n", e.msg);
		goto out;
	}
	struct ks_llm_msg msgs[] = {{"system", ks_buf_str(&sys)}, {"user", ks_buf_str(&user)}};
	if (many && !sizes)
		ks_buf_addf(&text, "==== %s ====\n", purpose);
	ks_llm_msgs_text(msgs, 2, &text);
	if (many && !sizes)
		ks_buf_adds(&text, "\n");
	if (sizes && !ks_buf_failed(&text))
		printf("%-8s %7zu bytes (system %zu, user %zu), about %zu tokens\n", purpose,
		       text.len, sys.len, user.len, (text.len + 3) / 4);
	else
		rc = ks_cli_print_buf("prompt", &text);
out:
	ks_buf_release(&sys);
	ks_buf_release(&user);
	ks_buf_release(&text);
	return rc;
}

/* the kernel a run takes from the reply in file (its prompt: p) on stdout */
static int reply_kernel(const struct ks_prompt_preview *p, const char *file)
{
	struct ks_buf reply = KS_BUF_INIT, code = KS_BUF_INIT;
	struct ks_error e = {0};
	int rc = ks_file_read(file, (size_t)16 << 20, &reply, &e);
	if (rc) {
		fprintf(stderr, "ksearch prompt: %s\n", e.msg);
		rc = KS_EXIT_USAGE;
	} else if ((rc = ks_prompt_reply_kernel(p, ks_buf_str(&reply), reply.len, &code, &e))) {
		fprintf(stderr, "ksearch prompt: %s: %s\n", file, e.msg);
		rc = rc == KS_EPARSE ? KS_EXIT_FAIL : KS_EXIT_USAGE;
	} else {
		rc = ks_cli_print_buf("prompt", &code);
	}
	ks_buf_release(&reply);
	ks_buf_release(&code);
	return rc;
}

int cmd_prompt(int argc, char **argv)
{
	struct ks_prompt_preview p = {.backend = "cpu"};
	const char *purpose = "action";
	const char *reply = NULL;
	int sizes = 0;
	const struct ks_opt opts[] = {
		KS_OPT_STR("backend", &p.backend, "B", "the run's backend (cpu)"),
		KS_OPT_STR("purpose", &purpose, "P", "which prompt, or all (action)"),
		KS_OPT_STR("flavour", &p.flavour, "F",
			   "kernel language of a backend with several (mlx: cuda, metal)"),
		KS_OPT_STR("context", &p.context, "L", "none, spec or full, as in run (full)"),
		KS_OPT_STR("spec", &p.spec, "NAME", "a shipped spec instead of detecting the target"),
		KS_OPT_STR("prompts", &p.prompts_dir, "DIR", "prompt templates (<data root>/prompts)"),
		KS_OPT_STR("workloads", &p.workloads, "LIST", "the run's --workloads"),
		KS_OPT_INT("threads", &p.threads, 0, 4096, "N", "the run's --threads (OpenMP threads)"),
		KS_OPT_FLAG("sizes", &sizes, "print each prompt's size only"),
		KS_OPT_STR("reply", &reply, "FILE",
			   "print the kernel a run takes from FILE, a reply to this prompt"),
		KS_OPT_END,
	};
	const char *pos[2];
	int npos = 0;
	int rc = ks_opts_parse(argc, argv, opts, usage, about, pos, 2, &npos, NULL);
	if (rc)
		return rc > 0 ? KS_EXIT_OK : KS_EXIT_USAGE;
	if (npos != 1) {
		fprintf(stderr, "ksearch prompt: needs one task (a name or a folder)\nusage: %s\n",
			usage);
		return KS_EXIT_USAGE;
	}
	p.task = pos[0];
	ks_cli_log_init(0);
	if (reply && (!strcmp(purpose, "all") || sizes)) {
		fprintf(stderr, "ksearch prompt: --reply takes one purpose's reply (not --purpose "
				"all, nor --sizes)\nusage: %s\n",
			usage);
		return KS_EXIT_USAGE;
	}
	if (reply) {
		p.purpose = purpose;
		return reply_kernel(&p, reply);
	}
	if (strcmp(purpose, "all"))
		return show(&p, purpose, sizes, 0) ? KS_EXIT_USAGE : KS_EXIT_OK;
	for (int i = 0; ks_prompt_purposes[i]; i++)
		if (show(&p, ks_prompt_purposes[i], sizes, 1))
			return KS_EXIT_USAGE;
	return KS_EXIT_OK;
}
