// SPDX-License-Identifier: GPL-2.0
/*
 * sink_flamegraph.c - a profile as one self-contained HTML flame graph.
 *
 * The C side merges the stacks into a call tree (children sorted by name, as
 * flamegraph.pl does; frames that differ only by line are one node: the tree
 * is keyed by profile_label) and writes it as two JS arrays: N, the labels as
 * escaped string literals, and T, the tree in preorder, four numbers a node
 * (name index, bytes, count, number of children). The inline script below
 * rebuilds the tree and lays it out with absolutely positioned divs whose
 * text is set through textContent, so no frame name is ever parsed as HTML.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sink/sinks.h"
#include "lib/hash.h"
#include "lib/util.h"

#define ROOT_NAME UINT32_MAX /* the synthetic "all" frame */

struct fnode {
	uint32_t name;
	uint32_t parent;
	uint32_t first_child; /* 0: none (node 0 is the root, never a child) */
	uint32_t next;
	uint32_t nkids;
	uint64_t bytes, count;
};

struct ftree {
	const struct profile *p;
	struct fnode *nodes;
	size_t n, cap;
	uint32_t *slot; /* (parent, name) -> node index + 1 */
	size_t slot_cap;
};

static size_t slot_of(const struct ftree *t, uint32_t parent, uint32_t name)
{
	return (size_t)(hash_fib64((uint64_t)parent << 32 | name) >> 17) & (t->slot_cap - 1);
}

static int ftree_grow(struct ftree *t)
{
	size_t cap = t->slot_cap ? t->slot_cap * 2 : 1024;
	uint32_t *slot = calloc(cap, sizeof(*slot));
	struct fnode *nodes;

	if (!slot)
		return -ENOMEM;
	free(t->slot);
	t->slot = slot;
	t->slot_cap = cap;
	/* re-insert every node but the root */
	for (size_t c = 1; c < t->n; c++) {
		size_t j = slot_of(t, t->nodes[c].parent, t->nodes[c].name);

		while (t->slot[j])
			j = (j + 1) & (t->slot_cap - 1);
		t->slot[j] = (uint32_t)c + 1;
	}
	nodes = realloc(t->nodes, cap / 2 * sizeof(*nodes));
	if (!nodes)
		return -ENOMEM;
	t->nodes = nodes;
	t->cap = cap / 2;
	return 0;
}

/* child - the child of @parent named @name, created if missing; 0 on ENOMEM. */
static uint32_t child(struct ftree *t, uint32_t parent, uint32_t name)
{
	size_t j;
	uint32_t c;

	if (t->n + 1 > t->cap && ftree_grow(t))
		return 0;
	for (j = slot_of(t, parent, name); t->slot[j]; j = (j + 1) & (t->slot_cap - 1)) {
		c = t->slot[j] - 1;
		if (t->nodes[c].name == name && t->nodes[c].parent == parent)
			return c;
	}
	c = (uint32_t)t->n++;
	t->nodes[c] = (struct fnode){ .name = name, .parent = parent, .next = t->nodes[parent].first_child };
	t->nodes[parent].first_child = c;
	t->nodes[parent].nkids++;
	t->slot[j] = c + 1;
	return c;
}

static int ftree_build(struct ftree *t, const struct profile *p)
{
	memset(t, 0, sizeof(*t));
	t->p = p;
	if (ftree_grow(t))
		return -ENOMEM;
	t->nodes[0] = (struct fnode){ .name = ROOT_NAME };
	t->n = 1;
	for (size_t i = 0; i < profile_nstacks(p); i++) {
		const struct profile_stack *s = profile_stack_at(p, i);
		uint32_t cur = 0;

		t->nodes[0].bytes += s->bytes;
		t->nodes[0].count += s->count;
		for (int k = 0; k < s->n; k++) {
			cur = child(t, cur, profile_label_id(p, s->frames[k]));
			if (!cur)
				return -ENOMEM;
			t->nodes[cur].bytes += s->bytes;
			t->nodes[cur].count += s->count;
		}
	}
	return 0;
}

static void ftree_free(struct ftree *t)
{
	free(t->nodes);
	free(t->slot);
}

/* write_js_string - @s as a double-quoted JS literal that is also safe inside
 * <script>: no '<', '>' or '&' appear literally (so neither "</script>" nor
 * "<!--" can end or alter the script), nor U+2028/U+2029. */
static void write_js_string(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	putc('"', f);
	for (; *u; u++) {
		if (*u == '"' || *u == '\\')
			fprintf(f, "\\%c", *u);
		else if (*u < 0x20 || *u == 0x7f || *u == '<' || *u == '>' || *u == '&' ||
			 *u == '\'')
			fprintf(f, "\\u%04x", *u);
		else if (u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9)) {
			fprintf(f, "\\u%04x", u[2] == 0xa8 ? 0x2028 : 0x2029);
			u += 2;
		} else
			putc(*u, f);
	}
	putc('"', f);
}

/* write_html - @s with &, <, >, " and ' as entities. */
static void write_html(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: putc(*s, f);
		}
	}
}

static int by_name(const void *a, const void *b, void *ctx)
{
	const struct ftree *t = ctx;
	uint32_t na = t->nodes[*(const uint32_t *)a].name, nb = t->nodes[*(const uint32_t *)b].name;

	return strcmp(profile_label(t->p, na), profile_label(t->p, nb));
}

/* write_tree - node @i and its subtree in preorder, children by name. */
static int write_tree(FILE *f, const struct ftree *t, uint32_t i, size_t *written)
{
	const struct fnode *nd = &t->nodes[i];
	uint32_t *kids = NULL;
	uint32_t k = 0;
	int err = 0;

	fprintf(f, "%lu,%llu,%llu,%u,",
		nd->name == ROOT_NAME ? (unsigned long)profile_nlabels(t->p) : (unsigned long)nd->name,
		(unsigned long long)nd->bytes, (unsigned long long)nd->count, nd->nkids);
	if (++*written % 16 == 0)
		putc('\n', f);
	if (!nd->nkids)
		return 0;
	kids = malloc(nd->nkids * sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	for (uint32_t c = nd->first_child; c; c = t->nodes[c].next)
		kids[k++] = c;
	qsort_r(kids, k, sizeof(*kids), by_name, (void *)t);
	for (uint32_t j = 0; j < k && !err; j++)
		err = write_tree(f, t, kids[j], written);
	free(kids);
	return err;
}

/* The page: CSS, the layout script, and the data (N, T) in between. */
static const char page_head[] =
"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<meta name=\"generator\" content=\"memtrace\">\n"
"<style>\n"
"body{font:13px system-ui,sans-serif;margin:0;padding:8px 12px;color:#222;background:#fafafa}\n"
"h1{font-size:17px;margin:2px 0 4px}\n"
"#sub{color:#555;margin-bottom:6px}\n"
"#bar{display:flex;gap:10px;align-items:center;margin:4px 0}\n"
"#bar input{width:18em}\n"
"#info{font-family:monospace;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;"
"min-height:1.4em;padding:3px 0}\n"
"#fg{position:relative;width:100%;overflow:hidden;background:#fff;border:1px solid #ddd}\n"
".f{position:absolute;height:17px;line-height:17px;box-sizing:border-box;border-right:1px "
"solid #fff;border-bottom:1px solid #fff;overflow:hidden;white-space:nowrap;text-overflow:"
"ellipsis;padding-left:3px;cursor:pointer;font:11px monospace;color:#111}\n"
".f:hover{outline:1px solid #000;z-index:1}\n"
".f.a{opacity:.55}\n"
".f.m{background:#e36cf0 !important}\n"
"</style>\n";

static const char page_script[] =
"(function () {\n"
"\"use strict\";\n"
"var H = 18, pos = 0, maxDepth = 0;\n"
"function build(parent) {\n"
"  var n = {name: N[T[pos]], v: T[pos + 1], c: T[pos + 2], kids: [], parent: parent,\n"
"           depth: parent ? parent.depth + 1 : 0};\n"
"  var k = T[pos + 3];\n"
"  pos += 4;\n"
"  if (n.depth > maxDepth) maxDepth = n.depth;\n"
"  for (var i = 0; i < k; i++) n.kids.push(build(n));\n"
"  return n;\n"
"}\n"
"var root = build(null), zoom = root, re = null;\n"
"var fg = document.getElementById('fg'), info = document.getElementById('info');\n"
"var matchEl = document.getElementById('match');\n"
"function fmtBytes(b) {\n"
"  var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;\n"
"  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }\n"
"  return (i ? b.toFixed(1) : b) + ' ' + u[i];\n"
"}\n"
"function pct(a, b) { return b > 0 ? (100 * a / b).toFixed(2) + '%' : '0%'; }\n"
"var KIND = {'_[0]': ['interpreted', 150, 215, 150], '_[1]': ['C1', 110, 225, 110],\n"
"            '_[j]': ['C2', 80, 225, 80], '_[i]': ['inlined', 80, 190, 190]};\n"
"function kindOf(name) { return KIND[name.slice(-4)]; }\n"
"function shown(name) { return kindOf(name) ? name.slice(0, -4) : name; }\n"
"function color(name) {\n"
"  var h = 0, k = kindOf(name);\n"
"  for (var i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;\n"
"  if (k) return 'rgb(' + (k[1] + h % 30) + ',' + k[2] + ',' + (k[3] + (h >>> 8) % 30) + ')';\n"
"  if (name.indexOf('::') >= 0) return 'rgb(' + (200 + h % 30) + ',200,' + (60 + (h >>> 8) % 40) + ')';\n"
"  var r = 205 + (h % 50), g = 80 + ((h >>> 8) % 150), b = (h >>> 16) % 60;\n"
"  return 'rgb(' + r + ',' + g + ',' + b + ')';\n"
"}\n"
"function describe(n) {\n"
"  var k = kindOf(n.name);\n"
"  var s = shown(n.name) + (k ? ' [' + k[0] + ']' : '') + '  \\u2014  ' + fmtBytes(n.v) + ' (' + n.v + ' bytes), ' +\n"
"          pct(n.v, root.v) + ' of all, ' + n.c + ' samples';\n"
"  if (zoom !== root) s += ', ' + pct(n.v, zoom.v) + ' of the zoomed frame';\n"
"  return s;\n"
"}\n"
"function isAncestor(a, n) { for (; n; n = n.parent) if (n === a) return true; return false; }\n"
"function box(n, x, w, anc, frag) {\n"
"  var d = document.createElement('div');\n"
"  d.className = 'f' + (anc ? ' a' : '') + (re && re.test(shown(n.name)) ? ' m' : '');\n"
"  d.style.left = x + 'px';\n"
"  d.style.width = w + 'px';\n"
"  d.style.top = ((maxDepth - n.depth) * H) + 'px';\n"
"  d.style.background = n === root ? '#c8c8c8' : color(n.name);\n"
"  d.textContent = w > 28 ? shown(n.name) : '';\n"
"  d.onmouseenter = function () { info.textContent = describe(n); };\n"
"  d.onclick = function () { zoom = n; render(); };\n"
"  frag.appendChild(d);\n"
"}\n"
"function render() {\n"
"  var W = fg.clientWidth, frag = document.createDocumentFragment();\n"
"  fg.textContent = '';\n"
"  fg.style.height = ((maxDepth + 1) * H) + 'px';\n"
"  for (var a = zoom.parent; a; a = a.parent) box(a, 0, W, true, frag);\n"
"  var scale = zoom.v > 0 ? W / zoom.v : 0;\n"
"  (function walk(n, x) {\n"
"    var w = n.v * scale;\n"
"    if (w < 0.5 && n !== zoom) return;\n"
"    box(n, x, w, false, frag);\n"
"    for (var i = 0; i < n.kids.length; i++) { walk(n.kids[i], x); x += n.kids[i].v * scale; }\n"
"  })(zoom, 0);\n"
"  fg.appendChild(frag);\n"
"}\n"
"function search(q) {\n"
"  re = null;\n"
"  matchEl.textContent = '';\n"
"  if (q) {\n"
"    try { re = new RegExp(q); } catch (e) { matchEl.textContent = 'bad regex'; }\n"
"  }\n"
"  if (re) {\n"
"    var sum = 0;\n"
"    (function walk(n) {\n"
"      if (n !== root && re.test(shown(n.name))) { sum += n.v; return; }\n"
"      n.kids.forEach(walk);\n"
"    })(root);\n"
"    matchEl.textContent = 'matched ' + fmtBytes(sum) + ' (' + pct(sum, root.v) + ')';\n"
"  }\n"
"  render();\n"
"}\n"
"document.getElementById('reset').onclick = function () { zoom = root; render(); };\n"
"document.getElementById('q').oninput = function (e) { search(e.target.value); };\n"
"document.getElementById('sub').textContent = 'total ' + fmtBytes(root.v) + ' (' + root.v +\n"
"  ' bytes) in ' + root.c + ' samples; hover for details, click to zoom';\n"
"info.textContent = root.v ? describe(root) : 'no samples';\n"
"window.addEventListener('resize', render);\n"
"render();\n"
"})();\n";

int sink_flamegraph_write(const struct profile *p, FILE *f, const char *title)
{
	struct ftree t;
	size_t written = 0;
	int err;

	if (!title)
		title = "memtrace allocation profile";
	err = ftree_build(&t, p);
	if (err)
		goto out;
	fputs(page_head, f);
	fputs("<title>", f);
	write_html(f, title);
	fputs("</title></head><body>\n<h1>", f);
	write_html(f, title);
	fputs("</h1>\n<div id=\"sub\"></div>\n"
	      "<div id=\"bar\"><button id=\"reset\">Reset zoom</button>"
	      "<input id=\"q\" placeholder=\"search frames (regex)\"><span id=\"match\"></span></div>\n"
	      "<div id=\"info\"></div>\n<div id=\"fg\"></div>\n<script>\n", f);
	fputs("var N = [", f);
	for (size_t i = 0; i < profile_nlabels(p); i++) {
		write_js_string(f, profile_label(p, (uint32_t)i));
		fputs(i % 8 == 7 ? ",\n" : ",", f);
	}
	fputs("\"all\"];\nvar T = [\n", f);
	err = write_tree(f, &t, 0, &written);
	if (err)
		goto out;
	fputs("];\n", f);
	fputs(page_script, f);
	fputs("</script>\n</body></html>\n", f);
	if (fflush(f) || ferror(f))
		err = -EIO;
out:
	ftree_free(&t);
	return err;
}
