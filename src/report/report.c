/* Public report API: load the run once, render, write files atomically. */
#include <stdio.h>

#include "report/report_impl.h"
#include "util/fs.h"

void ks_report_opts_init(struct ks_report_opts *o)
{
	o->top = 10;
	o->fail_examples = 3;
	o->tree_nodes = KS_REPORT_TREE_NODES;
}

static int render(const struct rp_run *r, enum ks_report_format fmt, struct ks_buf *out,
		  struct ks_error *e)
{
	int rc;
	switch (fmt) {
	case KS_REPORT_MD:
		rc = rp_render_md(r, out);
		break;
	case KS_REPORT_HTML:
		rc = rp_render_html(r, out);
		break;
	case KS_REPORT_SVG:
		rc = rp_render_svg(r, out);
		break;
	case KS_REPORT_JSON:
		return rp_render_json(r, out, e);
	case KS_REPORT_FLASHINFER_TRACE:
		return rp_render_fitrace(r, out, e);
	default:
		return ks_error_set(e, KS_EINVAL, "unknown report format %d", (int)fmt);
	}
	if (rc)
		ks_error_set(e, rc, "report of '%s': output larger than the buffer allows", r->dir);
	return rc;
}

int ks_report_write_opts(const char *run_dir, enum ks_report_format fmt,
			 const struct ks_report_opts *o, struct ks_buf *out, struct ks_error *e)
{
	struct rp_run r;
	if (fmt != KS_REPORT_MD && fmt != KS_REPORT_HTML && fmt != KS_REPORT_JSON &&
	    fmt != KS_REPORT_SVG && fmt != KS_REPORT_FLASHINFER_TRACE)
		return ks_error_set(e, KS_EINVAL, "unknown report format %d", (int)fmt);
	int rc = rp_load(run_dir, o, &r, e);
	if (rc)
		return rc;
	rc = render(&r, fmt, out, e);
	rp_release(&r);
	return rc;
}

int ks_report_write(const char *run_dir, enum ks_report_format fmt, struct ks_buf *out,
		    struct ks_error *e)
{
	return ks_report_write_opts(run_dir, fmt, NULL, out, e);
}

#define RP_FILE_CAP ((size_t)256 << 20) /* one report file */

int ks_report_write_files_opts(const char *run_dir, const struct ks_report_opts *o,
			       struct ks_error *e)
{
	static const struct {
		enum ks_report_format fmt;
		const char *name;
	} files[] = {
		/* the chart first: report.md links to it */
		{KS_REPORT_SVG, KS_REPORT_SVG_FILE},
		{(enum ks_report_format)-1, KS_REPORT_ROOFLINE_FILE},
		{KS_REPORT_MD, KS_REPORT_MD_FILE},
		{KS_REPORT_HTML, KS_REPORT_HTML_FILE},
	};
	struct rp_run r;
	struct ks_buf b;
	char path[4200];
	int rc = rp_load(run_dir, o, &r, e);
	if (rc)
		return rc;
	ks_buf_init(&b, RP_FILE_CAP);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && !rc; i++) {
		ks_buf_reset(&b);
		if ((int)files[i].fmt == -1)
			rc = rp_render_roofline(&r, &b);
		else
			rc = render(&r, files[i].fmt, &b, e);
		if ((int)files[i].fmt == -1 && rc)
			ks_error_set(e, rc, "report of '%s': output larger than the buffer allows", run_dir);
		if (rc)
			break;
		if (ks_path_join(path, sizeof(path), run_dir, files[i].name)) {
			rc = ks_error_set(e, KS_ELIMIT, "path too long in '%s'", run_dir);
			break;
		}
		rc = ks_file_write_buf(path, &b, e);
	}
	ks_buf_release(&b);
	rp_release(&r);
	return rc;
}

int ks_report_write_files(const char *run_dir, struct ks_error *e)
{
	return ks_report_write_files_opts(run_dir, NULL, e);
}
