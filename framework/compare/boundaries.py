"""Where two tokenizers cut a text differently: the data of the report's boundary diff (:mod:`.report`).

Boundaries are compared on characters, whitespace aside: each token's span is trimmed of the whitespace at its
ends (so GPT-2's ``" whale"`` and a word tokenizer's ``"whale"`` cut the text at the same places), and byte pieces
of one character all share that character's span (so three byte tokens of ``"€"`` and one ``"€"`` token agree).
"""

from __future__ import annotations

from typing import Mapping, Sequence

__all__ = ["core_span", "cuts", "agreeing"]

Token = Sequence  # (token, id, start, end): code-point span into the text


def core_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span ``[start, end)`` of ``text`` without the whitespace at its ends; None when nothing is left (a space
    token, or a token without span such as a special token)."""
    start, end = max(0, start), min(len(text), end)
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def cuts(text: str, tokens: Sequence[Token]) -> list[int]:
    """The sorted character positions where a tokenizer cuts ``text``: the start and end of each token's
    :func:`core_span`."""
    out: set[int] = set()
    for _, _, start, end in tokens:
        span = core_span(text, int(start), int(end))
        if span is not None:
            out.update(span)
    return sorted(out)


def agreeing(text: str, tokens: Mapping[str, Sequence[Token]]) -> dict[str, list[list[str]]]:
    """For each tokenizer and each of its tokens, the tokenizers that cut that token out of ``text`` the same way.

    A token with core span ``[s, e)`` agrees with tokenizer B when B cuts at ``s`` and at ``e`` and nowhere in
    between (B has the same piece of text as one token, or as byte pieces of the same characters). A token without
    core span (whitespace only, or no span) agrees with every tokenizer: it is never highlighted.

    Parameters
    ----------
    text : str
        The sample sentence.
    tokens : mapping of str to list of (token, id, start, end)
        Label -> its tokens (:class:`~tokembed.compare.Sample` ``tokens``).

    Returns
    -------
    dict of str to list of list of str
        Label -> one list per token, in order: the labels (itself included) that agree with it, in the order of
        ``tokens``.
    """
    import bisect

    boundaries = {label: cuts(text, toks) for label, toks in tokens.items()}
    out: dict[str, list[list[str]]] = {}
    for label, toks in tokens.items():
        rows = []
        for _, _, start, end in toks:
            span = core_span(text, int(start), int(end))
            if span is None:
                rows.append(list(tokens))
                continue
            s, e = span
            same = []
            for other, at in boundaries.items():
                i = bisect.bisect_left(at, s)
                # a cut at s, and the next cut is e: nothing in between
                if i + 1 < len(at) and at[i] == s and at[i + 1] == e:
                    same.append(other)
            rows.append(same)
        out[label] = rows
    return out
