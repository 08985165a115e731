#!/usr/bin/env python3
"""tests/cli/cli_reference_check.py LOCKSTEP — the command-line reference against the command's help.

`lockstep reference cli` (host/cli/reference.cpp) prints the site's command-line reference by walking
the parser; `lockstep COMMAND --help` is the parser's own account of the same options. This check
holds them equal, both ways: every command and every option the help of each command lists is in the
reference, and every one the reference lists is accepted by the command (its help lists it). A
command or option the reference leaves out, or one it invents, fails here.

Exit status 0 when they agree, 1 when they do not (each difference printed), 2 on a usage error.
"""
import re
import subprocess
import sys


def run(*args):
    done = subprocess.run(list(args), capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        sys.exit(f"cli_reference_check: `{' '.join(args)}` exited with {done.returncode}:\n{done.stderr}")
    return done.stdout


def reference_of(text):
    """{command: {names}} from the reference's Markdown: "## `lockstep run`" headings, then table rows."""
    commands, current = {"": set()}, ""
    for line in text.splitlines():
        heading = re.match(r"^## `lockstep (\S+)`$", line)
        if heading:
            current = heading.group(1)
            commands[current] = set()
        elif line.startswith("## "):
            current = None  # the exit statuses
        elif current is not None and line.startswith("| ") and not line.startswith("| argument"):
            first = line.split(" | ")[0][2:].strip()
            if first.startswith("`"):
                commands[current].update(first.strip("`").split(","))
            elif first.startswith("*"):
                commands[current].add(first.strip("*"))
    return commands


def help_of(text):
    """The subcommands and the option and positional names of one command's --help."""
    names, subcommands, section = set(), set(), None
    for line in text.splitlines():
        if re.match(r"^(Positionals|Options|Subcommands):$", line):
            section = line[:-1]
            continue
        entry = re.match(r"^  (\S+)", line)
        if not entry or line.startswith("      "):
            continue
        word = entry.group(1)
        if section == "Subcommands":
            subcommands.add(word)
        elif section == "Options":
            names.update(n for n in word.split(",") if n != "-h" and n != "--help")
        elif section == "Positionals":
            names.add(word)
    return names, subcommands


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    lockstep = sys.argv[1]
    reference = reference_of(run(lockstep, "reference", "cli"))
    top_names, subcommands = help_of(run(lockstep, "--help"))
    problems = []
    if set(reference) - {""} != subcommands:
        problems.append(f"commands: the help lists {sorted(subcommands)}, the reference {sorted(set(reference) - {''})}")
    for command in sorted(subcommands | {""}):
        names = top_names if command == "" else help_of(run(lockstep, command, "--help"))[0]
        listed = reference.get(command, set())
        label = f"lockstep {command}".strip()
        for name in sorted(names - listed):
            problems.append(f"{label}: {name} is accepted (its --help lists it) but missing from the reference")
        for name in sorted(listed - names):
            problems.append(f"{label}: {name} is in the reference but not in its --help")
    for problem in problems:
        print(f"cli_reference_check: {problem}")
    count = sum(len(v) for v in reference.values())
    print(f"cli_reference_check: {len(reference) - 1} commands, {count} options and arguments; "
          f"{'they agree' if not problems else f'{len(problems)} differences'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
