/* report.html: the shared sections in one self-contained page (inline CSS and SVG, no
 * scripts, nothing fetched from elsewhere). */
#include "report/report_impl.h"

static const char css[] =
	"body{font:14px/1.45 -apple-system,Segoe UI,Helvetica,Arial,sans-serif;color:#222;"
	"max-width:1200px;margin:24px auto;padding:0 16px}"
	"h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 8px;"
	"border-bottom:1px solid #ddd;padding-bottom:4px}"
	"table{border-collapse:collapse;margin:8px 0;font-size:13px}"
	"th,td{border:1px solid #ddd;padding:3px 7px;vertical-align:top;text-align:left}"
	"th{background:#f4f4f4}td.r,th.r{text-align:right;font-variant-numeric:tabular-nums}"
	"tr.best td{background:#eaf6ea;font-weight:600}tr.failed td{color:#888}"
	"code{font:12px ui-monospace,Menlo,Consolas,monospace;background:#f4f4f4;"
	"padding:0 3px;border-radius:3px;word-break:break-all}"
	".chart svg{max-width:100%;height:auto;border:1px solid #eee}"
	".tree ul{list-style:none;margin:0;padding-left:18px;border-left:1px dotted #bbb}"
	".tree>ul{border-left:none;padding-left:0}.tree li{margin:2px 0}"
	"li.bestpath>strong{color:#1a7f1a}li.folded{color:#888;font-style:italic}"
	".sw{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}";

int rp_render_html(const struct rp_run *r, struct ks_buf *out)
{
	int rc = ks_buf_adds(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
				  "<meta name=\"viewport\" content=\"width=device-width\">"
				  "<title>ksearch report: ");
	rc = rc ? rc : rp_html_esc(out, r->run->task);
	rc = rc ? rc : ks_buf_adds(out, " (");
	rc = rc ? rc : rp_html_esc(out, r->run->id);
	rc = rc ? rc : ks_buf_addf(out, ")</title>\n<style>%s</style></head>\n<body>\n", css);
	rc = rc ? rc : rp_render_body(r, 1, out);
	return rc ? rc : ks_buf_adds(out, "</body></html>\n");
}

int rp_render_md(const struct rp_run *r, struct ks_buf *out)
{
	return rp_render_body(r, 0, out);
}
