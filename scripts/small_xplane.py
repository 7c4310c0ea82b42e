#!/usr/bin/env python3
"""testdata/xplane/gpu1.xplane.pb: the `/device:GPU:1` plane and the hostnames of the
corpus's multi-GPU worker XSpace, their bytes copied unchanged (an XSpace is a
sequence of fields; keeping some of them is still a valid XSpace). A small seed for
the fuzz harness and a file the tests can use without the corpus.

    python3 scripts/small_xplane.py CORPUS/.../34.83.195.179_6003.xplane.pb > testdata/xplane/gpu1.xplane.pb
"""
import sys


def varint(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


data = open(sys.argv[1], "rb").read()
out = bytearray()
i = 0
while i < len(data):
    start = i
    key, i = varint(data, i)
    assert key & 7 == 2, "every XSpace field is length-delimited"
    n, i = varint(data, i)
    body = data[i:i + n]
    i += n
    if key >> 3 == 4 or (key >> 3 == 1 and b"/device:GPU:1" in body[:40]):
        out += data[start:i]
sys.stdout.buffer.write(bytes(out))
