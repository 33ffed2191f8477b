#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""rules.py - the normative rules of Documentation/metaroce-spec.rst.

Every normative statement of the spec has a stable ID MR-<n>:

  * the requirements of the "Conformance" section: a definition list
    whose terms are "MR-<n>" lines (MR-1 .. MR-60), keyword REQ;
  * every sentence elsewhere that uses an RFC 2119 key word (MUST, MUST
    NOT, SHALL, SHALL NOT, REQUIRED, SHOULD, SHOULD NOT, RECOMMENDED,
    MAY, OPTIONAL) carries a tag "[MR-<n>]" inside the sentence, before
    its final punctuation.

IDs are never reused or renumbered: a new statement takes the next free
number (--next prints it).  The check (--check, run by tools/lint.sh)
fails on a key word in a sentence without a tag, a tag in a sentence
without a key word, or an ID defined twice.

Sentences: a block (paragraph, list item, table cell) is cut after ".",
"!" or "?" followed by white space and a capital letter, a back-quote,
"*" or "(".  Code blocks are skipped.

usage: rules.py [--spec FILE] [--check] [--json] [--next] [--list] [--tag]

--tag gives every normative sentence without a tag the next free ID (in
the order of the document), in place: review the diff.
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = os.path.join(HERE, "..", "..", "Documentation", "metaroce-spec.rst")

KEYWORDS = ("MUST NOT", "SHALL NOT", "SHOULD NOT", "MUST", "SHALL",
            "REQUIRED", "SHOULD", "RECOMMENDED", "MAY", "OPTIONAL")
KW_RE = re.compile(r"(?<![A-Za-z_-])(MUST NOT|SHALL NOT|SHOULD NOT|MUST|SHALL|"
                   r"REQUIRED|SHOULD|RECOMMENDED|MAY|OPTIONAL)(?![A-Za-z_-])")
TAG_RE = re.compile(r"\[MR-(\d+)\]")
DEF_RE = re.compile(r"^MR-(\d+)\s*$")
UNDERLINE_RE = re.compile(r"^(=+|-+|~+|\^+)\s*$")
# a sentence ends at . ! ? followed by space and the start of a sentence
SENT_END_RE = re.compile(r"[.!?]\**(?=\s+[A-Z0-9`*(])")
# the conventions paragraph names the key words, it uses none of them
EXEMPT_RE = re.compile(r"are to be interpreted as described in")


class Rule:
    def __init__(self, num, keyword, section, text, line):
        self.num = num
        self.id = "MR-%d" % num
        self.keyword = keyword
        self.section = section
        self.text = text
        self.line = line

    def as_dict(self):
        return {"id": self.id, "keyword": self.keyword,
                "section": self.section, "text": self.text,
                "line": self.line}


def _blocks(lines):
    """Yield (first line number, [lines], section) per text block."""
    section = ""
    top = ""
    block, start = [], 0
    in_code = False
    code_indent = 0
    i = 0
    n = len(lines)

    def flush():
        if block:
            yield_list.append((start, list(block), section))
            block.clear()

    yield_list = []
    while i < n:
        ln = lines[i]
        if i + 1 < n and UNDERLINE_RE.match(lines[i + 1]) and ln.strip() \
                and not UNDERLINE_RE.match(ln) and \
                len(lines[i + 1].rstrip()) >= len(ln.rstrip()):
            flush()
            ch = lines[i + 1].strip()[0]
            if ch == "=":
                top = ln.strip()
                section = top
            else:
                section = "%s / %s" % (top, ln.strip()) if top else ln.strip()
            i += 2
            continue
        if in_code:
            if ln.strip() and (len(ln) - len(ln.lstrip())) <= code_indent:
                in_code = False
            else:
                i += 1
                continue
        stripped = ln.strip()
        if stripped.startswith(".. code-block::") or stripped.endswith("::") \
                and not stripped.startswith(".."):
            if stripped.startswith(".. code-block::"):
                flush()
                in_code = True
                code_indent = len(ln) - len(ln.lstrip())
                i += 1
                continue
            # a paragraph ending in "::" introduces a literal block
            block.append(ln)
            if not block[:-1]:
                start = i + 1
            flush()
            in_code = True
            code_indent = len(ln) - len(ln.lstrip())
            i += 1
            continue
        if not stripped or UNDERLINE_RE.match(ln):
            flush()
            i += 1
            continue
        # a new list item or table cell starts a block
        if re.match(r"^\s*(\* - |- |\d+\. )", ln) or DEF_RE.match(ln):
            flush()
        # a definition-list term (back at column 0 after an indented body)
        if block and not ln[0].isspace() and block[-1][:1].isspace():
            flush()
        if not block:
            start = i + 1
        block.append(ln)
        i += 1
    flush()
    return yield_list


def _sentences(text):
    """Cut a block's text into sentences (start offsets kept)."""
    out, pos = [], 0
    for m in SENT_END_RE.finditer(text):
        out.append(text[pos:m.end()])
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return [s.strip() for s in out if s.strip()]


def _clean(s):
    s = re.sub(r"^\s*(\* - |- |\d+\. )", "", s)
    return re.sub(r"\s+", " ", s).strip()


UNTAGGED = []


def parse(path):
    """Return (rules, errors); UNTAGGED lists (line, sentence) to tag."""
    del UNTAGGED[:]
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    rules, errors = {}, []

    def add(rule):
        if rule.num in rules:
            errors.append("%s:%d: %s defined twice (first at line %d)" %
                          (path, rule.line, rule.id, rules[rule.num].line))
        else:
            rules[rule.num] = rule

    # the Conformance section's definition list
    for lineno, block, section in _blocks(lines):
        m = DEF_RE.match(block[0])
        if m and section.startswith("Conformance"):
            text = _clean(" ".join(block[1:]))
            add(Rule(int(m.group(1)), "REQ", section, text, lineno))
            if TAG_RE.search(text):
                errors.append("%s:%d: a tag inside requirement MR-%s" %
                              (path, lineno, m.group(1)))
            continue
        text = " ".join(b.strip() for b in block)
        for sent in _sentences(text):
            kws = KW_RE.findall(sent)
            tags = TAG_RE.findall(sent)
            if EXEMPT_RE.search(sent):
                continue
            if kws and not tags:
                UNTAGGED.append((lineno, sent))
                errors.append("%s:%d: normative key word %s without a rule "
                              "ID: %s" % (path, lineno, kws[0], sent[:160]))
            elif tags and not kws:
                errors.append("%s:%d: tag [MR-%s] in a sentence without a "
                              "key word: %s" % (path, lineno, tags[0],
                                                sent[:160]))
            elif len(tags) > 1:
                errors.append("%s:%d: several tags in one sentence: %s" %
                              (path, lineno, sent[:160]))
            elif tags:
                # the strongest key word names the rule
                kw = min(kws, key=KEYWORDS.index)
                add(Rule(int(tags[0]), kw, section,
                         _clean(TAG_RE.sub("", sent)).replace(" .", "."),
                         lineno))
    return [rules[k] for k in sorted(rules)], errors


def tag(path):
    """Give every untagged normative sentence the next free ID, in place."""
    rules, _ = parse(path)
    nxt = max([r.num for r in rules] + [0]) + 1
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    line_at = [0]
    for ln in raw.split("\n"):
        line_at.append(line_at[-1] + len(ln) + 1)
    edits = []
    for lineno, sent in list(UNTAGGED):
        words = _clean(sent).split(" ")
        pat = r"\s+".join(re.escape(w) for w in words)
        m = re.compile(pat).search(raw, line_at[lineno - 1])
        if not m:
            print("rules: cannot find: " + sent[:80], file=sys.stderr)
            continue
        end = m.end()
        # before the final punctuation (and a closing ** of bold text)
        while raw[end - 1] in ".;:*" and end > m.start():
            end -= 1
        edits.append((end, " [MR-%d]" % nxt))
        nxt += 1
    for pos, text in sorted(edits, reverse=True):
        raw = raw[:pos] + text + raw[pos:]
    with open(path, "w", encoding="utf-8") as f:
        f.write(raw)
    return len(edits)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", default=SPEC)
    ap.add_argument("--check", action="store_true",
                    help="fail on untagged key words and duplicate IDs")
    ap.add_argument("--json", action="store_true", help="rules as JSON")
    ap.add_argument("--next", action="store_true", help="next free ID")
    ap.add_argument("--tag", action="store_true",
                    help="give untagged normative sentences new IDs")
    ap.add_argument("--list", action="store_true",
                    help="one line per rule: ID keyword section: text")
    a = ap.parse_args(argv)
    if a.tag:
        print("rules: %d new IDs" % tag(a.spec))
    rules, errors = parse(a.spec)
    if a.json:
        json.dump([r.as_dict() for r in rules], sys.stdout, indent=1)
        print()
    if a.list:
        for r in rules:
            print("%-6s %-11s %s: %s" % (r.id, r.keyword, r.section, r.text))
    if a.next:
        print("MR-%d" % (max([r.num for r in rules] + [0]) + 1))
    for e in errors:
        print("rules: " + e, file=sys.stderr)
    if a.check:
        kinds = {}
        for r in rules:
            kinds[r.keyword] = kinds.get(r.keyword, 0) + 1
        print("rules: %d rules (%s)%s" % (
            len(rules), ", ".join("%s %d" % kv for kv in sorted(kinds.items())),
            ", %d errors" % len(errors) if errors else ", clean"))
    return 1 if errors and a.check else 0


if __name__ == "__main__":
    sys.exit(main())
