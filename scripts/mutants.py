#!/usr/bin/env python3
"""Mutation testing: can the tests of a module fail? Makes operator mutants of one C source
file, one at a time (one operator of one line swapped: < and <=, > and >=, == and !=, + and -,
* into /, && and ||, + 1 into + 2, - 1 into - 2; comments, preprocessor lines and string and
character literals left alone), rebuilds the given test executables against each and runs
them. A mutant is killed when a test fails (or runs past --timeout), survives when every test
passes, and is left out when it does not build. Prints each survivor (file:line, the line
before and after) and a count.

A survivor is a test to write, or an equivalent mutant (one that computes the same values, or
differs only past an array's end, which an ASan build's tests catch: --build-dir build-asan).

Usage: scripts/mutants.py SOURCE TEST[,TEST...] [--sample N] [--seed S] [--skip K]
                          [--lines FROM-TO[,...]] [--build-dir DIR] [--timeout SEC]
                          [--survivors LOG]
  SOURCE      a C file of the project, e.g. suite/stats.c
  TEST,...    test executables of the build directory, e.g. test_stats; or ctest:REGEX, the
              ctest tests whose names match REGEX (e.g. ctest:e2e_run_, the end-to-end tests of
              `mallocbench run`), run against a rebuilt mallocbench
  --sample N  mutants to try, drawn at random from all candidates (default: all)
  --seed S    the draw's seed (default 1; the counts quoted in notes used 1)
  --skip K    leave out the draw's first K mutants: `--skip 30 --sample 40` tries the next 40
              after a `--sample 30` run of the same source and seed
  --lines FROM-TO[,...]  only the mutants on these lines of SOURCE (1-based, inclusive; e.g.
              the functions a change added: `git diff -U0` gives their ranges)
  --build-dir an already configured build directory (default build)
  --timeout   seconds per test run before it counts as failed (default 120)
  --survivors LOG  try only the mutants an earlier run printed as SURVIVED in LOG (its output),
              found by their lines' text (lines moved by edits elsewhere are found): e.g. a
              unit test's survivors against the end-to-end tests

It edits SOURCE in place and restores it when done, interrupted or not (then its counts are
those of the mutants finished, the first ones of the same draw as --sample); run it in a worktree
of its own (git worktree add ../mut HEAD) to go on working meanwhile. Needs python3 (not
installed by scripts/setup.sh: it is a developer's tool, not used by run.sh or test.sh).
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile

OPERATORS = [(r' < ', ' <= '), (r' <= ', ' < '), (r' > ', ' >= '), (r' >= ', ' > '),
             (r' == ', ' != '), (r' != ', ' == '), (r' \+ ', ' - '), (r' - ', ' + '),
             (r' \* ', ' / '), (r'&&', '||'), (r'\|\|', '&&'), (r'\+ 1\b', '+ 2'),
             (r'- 1\b', '- 2')]


# what is not code on a line: string and character literals, and comments (the leftmost match
# wins, so a "//" inside a string stays a string)
NOT_CODE = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|/\*.*?(?:\*/|$)|//.*$')


def candidates(lines):
    """(line index, start, end, replacement) of every operator outside comments, #lines and
    string or character literals (a mutant of a message's or a comment's text tests nothing)."""
    found = []
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith(('/*', '*', '//', '#')):
            continue
        not_code = [False] * len(line)
        for m in NOT_CODE.finditer(line):
            not_code[m.start():m.end()] = [True] * (m.end() - m.start())
        for pattern, replacement in OPERATORS:
            for m in re.finditer(pattern, line):
                if not not_code[m.start()]:
                    found.append((i, m.start(), m.end(), replacement))
    return found


def targets(tests):
    """The build targets the tests need: each executable, and mallocbench for ctest:REGEX."""
    exes = [t for t in tests if not t.startswith('ctest:')]
    return exes + (['mallocbench'] if len(exes) < len(tests) else [])


def build(build_dir, tests):
    return subprocess.run(['cmake', '--build', build_dir, '--target'] + targets(tests),
                          capture_output=True).returncode == 0


def killed_by(root, build_dir, tests, timeout, env):
    for t in tests:
        if t.startswith('ctest:'):
            # the first failing test kills the mutant: no need to run the others. Without
            # test_tmp_check (-FC): it looks at /tmp, which tests in other worktrees share (a
            # test of theirs in flight there would kill this mutant)
            command = ['ctest', '--test-dir', build_dir, '-R', t[len('ctest:'):],
                       '--timeout', str(timeout), '--stop-on-failure', '-FC', 'mb_test_tmp']
        else:
            command = [os.path.join(build_dir, t)]
        try:
            r = subprocess.run(command, cwd=root, env=env, capture_output=True,
                               timeout=timeout * (10 if t.startswith('ctest:') else 1))
        except subprocess.TimeoutExpired:
            return True
        if r.returncode != 0:
            return True
    return False


def changed_tracked(root):
    """The files git tracks under root that differ from the index."""
    r = subprocess.run(['git', '-C', root, 'diff', '--name-only'], capture_output=True,
                       text=True)
    return [f for f in r.stdout.split('\n') if f]


def earlier_survivors(log, source):
    """(line before, line after), both stripped, of each SURVIVED line of an earlier run's
    output: matched by text, not line number, so that a run after the source changed elsewhere
    still finds them."""
    found = set()
    prefix = f'SURVIVED {source}:'
    for entry in open(log):
        if entry.startswith(prefix):
            rest = entry[len(prefix):].split(':', 1)[1]
            before, after = rest.split('  ->  ', 1)
            found.add((before.strip(), after.strip()))
    return found


def refuse(message):
    print(f'mutants: {message}', file=sys.stderr)
    sys.exit(2)


def interrupted(signum, frame):
    raise KeyboardInterrupt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('source')
    ap.add_argument('tests')
    ap.add_argument('--sample', type=int, default=0)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--skip', type=int, default=0)
    ap.add_argument('--build-dir', default='build')
    ap.add_argument('--timeout', type=float, default=120)
    ap.add_argument('--survivors')
    ap.add_argument('--lines')
    args = ap.parse_args()
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
    source = os.path.join(root, args.source)
    build_dir = os.path.join(root, args.build_dir)
    tests = args.tests.split(',')
    if not os.path.isfile(source):
        refuse(f'{args.source}: no such file under {root}')
    if not os.path.isfile(os.path.join(build_dir, 'CMakeCache.txt')):
        refuse(f'{build_dir}: not a configured build directory (scripts/build.sh {args.build_dir})')
    ranges = []
    for part in (args.lines.split(',') if args.lines else []):
        m = re.fullmatch(r'(\d+)-(\d+)', part.strip())
        if not m or int(m.group(1)) < 1 or int(m.group(1)) > int(m.group(2)):
            refuse(f'--lines {args.lines}: expected FROM-TO[,...] with 1 <= FROM <= TO, got '
                   f'"{part}"')
        ranges.append((int(m.group(1)), int(m.group(2))))
    wanted = None
    if args.survivors:
        if not os.path.isfile(args.survivors):
            refuse(f'--survivors {args.survivors}: no such file')
        wanted = earlier_survivors(args.survivors, args.source)
        if not wanted:
            refuse(f'--survivors {args.survivors}: no SURVIVED line of {args.source}')
    # A mutant's tests may write where they should not (a mutant of option parsing made a test's
    # -o name a source file of the tree): every later mutant would then fail for that, so the
    # tree must start clean, and what a mutant changes in it is put back after it.
    changed = changed_tracked(root)
    if changed:
        refuse(f'{root}: files differ from git ({", ".join(changed)}): commit or restore them '
               'first')
    if not build(build_dir, tests) or killed_by(root, build_dir, tests, args.timeout,
                                                dict(os.environ)):
        refuse(f'{",".join(tests)}: do not build, or fail unmutated')

    original = open(source).read()
    lines = original.split('\n')
    found = candidates(lines)
    if ranges:
        found = [c for c in found if any(a <= c[0] + 1 <= b for a, b in ranges)]
        if not found:
            refuse(f'--lines {args.lines}: no mutant on these lines of {args.source}')
    random.seed(args.seed)
    random.shuffle(found)
    if args.survivors:
        found = [c for c in found if (lines[c[0]].strip(), (lines[c[0]][:c[1]] + c[3] +
                                                            lines[c[0]][c[2]:]).strip()) in wanted]
    tried = found[args.skip:args.skip + args.sample] if args.sample > 0 else found[args.skip:]
    tmp = tempfile.mkdtemp(prefix='mbmutants')
    env = dict(os.environ, TMPDIR=tmp)
    signal.signal(signal.SIGTERM, interrupted)  # a kill restores the source as Ctrl-C does
    killed = survived = unbuilt = 0
    finished = False
    try:
        for i, start, end, replacement in tried:
            line = lines[i]
            mutated = line[:start] + replacement + line[end:]
            with open(source, 'w') as f:
                f.write('\n'.join(lines[:i] + [mutated] + lines[i + 1:]))
            if not build(build_dir, tests):
                unbuilt += 1
            elif killed_by(root, build_dir, tests, args.timeout, env):
                killed += 1
            else:
                survived += 1
                print(f'SURVIVED {args.source}:{i + 1}: {line.strip()}  ->  {mutated.strip()}',
                      flush=True)
            strays = [f for f in changed_tracked(root)
                      if os.path.realpath(os.path.join(root, f)) != os.path.realpath(source)]
            if strays:
                subprocess.run(['git', '-C', root, 'checkout', '--'] + strays)
                print(f'RESTORED {", ".join(strays)}: changed by the tests of '
                      f'{args.source}:{i + 1}: {mutated.strip()}', flush=True)
        finished = True
    finally:
        with open(source, 'w') as f:
            f.write(original)
        build(build_dir, tests)
        shutil.rmtree(tmp, ignore_errors=True)
        # also when interrupted: the mutants done so far are the first ones of --sample's
        # draw, so a stopped run's counts are those of `--sample DONE`
        done = killed + survived + unbuilt
        print(f'{args.source}: {killed} killed, {survived} survived, {unbuilt} did not build, '
              f'of {done} tried (of {len(found)} candidates)'
              + ('' if finished else '; interrupted: the counts of '
                 + (f'--skip {args.skip} ' if args.skip else '') + f'--sample {done}'),
              flush=True)


if __name__ == '__main__':
    try:
        main()
    except KeyboardInterrupt:
        print('mutants: interrupted; the source is restored', file=sys.stderr)
        sys.exit(130)
