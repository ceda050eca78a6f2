"""docs/Errors.md has an entry for each error and warning in the code of the
tools and libraries: every literal piece of the message (the parts the code
does not fill in) appears in one row (a table row or list item) of the
catalogue.

Run as a script, it prints the messages that have no entry, as the code
writes them (`…` where the code fills in a value)."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CATALOGUE = os.path.join(REPO, "docs", "Errors.md")

# Every source file of the tools and libraries.
CATALOGUED = sorted(
    os.path.relpath(os.path.join(folder, name), REPO)
    for top in ("include", "lib", "tools")
    for folder, _, names in os.walk(os.path.join(REPO, top))
    for name in names if name.endswith((".cpp", ".h")))

# The calls that report an error or a warning: MLIR's emitters, the
# importer's error(), the tools' fail(), llvm::createStringError, and
# messages streamed to llvm::errs() (by the tools: those that say error or
# warning).
CALL = re.compile(r"\b(emitError|emitOpError|emitWarning|createStringError|"
                  r"fail|error)\s*\(|errs\(\)\s*<<")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
CHAR = re.compile(r"'(?:\\.|[^\\'])'")
# What precedes the name where a reporting helper is declared or defined
# rather than called: a return type, maybe a class or namespace.
DEFINITION = re.compile(r"\s*(InFlightDiagnostic|(\[\[noreturn\]\]\s*)?void|"
                        r"static\s+\S+)\s+(\w+::)*$")


def _statement(text, start):
    """The source from `start` to the end of its statement."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == '"':
            i = STRING.match(text, i).end()
            continue
        if c == "'":
            match = CHAR.match(text, i)
            i = match.end() if match else i + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                break
        elif c == ";" and depth == 0:
            break
        i += 1
    return text[start:i]


def _pieces(statement):
    """The literal pieces of the message a statement builds: adjacent string
    literals joined, C escapes decoded."""
    pieces, last = [], None
    for match in STRING.finditer(statement):
        literal = match.group(1).encode().decode("unicode_escape")
        if last is not None and not statement[last:match.start()].strip():
            pieces[-1] += literal
        else:
            pieces.append(literal)
        last = match.end()
    return pieces


def messages(path):
    """(line, pieces) of each error and warning that `path` reports; a piece
    of fewer than four characters (punctuation, a space) is dropped."""
    with open(os.path.join(REPO, path)) as f:
        text = f.read()
    found = []
    for match in CALL.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        if DEFINITION.match(text[start:match.start()]):
            continue
        pieces = _pieces(_statement(text, match.start()))
        # The tools also print progress and statistics; the libraries print
        # only errors.
        if (match.group(0).startswith("errs") and path.startswith("tools")
                and not any("error" in p or "warning" in p for p in pieces)):
            continue
        pieces = [p.strip(" :;,.'\n") for p in pieces]
        pieces = [p for p in pieces if len(p) >= 4]
        if pieces:
            found.append((text.count("\n", 0, match.start()) + 1, pieces))
    return found


def missing():
    """The messages of CATALOGUED without a row holding all their pieces."""
    with open(CATALOGUE) as f:
        rows = f.read().splitlines()
    absent = []
    for path in CATALOGUED:
        for line, pieces in messages(path):
            if not any(all(p in row for p in pieces) for row in rows):
                absent.append(f"{path}:{line}: " + " … ".join(pieces))
    return absent


def test_every_catalogued_message_has_an_entry():
    # The extraction finds the messages (a broken pattern finds none).
    assert sum(len(messages(path)) for path in CATALOGUED) > 400
    assert ["not an ONNX model: the file is empty"] in [
        pieces for _, pieces in messages("lib/Target/ONNX/Import.cpp")]
    absent = missing()
    assert not absent, ("messages without an entry in docs/Errors.md:\n" +
                        "\n".join(absent))


def test_a_message_without_an_entry_is_found(tmp_path, monkeypatch):
    """The check fails for a message that is not in the catalogue."""
    source = tmp_path / "New.cpp"
    source.write_text('return emitError(loc) << "a brand new failure of "\n'
                      '                         << name << " in the step";\n')
    monkeypatch.setattr(sys.modules[__name__], "REPO", str(tmp_path))
    monkeypatch.setattr(sys.modules[__name__], "CATALOGUED", ["New.cpp"])
    assert missing() == ["New.cpp:1: a brand new failure of … in the step"]


if __name__ == "__main__":
    print("\n".join(missing()))
