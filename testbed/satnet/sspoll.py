# SPDX-License-Identifier: GPL-2.0
"""Polling `ss` from one shell loop per run, so that a sample costs one
`ss` and no process spawning in the harness (it matters under
emulation).  The loop prints a line "@MARK" before each sample; a
poller gets each sample's text with its mark."""

import threading


class SsPoller(threading.Thread):
    """Reads the loop's output of @proc (a Popen with text stdout) and
    hands every sample to take(mark, text): mark is the text after "@"
    (None for anything printed before the first mark).  finish() stops
    the loop and returns once the last sample is taken."""

    def __init__(self, proc):
        super().__init__(daemon=True)
        self.proc = proc

    def run(self):
        mark, block = None, []
        for line in self.proc.stdout:
            if line.startswith("@"):
                self.take(mark, "".join(block))
                mark, block = line[1:].strip(), []
            else:
                block.append(line)
        self.take(mark, "".join(block))

    def take(self, mark, text):
        raise NotImplementedError

    def finish(self):
        self.proc.kill()
        self.proc.wait()
        self.join()
