"""The one writer of the generated parts of the documentation. Every benchmark
writes its figures through it, into sections of two kinds:

- marked: `<!-- NAME:begin (written by WRITER; edit outside these markers) -->` …
  `<!-- NAME:end -->`, replaced whole by each run (docs/benchmarks.md: `bench`,
  `bench-targets`, `bench-push`, `idle-cost`; docs/capacity.md: `cost`);
- run blocks: under `<!-- NAME:runs -->`, each run's block added first, newest
  first (docs/benchmarks.md: `bench-writes`, `bench-variants`, `soak`).

Check it on a copy: `python -m geochat_bench.doc_sections --self-test`."""
import argparse
import os
import re
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCHMARKS = os.path.join(ROOT, "docs", "benchmarks.md")
CAPACITY = os.path.join(ROOT, "docs", "capacity.md")


def marked_block(name, writer, lines):
    """`lines` between the begin and end markers of section NAME, as one string."""
    return "\n".join([f"<!-- {name}:begin (written by {writer}; edit outside these markers) -->", *lines,
                      f"<!-- {name}:end -->"])


def replace_marked(text, name, block, heading=""):
    """`text` with what stands between `<!-- NAME:begin` and `<!-- NAME:end -->` replaced by `block`
    (which carries both markers). Without the markers: `block` appended under `heading`, or, when
    `heading` is None, `text` unchanged (a section written only where the file already has it)."""
    if f"<!-- {name}:begin" in text:
        return re.sub(rf"<!-- {re.escape(name)}:begin.*?<!-- {re.escape(name)}:end -->", lambda _: block, text,
                      flags=re.S)
    if heading is None:
        return text
    return text.rstrip() + "\n\n" + heading + block + "\n"


def write_marked(path, sections, default=None):
    """Rewrites the marked sections of the file at `path`, in order: `sections` is a list of
    (name, block, heading) as `replace_marked` takes them. A missing file starts as `default`
    (None: a missing file is an error)."""
    if default is not None and not os.path.exists(path):
        text = default
    else:
        with open(path) as f:
            text = f.read()
    for name, block, heading in sections:
        text = replace_marked(text, name, block, heading)
    with open(path, "w") as f:
        f.write(text)


def add_run_block(name, heading, block, path=BENCHMARKS):
    """Puts `block` (lines) first under `<!-- NAME:runs -->` in `path` (docs/benchmarks.md), newest
    first; the section (`## HEADING`) and its marker are appended the first time."""
    with open(path) as f:
        text = f.read()
    marker = f"<!-- {name}:runs -->"
    if marker not in text:
        text = text.rstrip() + f"\n\n## {heading}\n\nEach run adds its block here, newest first.\n\n" + marker + "\n"
    with open(path, "w") as f:
        f.write(text.replace(marker, marker + "\n\n" + "\n".join(block).rstrip() + "\n", 1))


def self_test():
    """Each kind of section on copies of docs/benchmarks.md and docs/capacity.md: a section
    rewritten in place leaves the rest of the file as it was; a missing one is appended, or
    not, as asked; a run block lands first under its marker."""
    with tempfile.TemporaryDirectory() as work:
        copies = {}
        for original in (BENCHMARKS, CAPACITY):
            copy = os.path.join(work, os.path.basename(original))
            with open(original) as f:
                copies[original] = f.read()
            with open(copy, "w") as f:
                f.write(copies[original])

        def read(name):
            with open(os.path.join(work, name)) as f:
                return f.read()

        bench, capacity = os.path.join(work, "benchmarks.md"), os.path.join(work, "capacity.md")
        before = read("benchmarks.md")
        block = marked_block("bench-push", "deploy/bench-push.sh", ["new figures"])
        write_marked(bench, [("bench-push", block, "## heading\n\n")])
        after = read("benchmarks.md")
        assert block in after and "## heading" not in after, "bench-push not replaced in place"
        start = before.index("<!-- bench-push:begin")
        end = before.index("<!-- bench-push:end -->") + len("<!-- bench-push:end -->")
        assert after == before[:start] + block + before[end:], "text outside the markers changed"

        block = marked_block("cost", "deploy/bench.sh --only cost", ["cost figures"])
        write_marked(capacity, [("cost", block, None)])
        assert block in read("capacity.md"), "cost not replaced"
        write_marked(capacity, [("no-such-section", "x", None)])
        assert "no-such-section" not in read("capacity.md"), "a section without markers was appended"
        write_marked(capacity, [("new-section", marked_block("new-section", "test", ["y"]), "## New\n\n")])
        assert read("capacity.md").endswith("## New\n\n<!-- new-section:begin (written by test; edit outside "
                                            "these markers) -->\ny\n<!-- new-section:end -->\n"), "not appended"

        fresh = os.path.join(work, "fresh.md")
        write_marked(fresh, [("bench", marked_block("bench", "deploy/bench.sh", ["z"]), "")],
                     default="# Benchmarks\n\n")
        with open(fresh) as f:
            assert f.read().startswith("# Benchmarks\n\n<!-- bench:begin"), "a missing file not started"

        add_run_block("soak", "Soak (deploy/soak.sh)", ["### Soak: now", "", "figures"], path=bench)
        text = read("benchmarks.md")
        assert "<!-- soak:runs -->\n\n### Soak: now\n\nfigures\n" in text, "run block not first under its marker"
        add_run_block("brand-new", "Brand new", ["### first"], path=bench)
        assert read("benchmarks.md").endswith("## Brand new\n\nEach run adds its block here, newest first.\n\n"
                                              "<!-- brand-new:runs -->\n\n### first\n\n"), "run section not appended"
        for original, text in copies.items():
            with open(original) as f:
                assert f.read() == text, f"{original} itself changed"
    print("doc_sections: self-test passed (on copies; docs/ untouched)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--self-test", action="store_true", help="check the writer on copies of the docs")
    args = parser.parse_args()
    if not args.self_test:
        parser.print_help()
        sys.exit(2)
    self_test()


if __name__ == "__main__":
    main()
