"""Regular expressions between two dialects: the ``regex`` package (tokembed's ``regex`` and ``gpt2``
pre-tokenizers, tiktoken's patterns) and Oniguruma with its Ruby syntax (Hugging Face ``tokenizers``' ``Split``).

The same text means different things in the two engines, so a pattern copied as it is can split differently:

=====================  ==============================================  ==============================================
construct              ``regex`` (Python)                              Oniguruma (Ruby syntax)
=====================  ==============================================  ==============================================
``X{1,3}+``            possessive ``X{1,3}``                           ``(?:X{1,3})+``, i.e. ``X+`` (cl100k's digits)
``^`` / ``$``          start / end of the text (end: or before a       start / end of every line
                       final ``\\n``)
``\\Z``                end of the text                                 end, or before a final ``\\n``
``(?s)`` / ``(?m)``    dot matches ``\\n`` / ``^ $`` at lines          ``(?m)`` is dot matches ``\\n``
``\\U0001F600``        the code point                                  not an escape
``(?P<n>...)``         a named group                                   a syntax error
``\\h``                horizontal whitespace                           a hexadecimal digit
=====================  ==============================================  ==============================================

:func:`to_oniguruma` and :func:`from_oniguruma` rewrite each such construct into the other dialect's equivalent
(``X{1,3}+`` becomes the atomic group ``(?>X{1,3})``), and raise :class:`RegexDialectError` naming the construct
when there is none they can vouch for (inline verbose mode, conditionals, POSIX brackets, nested classes,
``\\K``, ...). Classes and escapes both engines read alike (``\\d \\w \\s \\b \\p{L}``, Unicode in both) are kept.
Both engines take their Unicode tables from their own Unicode versions; a character assigned after the older one
may be classified differently.
"""

from __future__ import annotations

import re
import unicodedata

from tokembed.errors import TokembedError

__all__ = ["RegexDialectError", "to_oniguruma", "from_oniguruma"]


class RegexDialectError(TokembedError):
    """A regular expression holds a construct with no known equivalent in the other engine's dialect."""


_INTERVAL = re.compile(r"\{(\d*)(?:,(\d*))?\}")
_SAME_ESCAPES = set("dDwWsSbBAtnrfva")
_PROPERTY = re.compile(r"\^?[A-Za-z_][A-Za-z0-9_ ]*")
_PROPERTY_KEYS = {"script": "", "sc": "", "general_category": "", "gc": ""}
_HEX_CLASS = "[0-9a-fA-F]"


def to_oniguruma(pattern: str) -> str:
    """The Oniguruma (Hugging Face ``Split``) pattern that matches what ``pattern`` matches in the ``regex``
    package, e.g. ``\\p{N}{1,3}+`` -> ``(?>\\p{N}{1,3})``.

    Raises
    ------
    RegexDialectError
        Naming the construct (and its position) when it has no equivalent this translation knows.
    """
    return _Translation(pattern, to_onig=True).run()


def from_oniguruma(pattern: str) -> str:
    """The ``regex``-package pattern that matches what the Oniguruma (Ruby syntax) ``pattern`` matches, e.g.
    ``\\p{N}{1,3}+`` -> ``(?:\\p{N}{1,3})+``.

    Raises
    ------
    RegexDialectError
        Naming the construct (and its position) when it has no equivalent this translation knows.
    """
    return _Translation(pattern, to_onig=False).run()


class _Translation:
    """One left-to-right pass over a pattern; ``out`` collects the translated pieces, and the index in ``out``
    where the last atom starts lets a quantifier rewrite its atom."""

    def __init__(self, pattern: str, to_onig: bool):
        if not isinstance(pattern, str):
            raise RegexDialectError(f"a regular expression must be a str, got {pattern!r}")
        self.p = pattern
        self.to_onig = to_onig
        self.source = "the regex package" if to_onig else "Hugging Face's Oniguruma"
        self.target = "Hugging Face's engine (Oniguruma)" if to_onig else "the regex package"

    def fail(self, at: int, what: str) -> RegexDialectError:
        return RegexDialectError(
            f"the pattern {self.p!r} uses {what} (at character {at}), which has no equivalent this export can "
            f"vouch for in {self.target}; rewrite the pattern without it")

    # -- the pass ---------------------------------------------------------------------------------------------
    def run(self) -> str:
        p, n = self.p, len(self.p)
        out: list[str] = []
        groups: list[int] = []
        last: int | None = None
        i = 0
        while i < n:
            c = p[i]
            if c == "\\":
                piece, i = self.escape(i, in_class=False)
                last = len(out)
                out.append(piece)
            elif c == "[":
                piece, i = self.char_class(i)
                last = len(out)
                out.append(piece)
            elif c == "(":
                piece, i, opens = self.group(i)
                if opens:
                    groups.append(len(out))
                    last = None
                else:
                    last = len(out) if piece else last
                if piece:
                    out.append(piece)
            elif c == ")":
                if not groups:
                    raise self.fail(i, "an unbalanced ')'")
                last = groups.pop()
                out.append(")")
                i += 1
            elif c in "*+?" or (c == "{" and _INTERVAL.match(p, i)):
                if last is None:
                    raise self.fail(i, f"a quantifier {c!r} with nothing to repeat")
                i = self.quantifier(i, out, last)
            elif c == "^":
                out.append(r"\A" if self.to_onig else "(?m:^)")
                last, i = None, i + 1
            elif c == "$":
                out.append(r"(?=\n?\z)" if self.to_onig else "(?m:$)")
                last, i = None, i + 1
            else:
                last = len(out)
                out.append(c)
                i += 1
        if groups:
            raise self.fail(n, "an unclosed '('")
        return "".join(out)

    def quantifier(self, i: int, out: list[str], last: int) -> int:
        p = self.p
        m = _INTERVAL.match(p, i) if p[i] == "{" else None
        end = m.end() if m else i + 1
        mode = p[end] if end < len(p) and p[end] in "?+" else ""
        quant = p[i:end]
        atom = "".join(out[last:])
        del out[last:]
        if m and mode == "+":
            # possessive interval in the regex package; in Oniguruma a repeat of the interval
            out.append(f"(?>{atom}{quant})" if self.to_onig else f"(?:{atom}{quant})+")
        else:
            out.append(atom + quant + mode)
        return end + len(mode)

    def group(self, i: int) -> tuple[str, int, bool]:
        """(opener, next index, True when a group opens); a comment gives ``""`` and a back-reference an atom."""
        p = self.p
        if not p.startswith("(?", i):
            return "(", i + 1, True
        for same in ("(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>"):
            if p.startswith(same, i):
                return same, i + len(same), True
        m = re.compile(r"\(\?P?<([A-Za-z_]\w*)>").match(p, i)
        if m:
            if not self.to_onig and p.startswith("(?P", i):
                raise self.fail(i, "'(?P<'")
            return f"(?<{m.group(1)}>", m.end(), True
        m = re.compile(r"\(\?P=([A-Za-z_]\w*)\)").match(p, i)
        if m and self.to_onig:
            return rf"\k<{m.group(1)}>", m.end(), False
        if p.startswith("(?#", i):
            close = p.find(")", i)
            if close < 0:
                raise self.fail(i, "an unclosed comment")
            return "", close + 1, False
        m = re.compile(r"\(\?([A-Za-z]*)(?:-([A-Za-z]+))?([:)])").match(p, i)
        if not m:
            raise self.fail(i, f"the group syntax {p[i:i + 4]!r}")
        on, off, end = m.group(1), m.group(2) or "", m.group(3)
        if end == ")" and i != 0:
            raise self.fail(i, f"the flag group {m.group()!r} after the start (the engines scope it differently)")
        flags = {"i": "i", "s": "m"} if self.to_onig else {"i": "i", "m": "s"}
        bad = [f for f in on + off if f not in flags]
        if bad:
            raise self.fail(i, f"the inline flag {bad[0]!r}")
        opener = "(?" + "".join(flags[f] for f in on) + ("-" + "".join(flags[f] for f in off) if off else "")
        return opener + end, m.end(), end == ":"

    def escape(self, i: int, in_class: bool) -> tuple[str, int]:
        p = self.p
        if i + 1 >= len(p):
            raise self.fail(i, "a trailing backslash")
        c = p[i + 1]
        if not c.isalnum():
            return p[i:i + 2], i + 2
        if c in _SAME_ESCAPES and not (in_class and c in "bBA"):
            return p[i:i + 2], i + 2
        if c in "123456789" and not in_class:
            return p[i:i + 2], i + 2
        if c == "x":
            m = re.compile(r"\\x(\{[0-9a-fA-F]{1,6}\}|[0-9a-fA-F]{2})").match(p, i)
            if not m:
                raise self.fail(i, "a malformed '\\x' escape")
            if not self.to_onig and m.group(1).startswith("{"):  # the regex package has no \x{...}
                return f"\\U{int(m.group(1)[1:-1], 16):08X}", m.end()
            return m.group(), m.end()
        if c == "k" and not self.to_onig and not in_class:
            m = re.compile(r"\\k<([A-Za-z_]\w*)>").match(p, i)
            if not m:
                raise self.fail(i, "a back-reference '\\k' that is not by name")
            return f"(?P={m.group(1)})", m.end()
        if c in "uU":
            width = 4 if c == "u" else 8
            digits = p[i + 2:i + 2 + width]
            if len(digits) != width or not all(ch in "0123456789abcdefABCDEF" for ch in digits):
                raise self.fail(i, f"a malformed '\\{c}' escape")
            if not self.to_onig and c == "U":
                raise self.fail(i, "'\\U'")
            return f"\\x{{{int(digits, 16):X}}}", i + 2 + width
        if c == "N" and self.to_onig:
            m = re.compile(r"\\N\{([^}]*)\}").match(p, i)
            try:
                cp = ord(unicodedata.lookup(m.group(1))) if m else None
            except KeyError:
                cp = None
            if cp is None:
                raise self.fail(i, "a '\\N{...}' escape that names no character")
            return f"\\x{{{cp:X}}}", m.end()  # type: ignore[union-attr]
        if c in "pP":
            return self.prop(i)
        if c in "zZ":
            if in_class:
                raise self.fail(i, f"'\\{c}' in a character class")
            if self.to_onig:  # both mean the very end of the text in the regex package
                return r"\z", i + 2
            return (r"\Z", i + 2) if c == "z" else (r"(?=\n?\Z)", i + 2)
        if c in "hH" and not self.to_onig:
            if in_class and c == "H":
                raise self.fail(i, "'\\H' in a character class")
            if in_class:
                return "0-9a-fA-F", i + 2
            return (_HEX_CLASS if c == "h" else "[^0-9a-fA-F]"), i + 2
        raise self.fail(i, f"the escape '\\{c}'")

    def prop(self, i: int) -> tuple[str, int]:
        p = self.p
        kind = p[i + 1]
        if p.startswith("{", i + 2):
            close = p.find("}", i)
            if close < 0:
                raise self.fail(i, "an unclosed property '\\p{'")
            name, end = p[i + 3:close], close + 1
        elif i + 2 < len(p) and p[i + 2].isalpha():
            name, end = p[i + 2], i + 3
        else:
            raise self.fail(i, f"a malformed '\\{kind}' escape")
        negate = name.startswith("^")
        body = name[1:] if negate else name
        if "=" in body or ":" in body:
            key, _, value = re.split(r"([=:])", body, maxsplit=1)
            if key.strip().lower() not in _PROPERTY_KEYS:
                raise self.fail(i, f"the property '{name}'")
            body = value.strip()
        if not _PROPERTY.fullmatch(body):
            raise self.fail(i, f"the property '{name}'")
        return f"\\{kind}{{{'^' if negate else ''}{body}}}", end

    def char_class(self, i: int) -> tuple[str, int]:
        p, n = self.p, len(self.p)
        j = i + 1
        out = ["["]
        if j < n and p[j] == "^":
            out.append("^")
            j += 1
        if j < n and p[j] == "]":
            out.append(r"\]")
            j += 1
        while j < n and p[j] != "]":
            c = p[j]
            if c == "\\":
                piece, j = self.escape(j, in_class=True)
                out.append(piece)
            elif c == "[":
                if p.startswith("[:", j):
                    raise self.fail(j, "a POSIX bracket class '[:'")
                if not self.to_onig:
                    raise self.fail(j, "a nested character class")
                out.append(r"\[")  # a literal in the regex package (version 0), a nested class in Oniguruma
                j += 1
            elif c == "&" and p.startswith("&&", j):
                if not self.to_onig:
                    raise self.fail(j, "a class intersection '&&'")
                out.append(r"\&\&")
                j += 2
            else:
                out.append(c)
                j += 1
        if j >= n:
            raise self.fail(i, "an unclosed character class '['")
        out.append("]")
        return "".join(out), j + 1

