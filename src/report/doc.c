/* Markdown / HTML document writer (see doc.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report/doc.h"
#include "report/report_impl.h"

#define DOC_LINE_MAX 8192 /* one formatted piece of text */

static void put(struct rp_doc *d, const char *s)
{
	if (!d->rc)
		d->rc = ks_buf_adds(d->b, s);
}

void doc_raw(struct rp_doc *d, const char *s)
{
	put(d, s);
}

void doc_rawf(struct rp_doc *d, const char *fmt, ...)
{
	va_list ap;
	if (d->rc)
		return;
	va_start(ap, fmt);
	d->rc = ks_buf_vaddf(d->b, fmt, ap);
	va_end(ap);
}

void doc_text(struct rp_doc *d, const char *s)
{
	if (!d->rc)
		d->rc = d->html ? rp_html_esc(d->b, s) : rp_md_esc(d->b, s);
}

void doc_textf(struct rp_doc *d, const char *fmt, ...)
{
	char tmp[DOC_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	doc_text(d, tmp);
}

void doc_code(struct rp_doc *d, const char *s)
{
	if (d->rc)
		return;
	if (d->html) {
		put(d, "<code>");
		doc_text(d, s);
		put(d, "</code>");
	} else {
		d->rc = rp_md_code(d->b, s);
	}
}

void doc_heading(struct rp_doc *d, int level, const char *title)
{
	if (d->html) {
		doc_rawf(d, "<h%d>", level);
		doc_text(d, title);
		doc_rawf(d, "</h%d>\n", level);
	} else {
		doc_rawf(d, "%.*s ", level, "######");
		doc_text(d, title);
		put(d, "\n\n");
	}
}

void doc_para_begin(struct rp_doc *d)
{
	if (d->html)
		put(d, "<p>");
}

void doc_para_end(struct rp_doc *d)
{
	put(d, d->html ? "</p>\n" : "\n\n");
}

void doc_strong_begin(struct rp_doc *d)
{
	put(d, d->html ? "<strong>" : "**");
}

void doc_strong_end(struct rp_doc *d)
{
	put(d, d->html ? "</strong>" : "**");
}

void doc_table_begin(struct rp_doc *d, int ncols, const char *const *heads, const char *align)
{
	d->align = align ? align : "";
	d->ncols = ncols;
	d->col = 0;
	if (d->html) {
		put(d, "<table><thead><tr>");
		for (int i = 0; i < ncols; i++) {
			put(d, (int)strlen(d->align) > i && d->align[i] == 'r' ? "<th class=\"r\">" : "<th>");
			doc_text(d, heads[i]);
			put(d, "</th>");
		}
		put(d, "</tr></thead>\n<tbody>\n");
		return;
	}
	put(d, "|");
	for (int i = 0; i < ncols; i++) {
		put(d, " ");
		doc_text(d, heads[i]);
		put(d, " |");
	}
	put(d, "\n|");
	for (int i = 0; i < ncols; i++)
		put(d, (int)strlen(d->align) > i && d->align[i] == 'r' ? "---:|" : "---|");
	put(d, "\n");
}

void doc_row_begin(struct rp_doc *d, const char *cls)
{
	d->col = 0;
	if (d->html)
		doc_rawf(d, cls && cls[0] ? "<tr class=\"%s\">" : "<tr>", cls);
	else
		put(d, "|");
}

void doc_cell_begin(struct rp_doc *d)
{
	if (d->html)
		put(d, (int)strlen(d->align) > d->col && d->align[d->col] == 'r' ? "<td class=\"r\">"
									    : "<td>");
	else
		put(d, " ");
}

void doc_cell_end(struct rp_doc *d)
{
	d->col++;
	put(d, d->html ? "</td>" : " |");
}

void doc_cell(struct rp_doc *d, const char *s)
{
	doc_cell_begin(d);
	doc_text(d, s);
	doc_cell_end(d);
}

void doc_cellf(struct rp_doc *d, const char *fmt, ...)
{
	char tmp[DOC_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	doc_cell(d, tmp);
}

void doc_row_end(struct rp_doc *d)
{
	/* short rows are padded so Markdown tables stay rectangular */
	while (d->col < d->ncols)
		doc_cell(d, "");
	put(d, d->html ? "</tr>\n" : "\n");
}

void doc_table_end(struct rp_doc *d)
{
	put(d, d->html ? "</tbody></table>\n" : "\n");
	d->ncols = 0;
}

void doc_list_begin(struct rp_doc *d)
{
	if (d->html)
		put(d, "<ul>");
	else if (d->depth && d->b->len && d->b->data[d->b->len - 1] != '\n')
		put(d, "\n"); /* a nested list starts on its own line */
	d->depth++;
}

void doc_item_begin(struct rp_doc *d, const char *cls)
{
	if (d->html) {
		doc_rawf(d, cls && cls[0] ? "<li class=\"%s\">" : "<li>", cls);
		return;
	}
	for (int i = 1; i < d->depth; i++)
		put(d, "  ");
	put(d, "- ");
}

static int ends_line(const struct rp_doc *d)
{
	return !d->b->len || d->b->data[d->b->len - 1] == '\n';
}

void doc_item_end(struct rp_doc *d)
{
	if (d->html)
		put(d, "</li>\n");
	else if (!ends_line(d))
		put(d, "\n");
}

void doc_list_end(struct rp_doc *d)
{
	d->depth--;
	if (d->html)
		put(d, "</ul>\n");
	else if (d->depth == 0)
		put(d, "\n");
}
