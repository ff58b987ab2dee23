/* A tiny document writer with two back ends, Markdown and HTML, so every report section is
 * written once (body.c) and both files say the same thing.  Errors are sticky: after the
 * first failed append every call is a no-op and rp_doc.rc holds the error. */
#ifndef KS_REPORT_DOC_H
#define KS_REPORT_DOC_H

#include "ksearch/buf.h"

struct rp_doc {
	struct ks_buf *b;
	int html;       /* 0 Markdown, 1 HTML */
	int rc;         /* first error or 0 */
	int depth;      /* list nesting */
	int ncols;      /* columns of the open table */
	int col;        /* cells written in the open row */
	const char *align; /* the open table's alignment string */
};

/* format-specific text, written as is */
void doc_raw(struct rp_doc *d, const char *s);
void doc_rawf(struct rp_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* escaped text */
void doc_text(struct rp_doc *d, const char *s);
void doc_textf(struct rp_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* a code span (log lines, knob values, paths) */
void doc_code(struct rp_doc *d, const char *s);
void doc_heading(struct rp_doc *d, int level, const char *title);
void doc_para_begin(struct rp_doc *d);
void doc_para_end(struct rp_doc *d);
void doc_strong_begin(struct rp_doc *d);
void doc_strong_end(struct rp_doc *d);
/* a table with ncols header cells; numeric columns (align[i] == 'r') are right-aligned */
void doc_table_begin(struct rp_doc *d, int ncols, const char *const *heads, const char *align);
void doc_row_begin(struct rp_doc *d, const char *cls);
void doc_cell_begin(struct rp_doc *d);
void doc_cell_end(struct rp_doc *d);
/* a whole cell of escaped text */
void doc_cell(struct rp_doc *d, const char *s);
void doc_cellf(struct rp_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void doc_row_end(struct rp_doc *d);
void doc_table_end(struct rp_doc *d);
/* nested bullet lists */
void doc_list_begin(struct rp_doc *d);
void doc_item_begin(struct rp_doc *d, const char *cls);
void doc_item_end(struct rp_doc *d);
void doc_list_end(struct rp_doc *d);

#endif
