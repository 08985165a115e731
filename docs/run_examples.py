#!/usr/bin/env python3
"""docs/run_examples.py — runs the code examples of the documentation site, page by page.

The site's pages are MyST Markdown. What a page shows, a reader can type, so every example runs here
(scripts/docs.sh --check, and with it CI). Each page runs in a scratch folder of its own, its blocks in
the order they appear, with `lockstep` on PATH and `import lockstep` working:

- a code block with a caption, ```{code-block} LANG with `:caption: FILE`, is a file: it is written to
  FILE (a relative path) in the scratch folder, whatever its language; in README.md, which GitHub shows
  rather than Sphinx, ```LANG file=FILE says the same (GitHub ignores what follows the language);
- a ```console block (or ```{code-block} console) holds commands: every line that starts with "$ "
  is one (a line ending in a backslash continues on the next), run by bash in the scratch folder and
  expected to exit with status 0; the other lines are what the reader sees, not compared;
- a ```python block without a caption runs in the page's one Python process, in order, so later
  blocks see the names earlier ones made;
- `:class: exits-nonzero` on a console block expects each command to fail (status 1-125: a refusal,
  never a crash), for the pages that show an error message;
- `:class: needs-gpu` marks a block that needs a CUDA GPU and a lockstep built with CUDA: skipped
  unless --gpu is given (`scripts/gpu-check.sh run docs` runs them, with --gpu --only-gpu, on the GPU
  machine); `needs-nvcc` beside it marks one that also compiles device code at run time (a model file
  on --backend cuda), run with --gpu only where nvcc is found (LOCKSTEP_NVCC, PATH, /usr/local/cuda).

Other blocks (```text, ```cpp without a caption, indented blocks) are not examples: they show output,
fragments or formulas. The records (docs/records/) show their commands, which take hours or a GPU,
that way.

Usage: run_examples.py [--lockstep BIN] [--pythonpath DIRS] [--gpu [--only-gpu]] [--keep] [--list] [--jobs N] PAGE.md ...
(--only-gpu: of the commands and Python, only the needs-gpu blocks run; every file is still written.)
Pages are independent (each its own scratch folder; the model cache they share takes concurrent
compiles of one model), so --jobs pages run at once, by default one per CPU; each page's line is
printed, in the order given, once it and the pages before it are done.
Exit status 0 when every example ran as expected, 1 otherwise, 2 on a usage error. Each failure is
reported as PAGE:LINE: the command or block, its status, and the last lines of its output.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*(\{code-block\}\s*)?([\w+-]*)\s*(file=(\S+))?\s*$")
OPTION = re.compile(r"^:([\w-]+):\s*(.*)$")


class Block:
    def __init__(self, line, language, options, body):
        self.line, self.language, self.options, self.body = line, language, options, body

    @property
    def classes(self):
        return set(self.options.get("class", "").split())


def blocks_of(path):
    """The fenced code blocks of a MyST page: (line, language, options, body)."""
    lines = open(path, encoding="utf-8").read().splitlines()
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, directive, language = m.group(1), m.group(2), m.group(3), m.group(4)
        start, i = i + 1, i + 1
        options = {"caption": m.group(6)} if m.group(6) else {}
        if directive:  # a directive's options come first, one per line, then an optional blank line
            while i < len(lines) and OPTION.match(lines[i].strip()):
                key, value = OPTION.match(lines[i].strip()).groups()
                options[key] = value
                i += 1
            if options and i < len(lines) and not lines[i].strip():
                i += 1  # the blank line that ends the options is not content
        body = []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        if directive is None and language.startswith("{"):
            continue  # another directive ({toctree}, {include}, ...): not code
        found.append(Block(start, language, options, "\n".join(body) + "\n"))
    return found


def commands_of(body):
    """The commands of a console block: lines after "$ ", with backslash continuations."""
    commands, current = [], None
    for line in body.splitlines():
        if current is not None:
            current += "\n" + line
            if not line.rstrip().endswith("\\"):
                commands.append(current)
                current = None
            continue
        if line.startswith("$ "):
            command = line[2:]
            if command.rstrip().endswith("\\"):
                current = command
            else:
                commands.append(command)
    if current is not None:
        commands.append(current)
    return commands


def tail(text, n=15):
    return "\n".join(text.rstrip().splitlines()[-n:])


def nvcc_available():
    return bool(os.environ.get("LOCKSTEP_NVCC")) or shutil.which("nvcc") is not None or \
        os.access("/usr/local/cuda/bin/nvcc", os.X_OK)


def run_page(page, env, gpu, keep, report, only_gpu=False):
    scratch = tempfile.mkdtemp(prefix="lockstep-doc-" + os.path.splitext(os.path.basename(page))[0] + "-")
    python = None
    ok, count = True, 0
    rel = os.path.relpath(page, ROOT)
    try:
        for block in blocks_of(page):
            if "needs-gpu" in block.classes and not gpu:
                continue
            if "needs-nvcc" in block.classes and not nvcc_available():
                print(f"run_examples: {rel}:{block.line}: skipped, it needs nvcc", flush=True)
                continue
            if only_gpu and "needs-gpu" not in block.classes and not block.options.get("caption"):
                continue
            caption = block.options.get("caption")
            if caption:
                target = os.path.normpath(os.path.join(scratch, caption))
                if not target.startswith(scratch + os.sep):
                    report(f"{rel}:{block.line}: caption {caption!r} is not a relative path inside the scratch folder")
                    ok = False
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "w", encoding="utf-8") as f:
                    f.write(block.body)
                count += 1
                continue
            if block.language == "console":
                expect_failure = "exits-nonzero" in block.classes
                for command in commands_of(block.body):
                    count += 1
                    done = subprocess.run(["bash", "-c", command], cwd=scratch, env=env, capture_output=True,
                                          text=True, timeout=600)
                    bad = (done.returncode == 0 or not 1 <= done.returncode <= 125) if expect_failure \
                        else done.returncode != 0
                    if bad:
                        ok = False
                        report(f"{rel}:{block.line}: `{command}` exited with {done.returncode}"
                               f" (expected {'a refusal' if expect_failure else '0'})\n"
                               + textwrap.indent(tail(done.stdout + done.stderr), "    "))
            elif block.language == "python":
                count += 1
                if python is None:
                    python = subprocess.Popen([sys.executable, "-u", "-c", PYTHON_RUNNER], cwd=scratch, env=env,
                                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                              text=True)
                source = block.body
                python.stdin.write(f"{len(source)}\n{source}")
                python.stdin.flush()
                output = []
                while True:
                    line = python.stdout.readline()
                    if not line:
                        ok = False
                        report(f"{rel}:{block.line}: the page's Python process ended\n"
                               + textwrap.indent(tail("".join(output)), "    "))
                        python = None
                        break
                    if line.startswith(SENTINEL):
                        if line.strip() != SENTINEL + " ok":
                            ok = False
                            report(f"{rel}:{block.line}: the Python block raised\n"
                                   + textwrap.indent(tail("".join(output)), "    "))
                        break
                    output.append(line)
                if python is None:
                    break
    finally:
        if python is not None:
            python.stdin.close()
            python.wait(timeout=60)
        if keep:
            print(f"run_examples: {rel}: scratch folder kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    return ok, count


SENTINEL = "@@run_examples@@"
# The page's Python process: reads "LENGTH\nSOURCE" blocks from stdin, runs each in one namespace.
PYTHON_RUNNER = f"""
import sys, traceback
namespace = {{"__name__": "__main__"}}
while True:
    header = sys.stdin.readline()
    if not header:
        break
    source = sys.stdin.read(int(header))
    try:
        exec(compile(source, "<example>", "exec"), namespace)
        print("{SENTINEL} ok", flush=True)
    except BaseException:
        traceback.print_exc(file=sys.stdout)
        print("{SENTINEL} failed", flush=True)
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="+")
    parser.add_argument("--lockstep", default=os.path.join(ROOT, "build", "host", "cli", "lockstep"),
                        help="the lockstep binary (its folder goes first on PATH)")
    parser.add_argument("--pythonpath", default=os.pathsep.join([os.path.join(ROOT, "build", "python"),
                                                                  os.path.join(ROOT, "python")]))
    parser.add_argument("--gpu", action="store_true", help="also run the blocks marked needs-gpu")
    parser.add_argument("--only-gpu", action="store_true", help="with --gpu: run only the needs-gpu commands")
    parser.add_argument("--keep", action="store_true", help="keep each page's scratch folder")
    parser.add_argument("--list", action="store_true", help="list the examples without running them")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="pages run at once (default: the CPUs)")
    args = parser.parse_args()
    if args.jobs < 1:
        parser.error(f"--jobs {args.jobs}: at least 1")
    if args.list:
        for page in args.pages:
            for b in blocks_of(page):
                print(f"{page}:{b.line}: {b.language} {b.options}")
        return 0
    if not os.access(args.lockstep, os.X_OK):
        print(f"run_examples: error: no lockstep binary at {args.lockstep} (build first, or --lockstep)", file=sys.stderr)
        return 2
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(os.path.abspath(args.lockstep)) + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = args.pythonpath + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["LOCKSTEP_REPOSITORY"] = ROOT  # pages may copy the repository's examples: cp "$LOCKSTEP_REPOSITORY"/examples/...
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")  # mpirun as root, as CI runs
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env["MPLBACKEND"] = "Agg"
    def run(page):
        start = time.time()
        page_failures = []
        ok, count = run_page(page, env, args.gpu, args.keep, page_failures.append, args.gpu and args.only_gpu)
        return ok, count, page_failures, time.time() - start

    failures = []
    total = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for page, future in [(page, pool.submit(run, page)) for page in args.pages]:
            ok, count, page_failures, seconds = future.result()
            total += count
            failures += page_failures
            print(f"run_examples: {os.path.relpath(page, ROOT)}: {count} examples, {'ok' if ok else 'FAILED'}"
                  f" ({seconds:.1f} s)", flush=True)
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"run_examples: {total} examples in {len(args.pages)} pages, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
