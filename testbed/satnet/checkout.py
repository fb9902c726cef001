# SPDX-License-Identifier: GPL-2.0
"""The checkout itself: which commit it is and whether tracked files
differ from it (run records and the tools' reports name the commit
through here), and the generated blocks of its doc pages."""

import subprocess

from .paths import TOP


def _git(*args):
    return subprocess.run(["git", "-c", "safe.directory=*", "-C", TOP] +
                          list(args), capture_output=True, text=True)


_found = {}


def git_state(short=False):
    """Commit and dirty flag of the checkout.  Build products and results
    do not count as dirty; None for both outside a git checkout.  Found
    once per process, whose code is the checkout's as it started: git
    status reads every tracked file's state, in the VM some 10 000 9p
    requests (minutes of guest time on the virtual clock) each time."""
    if short not in _found:
        head = _git("rev-parse", *(["--short"] if short else []), "HEAD")
        if head.returncode:
            return {"commit": None, "dirty": None}
        st = _git("status", "--porcelain", "--untracked-files=no", "--",
                  ".", ":!results")
        _found[short] = {"commit": head.stdout.strip(),
                         "dirty": bool(st.stdout.strip())}
    return dict(_found[short])


def git_label():
    """The short commit for a report, "abc1234 (dirty)" when tracked
    files differ from it, "unknown" outside a git checkout."""
    st = git_state(short=True)
    if st["commit"] is None:
        return "unknown"
    return st["commit"] + (" (dirty)" if st["dirty"] else "")


# ---- generated blocks of the docs ----
# A tool that writes part of a page writes it between two marker lines
# (HTML comments) and leaves the rest of the page as it is.

def marked_block(text, begin, end):
    """(before, block, after): @text around its first @begin and the
    first @end after it, the block with both markers; None when @text
    lacks either."""
    head, sep, rest = text.partition(begin)
    if not sep or end not in rest:
        return None
    body, _, tail = rest.partition(end)
    return head, begin + body + end, tail


def replace_block(text, begin, end, block):
    """@text with its marked block replaced by @block (which brings its
    own markers); None when @text has no marked block."""
    parts = marked_block(text, begin, end)
    return None if parts is None else parts[0] + block + parts[2]
