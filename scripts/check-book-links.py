#!/usr/bin/env python3
"""Check every internal link of the built book (mdbook build, HTML in BOOK_DIR).

usage: check-book-links.py [BOOK_DIR]   (default target/book)

For every chapter page, each relative `href` / `src` must name a file of the built book, and
each `#anchor` (on the same page or another) an element id of that page. External links
(http:, https:, mailto:) are not fetched. A `{{#include …}}` left in a page (mdBook keeps
the directive when its file is missing, and still exits 0) counts as broken too. Exits 1
listing every broken link, 0 otherwise.
"""
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag

SKIP_PAGES = {"print.html", "404.html", "toc.html"}


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.links = []
        self.in_nav = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "name" in a:
            self.ids.add(a["name"])
        for key in ("href", "src"):
            if key in a and a[key] is not None and tag in ("a", "img"):
                self.links.append((tag, a[key]))


def parse(path, cache={}):
    if path not in cache:
        p = Page()
        p.feed(path.read_text(encoding="utf-8"))
        cache[path] = p
    return cache[path]


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "target/book").resolve()
    if not (root / "index.html").exists():
        print(f"{root}: no index.html (run `mdbook build` first)")
        return 1
    broken = []
    pages = sorted(p for p in root.rglob("*.html") if p.name not in SKIP_PAGES)
    for page in pages:
        if "{{#include" in page.read_text(encoding="utf-8"):
            broken.append(f"{page.relative_to(root)}: an {{{{#include}}}} that mdBook could not resolve")
        for tag, link in parse(page).links:
            if link.startswith(("http://", "https://", "mailto:", "javascript:")):
                continue
            target, frag = urldefrag(link)
            target = unquote(target)
            dest = page if target == "" else (page.parent / target).resolve()
            where = page.relative_to(root)
            if target and dest.is_dir():
                dest = dest / "index.html"
            if not dest.exists() or root not in dest.parents and dest != root:
                broken.append(f"{where}: {link}: no such file in the book")
                continue
            if frag and dest.suffix == ".html" and frag not in parse(dest).ids:
                broken.append(f"{where}: {link}: no anchor #{frag} in {dest.relative_to(root)}")
    for b in broken:
        print(b)
    print(f"{len(pages)} pages checked, {len(broken)} broken internal links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
