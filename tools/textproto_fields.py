"""Numeric field edits of protobuf text, for the invariant tools (explore_invariants.py,
serve_invariants.py): a catalog entry or scenario with some of its numbers scaled.
"""
import re


def _block_ends(text, start):
    """The index just past the brace that closes the block whose `{` is at `start`."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def scale_fields(text, fields, factor, inside=None):
    """`text` with every numeric `field: value` of `fields` x `factor`, wherever it stands on its
    line (one-line blocks such as `pcie { ... per_direction_gb_per_s: 15.75 }` included); with
    `inside`, only within the blocks `inside { ... }`, nested blocks and all."""
    pattern = re.compile(r"\b(%s): ([0-9.eE+-]+)" % "|".join(fields))

    def scale(match):
        return "%s: %.10g" % (match.group(1), float(match.group(2)) * factor)

    if inside is None:
        return pattern.sub(scale, text)
    out, pos = [], 0
    for match in re.finditer(r"\b%s\s*\{" % inside, text):
        if match.start() < pos:
            continue  # within a block already scaled
        end = _block_ends(text, match.end() - 1)
        out.append(text[pos:match.start()])
        out.append(pattern.sub(scale, text[match.start():end]))
        pos = end
    out.append(text[pos:])
    return "".join(out)
