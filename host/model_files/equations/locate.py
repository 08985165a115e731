"""Positions of keys and values in the raw text of a TOML file.

tomllib returns plain dictionaries, so a message about a key or an expression needs its place found
again. This scanner reads the subset of TOML that equations files use -- [table] headers, dotted and
quoted keys, inline tables, (nested) arrays, basic and literal strings, single- and multi-line -- and
records, for every key path, where its key and its value start. It trusts tomllib for validity: it is
only run on text tomllib accepted, so it reports nothing itself and never needs to recover.

A path is a tuple of keys and array indices, e.g. ("mass", "matrix", 1, 0). Positions are 1-based
(line, column) in characters, as compilers print them.
"""
import bisect

BARE_KEY_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\", "e": "\x1b"}


class StringValue:
    """A string's position and, for each character of its decoded text, where it was written.

    Escapes make the decoded text shorter than the source, so a column inside an expression is
    looked up here instead of added to the opening quote's column.
    """

    def __init__(self, start, chars, end):
        self.start = start  # (line, column) of the first character after the opening quote(s)
        self.chars = chars  # chars[i] = (line, column) of decoded character i
        self.end = end      # (line, column) of the closing quote

    def at(self, index):
        """Where decoded character `index` was written; one past the end maps to the closing quote."""
        if 0 <= index < len(self.chars):
            return self.chars[index]
        return self.end


class Locator:
    def __init__(self, text):
        self.text = text
        self.line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        self.keys = {}    # path -> (line, column) of the key (for a dotted key: its last part)
        self.values = {}  # path -> (line, column) of the value, or a StringValue
        self.i = 0
        self._document()

    # ---- queries -------------------------------------------------------------------------------

    def key(self, path):
        """Where the key of `path` is written (for a dotted key or table header: that part of it); the
        nearest written ancestor if it is implicit."""
        path = tuple(path)
        while path:
            if path in self.keys:
                return self.keys[path]
            if path in self.values:
                return self.value(path)
            path = path[:-1]
        return (1, 1)

    def value(self, path):
        """Where the value of `path` starts (the first character inside the quotes for a string)."""
        found = self.values.get(tuple(path))
        if found is None:
            return self.key(path)
        return found.start if isinstance(found, StringValue) else found

    def string(self, path):
        """The StringValue of `path`, or None when the value there is not a string."""
        found = self.values.get(tuple(path))
        return found if isinstance(found, StringValue) else None

    # ---- scanning ------------------------------------------------------------------------------

    def _pos(self, i=None):
        i = self.i if i is None else i
        line = bisect.bisect_right(self.line_starts, i) - 1
        return (line + 1, i - self.line_starts[line] + 1)

    def _peek(self, n=1):
        return self.text[self.i:self.i + n]

    def _skip_blank(self, newlines):
        """Skips spaces, tabs, comments and (when `newlines`) line breaks."""
        while self.i < len(self.text):
            ch = self.text[self.i]
            if ch in " \t" or (newlines and ch in "\r\n"):
                self.i += 1
            elif ch == "#":
                while self.i < len(self.text) and self.text[self.i] != "\n":
                    self.i += 1
            else:
                return

    def _document(self):
        table = ()
        array_tables = {}
        while True:
            self._skip_blank(newlines=True)
            if self.i >= len(self.text):
                return
            if self._peek(2) == "[[":
                self.i += 2
                parts, places = self._key()
                path = self._record_key((), parts, places)
                count = array_tables.get(path, 0)
                array_tables[path] = count + 1
                table = path + (count,)
                self.keys[table] = places[-1]
                self._skip_blank(newlines=False)
                self.i += 2  # ]]
            elif self._peek() == "[":
                self.i += 1
                parts, places = self._key()
                table = self._record_key((), parts, places)
                self._skip_blank(newlines=False)
                self.i += 1  # ]
            else:
                self._key_value(table)

    def _key(self):
        """A possibly dotted key; returns its parts and where each part is written."""
        parts, places = [], []
        while True:
            self._skip_blank(newlines=False)
            places.append(self._pos())
            ch = self._peek()
            if ch in "\"'":
                parts.append(self._string()[0])
            else:
                start = self.i
                while self.i < len(self.text) and self.text[self.i] in BARE_KEY_CHARS:
                    self.i += 1
                parts.append(self.text[start:self.i])
            self._skip_blank(newlines=False)
            if self._peek() != ".":
                return tuple(parts), places
            self.i += 1

    def _record_key(self, base, parts, places):
        """Records a (dotted) key below `base`; each implied parent table at its own part."""
        for depth in range(1, len(parts) + 1):
            path = base + parts[:depth]
            if depth == len(parts):
                self.keys[path] = places[depth - 1]
            else:
                self.keys.setdefault(path, places[depth - 1])
        return base + parts

    def _key_value(self, table):
        parts, places = self._key()
        path = self._record_key(table, parts, places)
        self._skip_blank(newlines=False)
        self.i += 1  # =
        self._skip_blank(newlines=False)
        self._value(path)

    def _value(self, path):
        ch = self._peek()
        if ch in "\"'":
            self.values[path] = self._string()[1]
        elif ch == "{":
            self.values[path] = self._pos()
            self.i += 1
            while True:
                self._skip_blank(newlines=True)  # TOML 1.1 allows line breaks; harmless to accept
                if self._peek() == "}":
                    self.i += 1
                    return
                if self._peek() == ",":
                    self.i += 1
                    continue
                self._key_value(path)
        elif ch == "[":
            self.values[path] = self._pos()
            self.i += 1
            index = 0
            while True:
                self._skip_blank(newlines=True)
                if self._peek() == "]":
                    self.i += 1
                    return
                if self._peek() == ",":
                    self.i += 1
                    continue
                self._value(path + (index,))
                index += 1
        else:
            self.values[path] = self._pos()
            while self.i < len(self.text) and self.text[self.i] not in ",]}#\r\n":
                self.i += 1

    def _string(self):
        """Reads a string at self.i; returns its decoded text and its StringValue."""
        quote = self.text[self.i]
        multi = self._peek(3) == quote * 3
        self.i += 3 if multi else 1
        if multi and self._peek() == "\n":  # a line break right after the opening quotes is dropped
            self.i += 1
        elif multi and self._peek(2) == "\r\n":
            self.i += 2
        start = self._pos()
        chars, text = [], []
        while True:
            if multi and self._peek(3) == quote * 3 and self._peek(4) != quote * 4:
                break
            if not multi and self._peek() == quote:
                break
            where = self._pos()
            ch = self.text[self.i]
            if quote == '"' and ch == "\\":
                nxt = self.text[self.i + 1]
                if nxt in ESCAPES:
                    text.append(ESCAPES[nxt])
                    self.i += 2
                elif nxt in "uU":
                    width = 4 if nxt == "u" else 8
                    text.append(chr(int(self.text[self.i + 2:self.i + 2 + width], 16)))
                    self.i += 2 + width
                else:  # a line-ending backslash: the break and leading blanks that follow vanish
                    self.i += 1
                    while self.text[self.i] in " \t\r\n":
                        self.i += 1
                    continue
                chars.append(where)
                continue
            text.append(ch)
            chars.append(where)
            self.i += 1
        end = self._pos()
        self.i += 3 if multi else 1
        return "".join(text), StringValue(start, chars, end)
