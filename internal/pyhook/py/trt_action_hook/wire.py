"""The JSON text of the messages to the supervisor (the protocol is in
internal/pyhook's package comment).

The hook encodes JSON itself: the `json` package imports `re` and `enum`,
about 4 ms that every Python process of a command would pay at start-up
for its one hello. Strings go through the C encoder the `json` package
uses, escaping everything outside ASCII, so the text is valid UTF-8 even
for strings Python holds with lone surrogates (file names in sys.argv).
Incoming messages are rare (a stop) and are decoded with `json` when they
come.
"""

from _json import encode_basestring_ascii as quote

# Largest message, in bytes: the supervisor reads one SOCK_SEQPACKET message
# into a buffer of 64 KiB.
LIMIT = 60000

# Longest phase name an event carries, in characters (longer ones are cut):
# a phase name of TensorRT is a few words, or a layer's name in older
# releases; the cut only keeps a batch of one event under LIMIT.
_NAME_CHARS = 4096


def dumps(value):
    """The JSON text of a message: dicts with str keys, lists and tuples,
    str, int, float, bool and None. Anything else is written as its str."""
    out = []
    _encode(value, out.append)
    return "".join(out)


def _encode(v, put):
    if v is None:
        put("null")
    elif v is True:
        put("true")
    elif v is False:
        put("false")
    elif isinstance(v, str):
        put(quote(v))
    elif isinstance(v, int):
        put(str(int(v)))
    elif isinstance(v, float):
        put(repr(v) if v == v and v not in (float("inf"), float("-inf")) else "null")
    elif isinstance(v, dict):
        put("{")
        first = True
        for k, item in v.items():
            if not first:
                put(",")
            first = False
            put(quote(str(k)))
            put(":")
            _encode(item, put)
        put("}")
    elif isinstance(v, (list, tuple)):
        put("[")
        for i, item in enumerate(v):
            if i:
                put(",")
            _encode(item, put)
        put("]")
    else:
        put(quote(str(v)))


def _name(s):
    if not isinstance(s, str):
        s = str(s)
    return quote(s if len(s) <= _NAME_CHARS else s[:_NAME_CHARS])


def event(ev, thread):
    """One event as the protocol writes it; ev is what a monitor callback
    appended: (t, thread ident, kind, ...), thread its 1-based number."""
    kind = ev[2]
    if kind == "p":
        return '[%d,%d,"p",%s,%d]' % (ev[0], thread, _name(ev[3]), ev[4])
    if kind == "s":
        parent = "null" if ev[4] is None else _name(ev[4])
        return '[%d,%d,"s",%s,%s,%d]' % (ev[0], thread, _name(ev[3]), parent, ev[5])
    return '[%d,%d,"f",%s]' % (ev[0], thread, _name(ev[3]))


def batches(build_id, texts):
    """The "ev" messages that carry texts (encoded events, in order), each
    at most LIMIT bytes."""
    head = '{"m":"ev","id":%d,"e":[' % build_id
    room = LIMIT - len(head) - 2
    out, part, size = [], [], 0
    for text in texts:
        if part and size + 1 + len(text) > room:
            out.append(head + ",".join(part) + "]}")
            part, size = [], 0
        size += len(text) + (1 if part else 0)
        part.append(text)
    if part:
        out.append(head + ",".join(part) + "]}")
    return out


def fitted(message, cuts):
    """The text of message, at most LIMIT bytes. While it is longer, each
    function of cuts in turn shortens the message in place; a message that
    had to be cut says so with "cut": true. The last cut must make it fit."""
    text = dumps(message)
    for cut in cuts:
        if len(text) <= LIMIT:
            break
        message["cut"] = True
        cut(message)
        text = dumps(message)
    return text
